//! Issue 22's defects over real HTTP on 127.0.0.1: a network that redirects, answers from a firewall,
//! forges a success or never ends a body must never take the key or hide a billed order. Each test
//! failed on the client before the fix.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use futures::stream;
use store_api::{AttemptResult, Client, Error, RetryPolicy, Submitted, new_external_order_id};
use store_api_tests::hostile::{Hostile, Seen, Upstream, answer, html_page};
use store_api_tests::{ALPHA, emulator, key_of, relaxed_limiter, submit_tee, tee_submission};

const KEY: &str = "csk_ce4d6676e735329b21b3d864ca427df5";

/// A client of store_alpha at `origin` with fast retries.
fn client_at(origin: &str, key: &str, timeout: Duration) -> Client {
    let fast = RetryPolicy::default()
        .with_max_attempts(3)
        .with_base_delay(Duration::from_millis(5));
    Client::builder()
        .base_url(origin)
        .store_id(ALPHA)
        .api_key(key)
        .in_process_limiter(relaxed_limiter())
        .retry_policy(fast)
        .submit_retry_policy(fast)
        .timeout(timeout)
        .build()
        .unwrap()
}

fn is_catalog_read(seen: &Seen) -> bool {
    let path = seen.uri.path();
    path.ends_with("/catalog-products") || path.ends_with("/products")
}

// Defect 1: reqwest followed up to 10 redirects and strips only Authorization and Cookie on a
// cross-host hop, so X-API-Key (and, on 307/308, an order's body) reached whatever host a Location named.
#[tokio::test]
async fn no_redirect_is_followed_so_the_key_never_reaches_another_host() {
    let elsewhere =
        Hostile::start("127.0.0.2", None, |_, _| async { answer(200, &[], "{}") }).await;
    for status in [301, 302, 303, 307, 308] {
        let target = elsewhere.origin();
        let front = Hostile::start("127.0.0.1", None, move |seen: Seen, _| {
            let location = format!("{target}{}", seen.uri);
            async move { answer(status, &[("location", &location)], "") }
        })
        .await;
        let client = client_at(&front.origin(), KEY, Duration::from_secs(5));
        let outcomes = [
            client.status().await.map(drop),
            client.orders().get("ord_1").await.map(drop),
            client
                .orders()
                .create(tee_submission("redirected").as_request())
                .await
                .map(drop),
        ];
        for outcome in outcomes {
            let error = outcome.unwrap_err();
            let Error::Redirect {
                status: seen,
                location,
            } = &error
            else {
                panic!("{status}: {error:?}");
            };
            assert_eq!(*seen, status);
            assert!(
                location
                    .as_deref()
                    .is_some_and(|l| l.starts_with(&elsewhere.origin()))
            );
            let text = error.to_string();
            assert!(
                text.contains(&status.to_string()) && text.contains("127.0.0.2"),
                "{text}"
            );
            assert!(!text.contains(KEY), "{text}");
            assert!(error.may_have_been_processed());
        }
        // Not only no key: nothing at all went to the other host.
        assert!(
            elsewhere.seen().is_empty(),
            "{status}: {:?}",
            elsewhere.seen()
        );
        assert_eq!(
            front.seen().len(),
            3,
            "{status}: each call sent once, not retried"
        );
    }
}

// Defect 2: the first POST is billed and its answer lost; the retry and the lookup meet a firewall's
// 403 page. `submit` said `Status { 403 }` with `may_have_been_processed() == false`.
#[tokio::test]
async fn a_firewall_page_after_a_lost_answer_never_reads_as_not_processed() {
    let emu = emulator().await;
    let posts = Arc::new(AtomicUsize::new(0));
    let counted = posts.clone();
    let front = Hostile::start(
        "127.0.0.1",
        Some(emu.origin().to_owned()),
        move |seen, upstream: Upstream| {
            let posts = counted.clone();
            async move {
                if is_catalog_read(&seen) {
                    return upstream.relay(&seen).await;
                }
                if seen.method == "POST" && posts.fetch_add(1, Ordering::SeqCst) == 0 {
                    // Billed, and the answer never comes back.
                    upstream.forward(&seen).await;
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
                html_page(403)
            }
        },
    )
    .await;
    let client = client_at(
        &front.origin(),
        &key_of(&emu, ALPHA),
        Duration::from_secs(1),
    );
    let external_id = new_external_order_id();
    let error = client
        .orders()
        .submit(&tee_submission(&external_id))
        .await
        .unwrap_err();
    assert_eq!(emu.orders(ALPHA).len(), 1, "the first attempt was billed");
    assert!(error.may_have_been_processed(), "{error:?}");
    assert!(posts.load(Ordering::SeqCst) >= 2, "the retry met the page");
}

// Defect 3: whatever order a 2xx to the POST carried was returned as `Created`.
#[tokio::test]
async fn a_success_answer_carrying_another_order_is_not_believed() {
    let emu = emulator().await;
    let front = Hostile::start(
        "127.0.0.1",
        Some(emu.origin().to_owned()),
        |seen, upstream: Upstream| async move {
            let (status, _, body) = upstream.forward(&seen).await;
            let body = if seen.method == "POST" {
                let mut order: serde_json::Value = serde_json::from_slice(&body).unwrap();
                order["id"] = "ord_someone_else".into();
                order["externalOrderId"] = "someone-else".into();
                Bytes::from(serde_json::to_vec(&order).unwrap())
            } else {
                body
            };
            answer(
                status.as_u16(),
                &[("content-type", "application/json")],
                body,
            )
        },
    )
    .await;
    let client = client_at(
        &front.origin(),
        &key_of(&emu, ALPHA),
        Duration::from_secs(5),
    );
    let external_id = new_external_order_id();
    let submission = client
        .orders()
        .submit(&tee_submission(&external_id))
        .await
        .unwrap();
    let held = emu.orders(ALPHA);
    assert_eq!(held.len(), 1);
    assert!(matches!(submission.submitted, Submitted::AlreadyExisted(_)));
    assert_eq!(submission.order().id, held[0].id);
    assert_eq!(
        submission.order().external_order_id.as_deref(),
        Some(external_id.as_str())
    );
}

// Defect 5: every answer was read whole, so an endless body grew memory until the timeout.
#[tokio::test]
async fn an_endless_body_is_cut_at_the_size_limit_long_before_the_timeout() {
    let front = Hostile::start("127.0.0.1", None, |_, _| async {
        let chunk = Bytes::from(vec![b'['; 64 * 1024]);
        let endless = stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()));
        answer(
            200,
            &[("content-type", "application/json")],
            Body::from_stream(endless),
        )
    })
    .await;
    let client = client_at(&front.origin(), KEY, Duration::from_secs(30));
    let started = Instant::now();
    let error = client.status().await.unwrap_err();
    assert!(
        error.to_string().contains("larger than"),
        "{error:?} after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(error, Error::ResponseTooLarge { limit } if limit == store_api::DEFAULT_MAX_RESPONSE_BYTES)
    );
}

