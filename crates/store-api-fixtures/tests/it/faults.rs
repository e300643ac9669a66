//! Faults on demand, over the control API and in process: each kind answers (or fails to answer) as
//! documented, and commits exactly when it says it does.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use store_api_fixtures::{FAULT_HEADER, Fault, FaultKind};

use crate::common::*;

async fn inject(api: &Api, fault: Value) {
    api.control(Method::POST, "/faults", Some(&fault))
        .await
        .ok(204);
}

/// `POST /orders` of alpha with external id `id`, as raw HTTP: the answer, or the transport error.
async fn post_order(api: &Api, id: &str) -> Result<reqwest::Response, reqwest::Error> {
    api.http
        .post(format!("{}/stores/{ALPHA}/orders", api.base))
        .header("X-API-Key", ALPHA_KEY)
        .json(&simple_order(Some(id)))
        .send()
        .await
}

#[tokio::test]
async fn an_error_status_processes_nothing_and_fires_as_often_as_asked() {
    let (emu, api) = start().await;
    inject(
        &api,
        json!({ "kind": "status", "status": 503, "operation": "create_order", "store": ALPHA, "times": 2 }),
    )
    .await;
    // Another operation and another store are not touched.
    api.get(ALPHA, "/status").await.ok(200);
    api.create_order(BETA, &beta_order(Some("f-beta"))).await;
    for _ in 0..2 {
        let response = post_order(&api, "f-503").await.unwrap();
        assert_eq!(response.status(), 503);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["statusCode"], 503);
        assert_eq!(body["error"], "Service Unavailable");
        assert!(
            body["message"].as_str().unwrap().contains("injected"),
            "{body}"
        );
    }
    assert_eq!(emu.order_count(ALPHA), 0, "nothing was processed");
    assert_eq!(post_order(&api, "f-503").await.unwrap().status(), 201);
    assert_eq!(emu.order_count(ALPHA), 1);
}

#[tokio::test]
async fn a_rate_limit_sends_the_retry_after_verbatim() {
    let (emu, api) = start().await;
    inject(&api, json!({ "kind": "rate_limited", "retryAfter": "-1" })).await;
    let response = post_order(&api, "f-429").await.unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "-1");
    let body: Value = response.json().await.unwrap();
    assert!(
        body.get("error").is_none(),
        "a 429 has no error field: {body}"
    );
    assert_eq!(emu.order_count(ALPHA), 0);
}

#[tokio::test]
async fn a_reset_processes_nothing_and_a_dropped_answer_processes_the_order() {
    let (emu, api) = start().await;
    inject(
        &api,
        json!({ "kind": "reset", "operation": "create_order" }),
    )
    .await;
    let error = post_order(&api, "f-reset").await.unwrap_err();
    assert!(!error.is_status(), "{error:?}");
    assert_eq!(emu.order_count(ALPHA), 0);

    emu.inject_fault(Fault::new(FaultKind::DropAfterCommit).operation("create_order"))
        .unwrap();
    let error = post_order(&api, "f-drop").await.unwrap_err();
    assert!(!error.is_status(), "{error:?}");
    assert_eq!(
        emu.order_count(ALPHA),
        1,
        "committed, then the answer was lost"
    );
    // The connection pool recovers: the next request is answered.
    assert_eq!(post_order(&api, "f-drop").await.unwrap().status(), 409);
}

#[tokio::test]
async fn a_delay_holds_the_answer_and_an_error_after_commit_hides_the_order() {
    let (emu, api) = start().await;
    inject(
        &api,
        json!({ "kind": "delay", "ms": 300, "operation": "get_status" }),
    )
    .await;
    let started = Instant::now();
    api.get(ALPHA, "/status").await.ok(200);
    assert!(started.elapsed() >= Duration::from_millis(300));

    emu.inject_fault(Fault::new(FaultKind::StatusAfterCommit { status: 500 }))
        .unwrap();
    let response = post_order(&api, "f-500").await.unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(emu.order_count(ALPHA), 1, "processed before the 500");
}

