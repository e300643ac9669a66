//! The per-store rate limit with the limit on: a burst of ten, then two per second; 429 with Retry-After
//! and no `error`; rate-limit headers on authenticated answers; nothing processed when limited.
//!
//! Tokens come back every 500 ms, so the exact counts are asserted when the requests took less than
//! 450 ms (always, unless the machine is badly overloaded); otherwise only the bounds are.

use std::time::{Duration, Instant};

use reqwest::Method;

use crate::common::*;

/// Requests done within this time cannot have gained a token back.
const NO_REFILL: Duration = Duration::from_millis(450);

async fn limited() -> (store_api_fixtures::Emulator, Api) {
    let emu = builder().rate_limit(true).start().await.unwrap();
    let api = Api::new(&emu);
    (emu, api)
}

#[track_caller]
fn header_number(answer: &Answer, name: &str) -> u64 {
    answer
        .header(name)
        .unwrap_or_else(|| panic!("missing {name}: {:?}", answer.headers))
        .parse()
        .unwrap()
}

#[track_caller]
fn assert_limited(answer: &Answer) {
    answer.error(429, Msg::AnyString);
    let retry_after = header_number(answer, "retry-after");
    assert!((1..=60).contains(&retry_after), "Retry-After {retry_after}");
}

/// Sends `GET /status` until the first 429; returns the answers that passed, the 429, and whether it all
/// happened before any token could come back.
async fn drain(api: &Api, store: &str) -> (Vec<Answer>, Answer, bool) {
    let started = Instant::now();
    let mut passed = Vec::new();
    loop {
        let answer = api.get(store, "/status").await;
        if answer.status == 429 {
            let fast = started.elapsed() < NO_REFILL;
            assert!(passed.len() >= 10, "only {} requests passed", passed.len());
            if fast {
                assert_eq!(passed.len(), 10, "a burst of ten");
            }
            return (passed, answer, fast);
        }
        answer.ok(200);
        passed.push(answer);
        assert!(passed.len() <= 20, "the limit never applied");
    }
}

#[tokio::test]
async fn ten_pass_the_eleventh_is_429_with_retry_after() {
    let (_emu, api) = limited().await;
    let (passed, refused, fast) = drain(&api, ALPHA).await;
    for (i, answer) in passed.iter().enumerate() {
        assert_eq!(header_number(answer, "x-ratelimit-limit"), 10);
        let remaining = header_number(answer, "x-ratelimit-remaining");
        if fast {
            assert_eq!(remaining, 9 - i as u64);
        }
        assert!(remaining <= 9);
        let reset = header_number(answer, "x-ratelimit-reset");
        assert!(reset <= 5, "reset {reset}");
    }
    assert_limited(&refused);
    // Every kind of request shares the bucket.
    assert_limited(&api.get(ALPHA, "/catalog-products").await);
    assert_limited(&api.get(ALPHA, "/orders/ord_nope").await);
}

#[tokio::test]
async fn headers_are_on_every_authenticated_answer() {
    let (_emu, api) = limited().await;
    let started = Instant::now();
    let answers = [
        api.get(ALPHA, "/status").await,
        api.get(ALPHA, "/products").await,
        api.get(ALPHA, "/products/prod_nope").await,
        api.get(ALPHA, "/orders?limit=101").await,
        api.post(ALPHA, "/orders", &simple_order(Some("h-1"))).await,
        api.post(ALPHA, "/orders", &simple_order(Some("h-1"))).await,
    ];
    let fast = started.elapsed() < NO_REFILL;
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    assert_eq!(statuses, [200, 200, 404, 400, 201, 409]);
    for (i, answer) in answers.iter().enumerate() {
        assert_eq!(header_number(answer, "x-ratelimit-limit"), 10);
        let remaining = header_number(answer, "x-ratelimit-remaining");
        if fast {
            assert_eq!(remaining, 9 - i as u64);
        }
        assert!(remaining <= 9);
        assert!(answer.header("x-ratelimit-reset").is_some());
    }
}

