//! Shared helpers for the integration tests: emulators, clients with test settings, request bodies from
//! the seed, a fault-injecting proxy ([`proxy`]) and a tracing capture ([`capture`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod capture;
pub mod exploration;
pub mod hostile;
pub mod matrix;
pub mod proxy;
pub mod receivers;
pub mod recorded_session;
pub mod sim;
pub mod telemetry;

/// The workspace README's Rust examples, compiled as this crate's doctests so they cannot rot (the
/// README belongs to no published crate).
#[doc = include_str!("../../README.md")]
mod readme {}

use std::io::Write as _;
use std::time::Duration;

use serde_json::json;
use store_api::{
    Client, ClientBuilder, IdentifiedOrder, NewOrder, RateLimiter, RetryPolicy, Submission,
    new_external_order_id,
};
use store_api_fixtures::Emulator;

/// The variable that turns the slow tier on: `RUN_SLOW_TESTS=1 cargo test --workspace` (`.ci/run` sets it).
pub const RUN_SLOW_TESTS: &str = "RUN_SLOW_TESTS";

/// Whether a slow test should skip itself: true unless [`RUN_SLOW_TESTS`] is set (to anything but empty
/// or `0`), so `cargo test --workspace` stays quick after an edit while CI, which sets it, runs every
/// test (rust-analyzer's `test_utils::skip_slow_tests`). The slow tier: exhaustive explorations, soak
/// runs of a thousand submissions or more, Redis failovers and clusters beyond one smoke test.
///
/// A skipped test passes, so it says so on stderr, past the test harness's capture (which only shows a
/// passing test's output with `--nocapture`): `if store_api_tests::skip_slow_tests() { return; }`.
pub fn skip_slow_tests() -> bool {
    if std::env::var(RUN_SLOW_TESTS).is_ok_and(|value| !value.is_empty() && value != "0") {
        return false;
    }
    // libtest runs each test on a thread named after it.
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("(unnamed)");
    let _ = writeln!(
        std::io::stderr().lock(),
        "skipping slow test {name}: set {RUN_SLOW_TESTS}=1"
    );
    true
}

/// The seeded store with the most data (11 blanks, 10 products).
pub const ALPHA: &str = "store_alpha";
/// A second active store (cannot see `cp_cc1717`).
pub const BETA: &str = "store_beta";
/// The inactive store.
pub const GAMMA: &str = "store_gamma";

/// A valid 1×1 PNG.
pub const PNG_1X1: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0xDA, 0x63, 0x64, 0x60, 0xF8, 0x5F,
    0x0F, 0x00, 0x02, 0x87, 0x01, 0x80, 0xEB, 0x47, 0xBA, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];

/// An emulator for functional tests: no rate limit, artwork only from registered fake hosts, fast
/// webhook retries.
pub async fn emulator() -> Emulator {
    Emulator::builder()
        .rate_limit(false)
        .network_downloads(false)
        .webhook_backoff(Duration::from_millis(20))
        .start()
        .await
        .expect("the emulator starts")
}

/// An emulator with the service's real rate limit (a burst of ten, then two per second).
pub async fn emulator_with_rate_limit() -> Emulator {
    Emulator::builder()
        .rate_limit(true)
        .network_downloads(false)
        .start()
        .await
        .expect("the emulator starts")
}

/// The current key of a seeded store.
pub fn key_of(emu: &Emulator, store_id: &str) -> String {
    emu.store(store_id).expect("a seeded store").api_key
}

/// A limiter that never holds a test back (for an emulator whose limit is off).
pub fn relaxed_limiter() -> RateLimiter {
    RateLimiter::with_rate(1000, Duration::from_micros(100))
}

/// Retries with a short backoff, so faults cost milliseconds.
pub fn fast_retry() -> RetryPolicy {
    RetryPolicy::default()
        .with_max_attempts(10)
        .with_base_delay(Duration::from_millis(5))
}

/// Client settings for tests: its own relaxed limiter and fast retries, at `base_url`.
pub fn builder_at(base_url: &str, store_id: &str, api_key: &str) -> ClientBuilder {
    Client::builder()
        .base_url(base_url)
        .store_id(store_id)
        .api_key(api_key)
        .in_process_limiter(relaxed_limiter())
        .retry_policy(fast_retry())
        .submit_retry_policy(fast_retry())
        .timeout(Duration::from_secs(10))
}

