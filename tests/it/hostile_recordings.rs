//! Issue 35: recordings safe to commit. The real `Recorder` records hostile requests over real HTTP
//! against the emulator and saves a real cassette in a folder of its own; no planted name, email,
//! phone number or key is in any file written, in any spelling. First every shape the issue saw in
//! cassettes, then a generated corpus (proptest: JSON of random shape with secrets planted at random
//! paths, types, casings and encodings, in bodies, queries and paths).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};
use store_api::network::Network;
use store_api_cassette::{Cassette, HttpRequest, RecordOptions, RecordedBody, Recorder, Replay};
use store_api_tests::{ALPHA, RUN_SLOW_TESTS, emulator, key_of, shipping_address};

/// One request to send through the recorder.
#[derive(Debug, Clone)]
struct Sent {
    method: &'static str,
    /// From the origin on, as it goes on the wire.
    path_and_query: String,
    /// Whether it carries the store's key in `X-API-Key`.
    with_key: bool,
    body: Vec<u8>,
}

impl Sent {
    fn get(path_and_query: impl Into<String>) -> Sent {
        Sent {
            method: "GET",
            path_and_query: path_and_query.into(),
            with_key: true,
            body: Vec::new(),
        }
    }

    fn post(path_and_query: impl Into<String>, body: impl Into<Vec<u8>>) -> Sent {
        Sent {
            method: "POST",
            path_and_query: path_and_query.into(),
            with_key: true,
            body: body.into(),
        }
    }

    fn without_key(mut self) -> Sent {
        self.with_key = false;
        self
    }
}

const ORDERS: &str = "/store-api/2026-08/stores/store_alpha/orders";

/// Sends `sent` through `recorder` to `origin` (every answer is recorded; none is judged).
async fn send(recorder: &Recorder, origin: &str, key: &str, sent: &[Sent]) {
    for one in sent {
        let url = reqwest::Url::parse(&format!("{origin}{}", one.path_and_query)).unwrap();
        let mut request = reqwest::Request::new(one.method.parse().unwrap(), url);
        if one.with_key {
            request
                .headers_mut()
                .insert("x-api-key", key.parse().unwrap());
        }
        if !one.body.is_empty() {
            request
                .headers_mut()
                .insert("content-type", "application/json".parse().unwrap());
            *request.body_mut() = Some(one.body.clone().into());
        }
        let answer = recorder.send(request).await;
        assert!(answer.is_ok(), "{one:?}: {answer:?}");
    }
}

/// A folder of its own under the system's temporary folder, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new() -> Folder {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "store-api-hostile-recordings-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&path).unwrap();
        Folder(path)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `text` percent-decoded (three layers, `+` read as itself and as a space): each form a reader of
/// the file might see.
fn readings(text: &str) -> Vec<String> {
    let mut out = vec![text.to_lowercase()];
    let mut current = text.to_owned();
    for _ in 0..3 {
        let bytes = current.as_bytes();
        let mut decoded = Vec::with_capacity(bytes.len());
        let mut at = 0;
        while at < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            match (bytes[at], bytes.get(at + 1), bytes.get(at + 2)) {
                (b'%', Some(&high), Some(&low)) if hex(high).is_some() && hex(low).is_some() => {
                    decoded.push((hex(high).unwrap() * 16 + hex(low).unwrap()) as u8);
                    at += 3;
                }
                (byte, _, _) => {
                    decoded.push(byte);
                    at += 1;
                }
            }
        }
        current = String::from_utf8_lossy(&decoded).into_owned();
        out.push(current.to_lowercase());
        out.push(current.replace('+', " ").to_lowercase());
    }
    // JSON escapes, read back.
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let mut strings = Vec::new();
        collect(&value, &mut strings);
        out.push(strings.join("\n").to_lowercase());
    }
    out
}

fn collect(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Number(number) => out.push(number.to_string()),
        Value::Array(items) => items.iter().for_each(|item| collect(item, out)),
        Value::Object(object) => {
            for (key, inner) in object {
                out.push(key.clone());
                collect(inner, out);
            }
        }
        _ => {}
    }
}