#[tokio::test]
async fn faults_are_listed_cleared_and_checked() {
    let (emu, api) = start().await;
    inject(&api, json!({ "kind": "reset", "store": BETA, "times": 3 })).await;
    let listed = api.control(Method::GET, "/faults", None).await;
    assert_eq!(
        listed.ok(200),
        &json!([{ "kind": "reset", "store": BETA, "times": 3 }])
    );
    assert_eq!(emu.pending_faults().len(), 1);
    api.control(Method::DELETE, "/faults", None).await;
    assert!(emu.pending_faults().is_empty());
    api.create_order(BETA, &beta_order(Some("f-cleared"))).await;

    api.control(
        Method::POST,
        "/faults",
        Some(&json!({ "kind": "status", "status": 200, "operation": "fly", "times": 0 })),
    )
    .await
    .error(
        400,
        Msg::List(&[
            "status must be between 400 and 599, not 200",
            "fly is not an operation of the Store API",
            "times must be at least 1",
        ]),
    );
    let unknown = api
        .control(Method::POST, "/faults", Some(&json!({ "kind": "explode" })))
        .await;
    assert_eq!(unknown.status, 400, "{}", unknown.json);
    assert!(
        emu.inject_fault(Fault::new(FaultKind::Delay {
            delay: Duration::from_secs(3600)
        }))
        .is_err()
    );
}

#[tokio::test]
async fn a_foreign_conflict_processes_the_order_and_answers_a_proxys_page() {
    let (emu, api) = start().await;
    inject(
        &api,
        json!({ "kind": "foreign_conflict", "operation": "create_order" }),
    )
    .await;
    let response = post_order(&api, "f-409").await.unwrap();
    assert_eq!(response.status(), 409);
    assert_eq!(response.headers()["content-type"], "text/html");
    assert!(response.text().await.unwrap().starts_with("<html>"));
    assert_eq!(emu.order_count(ALPHA), 1, "processed before the 409");
}

#[tokio::test]
async fn a_cut_body_sends_the_status_and_half_the_body_then_ends_the_connection() {
    for (kind, label) in [
        (FaultKind::TruncatedBody, "truncated_body"),
        (FaultKind::ResetMidBody, "reset_mid_body"),
    ] {
        let (emu, api) = start().await;
        // One of each path: in process for the first, over HTTP for the second.
        if kind == FaultKind::TruncatedBody {
            emu.inject_fault(Fault::new(kind).operation("create_order"))
                .unwrap();
        } else {
            inject(&api, json!({ "kind": label, "operation": "create_order" })).await;
        }
        let response = post_order(&api, "f-cut").await.unwrap();
        assert_eq!(response.status(), 201, "{label}");
        let length: usize = response.headers()["content-length"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            length > 100,
            "{label}: the whole order's length is announced"
        );
        let error = response.bytes().await.unwrap_err();
        assert!(error.is_body() || error.is_decode(), "{label}: {error:?}");
        assert_eq!(emu.order_count(ALPHA), 1, "{label}: processed");
        // The next request gets a whole answer.
        assert_eq!(post_order(&api, "f-cut").await.unwrap().status(), 409);
    }
}

#[tokio::test]
async fn an_empty_page_hides_what_the_store_holds_once() {
    let (emu, api) = start().await;
    api.create_order(ALPHA, &simple_order(Some("f-lag"))).await;
    inject(
        &api,
        json!({ "kind": "empty_page", "operation": "list_orders", "times": 1 }),
    )
    .await;
    let lookup = "/orders?filter[externalOrderId]=f-lag";
    let lagging = api.get(ALPHA, lookup).await;
    let page = lagging.ok(200);
    assert_eq!(page["items"], json!([]));
    assert_eq!(page["totalItems"], 0);
    let caught_up = api.get(ALPHA, lookup).await;
    assert_eq!(caught_up.ok(200)["totalItems"], 1);
    // Not a page: sent unchanged.
    emu.inject_fault(Fault::new(FaultKind::EmptyPage).operation("get_status"))
        .unwrap();
    api.get(ALPHA, "/status").await.ok(200);
}

