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
    let answer = api
        .http
        .get(format!("{}/stores/{ALPHA}/status", api.base))
        .header("X-API-Key", ALPHA_KEY)
        .header("Host", "evil.example:80")
        .header(FAULT_HEADER, FaultKind::Reset.header_value())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 403);
}
