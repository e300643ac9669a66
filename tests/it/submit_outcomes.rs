//! Issue 39, finding 6: the decisions of `submit` that cargo-mutants found no test to check (each
//! test names the mutants it kills): what each attempt is recorded as, which error reports an order
//! that may exist, when a refusal is checked against a lookup, and how the lookups that settle an
//! answer are paced. Over real HTTP on 127.0.0.1, against the emulator, through the fault proxy or a
//! hostile server in front of it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::response::Response;

use store_api::{
    AttemptResult, Client, Error, Jitter, RetryPolicy, SubmitOptions, Submitted,
    new_external_order_id,
};
use store_api_fixtures::{Emulator, FAULT_HEADER, FaultKind};
use store_api_tests::hostile::{Hostile, Seen, Upstream, answer, html_page};
use store_api_tests::proxy::{Fault, FaultPlan, FaultProxy};
use store_api_tests::{ALPHA, builder_at, client, emulator, key_of, submit_tee, tee_submission};

/// A client of store_alpha at `origin` with the store's key and `submit` settings of its own.
fn submitting(origin: &str, emu: &Emulator, policy: RetryPolicy, timeout: Duration) -> Client {
    builder_at(origin, ALPHA, &key_of(emu, ALPHA))
        .submit_retry_policy(policy)
        .timeout(timeout)
        .build()
        .unwrap()
}

/// Three attempts, 5 ms apart: faults cost milliseconds.
fn fast() -> RetryPolicy {
    RetryPolicy::default()
        .with_max_attempts(3)
        .with_base_delay(Duration::from_millis(5))
}

