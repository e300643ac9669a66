//! Issue 31: cassettes. A session of the real client against the emulator is recorded (every operation
//! of the spec, errors, 409s and 429s), then replayed with no network: the code under test gets the
//! same results, and the cassette holds neither the key nor the customer data it was given.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;
use store_api::hook::{HeaderMap, RequestHook, TryInfo};
use store_api::network::Network;
use store_api::{
    Client, Error, ListArtworksQuery, ListCatalogProductsQuery, ListOrdersQuery, ListProductsQuery,
    RetryPolicy, Submitted,
};
use store_api_cassette::{
    Cassette, HttpRequest, RecordOptions, RecordedBody, Recorder, Replay, ReplayError, Replayer,
};
use store_api_fixtures::Emulator;
use store_api_fixtures::artwork::FakeResource;
use store_api_raw::contract::{OPERATIONS, VERSION_PREFIX};
use store_api_tests::{ALPHA, PNG_1X1, builder_at, identified, key_of, order_from};

/// Where a replaying client points: nothing listens there, and nothing is ever sent.
const NOWHERE: &str = "http://127.0.0.1:9/store-api/2026-08";

/// The customer data the sessions give: none of it may be in a cassette.
const CUSTOMER: &[&str] = &[
    "Augustina",
    "Byronesque",
    "augustina.byronesque@example.org",
    "+1 212-555-0147",
    "221 Vesey Street",
    "Suite 4812",
    "Brooklynton",
    "10282",
    "Perpetua",
    "Quillfeather",
    "7 Threadneedle Lane",
    "Ludlowshire",
    "SY8 1AA",
];

/// A US address with every field, and a British one without email and with an empty state.
fn us_address() -> serde_json::Value {
    json!({
        "firstName": "Augustina", "lastName": "Byronesque",
        "email": "augustina.byronesque@example.org", "phone": "+1 212-555-0147",
        "address": {
            "streetAddress": "221 Vesey Street", "apartmentOrSuite": "Suite 4812",
            "cityOrTown": "Brooklynton", "stateOrProvince": "NY", "zipOrPostalCode": "10282",
            "country": "US"
        }
    })
}

fn gb_address() -> serde_json::Value {
    json!({
        "firstName": "Perpetua", "lastName": "Quillfeather", "phone": "",
        "address": {
            "streetAddress": "7 Threadneedle Lane", "cityOrTown": "Ludlowshire",
            "stateOrProvince": "", "zipOrPostalCode": "SY8 1AA", "country": "GB"
        }
    })
}

fn order(external_id: &str, address: serde_json::Value, quantity: u32) -> store_api::NewOrder {
    order_of("AA-TEE-SUN-BLK-M", external_id, address, quantity)
}

fn order_of(
    sku: &str,
    external_id: &str,
    address: serde_json::Value,
    quantity: u32,
) -> store_api::NewOrder {
    order_from(json!({
        "externalOrderId": external_id,
        "lineItems": [{ "sku": sku, "quantity": quantity }],
        "shippingAddress": address,
    }))
}

/// A deterministic emulator with the service's rate limit, and an image to make artwork of.
async fn deterministic_emulator(seed: u64) -> Emulator {
    let emu = Emulator::builder()
        .deterministic(seed)
        .rate_limit(true)
        .network_downloads(false)
        .start()
        .await
        .expect("the emulator starts");
    emu.fake_hosts()
        .insert(ARTWORK_URL, FakeResource::image(PNG_1X1))
        .unwrap();
    emu
}

const ARTWORK_URL: &str = "https://art.example.com/logo.png";

/// The code under test's clients over `network`: one with the test retries, one that never retries
/// (to see a 429 as it comes).
fn clients(base_url: &str, key: &str, network: Arc<dyn Network>) -> (Client, Client) {
    let build = |policy: Option<RetryPolicy>| {
        let mut builder = builder_at(base_url, ALPHA, key)
            .network(network.clone())
            .max_rate_limit_pause(Duration::from_millis(10))
            .allow_insecure_http(true);
        if let Some(policy) = policy {
            builder = builder.retry_policy(policy).submit_retry_policy(policy);
        }
        builder.build().unwrap()
    };
    (build(None), build(Some(RetryPolicy::never())))
}

/// Gives the emulator's rate limit a full bucket again (a deterministic clock stands still): only
/// while recording; a replay has no emulator.
fn breathe(emu: Option<&Emulator>) {
    if let Some(emu) = emu {
        emu.advance(Duration::from_secs(60)).unwrap();
    }
}