#[tokio::test]
async fn a_fault_header_faults_that_request_alone() {
    let (emu, api) = start().await;
    let send = |header: String| {
        api.http
            .post(format!("{}/stores/{ALPHA}/orders", api.base))
            .header("X-API-Key", ALPHA_KEY)
            .header(FAULT_HEADER, header)
            .json(&simple_order(Some("f-header")))
            .send()
    };
    let answer = send(FaultKind::Status { status: 502 }.header_value())
        .await
        .unwrap();
    assert_eq!(answer.status(), 502);
    assert_eq!(emu.order_count(ALPHA), 0);
    let answer = send(FaultKind::ForeignConflict.header_value())
        .await
        .unwrap();
    assert_eq!(answer.status(), 409);
    assert_eq!(emu.order_count(ALPHA), 1);
    assert!(emu.pending_faults().is_empty(), "nothing was queued");

    for (header, problem) in [
        ("{\"kind\":\"fly\"}", "kind must be one of"),
        (
            "{\"kind\":\"reset\",\"times\":2}",
            "operation, store and times are not allowed",
        ),
        (
            "{\"kind\":\"delay\",\"ms\":999999999}",
            "ms must be at most",
        ),
        ("not json", "expected ident"),
    ] {
        let answer = send(header.to_owned()).await.unwrap();
        assert_eq!(answer.status(), 400, "{header}");
        let body: Value = answer.json().await.unwrap();
        let message = body["message"].as_str().unwrap();
        assert!(
            message.starts_with(FAULT_HEADER) && message.contains(problem),
            "{header}: {message}"
        );
    }

    // From a non-loopback Host (DNS rebinding) the header is refused, like the control endpoints.
    let reset = FaultKind::Reset.header_value();
    let answer = api
        .status_with(&[("Host", "evil.example:80"), (FAULT_HEADER, &reset)])
        .await;
    assert_eq!(answer.status(), 403);
}

/// A client that never follows a redirect: the emulator's answer itself is what is checked.
fn not_following() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_redirect_points_at_another_host_and_processes_nothing() {
    let (emu, api) = start().await;
    let http = not_following();
    let port = emu.addr().port();
    let target = format!("/store-api/2026-08/stores/{ALPHA}/orders?source=test");
    for (round, status) in store_api_fixtures::faults::REDIRECT_STATUSES
        .into_iter()
        .enumerate()
    {
        let fault = FaultKind::Redirect {
            status,
            location: None,
        };
        let mut request = http
            .post(format!("{}{target}", api.origin))
            .header("X-API-Key", ALPHA_KEY)
            .json(&simple_order(Some("f-redirect")));
        // Every other one by header, the rest queued in process.
        if round % 2 == 0 {
            request = request.header(FAULT_HEADER, fault.header_value());
        } else {
            emu.inject_fault(Fault::new(fault).operation("create_order"))
                .unwrap();
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), status);
        assert_eq!(
            response.headers()["location"],
            format!("http://127.0.0.2:{port}{target}").as_str(),
            "the same request at another host"
        );
        assert_eq!(response.headers()["content-type"], "text/html");
        assert!(response.text().await.unwrap().starts_with("<html>"));
    }
    assert_eq!(emu.order_count(ALPHA), 0, "nothing was processed");

    inject(
        &api,
        json!({ "kind": "redirect", "status": 308, "location": "https://elsewhere.example/x" }),
    )
    .await;
    let response = http
        .get(format!("{}/stores/{ALPHA}/status", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 308);
    assert_eq!(
        response.headers()["location"],
        "https://elsewhere.example/x"
    );

    api.control(
        Method::POST,
        "/faults",
        Some(&json!({ "kind": "redirect", "status": 304, "location": "/relative" })),
    )
    .await
    .error(
        400,
        Msg::List(&[
            "status must be one of 301, 302, 303, 307 and 308 for a redirect, not 304",
            "location must be an absolute http or https URL, not \"/relative\"",
        ]),
    );
}

#[tokio::test]
async fn a_foreign_page_is_an_intermediarys_html_and_processes_nothing() {
    let (emu, api) = start().await;
    for status in [403, 404, 408, 413, 502] {
        let fault = FaultKind::ForeignPage { status };
        let response = api
            .http
            .post(format!("{}/stores/{ALPHA}/orders", api.base))
            .header("X-API-Key", ALPHA_KEY)
            .header(FAULT_HEADER, fault.header_value())
            .json(&simple_order(Some("f-page")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), status);
        assert_eq!(response.headers()["content-type"], "text/html");
        let page = response.text().await.unwrap();
        assert!(
            page.starts_with(&format!("<html><body><h1>{status} ")),
            "{page}"
        );
        assert!(
            serde_json::from_str::<Value>(&page).is_err(),
            "not the envelope"
        );
    }
    assert_eq!(emu.order_count(ALPHA), 0, "nothing was processed");
    inject(
        &api,
        json!({ "kind": "foreign_page", "status": 403, "operation": "create_order" }),
    )
    .await;
    assert_eq!(post_order(&api, "f-page").await.unwrap().status(), 403);
    assert_eq!(emu.order_count(ALPHA), 0);
    assert_eq!(post_order(&api, "f-page").await.unwrap().status(), 201);
    api.control(
        Method::POST,
        "/faults",
        Some(&json!({ "kind": "foreign_page", "status": 302 })),
    )
    .await
    .error(
        400,
        Msg::List(&["status must be between 400 and 599, not 302"]),
    );
}