/// The service's envelope of an error.
fn envelope(status: u16, error: &str) -> Response {
    let body = format!(r#"{{"message":"{error}","error":"{error}","statusCode":{status}}}"#);
    answer(status, &[("content-type", "application/json")], body)
}

fn is_order_post(seen: &Seen) -> bool {
    seen.method == "POST" && seen.uri.path().ends_with("/orders")
}

fn is_lookup(seen: &Seen) -> bool {
    seen.method == "GET"
        && seen
            .uri
            .query()
            .is_some_and(|q| q.contains("externalOrderId"))
}

/// `seen` forwarded with the emulator's `empty_page` fault: a lookup whose index lags.
async fn empty_lookup(mut seen: Seen, upstream: Upstream) -> Response {
    let fault = FaultKind::EmptyPage.header_value();
    seen.headers.insert(FAULT_HEADER, fault.parse().unwrap());
    upstream.relay(&seen).await
}

// `AttemptResult::may_have_been_processed` → `true`: only an attempt never sent, a 409 and the
// service's own refusals (a 429 among them) placed nothing; everything else may have.
#[test]
fn each_attempt_result_says_whether_it_may_have_placed_the_order() {
    use AttemptResult::*;
    for (result, may) in [
        (Created, true),
        (CreatedUnreadable, true),
        (AlreadyExists, false),
        (Status(400), false),
        (Status(401), false),
        (Status(404), false),
        (Status(413), false),
        (Status(429), false),
        (Status(500), true),
        (Status(503), true),
        (Intermediary(403), true),
        (Intermediary(502), true),
        (Timeout, true),
        (Connection, true),
        (Redirected(302), true),
        (NotSent, false),
    ] {
        assert_eq!(result.may_have_been_processed(), may, "{result:?}");
    }
}

// `Submitted::into_order` → `Default::default()`.
#[tokio::test]
async fn a_submission_hands_over_the_order_it_decided_on() {
    let emu = emulator().await;
    let submission = submit_tee(&client(&emu, ALPHA)).await;
    let order = submission.order().clone();
    assert!(!order.id.is_empty());
    assert_eq!(submission.submitted.into_order(), order);
}

// The match arm `Outcome::Status(200..=299, _)` of `post_once`'s failures deleted: a 2xx whose body is
// over the size limit was taken for an intermediary's answer (not retried, then found by the lookup
// as already existing) instead of this attempt's creation, recovered by the lookup.
#[tokio::test]
async fn a_success_too_large_to_read_is_this_attempts_creation() {
    const LIMIT: usize = 256 << 10;
    let emu = emulator().await;
    let front = Hostile::start(
        "127.0.0.1",
        Some(emu.origin().to_owned()),
        |seen: Seen, upstream: Upstream| async move {
            let (status, _, body) = upstream.forward(&seen).await;
            let mut body = body.to_vec();
            if is_order_post(&seen) && status.is_success() {
                // Still the order's JSON, padded past the client's limit.
                body.extend(std::iter::repeat_n(b' ', LIMIT + 1));
            }
            answer(
                status.as_u16(),
                &[("content-type", "application/json")],
                body,
            )
        },
    )
    .await;
    let client = builder_at(&front.origin(), ALPHA, &key_of(&emu, ALPHA))
        .submit_retry_policy(fast())
        .max_response_bytes(LIMIT)
        .build()
        .unwrap();
    let submission = submit_tee(&client).await;
    assert!(
        matches!(submission.submitted, Submitted::Created(_)),
        "{submission:?}"
    );
    let results: Vec<_> = submission.attempts.iter().map(|a| &a.result).collect();
    assert_eq!(results, [&AttemptResult::CreatedUnreadable]);
    assert_eq!(emu.order_count(ALPHA), 1);
}

// The guard `(300..400).contains(&status)` → `false`: a redirect was recorded as an intermediary's
// answer. The `POST` went through (billed), its answer was a redirect, never followed.
#[tokio::test]
async fn a_redirected_attempt_is_recorded_as_redirected() {
    let emu = emulator().await;
    let front = Hostile::start(
        "127.0.0.1",
        Some(emu.origin().to_owned()),
        |seen: Seen, upstream: Upstream| async move {
            if is_order_post(&seen) {
                upstream.forward(&seen).await;
                return answer(302, &[("location", "http://127.0.0.2:9/elsewhere")], "");
            }
            upstream.relay(&seen).await
        },
    )
    .await;
    let client = submitting(&front.origin(), &emu, fast(), Duration::from_secs(10));
    let submission = submit_tee(&client).await;
    assert_eq!(
        submission.attempts[0].result,
        AttemptResult::Redirected(302),
        "{submission:?}"
    );
    assert!(matches!(submission.submitted, Submitted::AlreadyExisted(_)));
    assert_eq!(emu.order_count(ALPHA), 1);
}

// The match arm `Error::Intermediary { .. }` deleted: a firewall's HTML page (here a 403, after the
// order went through) was recorded as the service's own 403, which would mean nothing was placed.
#[tokio::test]
async fn a_firewalls_page_is_recorded_as_an_intermediarys() {
    let emu = emulator().await;
    let front = Hostile::start(
        "127.0.0.1",
        Some(emu.origin().to_owned()),
        |seen: Seen, upstream: Upstream| async move {
            if is_order_post(&seen) {
                upstream.forward(&seen).await;
                return html_page(403);
            }
            upstream.relay(&seen).await
        },
    )
    .await;
    let client = submitting(&front.origin(), &emu, fast(), Duration::from_secs(10));
    let submission = submit_tee(&client).await;
    let results: Vec<_> = submission.attempts.iter().map(|a| &a.result).collect();
    assert_eq!(results, [&AttemptResult::Intermediary(403)]);
    assert!(matches!(submission.submitted, Submitted::AlreadyExisted(_)));
    assert_eq!(emu.order_count(ALPHA), 1);
}

// The guard `matches!(error, Error::Timeout { .. })` → `false`: a timeout was recorded as a failed
// connection.
#[tokio::test]
async fn an_attempt_that_timed_out_is_recorded_as_a_timeout() {
    let emu = emulator().await;
    let plan = FaultPlan {
        delay: Duration::from_secs(3),
        ..FaultPlan::first_post(&[Fault::DelayPastTimeout], 0)
    };
    let proxy = FaultProxy::start(emu.origin(), plan).await;
    let client = submitting(&proxy.base_url(), &emu, fast(), Duration::from_millis(500));
    let submission = submit_tee(&client).await;
    let results: Vec<_> = submission.attempts.iter().map(|a| &a.result).collect();
    assert_eq!(
        results,
        [&AttemptResult::Timeout, &AttemptResult::AlreadyExists]
    );
    assert_eq!(emu.order_count(ALPHA), 1);
}

// The guard `matches!(error, Error::Timeout { .. })` → `true`: a reset connection was recorded as a
// timeout.
#[tokio::test]
async fn an_attempt_whose_connection_was_reset_is_recorded_so() {
    let emu = emulator().await;
    let proxy = FaultProxy::start(emu.origin(), FaultPlan::first_post(&[Fault::Reset], 0)).await;
    let client = submitting(&proxy.base_url(), &emu, fast(), Duration::from_secs(10));
    let submission = submit_tee(&client).await;
    let results: Vec<_> = submission.attempts.iter().map(|a| &a.result).collect();
    assert_eq!(
        results,
        [&AttemptResult::Connection, &AttemptResult::Created]
    );
}

// The guard `not_sent` → `false`: attempts that could not connect (nothing sent) were recorded as
// failed connections, which may have placed the order.
#[tokio::test]
async fn attempts_that_could_not_connect_are_recorded_as_not_sent() {
    let emu = emulator().await;
    // A port nobody listens on until the forwarder below takes it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut policy = RetryPolicy::default()
        .with_max_attempts(12)
        .with_base_delay(Duration::from_millis(20))
        .with_jitter(Jitter::Fixed(1.0));
    policy.max_delay = Duration::from_millis(100);
    let client = submitting(
        &format!("http://127.0.0.1:{port}"),
        &emu,
        policy,
        Duration::from_secs(10),
    );
    let order = tee_submission(&new_external_order_id());
    let submitted = tokio::spawn(async move {
        client
            .orders()
            .submit_with(&order, &SubmitOptions::new().preflight(false))
            .await
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    let upstream: std::net::SocketAddr =
        emu.origin().trim_start_matches("http://").parse().unwrap();
    let forwarder = tokio::spawn(async move {
        loop {
            let Ok((mut inbound, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut outbound = tokio::net::TcpStream::connect(upstream).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    let submission = submitted.await.unwrap().unwrap();
    forwarder.abort();
    let (last, refused) = submission.attempts.split_last().unwrap();
    assert_eq!(last.result, AttemptResult::Created, "{submission:?}");
    assert!(!refused.is_empty(), "{submission:?}");
    for attempt in refused {
        assert_eq!(attempt.result, AttemptResult::NotSent, "{submission:?}");
        assert!(!attempt.result.may_have_been_processed());
    }
}

// The match arm `Error::Unauthorized { .. }` deleted: a 401 was taken for a refusal and checked
// against a lookup (sent with the same refused key). It is returned as is.
#[tokio::test]
async fn a_401_is_returned_without_a_lookup() {
    let emu = emulator().await;
    let proxy = FaultProxy::start(emu.origin(), FaultPlan::none()).await;
    let client = builder_at(
        &proxy.base_url(),
        ALPHA,
        "csk_00000000000000000000000000000000",
    )
    .submit_retry_policy(fast())
    .build()
    .unwrap();
    let outcome = client
        .orders()
        .submit_with(
            &tee_submission(&new_external_order_id()),
            &SubmitOptions::new().preflight(false),
        )
        .await;
    assert!(
        matches!(outcome, Err(Error::Unauthorized { .. })),
        "{outcome:?}"
    );
    let exchanges = proxy.exchanges();
    assert_eq!(exchanges.len(), 1, "{exchanges:?}");
    assert!(exchanges[0].is_order_post());
}

// The guard `error::is_service_refusal(&error)` → `false`: a refusal of the `POST` was returned as is,
// without the lookup that finds the order an earlier run placed (here its product changed since, so
// the service refuses the request now).
#[tokio::test]
async fn a_refused_post_of_an_order_that_exists_is_found() {
    let emu = emulator().await;
    let order = tee_submission(&new_external_order_id());
    let first = client(&emu, ALPHA).orders().submit(&order).await.unwrap();
    let front = Hostile::start(
        "127.0.0.1",
        Some(emu.origin().to_owned()),
        |seen: Seen, upstream: Upstream| async move {
            if is_order_post(&seen) {
                return envelope(400, "Bad Request");
            }
            upstream.relay(&seen).await
        },
    )
    .await;
    let rerun = submitting(&front.origin(), &emu, fast(), Duration::from_secs(10))
        .orders()
        .submit_with(&order, &SubmitOptions::new().preflight(false))
        .await
        .unwrap();
    match &rerun.submitted {
        Submitted::AlreadyExisted(existing) => assert_eq!(existing.id, first.order().id),
        other => panic!("expected AlreadyExisted, got {other:?}"),
    }
    assert_eq!(rerun.attempts[0].result, AttemptResult::Status(400));
}

// `undecided_or`'s guard `!error.may_have_been_processed()` → `false`, or its `!` deleted: after a
// 500 (the order may exist), a later refusal whose lookup found nothing was reported, as if nothing
// had been placed. No later answer can say that: the error stays the one that says it may exist.
#[tokio::test]
async fn a_refusal_after_an_answer_that_may_have_placed_the_order_stays_undecided() {
    let emu = emulator().await;
    let posts = Arc::new(Mutex::new(0));
    let front = Hostile::start("127.0.0.1", Some(emu.origin().to_owned()), {
        let posts = posts.clone();
        move |seen: Seen, upstream: Upstream| {
            let posts = posts.clone();
            async move {
                if is_order_post(&seen) {
                    let number = {
                        let mut posts = posts.lock().unwrap();
                        *posts += 1;
                        *posts
                    };
                    return if number == 1 {
                        envelope(500, "Internal Server Error")
                    } else {
                        envelope(400, "Bad Request")
                    };
                }
                upstream.relay(&seen).await
            }
        }
    })
    .await;
    let outcome = submitting(&front.origin(), &emu, fast(), Duration::from_secs(10))
        .orders()
        .submit(&tee_submission(&new_external_order_id()))
        .await;
    let error = outcome.unwrap_err();
    assert!(error.may_have_been_processed(), "{error:?}");
    assert!(matches!(error, Error::Server { .. }), "{error:?}");
    assert_eq!(*posts.lock().unwrap(), 2);
}

// `undecided_or`'s guard → `true`: after an answer lost past the commit, the 409 whose order the
// lookups never showed was reported as the lost answer's error rather than the 409's, which says the
// order exists.
#[tokio::test]
async fn a_409_the_lookups_never_show_is_reported_as_a_conflict() {
    let emu = emulator().await;
    let proxy = FaultProxy::start(
        emu.origin(),
        FaultPlan::first_post(&[Fault::LaggingLookup], 100),
    )
    .await;
    let client = submitting(&proxy.base_url(), &emu, fast(), Duration::from_secs(10));
    let error = client
        .orders()
        .submit(&tee_submission(&new_external_order_id()))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Conflict { .. }), "{error:?}");
    assert!(error.may_have_been_processed());
    assert_eq!(emu.order_count(ALPHA), 1);
}

/// A hostile front whose lookups answer an empty page while `lagging` says so of the time since the
/// first lookup; every request forwarded otherwise. Returns it and when each lookup arrived.
async fn lagging_front(
    emu: &Emulator,
    lagging: fn(Duration) -> bool,
) -> (Hostile, Arc<Mutex<Vec<Instant>>>) {
    let lookups = Arc::new(Mutex::new(Vec::<Instant>::new()));
    let front = Hostile::start("127.0.0.1", Some(emu.origin().to_owned()), {
        let lookups = lookups.clone();
        move |seen: Seen, upstream: Upstream| {
            let lookups = lookups.clone();
            async move {
                if !is_lookup(&seen) {
                    return upstream.relay(&seen).await;
                }
                let since_first = {
                    let mut lookups = lookups.lock().unwrap();
                    lookups.push(Instant::now());
                    lookups[0].elapsed()
                };
                if lagging(since_first) {
                    empty_lookup(seen, upstream).await
                } else {
                    upstream.relay(&seen).await
                }
            }
        }
    })
    .await;
    (front, lookups)
}

/// One attempt, and lookups `base`, then twice, four times… `base` apart (no jitter), at most `most`.
fn paced(base: Duration, most: Duration) -> RetryPolicy {
    let mut policy = RetryPolicy::default()
        .with_max_attempts(1)
        .with_base_delay(base)
        .with_jitter(Jitter::Fixed(1.0));
    policy.max_delay = most;
    policy
}

// `lookup`'s `n < tries` → `n == tries` or `n > tries`: the lookups after a 409 went out back to back,
// so an index that lags a few hundred milliseconds was never seen to show the order.
#[tokio::test]
async fn the_lookups_after_a_409_are_paced_to_outlast_a_lagging_index() {
    let emu = emulator().await;
    let order = tee_submission(&new_external_order_id());
    client(&emu, ALPHA).orders().submit(&order).await.unwrap();
    let (front, lookups) = lagging_front(&emu, |since| since < Duration::from_millis(250)).await;
    let rerun = submitting(
        &front.origin(),
        &emu,
        paced(Duration::from_millis(100), Duration::from_secs(1)),
        Duration::from_secs(10),
    )
    .orders()
    .submit(&order)
    .await;
    assert!(
        matches!(
            rerun.as_ref().map(|s| &s.submitted),
            Ok(Submitted::AlreadyExisted(_))
        ),
        "{rerun:?}"
    );
    let lookups = lookups.lock().unwrap();
    assert!(lookups.len() >= 3, "{} lookups", lookups.len());
    for pair in lookups.windows(2) {
        assert!(pair[1] - pair[0] >= Duration::from_millis(100));
    }
}

// `lookup`'s `n < tries` → `n <= tries`: after its last lookup found nothing, `submit` waited one more
// backoff before saying so.
#[tokio::test]
async fn a_lookup_that_never_finds_the_order_gives_up_after_its_last_try() {
    let emu = emulator().await;
    let order = tee_submission(&new_external_order_id());
    client(&emu, ALPHA).orders().submit(&order).await.unwrap();
    let (front, lookups) = lagging_front(&emu, |_| true).await;
    let outcome = submitting(
        &front.origin(),
        &emu,
        paced(Duration::from_millis(300), Duration::from_millis(300)),
        Duration::from_secs(10),
    )
    .orders()
    .submit(&order)
    .await;
    let returned = Instant::now();
    let error = outcome.unwrap_err();
    assert!(matches!(error, Error::Conflict { .. }), "{error:?}");
    let lookups = lookups.lock().unwrap();
    assert_eq!(lookups.len(), 5, "the lookups after a 409");
    let after_last = returned - lookups[4];
    assert!(
        after_last < Duration::from_millis(200),
        "returned {after_last:?} after the last lookup"
    );
}