/// A client of `store_id` straight to the emulator, with test settings.
pub fn client(emu: &Emulator, store_id: &str) -> Client {
    builder_at(&emu.base_url(), store_id, &key_of(emu, store_id))
        .build()
        .expect("valid settings")
}

/// A client of `store_id` on `emu` with the client's own settings (retries, timeout), the store's
/// current key and, when the emulator's rate limit is off, a [`relaxed_limiter`] (with it on, the
/// service's limit, as the client keeps by default). The emulator does not build clients (it does not
/// depend on `store-api`): every test that wants one from an emulator takes it here, or from
/// [`client`] with test settings.
pub fn client_of(emu: &Emulator, store_id: &str) -> Client {
    let mut builder = Client::builder()
        .base_url(emu.base_url())
        .store_id(store_id)
        .api_key(key_of(emu, store_id))
        // The emulator speaks plain HTTP, also when bound beyond loopback (`allow_remote`).
        .allow_insecure_http(true);
    if !emu.rate_limited() {
        builder = builder.in_process_limiter(relaxed_limiter());
    }
    builder.build().expect("valid settings")
}

/// A shipping address in Austin, TX.
pub fn shipping_address() -> serde_json::Value {
    json!({
        "firstName": "Ada",
        "lastName": "Lovelace",
        "address": {
            "streetAddress": "1 Main St",
            "cityOrTown": "Austin",
            "stateOrProvince": "TX",
            "zipOrPostalCode": "78701",
            "country": "US"
        }
    })
}

/// Builds a create-order request from its JSON form.
pub fn order_from(value: serde_json::Value) -> NewOrder {
    serde_json::from_value(value).expect("a well-formed create-order request")
}

/// `order`, which carries an external id, as [`Orders::submit`](store_api::Orders::submit) takes it.
pub fn identified(order: NewOrder) -> IdentifiedOrder {
    IdentifiedOrder::try_from(order).expect("an order with a usable external id")
}

/// One [`tee_submission`] with a new external id, submitted by `client` (the test fails on an error).
pub async fn submit_tee(client: &Client) -> Submission {
    client
        .orders()
        .submit(&tee_submission(&new_external_order_id()))
        .await
        .unwrap()
}

/// The seed in the environment variable `var` (a decimal `u64`), else `default`: how a seeded
/// exploration is replayed with another seed.
pub fn seed_from_env(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or(default)
}

/// [`tee_order`] with external id `external_id`, ready for `submit`.
pub fn tee_submission(external_id: &str) -> IdentifiedOrder {
    identified(tee_order(Some(external_id)))
}

/// One black M Sunset Tee of store_alpha, with this external id (none when `None`).
pub fn tee_order(external_id: Option<&str>) -> NewOrder {
    let mut body = json!({
        "lineItems": [{ "sku": "AA-TEE-SUN-BLK-M", "quantity": 1 }],
        "shippingAddress": shipping_address(),
    });
    if let Some(id) = external_id {
        body["externalOrderId"] = json!(id);
    }
    order_from(body)
}

/// The Sunset Tee of store_alpha, as the product `prod_copy_{n}` with variant ids and SKUs of its own
/// (`…-C{n}`): a copy to grow a store to a merchant's size with.
pub fn tee_copy(tee: &store_api::model::Product, n: usize) -> store_api::model::Product {
    let mut copy = tee.clone();
    copy.id = format!("prod_copy_{n}");
    copy.created_at = None;
    for variant in &mut copy.variants {
        variant.id = format!("{}_c{n}", variant.id);
        variant.sku = variant.sku.as_ref().map(|sku| format!("{sku}-C{n}"));
    }
    copy
}

/// Grows store_alpha by `count` copies of its Sunset Tee ([`tee_copy`] `0..count`) through the app's
/// control plane.
pub async fn grow_store(emu: &Emulator, count: usize) -> store_api::model::Product {
    let tee = client(emu, ALPHA)
        .products()
        .get("prod_alpha_sunset_tee")
        .await
        .expect("the seeded tee");
    for n in 0..count {
        emu.create_product(ALPHA, tee_copy(&tee, n))
            .expect("a new product");
    }
    tee
}

/// Posts `body` with `signature` (if any); returns the status and the response body.
pub async fn post_body(url: &str, signature: Option<&str>, body: reqwest::Body) -> (u16, String) {
    // reqwest under `rustls` needs a crypto provider before it builds a client.
    store_api::install_crypto_provider();
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body);
    if let Some(signature) = signature {
        request = request.header(store_api_webhooks::SIGNATURE_HEADER, signature);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}