#[tokio::test]
async fn an_endless_body_processes_the_request_and_never_ends() {
    let (emu, api) = start().await;
    inject(
        &api,
        json!({ "kind": "endless_body", "operation": "create_order" }),
    )
    .await;
    let mut response = post_order(&api, "f-endless").await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert!(response.headers().get("content-length").is_none());
    let mut received = Vec::new();
    // Far more than any answer of the service; it keeps coming.
    while received.len() < 8 << 20 {
        let chunk = response
            .chunk()
            .await
            .unwrap()
            .expect("the body never ends");
        received.extend_from_slice(&chunk);
    }
    assert!(received.starts_with(b"{\"items\":[{\"id\":"));
    assert!(serde_json::from_slice::<Value>(&received).is_err());
    drop(response);
    assert_eq!(
        emu.order_count(ALPHA),
        1,
        "processed before the endless answer"
    );
    assert_eq!(post_order(&api, "f-endless").await.unwrap().status(), 409);
}

#[tokio::test]
async fn a_slow_body_sends_the_headers_then_trickles_the_whole_answer() {
    let (emu, api) = start().await;
    let created = api.create_order(ALPHA, &simple_order(Some("f-slow"))).await;
    let id = created["id"].as_str().unwrap();
    let path = format!("/orders/{id}");
    let whole = api.get(ALPHA, &path).await;
    whole.ok(200);

    // An HTTP client reads the trickled answer whole: the same order, byte for byte.
    let interval = Duration::from_millis(20);
    emu.inject_fault(
        Fault::new(FaultKind::SlowBody {
            interval,
            bytes: 256,
        })
        .operation("get_order"),
    )
    .unwrap();
    let started = Instant::now();
    let trickled = api.get(ALPHA, &path).await;
    assert_eq!(trickled.status, 200);
    assert_eq!(trickled.bytes, whole.bytes);
    let pieces = serde_json::to_vec(&created).unwrap().len() / 256;
    assert!(started.elapsed() >= interval * u32::try_from(pieces).unwrap());

    // The status and the headers, with the whole length, come first; the body a second later.
    let slow = FaultKind::SlowBody {
        interval: Duration::from_secs(1),
        bytes: 16,
    };
    assert_eq!(
        slow.header_value(),
        r#"{"kind":"slow_body","ms":1000,"bytes":16}"#
    );
    let mut response = api
        .http
        .get(format!("{}/stores/{ALPHA}/orders/{id}", api.base))
        .header("X-API-Key", ALPHA_KEY)
        .header(FAULT_HEADER, slow.header_value())
        .send()
        .await
        .unwrap();
    let headers_at = Instant::now();
    assert_eq!(response.status(), 200);
    let length: usize = response.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(length > 100, "the whole order's length is announced");
    let first = response.chunk().await.unwrap().unwrap();
    assert_eq!(first.len(), 16);
    assert!(headers_at.elapsed() >= Duration::from_millis(900));
}

#[tokio::test]
async fn an_unending_answer_does_not_hold_up_shutdown() {
    for kind in [
        FaultKind::EndlessBody,
        FaultKind::SlowBody {
            interval: Duration::from_secs(60),
            bytes: 1,
        },
    ] {
        let (emu, api) = start().await;
        emu.inject_fault(Fault::new(kind.clone()).operation("get_status"))
            .unwrap();
        let response = api.status_with(&[]).await;
        assert_eq!(response.status(), 200, "{kind:?}");
        // The answer is still being sent (and held here, unread) when the emulator stops.
        tokio::time::timeout(Duration::from_secs(10), emu.shutdown())
            .await
            .unwrap_or_else(|_| panic!("{kind:?}: shutdown waited for the answer"));
        drop(response);
    }
}