#[tokio::test]
async fn a_limited_post_creates_nothing() {
    let (emu, api) = limited().await;
    let receiver = Receiver::start().await;
    api.webhooks(
        ALPHA,
        &serde_json::json!({ "orders_create": receiver.url("/hook") }),
    )
    .await;
    let (_, _, fast) = drain(&api, ALPHA).await;
    let answer = api
        .post(ALPHA, "/orders", &simple_order(Some("limited-1")))
        .await;
    if fast || answer.status == 429 {
        assert_limited(&answer);
        assert_eq!(emu.order_count(ALPHA), 0);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            receiver.received().is_empty(),
            "no orders_create for a request that was not processed"
        );
        assert!(api.deliveries(ALPHA).await.is_empty());
    }
}

#[tokio::test]
async fn stores_have_separate_buckets_and_tokens_come_back() {
    let (_emu, api) = limited().await;
    drain(&api, ALPHA).await;
    // Beta's bucket is full.
    let beta = api.get(BETA, "/status").await;
    beta.ok(200);
    assert_eq!(header_number(&beta, "x-ratelimit-remaining"), 9);
    // Control endpoints are not limited.
    api.control(Method::GET, "/stores", None).await.ok(200);

    // Two per second: one token is back after half a second, and only one.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let started = Instant::now();
    let again = api.get(ALPHA, "/status").await;
    again.ok(200);
    assert_eq!(header_number(&again, "x-ratelimit-remaining"), 0);
    let next = api.get(ALPHA, "/status").await;
    if started.elapsed() < Duration::from_millis(250) {
        assert_limited(&next);
    }
}

#[tokio::test]
async fn every_answer_to_an_identified_store_carries_the_headers() {
    let (emu, api) = limited().await;
    let started = Instant::now();
    let has_headers = |answer: &Answer| {
        [
            "x-ratelimit-limit",
            "x-ratelimit-remaining",
            "x-ratelimit-reset",
        ]
        .iter()
        .all(|name| answer.header(name).is_some())
    };
    // A wrong key for a known store: 401 with the bucket as it stands, and no token spent.
    for _ in 0..3 {
        let answer = api
            .call(Method::GET, ALPHA, Some("csk_wrong"), "/status", None)
            .await;
        answer.error(401, Msg::Exact("Invalid API key"));
        assert!(has_headers(&answer), "{:?}", answer.headers);
        assert_eq!(header_number(&answer, "x-ratelimit-remaining"), 10);
    }
    // An unserved path under the store, with its key: 404 as before, counted, with the headers.
    let unserved = api.get(ALPHA, "/widgets").await;
    unserved.error(
        404,
        Msg::Exact("Cannot GET /store-api/2026-08/stores/store_alpha/widgets"),
    );
    assert!(has_headers(&unserved), "{:?}", unserved.headers);
    let not_allowed = api
        .call(Method::DELETE, ALPHA, Some(ALPHA_KEY), "/orders", None)
        .await;
    not_allowed.error(
        404,
        Msg::Exact("Cannot DELETE /store-api/2026-08/stores/store_alpha/orders"),
    );
    assert!(has_headers(&not_allowed), "{:?}", not_allowed.headers);
    // A 400 of a served route.
    let bad_query = api.get(ALPHA, "/orders?limit=1000").await;
    assert_eq!(bad_query.status, 400);
    assert!(has_headers(&bad_query), "{:?}", bad_query.headers);
    if started.elapsed() < NO_REFILL {
        assert_eq!(
            header_number(&bad_query, "x-ratelimit-remaining"),
            7,
            "three spent"
        );
    }
    // An inactive store with its key is known too.
    emu.set_active(BETA, false).unwrap();
    let inactive = api.get(BETA, "/status").await;
    inactive.error(401, Msg::Exact("The store is not active"));
    assert!(has_headers(&inactive), "{:?}", inactive.headers);

    // Nothing identifies the store: no headers.
    let unknown = api
        .call(Method::GET, "store_nope", Some(ALPHA_KEY), "/status", None)
        .await;
    unknown.error(401, Msg::Exact("Invalid API key"));
    assert!(unknown.header("x-ratelimit-limit").is_none());
    let keyless = api.call(Method::GET, ALPHA, None, "/widgets", None).await;
    keyless.error(404, Msg::AnyString);
    assert!(keyless.header("x-ratelimit-limit").is_none());
}