// Defect 5, the other half: a caller-supplied HTTP client had no deadline at all.
#[tokio::test]
async fn a_caller_supplied_http_client_keeps_the_deadline_on_a_slow_body() {
    let front = Hostile::start("127.0.0.1", None, |_, _| async {
        let trickle = stream::unfold((), |()| async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Some((Ok::<_, std::io::Error>(Bytes::from_static(b" ")), ()))
        });
        answer(
            200,
            &[("content-type", "application/json")],
            Body::from_stream(trickle),
        )
    })
    .await;
    let client = Client::builder()
        .base_url(front.origin())
        .store_id(ALPHA)
        .api_key(KEY)
        .http_client_builder(reqwest::Client::builder())
        .retry_policy(RetryPolicy::never())
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    let started = Instant::now();
    let error = client.status().await.unwrap_err();
    assert!(
        matches!(
            error,
            Error::Timeout {
                may_have_been_processed: true
            }
        ),
        "{error:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

// No request with the key leaves for another origin than the base URL's, even one built by hand and
// sent through the client's one request path (the escape hatch, which the CLI's `api` command uses).
#[tokio::test]
async fn a_request_for_another_origin_is_never_sent() {
    let elsewhere =
        Hostile::start("127.0.0.2", None, |_, _| async { answer(200, &[], "{}") }).await;
    let client = client_at("http://127.0.0.1:9", KEY, Duration::from_secs(5));
    let url = format!(
        "{}/store-api/2026-08/stores/{ALPHA}/status",
        elsewhere.origin()
    );
    let error = client
        .request(store_api::hook::Method::GET, &url)
        .send()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("another origin"), "{error}");
    assert!(!error.may_have_been_processed());
    assert!(elsewhere.seen().is_empty());
}

// Issue 29, defect 9: a client error whose `Content-Length` exceeds the size limit was recorded in
// `Submission::attempts` as the service's refusal (`AttemptResult::Status`): that attempt's
// `may_have_been_processed()` was false although it had billed the order, and the CLI said "nothing
// new was billed". An answer too large to read is never taken as the service's word.
#[tokio::test]
async fn an_answer_over_the_size_limit_is_never_taken_for_the_services_refusal() {
    const LIMIT: usize = 256 << 10;
    let emu = emulator().await;
    let front = Hostile::start(
        "127.0.0.1",
        Some(emu.origin().to_owned()),
        |seen: Seen, upstream: Upstream| async move {
            let (status, _, body) = upstream.forward(&seen).await;
            if seen.method == "POST" {
                // Billed; then an answer with the service's envelope of a refusal, too large to read.
                let status: u16 = seen.headers["x-test-status"].to_str().unwrap().parse().unwrap();
                let padding = " ".repeat(LIMIT + 1);
                let envelope = format!(
                    r#"{{"message":"refused","error":"Bad Request","statusCode":{status}}}{padding}"#
                );
                return answer(status, &[("content-type", "application/json")], envelope);
            }
            answer(
                status.as_u16(),
                &[("content-type", "application/json")],
                body,
            )
        },
    )
    .await;
    for status in [400, 404, 413, 422] {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("x-test-status", status.into());
        let client = Client::builder()
            .base_url(front.origin())
            .store_id(ALPHA)
            .api_key(key_of(&emu, ALPHA))
            .in_process_limiter(relaxed_limiter())
            .max_response_bytes(LIMIT)
            .http_client_builder(reqwest::Client::builder().default_headers(headers))
            .build()
            .unwrap();
        let before = emu.order_count(ALPHA);
        let submission = submit_tee(&client).await;
        assert_eq!(emu.order_count(ALPHA), before + 1, "{status}: billed once");
        let [attempt] = submission.attempts.as_slice() else {
            panic!("{status}: {submission:?}");
        };
        assert_eq!(
            attempt.result,
            AttemptResult::Intermediary(status),
            "{status}: {submission:?}"
        );
        assert!(attempt.result.may_have_been_processed(), "{status}");
        assert!(
            matches!(submission.submitted, Submitted::AlreadyExisted(_)),
            "{status}: {submission:?}"
        );
    }
}
