//! Bad input never breaks the emulator: every malformed, oversized or strange request gets a clear 4xx
//! error envelope (`{message, error, statusCode}` with `statusCode` equal to the HTTP status), never a
//! 5xx, never a panic and never a dropped connection.
//!
//! One emulator (rate limit off, no network downloads) serves every test of this binary; it runs on a
//! runtime of its own whose worker threads are named, so that a panic hook can count server-side panics
//! even when the connection survives them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::Config;
use reqwest::Method;
use reqwest::header::HeaderValue;
use serde_json::{Value, json};
use store_api_fixtures::artwork::FakeResource;
use store_api_fixtures::{Emulator, MAX_BODY_BYTES};

// ---------------------------------------------------------------- the shared emulator

/// Name prefix of the emulator runtime's threads (the panic hook counts panics on them).
const SERVER_THREAD: &str = "bad-input-emulator";
/// Panics seen on the emulator's threads since the start of the binary.
static SERVER_PANICS: AtomicUsize = AtomicUsize::new(0);
/// Makes every generated `externalOrderId` distinct, so valid mutations create orders instead of 409s.
static NEXT_ORDER: AtomicU64 = AtomicU64::new(1);

/// A registered fake image URL, so artwork bodies can be valid.
const IMAGE_URL: &str = "https://cdn.bad-input.example/logo.png";
const PNG: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, b'I', b'H', b'D', b'R',
];

struct Harness {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    /// `http://127.0.0.1:PORT`.
    origin: String,
    /// `{base_url}/stores/{storeId}`.
    api: String,
    key: String,
    /// An artwork of the store, for valid custom line items.
    artwork_id: String,
    _emulator: Emulator,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(start)
}

fn start() -> Harness {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with(SERVER_THREAD))
        {
            SERVER_PANICS.fetch_add(1, Ordering::SeqCst);
        }
        previous(info);
    }));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(SERVER_THREAD)
        .enable_all()
        .build()
        .unwrap();
    let (emulator, client) = runtime.block_on(async {
        let emulator = Emulator::builder()
            .rate_limit(false)
            .network_downloads(false)
            .start()
            .await
            .unwrap();
        (emulator, reqwest::Client::new())
    });
    emulator
        .fake_hosts()
        .insert(IMAGE_URL, FakeResource::image(PNG))
        .unwrap();
    let store = emulator.active_store().unwrap();
    let api = format!("{}/stores/{}", emulator.base_url(), store.id);
    let mut harness = Harness {
        runtime,
        client,
        origin: emulator.origin().to_owned(),
        api,
        key: store.api_key,
        artwork_id: String::new(),
        _emulator: emulator,
    };
    let created = harness.send(
        Method::POST,
        "/artworks",
        Some(JSON),
        Some(valid_artwork().to_string().into_bytes()),
    );
    let created = created.unwrap();
    assert_eq!(created.status, 201, "{}", created.text());
    let artwork: Value = serde_json::from_slice(&created.body).unwrap();
    harness.artwork_id = artwork["id"].as_str().unwrap().to_owned();
    harness
}

const JSON: &str = "application/json";

/// What came back, or why nothing did.
#[derive(Debug)]
struct Answer {
    status: u16,
    content_type: Option<String>,
    body: Bytes,
}

impl Answer {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body[..self.body.len().min(400)]).into_owned()
    }
}

impl Harness {
    /// Sends a request to `{api}{path}` with the store's key.
    fn send(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Option<Vec<u8>>,
    ) -> Result<Answer, String> {
        self.send_to(
            method,
            &format!("{}{path}", self.api),
            content_type,
            body.map(reqwest::Body::from),
            self.key(),
        )
    }

    fn send_to(
        &self,
        method: Method,
        url: &str,
        content_type: Option<&str>,
        body: Option<reqwest::Body>,
        key: Option<HeaderValue>,
    ) -> Result<Answer, String> {
        let panics_before = SERVER_PANICS.load(Ordering::SeqCst);
        let answer = self.runtime.block_on(async {
            let mut request = self.client.request(method, url);
            if let Some(key) = key {
                request = request.header("x-api-key", key);
            }
            if let Some(content_type) = content_type {
                request = request.header("content-type", content_type);
            }
            if let Some(body) = body {
                request = request.body(body);
            }
            let response = request
                .send()
                .await
                .map_err(|e| format!("no answer (dropped connection?): {e:?}"))?;
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body = response
                .bytes()
                .await
                .map_err(|e| format!("body cut off: {e:?}"))?;
            Ok(Answer {
                status,
                content_type,
                body,
            })
        });
        let panics = SERVER_PANICS.load(Ordering::SeqCst) - panics_before;
        if panics > 0 {
            return Err(format!(
                "the emulator panicked {panics} time(s); answer: {answer:?}"
            ));
        }
        answer
    }
}

