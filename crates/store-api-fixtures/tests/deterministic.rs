//! Deterministic mode: two runs of one scenario (an artwork, an order, advanced, webhooks delivered to a
//! local receiver, one of them retried after the clock is advanced) answer and deliver byte for byte
//! alike, and the whole run is snapshotted without redactions. The logs' 14-day retention and the image
//! cap, crossed with `advance`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode, Uri};
use bytes::Bytes;
use reqwest::Method;
use serde_json::{Value, json};
use store_api_fixtures::{Emulator, LOG_RETENTION};

const ALPHA: &str = "store_alpha";
const ALPHA_KEY: &str = "csk_ce4d6676e735329b21b3d864ca427df5";
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// A webhook receiver that answers the queued statuses first, then 200, and records every request.
struct Receiver {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<String>>>,
    failures: Arc<Mutex<Vec<u16>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    async fn start(addr: SocketAddr) -> Receiver {
        let received = Arc::new(Mutex::new(Vec::new()));
        let failures = Arc::new(Mutex::new(Vec::<u16>::new()));
        let (log, queued) = (received.clone(), failures.clone());
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
            let (log, queued) = (log.clone(), queued.clone());
            async move {
                let signature = headers
                    .get("x-service-signature")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                log.lock().unwrap().push(format!(
                    "{} signature={signature}\n{}",
                    uri.path(),
                    String::from_utf8_lossy(&body)
                ));
                let mut queued = queued.lock().unwrap();
                let status = if queued.is_empty() {
                    200
                } else {
                    queued.remove(0)
                };
                StatusCode::from_u16(status).unwrap()
            }
        });
        let listener = bind(addr).await;
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            addr,
            received,
            failures,
            task,
        }
    }

    async fn wait_for(&self, count: usize) {
        for _ in 0..500 {
            if self.received.lock().unwrap().len() >= count {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("only {:?} arrived", self.received.lock().unwrap());
    }
}

/// Binds `addr`, retrying while the previous run's listener is still being torn down.
async fn bind(addr: SocketAddr) -> tokio::net::TcpListener {
    for _ in 0..100 {
        if let Ok(listener) = tokio::net::TcpListener::bind(addr).await {
            return listener;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("cannot bind {addr}");
}

/// Waits until the delivery log holds `count` attempts (recorded after the receiver answered).
async fn attempts(emu: &Emulator, count: usize) {
    for _ in 0..500 {
        if emu.webhook_deliveries(ALPHA).unwrap().len() >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("fewer than {count} attempts were logged");
}

/// What one run saw, request by request, with the ports it ran on.
struct Run {
    transcript: String,
    emulator: SocketAddr,
    receiver: SocketAddr,
}

/// Appends one exchange: the request line, then the status, the headers that are the emulator's own
/// (hyper's `date` is the real time of the wire, not the emulator's), and the body as sent.
async fn exchange(
    out: &mut String,
    http: &reqwest::Client,
    method: Method,
    url: &str,
    body: Option<Value>,
) -> Value {
    let mut request = http.request(method.clone(), url);
    if url.contains("/store-api/") {
        request = request.header("x-api-key", ALPHA_KEY);
    }
    if let Some(body) = &body {
        request = request.json(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers: Vec<String> = response
        .headers()
        .iter()
        .filter(|(name, _)| name.as_str() != "date")
        .map(|(name, value)| format!("{name}: {}", value.to_str().unwrap()))
        .collect();
    let bytes = response.bytes().await.unwrap();
    writeln!(out, "> {method} {url}").unwrap();
    if let Some(body) = body {
        writeln!(out, "> {body}").unwrap();
    }
    writeln!(out, "< {status}").unwrap();
    for header in headers {
        writeln!(out, "< {header}").unwrap();
    }
    // The stored image is binary: written as base64 so the snapshot stays text.
    let text = String::from_utf8(bytes.to_vec()).unwrap_or_else(|_| {
        use base64::Engine as _;
        format!(
            "base64:{}",
            base64::engine::general_purpose::STANDARD.encode(&bytes)
        )
    });
    writeln!(out, "< {text}\n").unwrap();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

/// The scenario, on `emulator` and `receiver` addresses (port 0: free ones).
async fn run(emulator: SocketAddr, receiver: SocketAddr) -> Run {
    let emu = Emulator::builder()
        .deterministic(2026)
        .listen(emulator)
        .network_downloads(false)
        .start()
        .await
        .unwrap();
    let hook = Receiver::start(receiver).await;
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let api = format!("{}/stores/{ALPHA}", emu.base_url());
    let control = format!("{}/_emulator", emu.origin());
    let mut out = String::new();

    let hosts = json!({ "https://art.example.test/a.png": { "contentBase64": PNG_BASE64 } });
    exchange(
        &mut out,
        &http,
        Method::PUT,
        &format!("{control}/artwork-hosts"),
        Some(hosts),
    )
    .await;
    let topics = json!({
        "orders_create": format!("http://{}/orders_create", hook.addr),
        "orders_update": format!("http://{}/orders_update", hook.addr),
    });
    let webhooks = format!("{control}/stores/{ALPHA}/webhooks");
    exchange(&mut out, &http, Method::PUT, &webhooks, Some(topics)).await;
    exchange(&mut out, &http, Method::GET, &format!("{api}/status"), None).await;

    let artwork = json!({ "name": "Logo", "image": { "url": "https://art.example.test/a.png" } });
    let artwork = exchange(
        &mut out,
        &http,
        Method::POST,
        &format!("{api}/artworks"),
        Some(artwork),
    )
    .await;
    let mut order = sunset_tee_order(2);
    order["externalOrderId"] = json!("det-1");
    let order = exchange(
        &mut out,
        &http,
        Method::POST,
        &format!("{api}/orders"),
        Some(order),
    )
    .await;
    let order_id = order["id"].as_str().unwrap_or_default().to_owned();
    hook.wait_for(1).await;
    attempts(&emu, 1).await;

    // The update's first attempt fails; its retry waits for one second of emulator time.
    hook.failures.lock().unwrap().push(500);
    emu.advance(Duration::from_secs(60)).unwrap();
    let advance = format!("{control}/stores/{ALPHA}/orders/{order_id}/advance");
    exchange(&mut out, &http, Method::POST, &advance, None).await;
    hook.wait_for(2).await;
    attempts(&emu, 2).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        hook.received.lock().unwrap().len(),
        2,
        "the retry waits for the clock"
    );
    emu.advance(Duration::from_secs(1)).unwrap();
    hook.wait_for(3).await;
    attempts(&emu, 3).await;

    let image = artwork["image"]["url"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    exchange(&mut out, &http, Method::GET, &image, None).await;
    exchange(
        &mut out,
        &http,
        Method::GET,
        &format!("{api}/orders/{order_id}"),
        None,
    )
    .await;
    exchange(&mut out, &http, Method::GET, &format!("{api}/orders"), None).await;
    let deliveries = format!("{control}/stores/{ALPHA}/webhook-deliveries");
    exchange(&mut out, &http, Method::GET, &deliveries, None).await;
    let requests = format!("{control}/stores/{ALPHA}/requests");
    exchange(&mut out, &http, Method::GET, &requests, None).await;
    exchange(
        &mut out,
        &http,
        Method::POST,
        &format!("{control}/stores/{ALPHA}/rotate-key"),
        None,
    )
    .await;

    out.push_str("--- deliveries received\n");
    for delivery in hook.received.lock().unwrap().iter() {
        writeln!(out, "{delivery}\n").unwrap();
    }
    let ran = Run {
        transcript: out,
        emulator: emu.addr(),
        receiver: hook.addr,
    };
    emu.shutdown().await;
    hook.task.abort();
    let _ = hook.task.await;
    ran
}

#[tokio::test]
async fn two_runs_answer_and_deliver_byte_for_byte_alike() {
    let free = SocketAddr::from(([127, 0, 0, 1], 0));
    let first = run(free, free).await;
    // The second run on the same ports: then nothing at all may differ.
    let second = run(first.emulator, first.receiver).await;
    assert_eq!(first.transcript, second.transcript);

    // The ports are the machine's, not the emulator's: named, so the snapshot holds across machines.
    let transcript = first
        .transcript
        .replace(&first.emulator.to_string(), "127.0.0.1:EMULATOR_PORT")
        .replace(&first.receiver.to_string(), "127.0.0.1:RECEIVER_PORT");
    insta::assert_snapshot!("deterministic_run", transcript);
}

#[tokio::test]
async fn logs_keep_fourteen_days_of_emulator_time() {
    let emu = Emulator::builder()
        .deterministic(1)
        .rate_limit(false)
        .start()
        .await
        .unwrap();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let status_url = format!("{}/stores/{ALPHA}/status", emu.base_url());
    let (http, status_url) = (&http, &status_url);
    let status = move || async move {
        let answer = http
            .get(status_url)
            .header("x-api-key", ALPHA_KEY)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
    };
    status().await;
    let hook = Receiver::start(SocketAddr::from(([127, 0, 0, 1], 0))).await;
    let url = format!("http://{}/p", hook.addr);
    emu.set_webhooks(ALPHA, [("products_create".to_owned(), url)].into())
        .unwrap();
    let product: store_api_raw::types::Product = serde_json::from_value(json!({
        "id": "",
        "name": "Night Sky Tee",
        "vendor": "Alpha Apparel",
        "productType": "t-shirt",
        "status": "active",
        "variants": []
    }))
    .unwrap();
    emu.create_product(ALPHA, product).unwrap();
    hook.wait_for(1).await;
    attempts(&emu, 1).await;
    assert_eq!(emu.requests(ALPHA).unwrap().len(), 1);
    assert_eq!(emu.webhook_deliveries(ALPHA).unwrap().len(), 1);

    let retention = LOG_RETENTION.to_std().unwrap();
    emu.advance(retention).unwrap();
    assert_eq!(emu.requests(ALPHA).unwrap().len(), 1, "14 days old is kept");
    assert_eq!(emu.webhook_deliveries(ALPHA).unwrap().len(), 1);
    emu.advance(Duration::from_millis(1)).unwrap();
    assert!(emu.requests(ALPHA).unwrap().is_empty());
    assert!(emu.webhook_deliveries(ALPHA).unwrap().is_empty());

    status().await;
    let requests = emu.requests(ALPHA).unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].operation_id.as_deref(), Some("getStatus"));
    assert_eq!(requests[0].status, 200);
    assert_eq!(requests[0].at, emu.now());
}

#[tokio::test]
async fn the_request_log_names_the_operation_and_the_status() {
    let emu = Emulator::builder()
        .deterministic(3)
        .rate_limit(false)
        .start()
        .await
        .unwrap();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let api = format!("{}/stores/{ALPHA}", emu.base_url());
    for (path, key) in [
        ("/orders?limit=1", ALPHA_KEY),
        ("/orders/ord_missing", ALPHA_KEY),
        ("/nowhere", ALPHA_KEY),
        ("/status", "csk_wrong"),
    ] {
        http.get(format!("{api}{path}"))
            .header("x-api-key", key)
            .send()
            .await
            .unwrap();
    }
    let seen: Vec<(String, Option<String>, u16)> = emu
        .requests(ALPHA)
        .unwrap()
        .into_iter()
        .map(|r| (r.path, r.operation_id, r.status))
        .collect();
    let path = |p: &str| format!("/store-api/2026-08/stores/{ALPHA}{p}");
    assert_eq!(
        seen,
        [
            (path("/orders"), Some("listOrders".to_owned()), 200),
            (
                path("/orders/ord_missing"),
                Some("getOrder".to_owned()),
                404
            ),
            (path("/nowhere"), None, 404),
            (path("/status"), Some("getStatus".to_owned()), 401),
        ]
    );
    let over_http: Value = http
        .get(format!(
            "{}/_emulator/stores/{ALPHA}/requests",
            emu.origin()
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(over_http[0]["operationId"], "listOrders");
    assert_eq!(over_http[0]["at"], "2026-08-01T00:00:00.000Z");
    let unknown = http
        .get(format!(
            "{}/_emulator/stores/store_nope/requests",
            emu.origin()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
}

#[tokio::test]
async fn the_oldest_images_are_evicted_beyond_the_cap() {
    // The 1×1 PNG is 70 bytes: a cap of 150 holds two.
    let emu = Emulator::builder()
        .deterministic(4)
        .rate_limit(false)
        .network_downloads(false)
        .image_bytes_cap(150)
        .start()
        .await
        .unwrap();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let hosts = json!({ "https://art.example.test/a.png": { "contentBase64": PNG_BASE64 } });
    http.put(format!("{}/_emulator/artwork-hosts", emu.origin()))
        .json(&hosts)
        .send()
        .await
        .unwrap();
    let mut urls = Vec::new();
    for name in ["one", "two", "three"] {
        let artwork: Value = http
            .post(format!("{}/stores/{ALPHA}/artworks", emu.base_url()))
            .header("x-api-key", ALPHA_KEY)
            .json(&json!({ "name": name, "image": { "url": "https://art.example.test/a.png" } }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        urls.push(artwork["image"]["url"].as_str().unwrap().to_owned());
    }
    let evicted = http.get(&urls[0]).send().await.unwrap();
    assert_eq!(evicted.status(), 404);
    let message: Value = evicted.json().await.unwrap();
    let message = message["message"].as_str().unwrap();
    assert!(message.contains("was evicted"), "{message}");
    assert!(message.contains("150 bytes"), "{message}");
    for url in &urls[1..] {
        assert_eq!(http.get(url).send().await.unwrap().status(), 200);
    }
    let never = http
        .get(format!(
            "{}/_emulator/images/img_0000000000000000",
            emu.origin()
        ))
        .send()
        .await
        .unwrap();
    let never: Value = never.json().await.unwrap();
    assert_eq!(never["message"], "Image not found");
}

#[tokio::test]
async fn the_real_clock_cannot_be_advanced() {
    let emu = Emulator::builder().rate_limit(false).start().await.unwrap();
    let refused = emu.advance(Duration::from_secs(1)).unwrap_err();
    assert_eq!(refused.status, 409);
}

#[tokio::test]
async fn the_rate_limit_refills_on_the_emulator_clock() {
    let emu = Emulator::builder().deterministic(5).start().await.unwrap();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let status = format!("{}/stores/{ALPHA}/status", emu.base_url());
    let get = || http.get(&status).header("x-api-key", ALPHA_KEY).send();
    for _ in 0..10 {
        assert_eq!(get().await.unwrap().status(), 200);
    }
    // Real time passing changes nothing: the bucket is measured on the emulator's clock.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let limited = get().await.unwrap();
    assert_eq!(limited.status(), 429);
    assert_eq!(limited.headers()["retry-after"], "1");
    assert_eq!(limited.headers()["x-ratelimit-reset"], "5");
    emu.advance(Duration::from_secs(1)).unwrap();
    let allowed = get().await.unwrap();
    assert_eq!(allowed.status(), 200);
    assert_eq!(allowed.headers()["x-ratelimit-remaining"], "1");
}

#[tokio::test]
async fn auto_advance_follows_the_emulator_clock() {
    let emu = Emulator::builder()
        .deterministic(6)
        .rate_limit(false)
        .auto_advance(Duration::from_secs(60))
        .start()
        .await
        .unwrap();
    let order: store_api_raw::types::CreateOrderRequest =
        serde_json::from_value(sunset_tee_order(1)).unwrap();
    let order = emu.create_order_in_app(ALPHA, order).unwrap();
    let stage = || {
        emu.orders(ALPHA)
            .into_iter()
            .find(|o| o.id == order.id)
            .and_then(|o| o.fulfillment_status)
            .map(|s| s.to_string())
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(stage().as_deref(), Some("pending"));
    emu.advance(Duration::from_secs(120)).unwrap();
    for _ in 0..200 {
        if stage().as_deref() == Some("sent_to_production") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(stage().as_deref(), Some("sent_to_production"));
    let updated = emu
        .orders(ALPHA)
        .into_iter()
        .find(|o| o.id == order.id)
        .and_then(|o| o.updated_at);
    assert_eq!(updated, Some(emu.now()));
}

#[tokio::test]
async fn a_deterministic_emulator_refuses_to_load_a_state_file() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("state.json");
    let emu = Emulator::builder().state_file(&path).start().await.unwrap();
    emu.shutdown().await;
    assert!(path.exists());
    let refused = Emulator::builder()
        .deterministic(1)
        .state_file(&path)
        .start()
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("cannot load the state file"),
        "{refused}"
    );
}

/// A create-order request for `quantity` black S Sunset Tees of store_alpha, shipped to Springfield, IL.
fn sunset_tee_order(quantity: u64) -> serde_json::Value {
    json!({
        "shippingAddress": {
            "firstName": "Ada",
            "lastName": "Lovelace",
            "address": {
                "streetAddress": "1 Main St",
                "cityOrTown": "Springfield",
                "stateOrProvince": "IL",
                "zipOrPostalCode": "62701",
                "country": "US"
            }
        },
        "lineItems": [{ "productVariantId": "pv_aa_sun_blk_s", "quantity": quantity }]
    })
}