/// Every file under `folder`, with its text.
fn files(folder: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            out.push((path, text));
        }
    }
    out
}

/// Records `sent` with `options`, saves the cassette in a folder of its own and asserts that none of
/// `secrets` is in any file there, in any case or encoding. Returns the cassette.
async fn record_and_check(
    origin: &str,
    key: &str,
    options: RecordOptions,
    sent: &[Sent],
    secrets: &[String],
) -> Cassette {
    let folder = Folder::new();
    let recorder = Recorder::reqwest(options).unwrap();
    send(&recorder, origin, key, sent).await;
    let cassette = recorder.recording().cassette();
    cassette.save(folder.0.join("hostile.json")).unwrap();
    let written = files(&folder.0);
    assert!(!written.is_empty());
    for (path, text) in written {
        let readings = readings(&text);
        for secret in secrets {
            let secret = secret.to_lowercase();
            assert!(
                readings.iter().all(|reading| !reading.contains(&secret)),
                "{secret:?} is in {}:\n{text}",
                path.display()
            );
        }
    }
    cassette
}

/// The forms a key, an email or a phone number is checked absent in: itself, and its digits for a
/// phone number, its body (past the brand prefix) for a key.
fn forms(secret: &str) -> Vec<String> {
    let mut out = vec![secret.to_owned()];
    let digits: String = secret.chars().filter(char::is_ascii_digit).collect();
    if digits.len() >= 7 && !secret.contains('@') && !secret.contains('_') {
        out.push(digits);
    }
    if let Some(body) = secret.strip_prefix("csk_") {
        out.push(body.to_owned());
    }
    out
}