impl Harness {
    fn key(&self) -> Option<HeaderValue> {
        Some(HeaderValue::from_str(&self.key).unwrap())
    }
}

/// What is wrong with an answer under the rule "2xx, or a 4xx with a well-formed envelope".
fn problem(answer: &Answer) -> Option<String> {
    match answer.status {
        200..=299 => serde_json::from_slice::<Value>(&answer.body)
            .err()
            .map(|e| {
                format!(
                    "{} with a body that is not JSON ({e}): {}",
                    answer.status,
                    answer.text()
                )
            }),
        400..=499 => {
            envelope_problem(answer).map(|p| format!("{}: {p}: {}", answer.status, answer.text()))
        }
        other => Some(format!(
            "status {other} is neither 2xx nor 4xx: {}",
            answer.text()
        )),
    }
}

fn envelope_problem(answer: &Answer) -> Option<String> {
    if !answer
        .content_type
        .as_deref()
        .is_some_and(|c| c.starts_with(JSON))
    {
        return Some(format!(
            "content type {:?} is not JSON",
            answer.content_type
        ));
    }
    let Ok(Value::Object(envelope)) = serde_json::from_slice::<Value>(&answer.body) else {
        return Some("the body is not a JSON object".into());
    };
    if envelope.get("statusCode").and_then(Value::as_u64) != Some(u64::from(answer.status)) {
        return Some("statusCode is not the HTTP status".into());
    }
    let message_ok = match envelope.get("message") {
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Array(list)) => {
            !list.is_empty()
                && list
                    .iter()
                    .all(|m| m.as_str().is_some_and(|t| !t.is_empty()))
        }
        _ => false,
    };
    if !message_ok {
        return Some("message is not a non-empty string or array of strings".into());
    }
    // Only a 429 omits `error`, and the rate limit is off here.
    if envelope
        .get("error")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Some("error is missing".into());
    }
    None
}

/// Asserts the rule and returns the answer.
#[track_caller]
fn check(label: &str, result: Result<Answer, String>) -> Answer {
    let answer = result.unwrap_or_else(|e| panic!("{label}: {e}"));
    if let Some(problem) = problem(&answer) {
        panic!("{label}: {problem}");
    }
    answer
}

/// Asserts the rule and an exact status, for the cases whose answer is known.
#[track_caller]
fn check_status(label: &str, result: Result<Answer, String>, status: u16) -> Answer {
    let answer = check(label, result);
    assert_eq!(answer.status, status, "{label}: {}", answer.text());
    answer
}

/// The proptest form of [`check`].
fn prop_check(label: &str, result: Result<Answer, String>) -> Result<(), TestCaseError> {
    let answer = result.map_err(|e| TestCaseError::fail(format!("{label}: {e}")))?;
    match problem(&answer) {
        Some(problem) => Err(TestCaseError::fail(format!("{label}: {problem}"))),
        None => Ok(()),
    }
}

fn message_of(answer: &Answer) -> String {
    let envelope: Value = serde_json::from_slice(&answer.body).unwrap();
    envelope["message"].to_string()
}

// ---------------------------------------------------------------- valid bodies to start from

fn valid_order(harness: &Harness) -> Value {
    json!({
        "externalOrderId": format!("bad-input-{}", NEXT_ORDER.fetch_add(1, Ordering::SeqCst)),
        "orderedAt": "2026-07-14T09:30:00.000Z",
        "lineItems": [
            { "sku": "AA-TEE-SUN-BLK-M", "quantity": 2 },
            { "productVariantId": "pv_aa_cap_blk_os", "quantity": 1 },
            {
                "isCustom": true,
                "catalogProductVariantId": "cv_3001_blk_m",
                "quantity": 3,
                "decorations": [{
                    "artworkId": harness.artwork_id,
                    "decorationLocation": "front",
                    "decorationMethod": "direct_to_garment",
                    "physicalWidth": 10,
                    "physicalHeight": 12,
                    "horizontalOffsetFromCenter": 0,
                    "verticalOffsetFromTop": 1
                }]
            }
        ],
        "shippingAddress": {
            "firstName": "Ada",
            "lastName": "Lovelace",
            "email": "ada@example.com",
            "phone": "+1 555 0100",
            "address": {
                "streetAddress": "1 Main St",
                "apartmentOrSuite": "Apt 2",
                "cityOrTown": "Springfield",
                "stateOrProvince": "NY",
                "zipOrPostalCode": "12345",
                "country": "US"
            }
        }
    })
}

