//! One scripted session that goes through every situation the spec's assumptions on requests need,
//! recorded against a deterministic emulator (clean, or with one [`Deviation`]) with
//! `store_api_cassette::Recorder`: the rate-limit headers, a 401 for a known store, a page past the
//! end, limits out of bounds, unknown filter values, an artwork, valid and invalid orders (a `null`
//! declared field, an invalid body with a reused `externalOrderId`, an empty id beside a valid sku,
//! each field rule the spec assumes), a body over 1 MiB, and reads of what was created.
//!
//! [`record_session`] is what the recordings check (`store_api_conformance::recordings`) and the
//! emulator comparison (`store_api_cassette::compare`) are tested with.

use std::sync::Arc;

use reqwest::Method;
use serde_json::{Value, json};
use store_api::{Client, ClientBuilder};
use store_api_cassette::{Cassette, RecordOptions, Recorder};
use store_api_fixtures::artwork::FakeResource;
use store_api_fixtures::{Deviation, Emulator};

use crate::{ALPHA, PNG_1X1, builder_at, key_of};

/// The seed of the emulator's deterministic mode the session is recorded with.
pub const SESSION_SEED: u64 = 31;

/// The artwork URL the session's emulator serves from its fake hosts.
pub const ARTWORK_URL: &str = "https://art.example.test/recorded.png";

/// A key of the right shape that no store has.
pub const WRONG_KEY: &str = "csk_00000000000000000000000000000000";

/// The emulator a session is recorded against: deterministic ([`SESSION_SEED`]), no rate limit (so
/// no answer depends on timing; the headers are still sent), artwork from fake hosts only, and
/// `deviation` when given.
pub async fn session_emulator(deviation: Option<Deviation>) -> Emulator {
    let mut builder = Emulator::builder()
        .deterministic(SESSION_SEED)
        .rate_limit(false)
        .network_downloads(false);
    if let Some(deviation) = deviation {
        builder = builder.deviate(deviation);
    }
    let emu = builder.start().await.expect("the emulator starts");
    emu.fake_hosts()
        .insert(ARTWORK_URL, FakeResource::image(PNG_1X1))
        .expect("a fake artwork host");
    emu
}

/// Records [`run_session`] against [`session_emulator`]`(deviation)`, customer data kept: the
/// session sends an address whose US state does not exist, which a redacting recorder replaces by a
/// placeholder that does (valid for its field), so that neither the recordings check nor a replay
/// could tell what was refused.
pub async fn record_session(deviation: Option<Deviation>) -> Cassette {
    record_session_with(deviation, RecordOptions::default().keep_customer_data(true)).await
}

/// Records [`run_session`] against [`session_emulator`]`(deviation)` with `options`.
pub async fn record_session_with(deviation: Option<Deviation>, options: RecordOptions) -> Cassette {
    let emu = session_emulator(deviation).await;
    record_session_on(&emu, options, |builder| builder).await
}

/// Records [`run_session`] against `emu` (which must serve [`ARTWORK_URL`]'s image from its fake hosts,
/// as [`session_emulator`]'s does) with `options`; `adjust` adjusts the clients' settings (the test
/// settings of [`builder_at`] otherwise).
pub async fn record_session_on(
    emu: &Emulator,
    options: RecordOptions,
    adjust: impl Fn(ClientBuilder) -> ClientBuilder,
) -> Cassette {
    let recorder = Arc::new(Recorder::reqwest(options).expect("a recorder"));
    let client = adjust(builder_at(&emu.base_url(), ALPHA, &key_of(emu, ALPHA)))
        .network(recorder.clone())
        .build()
        .expect("valid settings");
    let wrong_key = adjust(builder_at(&emu.base_url(), ALPHA, WRONG_KEY))
        .network(recorder.clone())
        .build()
        .expect("valid settings");
    run_session(&client, &wrong_key).await;
    recorder.recording().cassette()
}

/// The clean session and one session per deviation, in [`Deviation::ALL`]'s order.
pub async fn record_sessions() -> Vec<(Option<Deviation>, Cassette)> {
    let mut out = vec![(None, record_session(None).await)];
    for deviation in Deviation::ALL {
        out.push((Some(*deviation), record_session(Some(*deviation)).await));
    }
    out
}

/// `method path` with `body` through `client` (the escape hatch: sent as given, checked by nobody
/// but the service); the answer's status and JSON body (`Null` when it has none). A request the
/// client could not complete is `(0, Null)`: the session goes on.
pub async fn raw(
    client: &Client,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = client.request(method, path);
    if let Some(body) = body {
        request = request.json_body(body.to_string());
    }
    match request.send().await {
        Ok(answer) => (
            answer.status(),
            serde_json::from_slice(answer.body()).unwrap_or(Value::Null),
        ),
        Err(_) => (0, Value::Null),
    }
}