/// Each shape the issue found in cassettes, recorded through the emulator: none of their customer
/// data or keys is written, and each recorded request still matches its twin on replay.
#[tokio::test]
async fn every_shape_seen_in_cassettes_is_recorded_without_its_secrets() {
    let emu = emulator().await;
    let origin = emu.origin().to_owned();
    let key = key_of(&emu, ALPHA);
    let other_keys: Vec<String> = emu
        .stores()
        .into_iter()
        .map(|store| store.api_key)
        .collect();
    let beta = key_of(&emu, "store_beta");
    let lower_escaped = key.replacen('_', "%5f", 1);
    let order = |address: Value, external_id: &str| {
        json!({
            "externalOrderId": external_id,
            "lineItems": [{"sku": "AA-TEE-SUN-BLK-M", "quantity": 1}],
            "shippingAddress": address,
        })
        .to_string()
    };
    let sent = vec![
        // A malformed JSON order.
        Sent::post(
            ORDERS,
            r#"{"externalOrderId": "x", "shippingAddress": {"firstName": "Ottoline", "email": "ottoline@morrell.org", "phone": "+1 212-867-5309""#,
        ),
        // `streetAddress` directly under `shippingAddress`, extra fields, a phone as a number.
        Sent::post(
            ORDERS,
            order(
                json!({
                    "firstName": "Ottoline", "middleName": "Quenby", "company": "Garsington Manor",
                    "lastName": "Morrell", "streetAddress": "44 Bedford Square",
                    "phone": 2128675309u64, "email": "ottoline@morrell.org",
                    "address": {"cityOrTown": "Oxfordshire", "stateOrProvince": "NY",
                        "zipOrPostalCode": "10282", "country": "US"}
                }),
                "hostile-0001",
            ),
        ),
        // `ShippingAddress` in other casing.
        Sent::post(
            ORDERS,
            json!({"externalOrderId": "hostile-0002", "ShippingAddress": {
                "FirstName": "Ottoline", "PHONE": "(212) 867-5309",
                "Address": {"StreetAddress": "44 Bedford Square"}
            }})
            .to_string(),
        ),
        // Emails inside externalOrderId and filter[externalOrderId]; a valid order, so the answer
        // carries it too.
        Sent::post(
            ORDERS,
            order(shipping_address(), "order-for-ottoline@morrell.org"),
        ),
        Sent::get(format!(
            "{ORDERS}?filter%5BexternalOrderId%5D=order-for-ottoline%40morrell.org,clive.bell%40bloomsbury.net"
        )),
        // The key percent-encoded with lower-case escapes, in a path and a query.
        Sent::get(format!(
            "/store-api/2026-08/stores/{lower_escaped}/orders?key={lower_escaped}"
        )),
        // A key that never was in a header: another store's, in a query, sent with no key at all.
        Sent::get(format!("{ORDERS}?api_key={beta}")).without_key(),
        // The control plane's answer: every store's key.
        Sent::get("/_emulator/stores"),
    ];
    let mut secrets: Vec<String> = [
        "Ottoline",
        "Quenby",
        "Garsington",
        "Morrell",
        "Bedford",
        "Oxfordshire",
        "ottoline@morrell.org",
        "clive.bell@bloomsbury.net",
        "+1 212-867-5309",
        "(212) 867-5309",
    ]
    .iter()
    .flat_map(|secret| forms(secret))
    .collect();
    secrets.extend(other_keys.iter().flat_map(|key| forms(key)));
    assert!(other_keys.contains(&key) && other_keys.contains(&beta));
    let cassette = record_and_check(&origin, &key, RecordOptions::default(), &sent, &secrets).await;
    // The malformed order is kept as its size and digest.
    assert!(
        matches!(
            cassette.exchanges[0].request.body,
            Some(RecordedBody::Omitted { .. })
        ),
        "{:?}",
        cassette.exchanges[0].request.body
    );
    assert_eq!(cassette.exchanges[3].answer.status, 201, "{cassette:?}");

    // Each recorded request matches its twin, and answers what it answered.
    let replay = Replay::new(cassette.clone());
    for (one, exchange) in sent.iter().zip(&cassette.exchanges) {
        let mut headers = http::HeaderMap::new();
        if one.with_key {
            headers.insert("x-api-key", key.parse().unwrap());
        }
        let answer = replay.answer(&HttpRequest {
            method: one.method,
            path_and_query: &one.path_and_query,
            headers: &headers,
            body: &one.body,
        });
        match answer {
            Ok(answer) => assert_eq!(answer.status, exchange.answer.status, "{one:?}"),
            Err(error) => panic!("{one:?} does not match its twin: {error}"),
        }
    }

    // Another email where the recorded one stands binds to it, one-to-one, and comes back.
    let replay = Replay::new(cassette.clone());
    let headers = http::HeaderMap::new();
    let ask = |sent: &Sent| {
        replay.answer(&HttpRequest {
            method: sent.method,
            path_and_query: &sent.path_and_query,
            headers: &headers,
            body: &sent.body,
        })
    };
    for one in &sent[..3] {
        ask(one).unwrap();
    }
    let live = Sent::post(
        ORDERS,
        order(shipping_address(), "order-for-vanessa@charleston.org"),
    );
    let created = ask(&live).unwrap();
    assert_eq!(created.status, 201);
    let body: Value = serde_json::from_slice(&created.body).unwrap();
    assert_eq!(body["externalOrderId"], "order-for-vanessa@charleston.org");
    let other = Sent::get(format!(
        "{ORDERS}?filter%5BexternalOrderId%5D=order-for-duncan%40grant.org,clive.bell%40bloomsbury.net"
    ));
    assert!(
        ask(&other).is_err(),
        "the recorded id is bound to the live one already"
    );
    let same = Sent::get(format!(
        "{ORDERS}?filter%5BexternalOrderId%5D=order-for-vanessa%40charleston.org,clive.bell%40bloomsbury.net"
    ));
    assert_eq!(
        ask(&same).unwrap().status,
        cassette.exchanges[4].answer.status
    );

    // Kept as text when asked: the key, emails and phone numbers are scrubbed there all the same
    // (names cannot be found in a body that does not parse: they are kept with it).
    let kept = record_and_check(
        &origin,
        &key,
        RecordOptions::default().keep_unparsed_bodies(true),
        &sent[..1],
        &[forms("ottoline@morrell.org"), forms("+1 212-867-5309")].concat(),
    )
    .await;
    assert!(
        matches!(&kept.exchanges[0].request.body, Some(RecordedBody::Text(text)) if text.contains("Ottoline")),
        "{:?}",
        kept.exchanges[0].request.body
    );
    // And still matches its twin.
    let replay = Replay::new(kept);
    let mut headers = http::HeaderMap::new();
    headers.insert("x-api-key", key.parse().unwrap());
    let twin = replay.answer(&HttpRequest {
        method: sent[0].method,
        path_and_query: &sent[0].path_and_query,
        headers: &headers,
        body: &sent[0].body,
    });
    assert!(twin.is_ok(), "{twin:?}");
}

