//! The axum extractor and dedupe against a real server on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use store_api_tests::post_body;
use store_api_webhooks::axum::VerifiedEvent;
use store_api_webhooks::dedupe::{MemoryDedupe, process_once, response_status};
use store_api_webhooks::{Event, Topic, Verifier, sign};

const KEY: &str = "sk_store_receiver_key_00000000000000";
const LIMIT: usize = 2048;

#[derive(Clone)]
struct AppState {
    verifier: Verifier,
    dedupe: Arc<MemoryDedupe>,
    /// Times the handler body ran (successful or not).
    attempts: Arc<AtomicUsize>,
    /// How many leading attempts fail with a 500.
    failures: usize,
    /// Events whose processing succeeded.
    processed: Arc<Mutex<Vec<Event>>>,
}

impl FromRef<AppState> for Verifier {
    fn from_ref(state: &AppState) -> Self {
        state.verifier.clone()
    }
}

async fn receive(State(state): State<AppState>, VerifiedEvent(event): VerifiedEvent) -> StatusCode {
    let outcome = process_once(&*state.dedupe, &event.id, |_lease| async {
        let attempt = state.attempts.fetch_add(1, Ordering::SeqCst);
        if attempt < state.failures {
            return Err("database unavailable");
        }
        state.processed.lock().unwrap().push(event.clone());
        Ok(())
    })
    .await;
    StatusCode::from_u16(response_status(&outcome)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// Starts the receiver; returns its URL and state.
async fn start(failures: usize) -> (String, AppState) {
    let state = AppState {
        verifier: Verifier::new(KEY).with_max_body_bytes(LIMIT),
        dedupe: Arc::new(MemoryDedupe::new(100)),
        attempts: Arc::default(),
        failures,
        processed: Arc::default(),
    };
    let app = Router::new()
        .route("/webhooks", post(receive))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/webhooks"), state)
}

fn event_body(id: &str, topic: &str) -> Vec<u8> {
    format!(r#"{{"id":"{id}","storeId":"store_1","topic":"{topic}","data":{{"id":"ord_1"}}}}"#)
        .into_bytes()
}

fn message(response_body: &str) -> String {
    let json: serde_json::Value = serde_json::from_str(response_body).unwrap();
    json["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_extractor_answers_by_signature_size_and_shape() {
    let (url, state) = start(0).await;
    let good = event_body("evt_ok", "orders_create");
    let unknown = event_body("evt_new_topic", "returns_create");
    let not_an_event = br#"{"hello":"world"}"#.to_vec();
    let too_large = vec![b' '; LIMIT + 1];

    let cases: Vec<(&str, Option<String>, Vec<u8>, u16)> = vec![
        ("signed", Some(sign(KEY, &good)), good.clone(), 204),
        (
            "uppercase hex",
            Some(sign(KEY, &good).to_uppercase()),
            good.clone(),
            204,
        ),
        (
            "unknown topic",
            Some(sign(KEY, &unknown)),
            unknown.clone(),
            204,
        ),
        ("unsigned", None, good.clone(), 401),
        ("empty signature", Some(String::new()), good.clone(), 401),
        (
            "other key",
            Some(sign("other key", &good)),
            good.clone(),
            401,
        ),
        ("malformed", Some("sha256=nothex".into()), good.clone(), 401),
        (
            "signed, not an event",
            Some(sign(KEY, &not_an_event)),
            not_an_event.clone(),
            400,
        ),
        (
            "too large",
            Some(sign(KEY, &too_large)),
            too_large.clone(),
            413,
        ),
        ("too large, unsigned", None, too_large.clone(), 401),
    ];
    for (name, signature, body, expected) in cases {
        let (status, response) = post_body(&url, signature.as_deref(), body.into()).await;
        assert_eq!(status, expected, "{name}: {response}");
        if expected >= 400 {
            let message = message(&response);
            assert!(!message.is_empty(), "{name}");
            assert!(!message.contains(KEY), "{name}: {message}");
            assert!(!message.contains(&sign(KEY, &good)), "{name}: {message}");
        }
    }
    let processed = state.processed.lock().unwrap().clone();
    let topics: Vec<Topic> = processed.iter().map(|event| event.topic.clone()).collect();
    // The uppercase delivery of evt_ok was a duplicate.
    assert_eq!(
        topics,
        [Topic::OrdersCreate, Topic::Unknown("returns_create".into())]
    );
}

#[tokio::test]
async fn a_chunked_body_over_the_limit_is_refused_without_content_length() {
    let (url, _state) = start(0).await;
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..8).map(|_| Ok(vec![b' '; LIMIT / 4])).collect();
    let body = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
    let signature = sign(KEY, &vec![b' '; 2 * LIMIT]);
    let (status, response) = post_body(&url, Some(&signature), body).await;
    assert_eq!(status, 413, "{response}");
    assert_eq!(
        message(&response),
        format!("body exceeds the limit of {LIMIT} bytes")
    );

    // The same streaming path accepts a signed event under the limit.
    let good = event_body("evt_streamed", "products_delete");
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        good.chunks(7).map(|chunk| Ok(chunk.to_vec())).collect();
    let body = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
    let (status, response) = post_body(&url, Some(&sign(KEY, &good)), body).await;
    assert_eq!(status, 204, "{response}");
}

#[tokio::test]
async fn a_failed_event_is_processed_again_and_then_only_once() {
    let (url, state) = start(2).await;
    let body = event_body("evt_retried", "orders_update");
    let signature = sign(KEY, &body);
    let mut statuses = Vec::new();
    // The service delivers until it gets a 2xx; the last two stand for stray duplicate deliveries.
    for _ in 0..5 {
        let (status, _) = post_body(&url, Some(&signature), body.clone().into()).await;
        statuses.push(status);
    }
    assert_eq!(statuses, [500, 500, 204, 204, 204]);
    assert_eq!(state.attempts.load(Ordering::SeqCst), 3);
    let processed = state.processed.lock().unwrap();
    assert_eq!(processed.len(), 1);
    assert_eq!(processed[0].id, "evt_retried");
}