/// The workspace's Austin address, with the email and phone a recording must not keep either.
fn address() -> Value {
    let mut address = crate::shipping_address();
    address["email"] = json!("ada@example.com");
    address["phone"] = json!("+1 555 0100");
    address
}

fn order(external: Value, line_items: Value) -> Value {
    json!({ "externalOrderId": external, "lineItems": line_items, "shippingAddress": address() })
}

fn tee() -> Value {
    json!([{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 1 }])
}

fn custom(artwork: &str, width: f64) -> Value {
    json!([{
        "isCustom": true,
        "catalogProductVariantId": "cv_3001_blk_m",
        "quantity": 1,
        "decorations": [{
            "artworkId": artwork,
            "decorationLocation": "front",
            "decorationMethod": "direct_to_garment",
            "physicalWidth": width,
            "physicalHeight": 4.0
        }]
    }])
}

/// The session: `client` has the store's key, `wrong_key` another key for the same store.
pub async fn run_session(client: &Client, wrong_key: &Client) {
    // The status, then a 401 for the known store (a wrong key).
    let _ = client.status().await;
    let _ = wrong_key.status().await;

    // Lists: a first page, a page past the end, limits out of bounds, an unknown filter value, a
    // filter with a sort.
    let (_, first) = raw(client, Method::GET, "/products?limit=2&page=1", None).await;
    let total = first["totalItems"].as_u64().unwrap_or(0);
    let past = total.div_ceil(2) + 2;
    raw(
        client,
        Method::GET,
        &format!("/products?limit=2&page={past}"),
        None,
    )
    .await;
    raw(client, Method::GET, "/products?limit=0", None).await;
    raw(client, Method::GET, "/products?limit=101", None).await;
    raw(
        client,
        Method::GET,
        "/products?filter[status]=recorded_unknown_value",
        None,
    )
    .await;
    raw(
        client,
        Method::GET,
        "/products?filter[status]=active&sort[name]=asc&limit=100",
        None,
    )
    .await;

    // An artwork, for the custom items.
    let (_, artwork) = raw(
        client,
        Method::POST,
        "/artworks",
        Some(&json!({ "name": "Recorded logo", "image": { "url": ARTWORK_URL } })),
    )
    .await;
    let artwork = artwork["id"].as_str().unwrap_or("art_missing").to_owned();

    let orders: Vec<Value> = vec![
        // A valid order, then an invalid body (a quantity of 0) with its external id, then the same
        // valid order again (409).
        order(json!("rec-1"), tee()),
        order(
            json!("rec-1"),
            json!([{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 0 }]),
        ),
        order(json!("rec-1"), tee()),
        // A declared field sent as null, the body otherwise valid.
        order(Value::Null, tee()),
        // An empty productVariantId beside a valid sku.
        order(
            json!("rec-2"),
            json!([{ "productVariantId": "", "sku": "AA-TEE-SUN-BLK-S", "quantity": 1 }]),
        ),
        // The field rules the spec assumes.
        order(json!(""), tee()),
        {
            let mut body = order(json!("rec-3"), tee());
            body["shippingAddress"]["address"]["stateOrProvince"] = json!("ZZ");
            body
        },
        {
            let mut body = order(json!("rec-4"), tee());
            body["shippingAddress"]["address"]["stateOrProvince"] = json!("new york");
            body
        },
        {
            let mut body = order(json!("rec-5"), tee());
            body["shippingAddress"]["address"]["country"] = json!("us");
            body
        },
        order(json!("rec-6"), json!([])),
        order(json!("rec-7"), custom(&artwork, 0.0)),
        order(json!("rec-8"), custom(&artwork, 10.0)),
        // An ordering rule: a variant the store does not have.
        order(
            json!("rec-9"),
            json!([{ "productVariantId": "pv_not_in_this_store", "quantity": 1 }]),
        ),
    ];
    for body in &orders {
        raw(client, Method::POST, "/orders", Some(body)).await;
    }
    // A body over 1 MiB.
    let mut large = order(json!("rec-10"), tee());
    large["padding"] = json!("x".repeat(store_api_fixtures::MAX_BODY_BYTES + 1024));
    raw(client, Method::POST, "/orders", Some(&large)).await;

    // Reads of what was created.
    raw(
        client,
        Method::GET,
        "/orders?filter[externalOrderId]=rec-1,rec-2",
        None,
    )
    .await;
    let (_, all) = raw(client, Method::GET, "/orders?limit=100", None).await;
    if let Some(id) = all["items"][0]["id"].as_str() {
        raw(client, Method::GET, &format!("/orders/{id}"), None).await;
    }
}