fn valid_artwork() -> Value {
    json!({ "name": "Logo", "image": { "url": IMAGE_URL } })
}

// ---------------------------------------------------------------- JSON text strategies

/// A JSON document kept as text at the leaves, so it can hold what `serde_json::Value` cannot
/// (`1e400`, integers beyond 64 bits) and duplicate keys.
#[derive(Clone, Debug)]
enum Json {
    Raw(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn from_value(value: &Value) -> Json {
        match value {
            Value::Array(items) => Json::Array(items.iter().map(Json::from_value).collect()),
            Value::Object(map) => Json::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), Json::from_value(v)))
                    .collect(),
            ),
            scalar => Json::Raw(scalar.to_string()),
        }
    }

    fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Raw(text) => out.push_str(text),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&quoted(key));
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }

    fn children_mut(&mut self) -> Vec<&mut Json> {
        match self {
            Json::Raw(_) => Vec::new(),
            Json::Array(items) => items.iter_mut().collect(),
            Json::Object(fields) => fields.iter_mut().map(|(_, v)| v).collect(),
        }
    }

    /// Paths (child positions from the root) of every node below the root, depth first.
    fn paths(&self) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        let children: Vec<&Json> = match self {
            Json::Raw(_) => Vec::new(),
            Json::Array(items) => items.iter().collect(),
            Json::Object(fields) => fields.iter().map(|(_, v)| v).collect(),
        };
        for (i, child) in children.into_iter().enumerate() {
            out.push(vec![i]);
            for mut below in child.paths() {
                below.insert(0, i);
                out.push(below);
            }
        }
        out
    }

    fn at_mut(&mut self, path: &[usize]) -> &mut Json {
        match path.split_first() {
            None => self,
            Some((&first, rest)) => {
                let mut children = self.children_mut();
                let child = children.swap_remove(first);
                child.at_mut(rest)
            }
        }
    }

    fn at(&self, path: &[usize]) -> &Json {
        match (path.split_first(), self) {
            (None, _) | (Some(_), Json::Raw(_)) => self,
            (Some((&first, rest)), Json::Array(items)) => items[first].at(rest),
            (Some((&first, rest)), Json::Object(fields)) => fields[first].1.at(rest),
        }
    }

    fn is_number(&self) -> bool {
        matches!(self, Json::Raw(text) if text.starts_with(|c: char| c == '-' || c.is_ascii_digit()))
    }
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// Numbers that stress parsing and arithmetic: out of range for u64/i64/f64, negative, fractional.
const ODD_NUMBERS: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1",
    "1.0",
    "1.5",
    "1e20",
    "1E400",
    "-1e400",
    "1e-400",
    "0.0000001",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "1.7976931348623157e308",
];

/// Strings that look like other types, or like ids and enum values the emulator knows.
const ODD_STRINGS: &[&str] = &[
    "",
    " ",
    "NaN",
    "Infinity",
    "-Infinity",
    "1",
    "-1",
    "1e20",
    "true",
    "null",
    "AA-TEE-SUN-BLK-M",
    "pv_aa_sun_hnv_2xl",
    "cv_3001_blk_m",
    "cv_3001_ath_3xl",
    "direct_to_garment",
    "embroidery",
    "laser_etching",
    "front",
    "cap_front",
    "US",
    "ZZ",
    "NY",
    "😀",
    "\u{0}",
    "\u{202e}evil",
    "2026-07-14T09:30:00.000Z",
    "9999-12-31T23:59:59.999Z",
    "0000-01-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-07-14T09:30:00.000+14:00",
    "not a date",
    "https://127.0.0.1/a.png",
    "http://cdn.bad-input.example/logo.png",
    IMAGE_URL,
];