/// A secret planted in the corpus.
#[derive(Debug, Clone)]
enum Secret {
    /// A name: only below an address-like key (elsewhere nothing tells a name from a word).
    Name(String),
    Email(String),
    Phone(String),
    Key(String),
}

impl Secret {
    fn text(&self) -> &str {
        match self {
            Secret::Name(text) | Secret::Email(text) | Secret::Phone(text) | Secret::Key(text) => {
                text
            }
        }
    }
}

/// How a planted string is spelled.
#[derive(Debug, Clone, Copy)]
enum Spelling {
    AsIs,
    Upper,
    Lower,
    /// Percent-encoded, upper-case escapes, where a URL would encode.
    Encoded,
    /// Every byte a lower-case escape.
    EveryByte,
    /// Encoded twice.
    Twice,
}

fn spelled(text: &str, spelling: Spelling) -> String {
    let escape = |byte: u8, lower: bool| {
        if lower {
            format!("%{byte:02x}")
        } else {
            format!("%{byte:02X}")
        }
    };
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|byte| {
                if byte.is_ascii_alphanumeric() || b"-.~".contains(&byte) {
                    char::from(byte).to_string()
                } else {
                    escape(byte, false)
                }
            })
            .collect()
    };
    match spelling {
        Spelling::AsIs => text.to_owned(),
        Spelling::Upper => text.to_uppercase(),
        Spelling::Lower => text.to_lowercase(),
        Spelling::Encoded => encode(text),
        Spelling::EveryByte => text.bytes().map(|byte| escape(byte, true)).collect(),
        Spelling::Twice => encode(&encode(text)),
    }
}

fn spelling() -> impl Strategy<Value = Spelling> {
    prop_oneof![
        Just(Spelling::AsIs),
        Just(Spelling::Upper),
        Just(Spelling::Lower),
        Just(Spelling::Encoded),
        Just(Spelling::EveryByte),
        Just(Spelling::Twice),
    ]
}

fn name() -> impl Strategy<Value = Secret> {
    "Q[a-z]{6,9}".prop_map(Secret::Name)
}

fn email() -> impl Strategy<Value = Secret> {
    "[a-z][a-z0-9.]{2,7}[a-z](\\+[a-z]{2,4})?@[a-z]{4,9}\\.(org|net|io|co\\.uk)"
        .prop_map(Secret::Email)
}

fn phone() -> impl Strategy<Value = Secret> {
    // No 555 exchange: those are the placeholders'.
    prop_oneof![
        "\\+1 [2-9][0-9]{2}-[2-46-9][0-9]{2}-[0-9]{4}",
        "\\([2-9][0-9]{2}\\) [2-46-9][0-9]{2}-[0-9]{4}",
        "[2-9][0-9]{2}\\.[2-46-9][0-9]{2}\\.[0-9]{4}",
        "[2-9][0-9]{2}-[2-46-9][0-9]{2}-[0-9]{4}",
        "\\+44 20 [2-46-9][0-9]{3} [0-9]{4}",
        "\\+[1-9][0-46-9][0-9]{8,11}",
    ]
    .prop_map(Secret::Phone)
}

fn key() -> impl Strategy<Value = Secret> {
    prop_oneof!["csk_[0-9a-f]{32}", "csk_[0-9A-Za-z]{32}"].prop_map(Secret::Key)
}

/// A secret that may stand anywhere (no name).
fn loose() -> impl Strategy<Value = Secret> {
    prop_oneof![email(), phone(), key()]
}

