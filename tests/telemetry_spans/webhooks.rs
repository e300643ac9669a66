//! Issue 37, contract item 5: the span per delivery (`store_api.webhooks.delivery`, its verify, claim,
//! handler and complete steps, topic, event id, verdict), exported by OpenTelemetry's SDK through
//! `tracing-opentelemetry`, for deliveries signed with the crate's signer and posted over HTTP to an
//! axum receiver on 127.0.0.1. The subscriber is the test thread's own (`set_default`); the server runs
//! on the test's current-thread runtime, so its spans reach it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use opentelemetry::trace::{SpanId, SpanKind, Status, TracerProvider as _};
use opentelemetry::{Key, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use store_api_webhooks::axum::VerifiedEvent;
use store_api_webhooks::dedupe::{
    Claim, ClaimToken, Dedupe, DedupeError, DedupeFuture, MemoryDedupe, Processed, process_once,
    response_status,
};
use store_api_webhooks::{Topic, Verifier, sign};
use tokio::sync::{Notify, mpsc};
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::layer::SubscriberExt as _;

use store_api_tests::post_body;

const KEY: &str = "sk_store_telemetry_key_000000000000000";
const DELIVERY: &str = "store_api.webhooks.delivery";
const STEPS: [&str; 4] = [
    "store_api.webhooks.verify",
    "store_api.webhooks.claim",
    "store_api.webhooks.handler",
    "store_api.webhooks.complete",
];

/// OpenTelemetry's SDK with an in-memory exporter behind `tracing-opentelemetry`, for this thread.
struct Traces {
    exporter: InMemorySpanExporter,
    _provider: SdkTracerProvider,
    _guard: DefaultGuard,
    // Last: released after the subscriber is gone.
    _serial: std::sync::MutexGuard<'static, ()>,
}

impl Traces {
    fn install() -> Traces {
        let serial = crate::SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let layer =
            tracing_opentelemetry::layer().with_tracer(provider.tracer("webhook_telemetry"));
        let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
        Traces {
            exporter,
            _provider: provider,
            _guard: guard,
            _serial: serial,
        }
    }

    fn spans(&self) -> Vec<SpanData> {
        self.exporter.get_finished_spans().unwrap()
    }

    /// The delivery spans of `event_id`, in the order they started.
    fn deliveries(&self, event_id: &str) -> Vec<SpanData> {
        let mut found: Vec<_> = self
            .spans()
            .into_iter()
            .filter(|span| {
                span.name == DELIVERY
                    && attr(span, "store_api.webhook.event_id").as_deref() == Some(event_id)
            })
            .collect();
        found.sort_by_key(|span| span.start_time);
        found
    }

    /// The one delivery span without an event id (a refused delivery), by its verdict.
    fn refused(&self, verdict: &str) -> Vec<SpanData> {
        self.spans()
            .into_iter()
            .filter(|span| {
                span.name == DELIVERY
                    && attr(span, "store_api.webhook.verdict").as_deref() == Some(verdict)
            })
            .collect()
    }

    /// The children of `parent`, in the order they started.
    fn children(&self, parent: &SpanData) -> Vec<SpanData> {
        let id: SpanId = parent.span_context.span_id();
        let mut found: Vec<_> = self
            .spans()
            .into_iter()
            .filter(|span| span.parent_span_id == id)
            .collect();
        found.sort_by_key(|span| span.start_time);
        found
    }
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key == Key::from(key.to_owned()))
        .map(|kv| match &kv.value {
            Value::String(text) => text.as_str().to_owned(),
            other => other.to_string(),
        })
}

/// Checks a delivery span: its kind, topic, verdict, status, and which steps it had, in order.
fn check_delivery(
    traces: &Traces,
    delivery: &SpanData,
    topic: Option<&str>,
    verdict: &str,
    steps: &[&str],
) {
    assert_eq!(delivery.span_kind, SpanKind::Consumer, "{verdict}");
    assert_eq!(
        attr(delivery, "store_api.webhook.topic").as_deref(),
        topic,
        "{verdict}"
    );
    assert_eq!(
        attr(delivery, "store_api.webhook.verdict").as_deref(),
        Some(verdict)
    );
    let error = matches!(
        verdict,
        "bad_signature" | "stale" | "malformed" | "handler_failed"
    );
    if error {
        assert!(
            matches!(delivery.status, Status::Error { .. }),
            "{verdict}: {:?}",
            delivery.status
        );
    } else {
        assert_eq!(delivery.status, Status::Unset, "{verdict}");
    }
    let children = traces.children(delivery);
    let names: Vec<&str> = children.iter().map(|span| span.name.as_ref()).collect();
    assert_eq!(names, steps, "the steps of a {verdict} delivery");
    for pair in children.windows(2) {
        assert!(
            pair[0].end_time <= pair[1].start_time,
            "{} overlaps {}",
            pair[0].name,
            pair[1].name
        );
    }
    for child in &children {
        assert_eq!(child.span_kind, SpanKind::Internal);
        assert!(child.start_time >= delivery.start_time && child.end_time <= delivery.end_time);
    }
}

