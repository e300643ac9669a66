//! Shared helpers: starting emulators, calling them over HTTP, checking error envelopes, a webhook
//! receiver and a few request bodies built from the seed.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, Uri};
use bytes::Bytes;
use reqwest::Method;
use serde_json::{Value, json};
use store_api_fixtures::{Emulator, EmulatorBuilder};

pub const ALPHA: &str = "store_alpha";
pub const BETA: &str = "store_beta";
pub const GAMMA: &str = "store_gamma";
pub const ALPHA_KEY: &str = "csk_ce4d6676e735329b21b3d864ca427df5";
pub const BETA_KEY: &str = "csk_9b35b8689bbdd2076632ad2fedddc3b0";
pub const GAMMA_KEY: &str = "csk_76ea488c31fc2fd482411c033265be66";

/// A 1×1 PNG.
pub const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// The start of a JPEG (the emulator sniffs the magic bytes only).
pub const JPEG_BYTES: &[u8] = &[0xFF, 0xD8, 0xFF, 0xE0, 0, 16, b'J', b'F', b'I', b'F', 0, 1];

/// Whether a slow test should skip itself: true unless `RUN_SLOW_TESTS` is set (to anything but empty
/// or `0`; `.ci/run` sets it). A copy of `store_api_tests::skip_slow_tests`, which this crate cannot
/// reach: `store-api-tests` depends on it.
pub fn skip_slow_tests() -> bool {
    use std::io::Write as _;
    if std::env::var("RUN_SLOW_TESTS").is_ok_and(|value| !value.is_empty() && value != "0") {
        return false;
    }
    // Past the harness's capture, so a skipped test is not mistaken for a passed one.
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("(unnamed)");
    let _ = writeln!(
        std::io::stderr().lock(),
        "skipping slow test {name}: set RUN_SLOW_TESTS=1"
    );
    true
}

/// Fast settings: short webhook backoff, no network, no rate limit.
pub fn builder() -> EmulatorBuilder {
    Emulator::builder()
        .webhook_backoff(Duration::from_millis(20))
        .network_downloads(false)
        .rate_limit(false)
}

pub async fn start() -> (Emulator, Api) {
    let emu = builder().start().await.unwrap();
    let api = Api::new(&emu);
    (emu, api)
}

/// The seeded key of a store.
pub fn key_of(store: &str) -> &'static str {
    match store {
        ALPHA => ALPHA_KEY,
        BETA => BETA_KEY,
        GAMMA => GAMMA_KEY,
        other => panic!("no seeded key for {other}"),
    }
}

/// One HTTP answer, its JSON body checked for `null`s.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub bytes: Bytes,
    /// The body as JSON (`Value::Null` when the body is empty or not JSON).
    pub json: Value,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the status, then returns the body.
    #[track_caller]
    pub fn ok(&self, status: u16) -> &Value {
        assert_eq!(
            self.status,
            status,
            "body: {}",
            String::from_utf8_lossy(&self.bytes)
        );
        &self.json
    }

    /// A string field of the body.
    #[track_caller]
    pub fn str(&self, pointer: &str) -> String {
        self.json
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no string at {pointer} in {}", self.json))
            .to_owned()
    }

    /// Asserts an error envelope: the status, `statusCode`, `error` (the status name; absent for 429),
    /// no other fields, and the message.
    #[track_caller]
    pub fn error(&self, status: u16, message: Msg<'_>) {
        let context = format!("{} {}", self.status, self.json);
        assert_eq!(self.status, status, "{context}");
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "{context}"
        );
        let object = self
            .json
            .as_object()
            .unwrap_or_else(|| panic!("not an object: {context}"));
        assert_eq!(object.get("statusCode"), Some(&json!(status)), "{context}");
        if status == 429 {
            assert!(
                !object.contains_key("error"),
                "429 carries no error: {context}"
            );
            assert_eq!(object.len(), 2, "{context}");
        } else {
            let name = reqwest::StatusCode::from_u16(status)
                .unwrap()
                .canonical_reason()
                .unwrap();
            assert_eq!(object.get("error"), Some(&json!(name)), "{context}");
            assert_eq!(object.len(), 3, "{context}");
        }
        let actual = &object["message"];
        match message {
            Msg::Exact(text) => assert_eq!(actual, &json!(text), "{context}"),
            Msg::Prefix(prefix) => assert!(
                actual.as_str().is_some_and(|m| m.starts_with(prefix)),
                "message should begin with {prefix:?}: {context}"
            ),
            Msg::List(list) => assert_eq!(actual, &json!(list), "{context}"),
            Msg::AnyString => assert!(actual.is_string(), "{context}"),
        }
    }
}