/// A JSON value with planted secrets.
#[derive(Debug, Clone)]
enum Tree {
    Word(String),
    Number(i64),
    Flag(bool),
    Null,
    /// A secret as a string, alone or inside a sentence, spelled some way.
    Planted(Secret, Spelling, bool),
    /// A phone number as a number (below an address-like key only).
    PhoneNumber(Secret),
    Array(Vec<Tree>),
    /// Members; a key may itself be a planted secret.
    Object(Vec<(Key, Tree)>),
}

#[derive(Debug, Clone)]
enum Key {
    Word(String),
    Planted(Secret),
}

const WORDS: &[&str] = &[
    "note",
    "items",
    "meta",
    "externalOrderId",
    "orderedAt",
    "sku",
    "data",
    "tags",
    "lineItems",
    "quantity",
    "country",
];

/// Keys that name customer data, in the casings the issue saw and others.
const ADDRESS_KEYS: &[&str] = &[
    "shippingAddress",
    "ShippingAddress",
    "SHIPPING_ADDRESS",
    "shipping-address",
    "billingAddress",
    "address",
    "streetAddress",
    "customer",
    "Email",
    "phoneNumber",
];

fn word() -> impl Strategy<Value = String> {
    prop::sample::select(WORDS).prop_map(str::to_owned)
}

/// A tree whose leaves are plain values or `planted` secrets; `customer` trees may hold numbers for
/// phones.
fn tree(planted: BoxedStrategy<Secret>, customer: bool) -> BoxedStrategy<Tree> {
    let leaf = prop_oneof![
        word().prop_map(Tree::Word),
        any::<i64>().prop_map(Tree::Number),
        any::<bool>().prop_map(Tree::Flag),
        Just(Tree::Null),
        (planted.clone(), spelling(), any::<bool>())
            .prop_map(|(secret, spelling, sentence)| Tree::Planted(secret, spelling, sentence)),
        phone().prop_map(move |phone| if customer {
            Tree::PhoneNumber(phone)
        } else {
            Tree::Planted(phone, Spelling::AsIs, true)
        }),
    ];
    let key = prop_oneof![
        4 => word().prop_map(Key::Word),
        1 => loose().prop_map(Key::Planted),
    ];
    leaf.prop_recursive(4, 24, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Tree::Array),
            prop::collection::vec((key.clone(), inner), 0..4).prop_map(Tree::Object),
        ]
    })
    .boxed()
}

/// A body: a plain tree with customer subtrees (names and all) below address-like keys.
fn body() -> impl Strategy<Value = Tree> {
    let customer = tree(prop_oneof![name(), loose()].boxed(), true);
    let plain = tree(loose().boxed(), false);
    (
        plain,
        prop::collection::vec(
            (prop::sample::select(ADDRESS_KEYS), customer, 0usize..3),
            0..3,
        ),
    )
        .prop_map(|(plain, customers)| {
            let mut members = match plain {
                Tree::Object(members) => members,
                other => vec![(Key::Word("data".into()), other)],
            };
            for (key, customer, depth) in customers {
                // At some depth below the top.
                let mut planted = Tree::Object(vec![(Key::Word(key.to_owned()), customer)]);
                for _ in 0..depth {
                    planted = Tree::Object(vec![(Key::Word("data".into()), planted)]);
                }
                members.push((Key::Word(format!("part{}", members.len())), planted));
            }
            Tree::Object(members)
        })
}

/// `tree` as JSON, with the secrets it holds.
fn to_json(tree: &Tree, secrets: &mut Vec<Secret>) -> Value {
    match tree {
        Tree::Word(word) => Value::String(word.clone()),
        Tree::Number(number) => json!(number),
        Tree::Flag(flag) => json!(flag),
        Tree::Null => Value::Null,
        Tree::Planted(secret, spelling, sentence) => {
            secrets.push(secret.clone());
            let text = spelled(secret.text(), *spelling);
            Value::String(if *sentence {
                format!("see {text} today")
            } else {
                text
            })
        }
        Tree::PhoneNumber(secret) => {
            secrets.push(secret.clone());
            let digits: String = secret.text().chars().filter(char::is_ascii_digit).collect();
            json!(digits.parse::<u64>().unwrap_or_default())
        }
        Tree::Array(items) => {
            Value::Array(items.iter().map(|item| to_json(item, secrets)).collect())
        }
        Tree::Object(members) => {
            let mut object = serde_json::Map::new();
            for (key, inner) in members {
                let key = match key {
                    Key::Word(word) => word.clone(),
                    Key::Planted(secret) => {
                        secrets.push(secret.clone());
                        secret.text().to_owned()
                    }
                };
                object.insert(key, to_json(inner, secrets));
            }
            Value::Object(object)
        }
    }
}