/// Field names of the request bodies, so generated objects reach past the first field check.
const FIELD_NAMES: &[&str] = &[
    "externalOrderId",
    "orderedAt",
    "lineItems",
    "shippingAddress",
    "productVariantId",
    "sku",
    "quantity",
    "isCustom",
    "catalogProductVariantId",
    "decorations",
    "artworkId",
    "decorationLocation",
    "decorationMethod",
    "physicalWidth",
    "physicalHeight",
    "horizontalOffsetFromCenter",
    "verticalOffsetFromTop",
    "firstName",
    "lastName",
    "address",
    "streetAddress",
    "cityOrTown",
    "stateOrProvince",
    "zipOrPostalCode",
    "country",
    "name",
    "image",
    "url",
];

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("null".to_owned()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_filter_map("finite", |f| f.is_finite().then(|| format!("{f:e}"))),
        prop::sample::select(ODD_NUMBERS).prop_map(str::to_owned),
        any::<String>().prop_map(|s| quoted(&s)),
        prop::sample::select(ODD_STRINGS).prop_map(quoted),
        (1usize..20_000).prop_map(|n| quoted(&"x".repeat(n))),
    ]
}

fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(FIELD_NAMES).prop_map(str::to_owned),
        1 => any::<String>(),
    ]
}

fn json_tree() -> impl Strategy<Value = Json> {
    scalar()
        .prop_map(Json::Raw)
        .prop_recursive(5, 96, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Json::Array),
                prop::collection::vec((field_name(), inner), 0..8).prop_map(Json::Object),
            ]
        })
}

/// Mostly objects (the bodies' shape), sometimes anything.
fn json_body() -> impl Strategy<Value = Json> {
    prop_oneof![
        3 => prop::collection::vec((field_name(), json_tree()), 0..10).prop_map(Json::Object),
        1 => json_tree(),
    ]
}