/// The code under test: every operation of the spec, errors (400, 404), a 409 twice (a submission
/// again, a plain create again) and a 429. Returns what each call got, as text.
async fn session(
    client: &Client,
    once: &Client,
    emu: Option<&Emulator>,
    ids: [&str; 2],
) -> Vec<String> {
    let mut got = Vec::new();
    let mut note = |what: &str, result: String| got.push(format!("{what}: {result}"));
    breathe(emu);
    note("status", format!("{:?}", client.status().await));
    note(
        "catalog",
        format!(
            "{:?}",
            client
                .catalog()
                .list(&ListCatalogProductsQuery::new().limit(3))
                .await
        ),
    );
    note(
        "blank",
        format!("{:?}", client.catalog().get("cp_yp6089m").await),
    );
    note(
        "no blank (404)",
        format!("{:?}", client.catalog().get("cp_nope").await),
    );
    breathe(emu);
    note(
        "products",
        format!(
            "{:?}",
            client
                .products()
                .list(&ListProductsQuery::new().limit(2))
                .await
        ),
    );
    note(
        "product",
        format!("{:?}", client.products().get("prod_alpha_logo_cap").await),
    );
    breathe(emu);
    let artwork = client.artworks().create("Logo", ARTWORK_URL).await;
    note("artwork", format!("{artwork:?}"));
    let artwork_id = artwork.map(|artwork| artwork.id).unwrap_or_default();
    note(
        "artwork again",
        format!("{:?}", client.artworks().get(&artwork_id).await),
    );
    note(
        "artworks",
        format!(
            "{:?}",
            client.artworks().list(&ListArtworksQuery::new()).await
        ),
    );
    breathe(emu);
    let first = client
        .orders()
        .submit(&identified(order(ids[0], us_address(), 1)))
        .await;
    note("submit", submission(&first));
    breathe(emu);
    // The same order again: 409, looked up, the same order.
    let again = client
        .orders()
        .submit(&identified(order(ids[0], us_address(), 1)))
        .await;
    note("submit again", submission(&again));
    breathe(emu);
    note(
        "create again (409)",
        format!(
            "{:?}",
            client
                .orders()
                .create(&order(ids[0], us_address(), 1))
                .await
        ),
    );
    note(
        "invalid (400)",
        format!(
            "{:?}",
            client
                .orders()
                .create(&order_of("AA-NO-SUCH-SKU", ids[1], gb_address(), 1))
                .await
        ),
    );
    breathe(emu);
    note(
        "second order",
        submission(
            &client
                .orders()
                .submit(&identified(order(ids[1], gb_address(), 2)))
                .await,
        ),
    );
    breathe(emu);
    let order_id = first.map(|s| s.order().id.clone()).unwrap_or_default();
    note(
        "order",
        format!("{:?}", client.orders().get(&order_id).await),
    );
    note(
        "no order (404)",
        format!("{:?}", client.orders().get("ord_missing").await),
    );
    note(
        "orders",
        format!("{:?}", client.orders().list(&ListOrdersQuery::new()).await),
    );
    breathe(emu);
    // Past the burst of ten: 429, not retried by this client.
    for _ in 0..12 {
        let status = once.status().await;
        let limited = matches!(status, Err(Error::RateLimited { .. }));
        note("burst", format!("{status:?}"));
        if limited {
            break;
        }
    }
    got
}

/// A submission's outcome and attempts, without their durations (which differ between runs).
fn submission(result: &store_api::Result<store_api::Submission>) -> String {
    match result {
        Ok(submission) => {
            let attempts: Vec<_> = submission
                .attempts
                .iter()
                .map(|attempt| (attempt.number, attempt.result.clone()))
                .collect();
            format!("Ok({:?}, attempts {attempts:?})", submission.submitted)
        }
        Err(error) => format!("Err({error:?})"),
    }
}

/// Records `session` against a deterministic emulator.
async fn record_session(seed: u64, ids: [&str; 2]) -> (Cassette, Vec<String>, String) {
    let emu = deterministic_emulator(seed).await;
    let key = key_of(&emu, ALPHA);
    let recorder = Arc::new(Recorder::reqwest(RecordOptions::default()).unwrap());
    let (client, once) = clients(&emu.base_url(), &key, recorder.clone());
    let got = session(&client, &once, Some(&emu), ids).await;
    (recorder.recording().cassette(), got, key)
}