/// A `MemoryDedupe` whose store never answers the renewals of the first claim it hands out: that
/// claim expires after the lease while its handler still runs (a stale run).
struct UnrenewedFirstClaim {
    inner: MemoryDedupe,
    first: Mutex<Option<ClaimToken>>,
}

impl Dedupe for UnrenewedFirstClaim {
    fn lease(&self) -> Duration {
        self.inner.lease()
    }

    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
        Box::pin(async move {
            let claim = self.inner.begin(event_id).await?;
            if let Claim::Fresh(token) = claim {
                self.first.lock().unwrap().get_or_insert(token);
            }
            Ok(claim)
        })
    }

    fn renew<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        if *self.first.lock().unwrap() == Some(token) {
            return Box::pin(std::future::ready(Err(DedupeError::new(
                "the store did not answer",
            ))));
        }
        self.inner.renew(event_id, token)
    }

    fn complete<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        self.inner.complete(event_id, token)
    }

    fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()> {
        self.inner.abandon(event_id, token)
    }
}

#[derive(Clone)]
struct AppState {
    verifier: Verifier,
    dedupe: Arc<dyn Dedupe>,
    /// Per event id, the gates its next handler runs wait at, in order.
    gates: Arc<Mutex<HashMap<String, VecDeque<Arc<Notify>>>>>,
    /// Each handler run sends its event id when it starts.
    started: mpsc::UnboundedSender<String>,
}

impl FromRef<AppState> for Verifier {
    fn from_ref(state: &AppState) -> Self {
        state.verifier.clone()
    }
}