/// One change to a valid body.
#[derive(Clone, Debug)]
enum Mutation {
    /// Drops a field or array element.
    Remove(Index),
    /// Puts any JSON in place of a node (a wrong type, mostly).
    Replace(Index, Json),
    /// Puts an odd number or a number-like string in place of a number (quantity 0, -1, 1e20, "1", "NaN").
    OddNumber(Index, String),
    /// Repeats a field or array element next to itself (duplicate line items, duplicate keys).
    Duplicate(Index),
    /// Adds a field to an object.
    AddField(Index, String, Json),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let odd_number = prop_oneof![
        prop::sample::select(ODD_NUMBERS).prop_map(str::to_owned),
        prop::sample::select(&["NaN", "Infinity", "-Infinity", "1", "0", "1e20", ""][..])
            .prop_map(quoted),
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("[]".to_owned()),
    ];
    prop_oneof![
        1 => any::<Index>().prop_map(Mutation::Remove),
        1 => (any::<Index>(), json_tree()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        2 => (any::<Index>(), odd_number).prop_map(|(i, n)| Mutation::OddNumber(i, n)),
        1 => any::<Index>().prop_map(Mutation::Duplicate),
        1 => (any::<Index>(), field_name(), json_tree()).prop_map(|(i, k, v)| Mutation::AddField(i, k, v)),
    ]
}

impl Mutation {
    fn apply(&self, doc: &mut Json) {
        let paths = doc.paths();
        if paths.is_empty() {
            return;
        }
        match self {
            Mutation::Remove(index) => {
                let path = index.get::<Vec<usize>>(&paths);
                let (last, parent) = path.split_last().unwrap();
                match doc.at_mut(parent) {
                    Json::Array(items) => drop(items.remove(*last)),
                    Json::Object(fields) => drop(fields.remove(*last)),
                    Json::Raw(_) => {}
                }
            }
            Mutation::Replace(index, value) => {
                *doc.at_mut(index.get::<Vec<usize>>(&paths)) = value.clone()
            }
            Mutation::OddNumber(index, number) => {
                let numbers: Vec<&Vec<usize>> =
                    paths.iter().filter(|p| doc.at(p).is_number()).collect();
                if !numbers.is_empty() {
                    *doc.at_mut(index.get::<&Vec<usize>>(&numbers)) = Json::Raw(number.clone());
                }
            }
            Mutation::Duplicate(index) => {
                let path = index.get::<Vec<usize>>(&paths);
                let (last, parent) = path.split_last().unwrap();
                match doc.at_mut(parent) {
                    Json::Array(items) => {
                        let copy = items[*last].clone();
                        items.insert(*last, copy);
                    }
                    Json::Object(fields) => {
                        let copy = fields[*last].clone();
                        fields.insert(*last, copy);
                    }
                    Json::Raw(_) => {}
                }
            }
            Mutation::AddField(index, key, value) => {
                let objects: Vec<&Vec<usize>> = paths
                    .iter()
                    .filter(|p| matches!(doc.at(p), Json::Object(_)))
                    .collect();
                let target = if objects.is_empty() {
                    doc
                } else {
                    doc.at_mut(index.get::<&Vec<usize>>(&objects))
                };
                if let Json::Object(fields) = target {
                    fields.push((key.clone(), value.clone()));
                }
            }
        }
    }
}

// ---------------------------------------------------------------- query strategies

const QUERY_KEYS: &[&str] = &[
    "page",
    "limit",
    "filter[status]",
    "filter[fulfillmentStatus]",
    "filter[paymentStatus]",
    "filter[externalOrderId]",
    "filter[productType]",
    "filter[decorationMethod]",
    "filter[color]",
    "filter[]",
    "filter",
    "filter[[status]]",
    "sort[createdAt]",
    "sort[updatedAt]",
    "sort[name]",
    "sort[]",
    "sort",
    "sort[createdAt]]",
];

const QUERY_VALUES: &[&str] = &[
    "",
    "0",
    "-1",
    "1",
    "2",
    "100",
    "101",
    "1e3",
    " 5",
    "+3",
    "0x10",
    "1.5",
    "18446744073709551616",
    "99999999999999999999999999999999",
    "asc",
    "desc",
    "ASC",
    "pending,on_hold",
    ",,,",
    "t-shirt",
    "embroidery,uv_printing",
    "%",
    "%ZZ",
    "%FF%FE",
    "&",
    "=",
    "😀",
];

/// How a generated key or value is written into the query string.
#[derive(Clone, Copy, Debug)]
enum Encoding {
    /// As is (the URL parser escapes what it must).
    Raw,
    /// `application/x-www-form-urlencoded`.
    Form,
    /// Every byte as `%XX`.
    Percent,
}

fn encode(text: &str, encoding: Encoding) -> String {
    match encoding {
        Encoding::Raw => text.to_owned(),
        Encoding::Form => url::form_urlencoded::byte_serialize(text.as_bytes()).collect(),
        Encoding::Percent => text.bytes().map(|b| format!("%{b:02X}")).collect(),
    }
}

fn query_part() -> impl Strategy<Value = String> {
    let text = |list: &'static [&'static str]| prop_oneof![4 => prop::sample::select(list).prop_map(str::to_owned), 1 => any::<String>()];
    let encoding = prop_oneof![
        Just(Encoding::Raw),
        Just(Encoding::Form),
        Just(Encoding::Percent)
    ];
    (
        text(QUERY_KEYS),
        text(QUERY_VALUES),
        encoding,
        any::<bool>(),
    )
        .prop_map(|(key, value, encoding, with_value)| {
            if with_value {
                format!("{}={}", encode(&key, encoding), encode(&value, encoding))
            } else {
                encode(&key, encoding)
            }
        })
}

/// Several parts, repeated keys included (the key list is short), joined by `&` or by odd separators.
fn query_string() -> impl Strategy<Value = String> {
    let separator = prop_oneof![8 => Just("&"), 1 => Just("&&"), 1 => Just(";")];
    prop::collection::vec((query_part(), separator), 0..10).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(part, sep)| format!("{part}{sep}"))
            .collect()
    })
}

// ---------------------------------------------------------------- property tests

fn config() -> Config {
    Config {
        cases: 200,
        failure_persistence: None,
        ..Config::default()
    }
}

fn post_endpoint() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("/orders"), Just("/artworks")]
}

