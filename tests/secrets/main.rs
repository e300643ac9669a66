//! The API key stays secret: not in the client's `Debug`, not in any error, not in TRACE-level logs
//! (the client's spans and the HTTP stack's own events), while the spans still say what happened.
//!
//! A test binary of its own: tracing caches each callsite's interest process-wide, so a span first hit
//! by another test's thread while only that thread's subscriber (or none) was installed could be
//! skipped under this test's capturing subscriber. Alone in its process, nothing else races it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use store_api::{Error, new_external_order_id};
use store_api_tests::capture::capture_traces;
use store_api_tests::identified;
use store_api_tests::proxy::{Fault, FaultPlan, FaultProxy};
use store_api_tests::{ALPHA, builder_at, emulator, key_of, tee_order};

/// A base URL where nothing listens (a port just released).
async fn closed_port() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

// Current-thread runtime: the capture is per thread, and every task of the test runs on this one.
#[tokio::test(flavor = "current_thread")]
async fn the_key_never_shows_in_debug_errors_or_traces() {
    let emu = emulator().await;
    let key = key_of(&emu, ALPHA);
    let wrong_key = "csk_0123456789abcdef0123456789abcdef";
    let (captured, _guard) = capture_traces();

    let good = builder_at(&emu.base_url(), ALPHA, &key).build().unwrap();
    let bad = builder_at(&emu.base_url(), ALPHA, wrong_key)
        .build()
        .unwrap();
    let slow_proxy = FaultProxy::start(
        emu.origin(),
        FaultPlan::always(&[Fault::DelayPastTimeout], Duration::from_millis(300)),
    )
    .await;
    let slow = builder_at(&slow_proxy.base_url(), ALPHA, &key)
        .timeout(Duration::from_millis(100))
        .retry_policy(store_api::RetryPolicy::never())
        .build()
        .unwrap();
    let nowhere = builder_at(&closed_port().await, ALPHA, &key)
        .build()
        .unwrap();

    good.status().await.unwrap();
    let order = tee_order(Some(&new_external_order_id()));
    good.orders()
        .submit(&identified(order.clone()))
        .await
        .unwrap();
    let errors: Vec<Error> = vec![
        bad.status().await.unwrap_err(),
        good.orders().get("ord_nope").await.unwrap_err(),
        good.orders().create(&order).await.unwrap_err(),
        good.orders()
            .create(&shipped_to(tee_order(None), "ZZ"))
            .await
            .unwrap_err(),
        slow.status().await.unwrap_err(),
        nowhere.status().await.unwrap_err(),
    ];
    let kinds: Vec<_> = errors.iter().map(kind).collect();
    assert_eq!(
        kinds,
        [
            "unauthorized",
            "not found",
            "conflict",
            "bad request",
            "timeout",
            "transport"
        ]
    );

    for secret in [key.as_str(), wrong_key] {
        for client in [&good, &bad, &slow, &nowhere] {
            assert!(!format!("{client:?}").contains(secret), "{client:?}");
        }
        for error in &errors {
            assert!(!format!("{error}").contains(secret), "{error}");
            assert!(!format!("{error:?}").contains(secret), "{error:?}");
        }
    }

    let logs = captured.text();
    assert!(
        !logs.contains(&key) && !logs.contains(wrong_key),
        "the key was logged"
    );
    // Enough was logged to be worth checking: the try spans carry method, operation, the full URL and
    // the status.
    for expected in [
        "http.client.request",
        "store_api.operation",
        "http.request.method=\"GET\"",
        "http.request.method=\"POST\"",
        "store_api.operation=\"get_status\"",
        "store_api.operation=\"create_order\"",
        "store_api.operation=\"get_order\"",
        "url.full=",
        "http.response.status_code=200",
        "http.response.status_code=201",
        "http.response.status_code=401",
        "http.response.status_code=404",
        "http.response.status_code=409",
    ] {
        assert!(
            logs.contains(expected),
            "{expected} not in the logs:\n{logs}"
        );
    }
}

fn kind(error: &Error) -> &'static str {
    match error {
        Error::Unauthorized { .. } => "unauthorized",
        Error::NotFound { .. } => "not found",
        Error::Conflict { .. } => "conflict",
        Error::BadRequest { .. } => "bad request",
        Error::Timeout { .. } => "timeout",
        Error::Transport { .. } => "transport",
        _ => "other",
    }
}

/// The request shipped to `country` instead.
fn shipped_to(mut order: store_api::NewOrder, country: &str) -> store_api::NewOrder {
    order.shipping_address.address.country = country.parse().unwrap();
    order
}