/// The receiver of the crate's docs: verify (the extractor), then `process_once`. A handler fails for
/// an event id starting with `evt_fail`, and waits at its gate if the test set one.
async fn receive(State(state): State<AppState>, VerifiedEvent(event): VerifiedEvent) -> StatusCode {
    let event = &event;
    let outcome = process_once(&*state.dedupe, &event.id, |_lease| async move {
        let gate = state
            .gates
            .lock()
            .unwrap()
            .get_mut(&event.id)
            .and_then(VecDeque::pop_front);
        state.started.send(event.id.clone()).unwrap();
        if let Some(gate) = gate {
            gate.notified().await;
        }
        // A span of the user's own, which nests under the handler step.
        tracing::info_span!("user.handler.work").in_scope(|| {});
        if event.id.starts_with("evt_fail") {
            return Err("database unavailable");
        }
        Ok(())
    })
    .await;
    StatusCode::from_u16(response_status(&outcome)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

struct Receiver {
    url: String,
    state: AppState,
    started: mpsc::UnboundedReceiver<String>,
}

impl Receiver {
    async fn start(dedupe: Arc<dyn Dedupe>) -> Receiver {
        let (started_tx, started) = mpsc::unbounded_channel();
        let state = AppState {
            verifier: Verifier::new(KEY),
            dedupe,
            gates: Arc::default(),
            started: started_tx,
        };
        let app = Router::new()
            .route("/webhooks", post(receive))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver {
            url: format!("http://{address}/webhooks"),
            state,
            started,
        }
    }

    /// Makes the next handler run of `event_id` wait until the returned gate is opened.
    fn gate(&self, event_id: &str) -> Arc<Notify> {
        let gate = Arc::new(Notify::new());
        self.state
            .gates
            .lock()
            .unwrap()
            .entry(event_id.to_owned())
            .or_default()
            .push_back(gate.clone());
        gate
    }

    /// Posts the event `event_id` signed with the receiver's key; returns the status.
    async fn deliver(&self, event_id: &str) -> u16 {
        let body = body(event_id);
        post_body(&self.url, Some(&sign(KEY, &body)), body.into())
            .await
            .0
    }

    /// Like [`Receiver::deliver`] in a task of its own, to hold a handler open meanwhile.
    fn deliver_later(&self, event_id: &str) -> tokio::task::JoinHandle<u16> {
        let (url, body) = (self.url.clone(), body(event_id));
        tokio::spawn(async move {
            post_body(&url, Some(&sign(KEY, &body)), body.into())
                .await
                .0
        })
    }
}

fn body(event_id: &str) -> Vec<u8> {
    format!(r#"{{"id":"{event_id}","storeId":"store_1","topic":"orders_create","data":{{"id":"ord_7"}}}}"#)
        .into_bytes()
}

fn memory() -> Arc<dyn Dedupe> {
    Arc::new(MemoryDedupe::new(100))
}

#[tokio::test]
async fn a_processed_delivery_has_its_four_steps_in_order_and_no_secret() {
    let traces = Traces::install();
    let receiver = Receiver::start(memory()).await;
    assert_eq!(receiver.deliver("evt_good").await, 204);

    let deliveries = traces.deliveries("evt_good");
    assert_eq!(deliveries.len(), 1);
    let delivery = &deliveries[0];
    assert_eq!(delivery.name, DELIVERY);
    check_delivery(
        &traces,
        delivery,
        Some("orders_create"),
        "processed",
        &STEPS,
    );
    // The user's own span nests under the handler step.
    let handler = traces
        .children(delivery)
        .into_iter()
        .find(|span| span.name == STEPS[2])
        .unwrap();
    let user: Vec<_> = traces
        .children(&handler)
        .into_iter()
        .map(|span| span.name.into_owned())
        .collect();
    assert_eq!(user, ["user.handler.work"]);

    // Never the key, the signature or the body in any span.
    let signature = sign(KEY, &body("evt_good"));
    let body = String::from_utf8(body("evt_good")).unwrap();
    for span in traces.spans() {
        for kv in &span.attributes {
            let value = kv.value.to_string();
            for secret in [KEY, signature.as_str(), body.as_str(), "ord_7"] {
                assert!(
                    !value.contains(secret),
                    "{} = {value} in {}",
                    kv.key,
                    span.name
                );
            }
        }
    }
}

#[tokio::test]
async fn refused_deliveries_end_after_verify_with_an_error_verdict() {
    let traces = Traces::install();
    let receiver = Receiver::start(memory()).await;
    let body = body("evt_forged");
    let forged = sign("another key", &body);
    assert_eq!(
        post_body(&receiver.url, Some(&forged), body.clone().into())
            .await
            .0,
        401
    );
    assert_eq!(post_body(&receiver.url, None, body.into()).await.0, 401);
    let not_an_event = br#"{"id":"evt_x"}"#.to_vec();
    let signature = sign(KEY, &not_an_event);
    assert_eq!(
        post_body(&receiver.url, Some(&signature), not_an_event.into())
            .await
            .0,
        400
    );

    let bad = traces.refused("bad_signature");
    assert_eq!(bad.len(), 2, "a forged and an unsigned delivery");
    for delivery in &bad {
        check_delivery(&traces, delivery, None, "bad_signature", &STEPS[..1]);
        // Refused before the body is read: no event id.
        assert_eq!(attr(delivery, "store_api.webhook.event_id"), None);
    }
    let malformed = traces.refused("malformed");
    assert_eq!(malformed.len(), 1);
    check_delivery(&traces, &malformed[0], None, "malformed", &STEPS[..1]);
}

#[tokio::test]
async fn a_duplicate_is_claimed_and_not_handled() {
    let traces = Traces::install();
    let receiver = Receiver::start(memory()).await;
    assert_eq!(receiver.deliver("evt_dup").await, 204);
    assert_eq!(receiver.deliver("evt_dup").await, 204);

    let deliveries = traces.deliveries("evt_dup");
    assert_eq!(deliveries.len(), 2);
    check_delivery(
        &traces,
        &deliveries[0],
        Some("orders_create"),
        "processed",
        &STEPS,
    );
    check_delivery(
        &traces,
        &deliveries[1],
        Some("orders_create"),
        "duplicate",
        &STEPS[..2],
    );
}

#[tokio::test]
async fn a_delivery_whose_claim_another_holds_is_busy() {
    let traces = Traces::install();
    let mut receiver = Receiver::start(memory()).await;
    let gate = receiver.gate("evt_busy");
    let first = receiver.deliver_later("evt_busy");
    assert_eq!(receiver.started.recv().await.unwrap(), "evt_busy");
    assert_eq!(
        receiver.deliver("evt_busy").await,
        503,
        "the claim is held by the first"
    );
    gate.notify_one();
    assert_eq!(first.await.unwrap(), 204);

    let deliveries = traces.deliveries("evt_busy");
    assert_eq!(deliveries.len(), 2);
    check_delivery(
        &traces,
        &deliveries[0],
        Some("orders_create"),
        "processed",
        &STEPS,
    );
    check_delivery(
        &traces,
        &deliveries[1],
        Some("orders_create"),
        "busy",
        &STEPS[..2],
    );
}

#[tokio::test]
async fn a_failed_handler_abandons_its_claim_under_the_complete_step() {
    let traces = Traces::install();
    let receiver = Receiver::start(memory()).await;
    assert_eq!(receiver.deliver("evt_fail_1").await, 500);

    let deliveries = traces.deliveries("evt_fail_1");
    assert_eq!(deliveries.len(), 1);
    check_delivery(
        &traces,
        &deliveries[0],
        Some("orders_create"),
        "handler_failed",
        &STEPS,
    );
}

// `stale`: the run's claim expired while its handler ran (its store answered no renewal), another
// delivery claimed the event, and the first run's `complete` found that claim: it wrote nothing.
#[tokio::test]
async fn a_run_whose_claim_expired_under_it_is_stale() {
    let traces = Traces::install();
    let lease = Duration::from_millis(300);
    let dedupe = Arc::new(UnrenewedFirstClaim {
        inner: MemoryDedupe::new(100).with_lease(lease),
        first: Mutex::new(None),
    });
    let mut receiver = Receiver::start(dedupe).await;
    let first_gate = receiver.gate("evt_stale");
    let second_gate = receiver.gate("evt_stale");
    let first = receiver.deliver_later("evt_stale");
    assert_eq!(receiver.started.recv().await.unwrap(), "evt_stale");
    tokio::time::sleep(lease * 2).await;
    let second = receiver.deliver_later("evt_stale");
    assert_eq!(
        receiver.started.recv().await.unwrap(),
        "evt_stale",
        "the expired claim was taken over"
    );
    first_gate.notify_one();
    assert_eq!(first.await.unwrap(), 204, "its handler succeeded");
    second_gate.notify_one();
    assert_eq!(second.await.unwrap(), 204);

    let deliveries = traces.deliveries("evt_stale");
    assert_eq!(deliveries.len(), 2);
    check_delivery(
        &traces,
        &deliveries[0],
        Some("orders_create"),
        "stale",
        &STEPS,
    );
    check_delivery(
        &traces,
        &deliveries[1],
        Some("orders_create"),
        "processed",
        &STEPS,
    );
}

// Without axum: `Verifier::verify` opens the delivery and `process_once` in the same task goes on
// with it; `process_once` with no verified event opens a delivery of its own (no verify, no topic).
#[tokio::test]
async fn a_direct_caller_gets_the_delivery_span_too() {
    let traces = Traces::install();
    let dedupe = MemoryDedupe::new(10);
    let verifier = Verifier::new(KEY);
    let body = body("evt_direct");
    let event = verifier.verify(&sign(KEY, &body), &body).unwrap();
    assert_eq!(event.topic, Topic::OrdersCreate);
    let outcome = process_once(&dedupe, &event.id, |_lease| async { Ok::<_, String>(()) }).await;
    assert_eq!(outcome.ok(), Some(Processed::Done(())));
    drop(event);

    let outcome = process_once(&dedupe, "evt_unverified", |_lease| async {
        Ok::<_, String>(())
    })
    .await;
    assert_eq!(outcome.ok(), Some(Processed::Done(())));

    let direct = traces.deliveries("evt_direct");
    assert_eq!(direct.len(), 1);
    check_delivery(
        &traces,
        &direct[0],
        Some("orders_create"),
        "processed",
        &STEPS,
    );
    let unverified = traces.deliveries("evt_unverified");
    assert_eq!(unverified.len(), 1);
    check_delivery(&traces, &unverified[0], None, "processed", &STEPS[1..]);
}