fn content_type() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![3 => Just(Some(JSON)), 1 => Just(None), 1 => Just(Some("text/plain"))]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_as_a_body(
        endpoint in post_endpoint(),
        content_type in content_type(),
        body in prop::collection::vec(any::<u8>(), 0..4096),
    ) {
        let h = harness();
        prop_check("bytes", h.send(Method::POST, endpoint, content_type, Some(body)))?;
    }

    #[test]
    fn arbitrary_json_as_a_body(endpoint in post_endpoint(), body in json_body()) {
        let h = harness();
        let text = body.render();
        prop_check(&text, h.send(Method::POST, endpoint, Some(JSON), Some(text.clone().into_bytes())))?;
    }

    #[test]
    fn mutations_of_a_valid_order(mutations in prop::collection::vec(mutation(), 1..4)) {
        let h = harness();
        let mut doc = Json::from_value(&valid_order(h));
        mutations.iter().for_each(|m| m.apply(&mut doc));
        let text = doc.render();
        prop_check(&text, h.send(Method::POST, "/orders", Some(JSON), Some(text.clone().into_bytes())))?;
    }

    #[test]
    fn mutations_of_a_valid_artwork(mutations in prop::collection::vec(mutation(), 1..3)) {
        let h = harness();
        let mut doc = Json::from_value(&valid_artwork());
        mutations.iter().for_each(|m| m.apply(&mut doc));
        let text = doc.render();
        prop_check(&text, h.send(Method::POST, "/artworks", Some(JSON), Some(text.clone().into_bytes())))?;
    }

    #[test]
    fn arbitrary_list_queries(
        endpoint in prop_oneof![Just("/orders"), Just("/catalog-products"), Just("/products"), Just("/artworks")],
        query in query_string(),
    ) {
        let h = harness();
        let path = format!("{endpoint}?{query}");
        prop_check(&path, h.send(Method::GET, &path, None, None))?;
    }
}

// ---------------------------------------------------------------- specific cases

#[test]
fn the_valid_bodies_the_mutations_start_from_are_accepted() {
    let h = harness();
    let order = valid_order(h).to_string().into_bytes();
    check_status(
        "valid order",
        h.send(Method::POST, "/orders", Some(JSON), Some(order)),
        201,
    );
    let artwork = valid_artwork().to_string().into_bytes();
    check_status(
        "valid artwork",
        h.send(Method::POST, "/artworks", Some(JSON), Some(artwork)),
        201,
    );
}