/// Replays `session` from `cassette`, with no network.
async fn replay_session(cassette: Cassette, ids: [&str; 2]) -> (Vec<String>, Arc<Replayer>) {
    let replayer = Arc::new(Replayer::new(cassette));
    let (client, once) = clients(NOWHERE, "csk_any_key_for_a_replay", replayer.clone());
    let got = session(&client, &once, None, ids).await;
    (got, replayer)
}

/// Whether a request of `method` to `path` (with the version prefix) is one of `operation`'s.
fn is_operation(operation: &store_api_raw::contract::Operation, method: &str, path: &str) -> bool {
    let Some(path) = path.strip_prefix(VERSION_PREFIX) else {
        return false;
    };
    let segments: Vec<&str> = path.split('/').collect();
    let template: Vec<&str> = operation.path.split('/').collect();
    operation.method.as_str() == method
        && segments.len() == template.len()
        && template
            .iter()
            .zip(&segments)
            .all(|(part, segment)| part.starts_with('{') || part == segment)
}

#[tokio::test]
async fn a_session_of_every_operation_replays_with_the_same_results_and_no_secrets() {
    let ids = ["cassette-order-0001", "cassette-order-0002"];
    let (cassette, recorded, key) = record_session(31, ids).await;

    // Every operation of the spec, every kind of answer asked for.
    for operation in OPERATIONS {
        assert!(
            cassette.exchanges.iter().any(|e| is_operation(
                operation,
                &e.request.method,
                &e.request.path
            )),
            "{} is not in the cassette",
            operation.id
        );
    }
    let statuses: Vec<u16> = cassette.exchanges.iter().map(|e| e.answer.status).collect();
    for status in [200, 201, 400, 404, 409, 429] {
        assert!(statuses.contains(&status), "no {status} in {statuses:?}");
    }
    let limited = cassette
        .exchanges
        .iter()
        .find(|e| e.answer.status == 429)
        .unwrap();
    assert!(
        limited.answer.headers.contains_key("retry-after"),
        "{limited:?}"
    );

    // Neither the key nor any customer data given; states replaced by valid ones.
    let text = cassette.to_text();
    assert!(!text.contains(&key), "the key is in the cassette");
    assert!(!text.to_lowercase().contains("x-api-key"));
    for value in CUSTOMER {
        assert!(!text.contains(value), "{value:?} is in the cassette");
    }
    let mut states = Vec::new();
    for exchange in &cassette.exchanges {
        for body in [&exchange.request.body, &exchange.answer.body] {
            if let Some(RecordedBody::Json(json)) = body {
                collect_states(json, &mut states);
            }
        }
    }
    assert!(!states.is_empty());
    for state in &states {
        assert!(
            state.is_empty() || (state != "NY" && state.len() == 2),
            "{states:?}"
        );
    }

    // Replayed with no network: the same results, call by call, every exchange used.
    let (replayed, replayer) = replay_session(cassette.clone(), ids).await;
    assert_eq!(replayed.len(), recorded.len());
    for (recorded, replayed) in recorded.iter().zip(&replayed) {
        assert_eq!(replayed, recorded);
    }
    assert!(
        recorded
            .iter()
            .any(|r| r.starts_with("submit again: Ok") && r.contains("AlreadyExisted")),
        "{recorded:#?}"
    );
    assert!(
        recorded.last().unwrap().contains("RateLimited"),
        "{recorded:#?}"
    );
    assert_eq!(replayer.replay().unused(), Vec::new());
}