/// The expected `message` of an error envelope.
#[derive(Debug, Clone, Copy)]
pub enum Msg<'a> {
    /// Exactly this string.
    Exact(&'a str),
    /// A string beginning with this (the seed's tables give message beginnings).
    Prefix(&'a str),
    /// Exactly this array (validation).
    List(&'a [&'a str]),
    /// Any string (text the seed does not show).
    AnyString,
}

/// Fails on any JSON `null` (empty fields are omitted, never null) and on any timestamp field
/// (`createdAt`, `checkedAt`, `at` ...) that is not UTC with milliseconds.
#[track_caller]
pub fn assert_no_nulls(value: &Value, path: &str) {
    match value {
        Value::Null => panic!("null at {path}"),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                assert_no_nulls(item, &format!("{path}[{i}]"));
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                // `query.sort.createdAt` is a direction, not a time.
                let in_sort = path.ends_with(".sort");
                let path_of_item = format!("{path}.{key}");
                if (key == "at" || key.ends_with("At")) && item.is_string() && !in_sort {
                    assert_timestamp(item, &path_of_item);
                }
                assert_no_nulls(item, &path_of_item);
            }
        }
        _ => {}
    }
}

/// Whether `key` appears as an object key anywhere in `value`.
pub fn has_key(value: &Value, key: &str) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|v| has_key(v, key)),
        Value::Object(map) => map.contains_key(key) || map.values().any(|v| has_key(v, key)),
        _ => false,
    }
}

/// Asserts an ISO 8601 UTC timestamp with milliseconds (`2026-07-14T09:30:00.000Z`).
#[track_caller]
pub fn assert_timestamp(value: &Value, what: &str) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("{what} is not a string: {value}"));
    let shape_ok = text.len() == 24
        && text.ends_with('Z')
        && text.chars().enumerate().all(|(i, c)| match i {
            4 | 7 => c == '-',
            10 => c == 'T',
            13 | 16 => c == ':',
            19 => c == '.',
            23 => c == 'Z',
            _ => c.is_ascii_digit(),
        });
    assert!(
        shape_ok,
        "{what} is not a UTC timestamp with milliseconds: {text}"
    );
}

/// An HTTP client for one emulator.
#[derive(Debug, Clone)]
pub struct Api {
    pub http: reqwest::Client,
    /// `http://127.0.0.1:PORT/store-api/2026-08`
    pub base: String,
    /// `http://127.0.0.1:PORT`
    pub origin: String,
}

impl Api {
    pub fn new(emu: &Emulator) -> Api {
        Api {
            http: reqwest::Client::builder().no_proxy().build().unwrap(),
            base: emu.base_url(),
            origin: emu.origin().to_owned(),
        }
    }