/// How a body goes on the wire.
#[derive(Debug, Clone, Copy)]
enum BodyForm {
    Json,
    /// `@` and `_` written as JSON escapes (they stand only inside strings).
    Escaped,
    /// Cut short: it does not parse.
    Malformed,
}

/// One generated case: a body, a query and a path segment, each with secrets.
#[derive(Debug, Clone)]
struct Case {
    body: Tree,
    form: BodyForm,
    query: Vec<(bool, Secret, Spelling)>,
    segment: Option<(Secret, Spelling)>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        body(),
        prop_oneof![
            Just(BodyForm::Json),
            Just(BodyForm::Escaped),
            Just(BodyForm::Malformed)
        ],
        prop::collection::vec((any::<bool>(), loose(), spelling()), 0..3),
        prop::option::of((loose(), spelling())),
    )
        .prop_map(|(body, form, query, segment)| Case {
            body,
            form,
            query,
            segment,
        })
}

impl Case {
    /// The requests of this case, and the secrets they hold.
    fn requests(&self) -> (Vec<Sent>, Vec<Secret>) {
        let mut secrets = Vec::new();
        let json = to_json(&self.body, &mut secrets).to_string();
        let body = match self.form {
            BodyForm::Json => json,
            BodyForm::Escaped => json.replace('@', "\\u0040").replace('_', "\\u005f"),
            BodyForm::Malformed => json[..json.len() - 1].to_owned(),
        };
        let mut query = Vec::new();
        for (as_name, secret, spelling) in &self.query {
            secrets.push(secret.clone());
            // A URL cannot hold a space or a `#`: those are encoded whatever the spelling.
            let text = spelled(secret.text(), *spelling)
                .replace(' ', "%20")
                .replace('#', "%23");
            query.push(if *as_name {
                format!("{text}=1")
            } else {
                format!("filter%5BexternalOrderId%5D={text}")
            });
        }
        let query = if query.is_empty() {
            String::new()
        } else {
            format!("?{}", query.join("&"))
        };
        let mut sent = vec![Sent::post(format!("{ORDERS}{query}"), body)];
        if let Some((secret, spelling)) = &self.segment {
            secrets.push(secret.clone());
            let text = spelled(secret.text(), *spelling)
                .replace(' ', "%20")
                .replace('/', "%2F")
                .replace('?', "%3F")
                .replace('#', "%23");
            sent.push(Sent::get(format!("{ORDERS}/{text}{query}")));
        }
        (sent, secrets)
    }
}

/// The generated corpus: nothing planted is in any file written. A few dozen cases in `cargo
/// test`, many more with `RUN_SLOW_TESTS=1`.
#[test]
fn a_generated_corpus_of_hostile_requests_leaves_no_secret_in_any_file() {
    let slow = std::env::var(RUN_SLOW_TESTS).is_ok_and(|value| !value.is_empty() && value != "0");
    // Declared first so it is dropped last: the emulator shuts down inside it.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let emu = runtime.block_on(emulator());
    let origin = emu.origin().to_owned();
    let key = key_of(&emu, ALPHA);
    let mut runner = TestRunner::new(Config {
        cases: if slow { 1024 } else { 32 },
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case(), |case| {
            let (sent, planted) = case.requests();
            let mut secrets: Vec<String> = planted
                .iter()
                .flat_map(|secret| match secret {
                    // A name is checked as itself (the key of a number is its digits).
                    Secret::Name(name) => vec![name.clone()],
                    other => forms(other.text()),
                })
                .collect();
            secrets.extend(forms(&key));
            runtime.block_on(record_and_check(
                &origin,
                &key,
                RecordOptions::default(),
                &sent,
                &secrets,
            ));
            Ok(())
        })
        .unwrap();
}