#[test]
fn malformed_bodies_are_400_envelopes() {
    let h = harness();
    let cases: &[(&str, &[u8])] = &[
        ("malformed JSON", br#"{"lineItems": ["#),
        ("trailing garbage", br#"{"lineItems": []} x"#),
        ("empty body", b""),
        ("whitespace only", b"  \n\t "),
        ("null", b"null"),
        ("empty array", b"[]"),
        ("array of an object", b"[{}]"),
        ("a string", br#""an order""#),
        ("a number", b"42"),
        ("empty object", b"{}"),
        ("invalid UTF-8", b"\xff\xfe\xfd"),
        ("invalid UTF-8 inside a string", b"{\"name\": \"\xc3\x28\"}"),
        (
            "a lone surrogate escape",
            br#"{"name": "\ud800", "image": {"url": "https://a.example/x.png"}}"#,
        ),
        ("a byte order mark", b"\xef\xbb\xbf{}"),
        (
            "NaN literal",
            br#"{"lineItems": [{"sku": "AA-TEE-SUN-BLK-M", "quantity": NaN}]}"#,
        ),
        (
            "a number too large for f64",
            br#"{"lineItems": [{"sku": "AA-TEE-SUN-BLK-M", "quantity": 1e400}]}"#,
        ),
    ];
    for endpoint in ["/orders", "/artworks"] {
        for (label, body) in cases {
            let label = format!("POST {endpoint}: {label}");
            check_status(
                &label,
                h.send(Method::POST, endpoint, Some(JSON), Some(body.to_vec())),
                400,
            );
        }
    }
}

/// A valid order padded with spaces (insignificant JSON whitespace) to exactly `len` bytes.
fn order_of_length(h: &Harness, len: usize) -> Vec<u8> {
    let mut body = valid_order(h).to_string().into_bytes();
    assert!(body.len() <= len);
    body.resize(len, b' ');
    body
}

#[test]
fn the_body_limit_is_413_above_and_accepted_at_the_limit() {
    let h = harness();
    let under = order_of_length(h, MAX_BODY_BYTES - 100);
    check_status(
        "100 bytes under the limit",
        h.send(Method::POST, "/orders", Some(JSON), Some(under)),
        201,
    );
    let at = order_of_length(h, MAX_BODY_BYTES);
    check_status(
        "exactly at the limit",
        h.send(Method::POST, "/orders", Some(JSON), Some(at)),
        201,
    );
    let over = order_of_length(h, MAX_BODY_BYTES + 1);
    let answer = check_status(
        "one byte over",
        h.send(Method::POST, "/orders", Some(JSON), Some(over)),
        413,
    );
    assert!(
        message_of(&answer).contains(&MAX_BODY_BYTES.to_string()),
        "{}",
        answer.text()
    );
    for endpoint in ["/orders", "/artworks"] {
        let two_mib = order_of_length(h, 2 * 1024 * 1024);
        check_status(
            &format!("2 MiB to {endpoint}"),
            h.send(Method::POST, endpoint, Some(JSON), Some(two_mib)),
            413,
        );
    }
    // A refused body is not processed: its (otherwise valid) order does not exist afterwards.
    let mut order = valid_order(h);
    let external_id = order["externalOrderId"].as_str().unwrap().to_owned();
    order["note"] = json!("x".repeat(MAX_BODY_BYTES));
    let over = order.to_string().into_bytes();
    check_status(
        "a valid order over the limit",
        h.send(Method::POST, "/orders", Some(JSON), Some(over)),
        413,
    );
    let lookup = format!("/orders?filter[externalOrderId]={external_id}");
    let found = check_status("look-up", h.send(Method::GET, &lookup, None, None), 200);
    let found: Value = serde_json::from_slice(&found.body).unwrap();
    assert_eq!(
        found["totalItems"], 0,
        "a refused body created an order: {found}"
    );
}

#[test]
fn a_chunked_body_over_the_limit_is_413() {
    let h = harness();
    let chunk = Bytes::from(vec![b' '; 64 * 1024]);
    let chunks = std::iter::once(Bytes::from_static(b"{\"lineItems\":[]}"))
        .chain(std::iter::repeat_n(chunk, 32))
        .map(Ok::<_, std::io::Error>);
    let body = reqwest::Body::wrap_stream(futures::stream::iter(chunks.collect::<Vec<_>>()));
    let url = format!("{}/orders", h.api);
    check_status(
        "2 MiB chunked",
        h.send_to(Method::POST, &url, Some(JSON), Some(body), h.key()),
        413,
    );
}

fn store_id(h: &Harness) -> String {
    h.api.rsplit('/').next().unwrap().to_owned()
}

#[test]
fn deeply_nested_json_is_400() {
    let h = harness();
    let cases = [
        ("10k [", "[".repeat(10_000)),
        (
            "10k [ closed",
            format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
        ),
        (
            "10k objects",
            format!("{}1{}", r#"{"a":"#.repeat(10_000), "}".repeat(10_000)),
        ),
        ("100k [", "[".repeat(100_000)),
        (
            "deep inside a line item",
            format!(
                r#"{{"lineItems":[{{"sku":"AA-TEE-SUN-BLK-M","quantity":{}1{}}}]}}"#,
                "[".repeat(5_000),
                "]".repeat(5_000)
            ),
        ),
    ];
    for endpoint in ["/orders", "/artworks"] {
        for (label, body) in &cases {
            let label = format!("POST {endpoint}: {label}");
            check_status(
                &label,
                h.send(
                    Method::POST,
                    endpoint,
                    Some(JSON),
                    Some(body.clone().into_bytes()),
                ),
                400,
            );
        }
    }
}

#[test]
fn the_content_type_never_causes_a_5xx() {
    let h = harness();
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/xml"),
        Some("multipart/form-data"),
        Some("%%%"),
    ] {
        let order = valid_order(h).to_string().into_bytes();
        check(
            &format!("order as {content_type:?}"),
            h.send(Method::POST, "/orders", content_type, Some(order)),
        );
        let artwork = valid_artwork().to_string().into_bytes();
        check(
            &format!("artwork as {content_type:?}"),
            h.send(Method::POST, "/artworks", content_type, Some(artwork)),
        );
    }
}

#[test]
fn long_path_segments_are_404_or_401_envelopes() {
    let h = harness();
    for len in [1_000, 8_000, 32_000] {
        let id = "o".repeat(len);
        for (resource, message) in [
            ("orders", "Order not found"),
            ("products", "Product not found"),
            ("artworks", "Artwork not found"),
            ("catalog-products", "Catalog product not found"),
        ] {
            let answer = check_status(
                &format!("{resource} id of {len}"),
                h.send(Method::GET, &format!("/{resource}/{id}"), None, None),
                404,
            );
            assert!(message_of(&answer).contains(message), "{}", answer.text());
        }
        let unknown = format!("{}/{}", h.api, "p".repeat(len));
        check_status(
            &format!("unknown route of {len}"),
            h.send_to(Method::GET, &unknown, None, None, h.key()),
            404,
        );
        let long_store = format!(
            "{}/store-api/2026-08/stores/{}/orders",
            h.origin,
            "s".repeat(len)
        );
        check_status(
            &format!("store id of {len}"),
            h.send_to(Method::GET, &long_store, None, None, h.key()),
            401,
        );
    }
}

#[test]
fn undecodable_path_segments_are_4xx_envelopes() {
    let h = harness();
    for segment in [
        "%FF", "%C3%28", "a%00b", "%E2%82", "%ZZ", "..", "%2F", "%2e%2e",
    ] {
        check(
            &format!("order id {segment}"),
            h.send(Method::GET, &format!("/orders/{segment}"), None, None),
        );
        let url = format!("{}/store-api/2026-08/stores/{segment}/orders", h.origin);
        check(
            &format!("store id {segment}"),
            h.send_to(Method::GET, &url, None, None, h.key()),
        );
    }
}

#[test]
fn unsupported_methods_are_404_envelopes() {
    let h = harness();
    for method in ["TRACE", "PATCH", "PUT", "DELETE", "OPTIONS", "PURGE"] {
        for path in ["/orders", "/orders/ord_1", "/status", "/artworks"] {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let label = format!("{method} {path}");
            let answer = check_status(
                &label,
                h.send(method.clone(), path, Some(JSON), Some(b"{}".to_vec())),
                404,
            );
            let expected = format!(
                "Cannot {method} /store-api/2026-08/stores/{}{path}",
                store_id(h)
            );
            assert!(
                message_of(&answer).contains(&expected),
                "{label}: {}",
                answer.text()
            );
        }
    }
}

#[test]
fn authentication_comes_before_the_body() {
    let h = harness();
    let url = format!("{}/orders", h.api);
    for body in [&b"{"[..], b"\xff", b"null"] {
        let body = Some(reqwest::Body::from(body.to_vec()));
        check_status(
            "bad body without a key",
            h.send_to(Method::POST, &url, Some(JSON), body, None),
            401,
        );
    }
}

#[test]
fn huge_quantities_do_not_overflow_the_totals() {
    let h = harness();
    let order = json!({
        "externalOrderId": format!("bad-input-{}", NEXT_ORDER.fetch_add(1, Ordering::SeqCst)),
        "lineItems": [
            { "sku": "AA-TEE-SUN-BLK-M", "quantity": 9223372036854775807_u64 },
            { "sku": "AA-TEE-SUN-BLK-L", "quantity": 18446744073709551615_u64 },
            { "productVariantId": "pv_aa_cap_blk_os", "quantity": 9223372036854775807_u64 }
        ],
        "shippingAddress": valid_order(h)["shippingAddress"].clone()
    });
    let answer = check_status(
        "huge quantities",
        h.send(
            Method::POST,
            "/orders",
            Some(JSON),
            Some(order.to_string().into_bytes()),
        ),
        201,
    );
    // The totals saturate instead of wrapping around to negative amounts.
    let order: Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!(order["totalQuantity"], json!(i64::MAX), "{order}");
    for field in ["subtotalCost", "shippingCost", "totalCost"] {
        assert!(
            order[field].as_f64().is_some_and(|v| v > 1e16),
            "{field}: {order}"
        );
    }
}

#[test]
fn odd_api_keys_are_401_envelopes() {
    let h = harness();
    let url = format!("{}/orders", h.api);
    let long = "k".repeat(16 * 1024);
    let keys: Vec<HeaderValue> = vec![
        HeaderValue::from_static(""),
        HeaderValue::from_bytes(b"csk_\xff\xfe").unwrap(),
        HeaderValue::from_str(&format!("{}0", h.key)).unwrap(),
        HeaderValue::from_str(&h.key.to_uppercase()).unwrap(),
        HeaderValue::from_str(&long).unwrap(),
    ];
    for key in keys {
        let label = format!("key {:?}", &key.as_bytes()[..key.len().min(12)]);
        check_status(
            &label,
            h.send_to(Method::GET, &url, None, None, Some(key)),
            401,
        );
    }
}