    /// Any request to `url`.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        key: Option<&str>,
        body: Option<&Value>,
    ) -> Answer {
        let mut request = self.http.request(method, url);
        if let Some(key) = key {
            request = request.header("X-API-Key", key);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.unwrap();
        let is_json = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        let json = if is_json && !bytes.is_empty() {
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            assert_no_nulls(&value, "$");
            value
        } else {
            Value::Null
        };
        Answer {
            status,
            headers,
            bytes,
            json,
        }
    }

    /// The URL of a Store API path (`/status`, `/orders?x=1`) of a store.
    pub fn url(&self, store: &str, path: &str) -> String {
        format!("{}/stores/{store}{path}", self.base)
    }

    /// A Store API call with an explicit key (or none).
    pub async fn call(
        &self,
        method: Method,
        store: &str,
        key: Option<&str>,
        path: &str,
        body: Option<&Value>,
    ) -> Answer {
        self.send(method, &self.url(store, path), key, body).await
    }

    /// GET with the store's seeded key.
    pub async fn get(&self, store: &str, path: &str) -> Answer {
        self.call(Method::GET, store, Some(key_of(store)), path, None)
            .await
    }

    /// POST with the store's seeded key.
    pub async fn post(&self, store: &str, path: &str, body: &Value) -> Answer {
        self.call(Method::POST, store, Some(key_of(store)), path, Some(body))
            .await
    }

    /// `GET /status` of alpha with its key and these headers.
    pub async fn status_with(&self, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut request = self
            .http
            .get(self.url(ALPHA, "/status"))
            .header("X-API-Key", ALPHA_KEY);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }

    /// A control endpoint under `/_emulator`.
    pub async fn control(&self, method: Method, path: &str, body: Option<&Value>) -> Answer {
        self.send(
            method,
            &format!("{}/_emulator{path}", self.origin),
            None,
            body,
        )
        .await
    }

    /// Creates an order and returns it (asserting 201).
    pub async fn create_order(&self, store: &str, body: &Value) -> Value {
        self.post(store, "/orders", body).await.ok(201).clone()
    }

    /// Registers fake artwork hosts (replacing earlier ones).
    pub async fn artwork_hosts(&self, hosts: &Value) {
        let answer = self
            .control(Method::PUT, "/artwork-hosts", Some(hosts))
            .await;
        assert_eq!(answer.status, 204, "{}", answer.json);
    }

    /// Registers `https://art.example.test/a.png` (the 1×1 PNG) and creates an artwork from it.
    pub async fn create_artwork(&self, store: &str, name: &str) -> Value {
        self.artwork_hosts(
            &json!({ "https://art.example.test/a.png": { "contentBase64": PNG_BASE64 } }),
        )
        .await;
        let body = json!({ "name": name, "image": { "url": "https://art.example.test/a.png" } });
        self.post(store, "/artworks", &body).await.ok(201).clone()
    }

    /// Registers webhook URLs (topic → URL) for a store.
    pub async fn webhooks(&self, store: &str, urls: &Value) {
        let answer = self
            .control(
                Method::PUT,
                &format!("/stores/{store}/webhooks"),
                Some(urls),
            )
            .await;
        assert_eq!(answer.status, 204, "{}", answer.json);
    }

    /// The store's delivery attempts.
    pub async fn deliveries(&self, store: &str) -> Vec<Value> {
        let answer = self
            .control(
                Method::GET,
                &format!("/stores/{store}/webhook-deliveries"),
                None,
            )
            .await;
        answer.ok(200).as_array().unwrap().clone()
    }

    /// Polls the deliveries until `done` holds (5 s at most).
    pub async fn deliveries_until(
        &self,
        store: &str,
        done: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let deliveries = self.deliveries(store).await;
            if done(&deliveries) {
                return deliveries;
            }
            assert!(
                Instant::now() < deadline,
                "deliveries never matched: {deliveries:#?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// `POST /_emulator/stores/{store}/orders/{id}/app-action`.
    pub async fn app_action(&self, store: &str, order_id: &str, action: &str) -> Answer {
        let body = json!({ "action": action });
        self.control(
            Method::POST,
            &format!("/stores/{store}/orders/{order_id}/app-action"),
            Some(&body),
        )
        .await
    }

    /// `POST /_emulator/stores/{store}/orders/{id}/advance`.
    pub async fn advance(&self, store: &str, order_id: &str) -> Answer {
        self.control(
            Method::POST,
            &format!("/stores/{store}/orders/{order_id}/advance"),
            None,
        )
        .await
    }
}

// ---- request bodies

/// A valid US shipping address.
pub fn address() -> Value {
    json!({
        "firstName": "Ada",
        "lastName": "Lovelace",
        "email": "ada@example.com",
        "phone": "+1 555 0100",
        "address": {
            "streetAddress": "1 Main St",
            "apartmentOrSuite": "Apt 2",
            "cityOrTown": "Springfield",
            "stateOrProvince": "IL",
            "zipOrPostalCode": "62701",
            "country": "US"
        }
    })
}

/// An order body with these line items.
pub fn order_with(external_order_id: Option<&str>, line_items: Value) -> Value {
    let mut body = json!({ "lineItems": line_items, "shippingAddress": address() });
    if let Some(id) = external_order_id {
        body["externalOrderId"] = json!(id);
    }
    body
}

/// A one-item order of the alpha store's first Sunset Tee variant.
pub fn simple_order(external_order_id: Option<&str>) -> Value {
    order_with(
        external_order_id,
        json!([{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 1 }]),
    )
}

/// A beta order of its tote.
pub fn beta_order(external_order_id: Option<&str>) -> Value {
    order_with(
        external_order_id,
        json!([{ "productVariantId": "pv_bg_tote_nat_os", "quantity": 1 }]),
    )
}

/// A decoration on a location, centered at the top.
pub fn decoration(
    artwork_id: &str,
    location: &str,
    method: &str,
    width: f64,
    height: f64,
) -> Value {
    json!({
        "artworkId": artwork_id,
        "decorationLocation": location,
        "decorationMethod": method,
        "physicalWidth": width,
        "physicalHeight": height,
        "horizontalOffsetFromCenter": 0,
        "verticalOffsetFromTop": 0
    })
}

// ---- webhook receiver

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub signature: Option<String>,
    pub content_type: Option<String>,
    pub body: Bytes,
    pub json: Value,
}

#[derive(Debug, Default)]
struct ReceiverState {
    requests: Mutex<Vec<Received>>,
    /// Statuses to answer before answering 200 again.
    failures: Mutex<VecDeque<u16>>,
}

/// An HTTP server on 127.0.0.1 that records every request and answers 200 (or queued failures).
#[derive(Debug)]
pub struct Receiver {
    addr: SocketAddr,
    state: Arc<ReceiverState>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let state = Arc::new(ReceiverState::default());
        let shared = state.clone();
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
            let state = shared.clone();
            async move {
                let header = |name: &str| {
                    headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                };
                let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
                state.requests.lock().unwrap().push(Received {
                    path: uri.path().to_owned(),
                    signature: header("x-service-signature"),
                    content_type: header("content-type"),
                    body,
                    json,
                });
                let status = state.failures.lock().unwrap().pop_front().unwrap_or(200);
                axum::http::StatusCode::from_u16(status).unwrap()
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver { addr, state, task }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The next requests are answered with these statuses, in order.
    pub fn fail_next(&self, statuses: &[u16]) {
        self.state.failures.lock().unwrap().extend(statuses);
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.requests.lock().unwrap().clone()
    }

    /// Waits until at least `count` requests arrived (5 s at most) and returns them all.
    pub async fn wait_for(&self, count: usize) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let received = self.received();
            if received.len() >= count {
                return received;
            }
            assert!(
                Instant::now() < deadline,
                "only {} of {count} requests arrived",
                received.len()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Polls `probe` until it returns `Some` (5 s at most).
pub async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Money as whole cents (amounts carry at most two decimals).
#[track_caller]
pub fn cents(value: &Value) -> i64 {
    let dollars = value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"));
    let cents = (dollars * 100.0).round();
    assert!(
        (dollars * 100.0 - cents).abs() < 1e-6,
        "{dollars} has more than two decimals"
    );
    cents as i64
}

/// Waits (up to 20 s) until the file at `path` contains `needle`: a state file written in the background.
pub async fn wait_until_saved(path: &std::path::Path, needle: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(path).is_ok_and(|saved| saved.contains(needle)) {
        assert!(
            std::time::Instant::now() < deadline,
            "{needle} never saved to {}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