fn collect_states(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(object) => {
            for (key, inner) in object {
                match (key.as_str(), inner) {
                    ("stateOrProvince", serde_json::Value::String(state)) => {
                        out.push(state.clone())
                    }
                    _ => collect_states(inner, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|item| collect_states(item, out)),
        _ => {}
    }
}

#[tokio::test]
async fn a_replay_with_other_generated_external_ids_still_matches() {
    let recorded_ids = [
        store_api::new_external_order_id(),
        store_api::new_external_order_id(),
    ];
    let (cassette, recorded, _) = record_session(7, [&recorded_ids[0], &recorded_ids[1]]).await;
    let live_ids = [
        store_api::new_external_order_id(),
        store_api::new_external_order_id(),
    ];
    let (replayed, replayer) = replay_session(cassette, [&live_ids[0], &live_ids[1]]).await;
    // The same results, the caller's own ids carried back into every answer.
    let expected: Vec<String> = recorded
        .iter()
        .map(|r| {
            r.replace(&recorded_ids[0], &live_ids[0])
                .replace(&recorded_ids[1], &live_ids[1])
        })
        .collect();
    assert_eq!(replayed, expected);
    assert!(replayer.replay().unused().is_empty());
}

/// Counts every attempt the client makes.
#[derive(Debug, Default)]
struct Attempts(AtomicU32);

impl RequestHook for Attempts {
    fn before(&self, _attempt: &TryInfo, _headers: &mut HeaderMap) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_request_the_cassette_does_not_hold_fails_with_a_diff_and_is_never_retried() {
    let ids = ["cassette-order-0101", "cassette-order-0102"];
    let (cassette, _, _) = record_session(5, ids).await;
    let replayer = Arc::new(Replayer::new(cassette));
    let attempts = Arc::new(Attempts::default());
    let client = builder_at(NOWHERE, ALPHA, "csk_any_key_for_a_replay")
        .network(replayer.clone())
        .hook(attempts.clone())
        .build()
        .unwrap();

    // A read the cassette never saw.
    let error = client.orders().get("ord_never_recorded").await.unwrap_err();
    assert_eq!(attempts.0.load(Ordering::SeqCst), 1, "not retried");
    assert!(!error.is_retryable() && !error.may_have_been_processed());
    let Error::Refused { source } = &error else {
        panic!("{error:?}");
    };
    let replay = source.downcast_ref::<ReplayError>().expect("a ReplayError");
    let text = replay.to_string();
    assert!(
        text.contains("GET /store-api/2026-08/stores/store_alpha/orders/ord_never_recorded"),
        "{text}"
    );
    assert!(
        text.contains("+GET /store-api/2026-08/stores/store_alpha/orders/ord_never_recorded"),
        "{text}"
    );
    assert!(
        text.contains("\n-GET /store-api/2026-08/stores/store_alpha/"),
        "{text}"
    );

    // A write other than the next recorded one (the status read comes first): refused, its diff
    // against the write expected, customer data redacted there too.
    let error = client
        .orders()
        .create(&order("not-recorded", us_address(), 5))
        .await
        .unwrap_err();
    assert_eq!(attempts.0.load(Ordering::SeqCst), 2, "not retried");
    let text = error.to_string();
    assert!(text.contains("refused"), "{text}");
    let Error::Refused { source } = &error else {
        panic!("{error:?}");
    };
    let diff = source.downcast_ref::<ReplayError>().unwrap().to_string();
    assert!(
        diff.contains("the next recorded write is exchange"),
        "{diff}"
    );
    assert!(
        diff.contains("\n-POST /store-api/2026-08/stores/store_alpha/artworks"),
        "{diff}"
    );
    assert!(
        diff.contains("\n+POST /store-api/2026-08/stores/store_alpha/orders"),
        "{diff}"
    );
    assert!(diff.contains("+      \"quantity\": 5"), "{diff}");
    for value in CUSTOMER {
        assert!(!diff.contains(value), "{value:?} in the diff: {diff}");
    }
}

#[tokio::test]
async fn the_same_request_twice_gets_the_two_recorded_answers_in_turn() {
    let emu = deterministic_emulator(3).await;
    let recorder = Arc::new(Recorder::reqwest(RecordOptions::default()).unwrap());
    let (client, _) = clients(&emu.base_url(), &key_of(&emu, ALPHA), recorder.clone());
    let request = order("twice-0001", us_address(), 1);
    let first = client.orders().create(&request).await;
    let second = client.orders().create(&request).await;
    assert!(first.is_ok(), "{first:?}");
    assert!(matches!(second, Err(Error::Conflict { .. })), "{second:?}");

    let replayer = Arc::new(Replayer::new(recorder.recording().cassette()));
    let (client, _) = clients(NOWHERE, "csk_any_key_for_a_replay", replayer.clone());
    assert_eq!(
        format!("{:?}", client.orders().create(&request).await),
        format!("{first:?}")
    );
    assert_eq!(
        format!("{:?}", client.orders().create(&request).await),
        format!("{second:?}")
    );
    // A third time: the cassette holds no third answer.
    let third = client.orders().create(&request).await;
    let Err(Error::Refused { source }) = &third else {
        panic!("{third:?}");
    };
    assert!(
        source.to_string().contains("held this request 2 time(s)"),
        "{source}"
    );

    // The pure core says the same, request by request.
    let replay = Replay::new(recorder.recording().cassette());
    let body = serde_json::to_vec(&request).unwrap();
    let headers = http::HeaderMap::new();
    let path = format!("{VERSION_PREFIX}/stores/{ALPHA}/orders");
    let ask = || {
        replay
            .answer(&HttpRequest {
                method: "POST",
                path_and_query: &path,
                headers: &headers,
                body: &body,
            })
            .map(|answer| answer.status)
            .map_err(|error| error.to_string())
    };
    assert_eq!(ask(), Ok(201));
    assert_eq!(ask(), Ok(409));
    assert!(ask().is_err());
}

/// The variable that switches the snapshot test to recording (against the emulator here; against
/// the real service in a user's own tests).
const RECORD: &str = "STORE_API_RECORD";

/// The committed snapshot the checkout test replays.
fn checkout_snapshot() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("it/snapshots/it__cassettes__checkout.snap")
}

/// The code under test of the snapshot test: a checkout, submitted twice (201, then 409 and the
/// lookup), and the order read back.
async fn checkout(client: &Client, external_id: &str) -> Vec<String> {
    let submitted = client
        .orders()
        .submit(&identified(order(external_id, us_address(), 2)))
        .await
        .unwrap();
    let again = client
        .orders()
        .submit(&identified(order(external_id, us_address(), 2)))
        .await
        .unwrap();
    assert!(matches!(submitted.submitted, Submitted::Created(_)));
    assert!(matches!(again.submitted, Submitted::AlreadyExisted(_)));
    let read = client.orders().get(&submitted.order().id).await.unwrap();
    vec![
        format!("{:?}", submitted.submitted),
        format!("{:?}", again.submitted),
        format!("{read:?}"),
    ]
}

async fn record_checkout(external_id: &str) -> (Cassette, Vec<String>) {
    let emu = Emulator::builder()
        .deterministic(2026)
        .rate_limit(false)
        .network_downloads(false)
        .start()
        .await
        .unwrap();
    let recorder = Arc::new(Recorder::reqwest(RecordOptions::default()).unwrap());
    let (client, _) = clients(&emu.base_url(), &key_of(&emu, ALPHA), recorder.clone());
    let got = checkout(&client, external_id).await;
    (recorder.recording().cassette(), got)
}

/// The insta workflow: `STORE_API_RECORD=1 cargo test` records (here against a deterministic
/// emulator) and checks the cassette as a snapshot (`cargo insta review` accepts a change); a plain
/// `cargo test` replays the committed snapshot with no network.
#[tokio::test]
async fn a_cassette_kept_as_an_insta_snapshot_replays_with_no_network() {
    if std::env::var(RECORD).is_ok_and(|value| value == "1") {
        let (cassette, _) = record_checkout("checkout-0001").await;
        insta::assert_snapshot!("checkout", cassette.to_text());
    }
    let cassette = Cassette::load(checkout_snapshot()).unwrap();
    let replayer = Arc::new(Replayer::new(cassette));
    let (client, _) = clients(NOWHERE, "csk_any_key_for_a_replay", replayer.clone());
    // Another run's fresh external id: matched all the same.
    let got = checkout(&client, &store_api::new_external_order_id()).await;
    assert_eq!(got.len(), 3);
    assert!(replayer.replay().unused().is_empty());
}

/// What makes the snapshot workflow work: two recordings of the same session are the same text.
#[tokio::test]
async fn a_recording_against_a_deterministic_emulator_is_stable() {
    let (first, got) = record_checkout("checkout-0001").await;
    let (second, _) = record_checkout("checkout-0001").await;
    assert_eq!(first.to_text(), second.to_text());
    assert_eq!(
        Cassette::load(checkout_snapshot()).unwrap(),
        first,
        "the committed snapshot is this recording: re-record with STORE_API_RECORD=1 and `cargo insta review`"
    );
    for value in CUSTOMER {
        assert!(!first.to_text().contains(value), "{value:?}");
    }
    // The results carry the customer's own data back.
    assert!(got[0].contains("Augustina"), "{got:?}");
}

/// A replay shared by threads answers each request once.
#[test]
fn replay_and_replayer_are_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<Replay>();
    shared::<Replayer>();
    shared::<Recorder>();
    shared::<store_api_cassette::Recording>();
}
