//! Issue 37: the client's spans as OpenTelemetry's SDK exports them (`InMemorySpanExporter` behind
//! `tracing-opentelemetry`'s layer), against the emulator with faults: names, kinds, attributes,
//! resend counts, error types, parent links; and no span or event ever carries the key (a property
//! over keys and paths). The metrics are judged in their own binary (`telemetry_metrics`), as they go
//! through the global meter provider.
//!
//! Each test installs its subscriber for its own thread (`set_default`) and runs on a current-thread
//! runtime, so the emulator's tasks and the client's all report to it and to nobody else; one test at a
//! time ([`SERIAL`]), in a binary of their own: spans of other tests' threads, created while a scoped
//! subscriber is being installed, can race tracing's callsite interest cache (a try span went unseen
//! under load when these tests ran among the `it` tests).

#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The webhook side (contract item 5): the span per delivery and its steps.
mod webhooks;

use std::time::Duration;

use opentelemetry::trace::{SpanId, SpanKind, Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use proptest::prelude::*;
use store_api::hook::Method;
use store_api::{RateLimiter, RetryPolicy, Submitted, new_external_order_id};
use store_api_fixtures::FaultKind;
use store_api_tests::telemetry::{on, port_of, service_key, template};
use store_api_tests::{ALPHA, builder_at, emulator, identified, key_of, tee_order};
use tracing_subscriber::layer::SubscriberExt as _;

/// Held by each test's [`Otel`]: one test at a time.
pub(crate) static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// OpenTelemetry's SDK behind the tracing bridge, installed for this thread.
struct Otel {
    exporter: InMemorySpanExporter,
    provider: SdkTracerProvider,
    _guard: tracing::subscriber::DefaultGuard,
    // Last: released after the subscriber is gone.
    _serial: std::sync::MutexGuard<'static, ()>,
}

impl Otel {
    fn install() -> Otel {
        let serial = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("store-api-tests"));
        let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
        Otel {
            exporter,
            provider,
            _guard: guard,
            _serial: serial,
        }
    }

    /// Every span ended so far, in the order they ended.
    fn spans(&self) -> Vec<SpanData> {
        self.provider.force_flush().unwrap();
        self.exporter.get_finished_spans().unwrap()
    }

    /// The finished spans once `tries` try spans are among them (at most 5 s): a try span closes when
    /// its last handle drops, which on a loaded machine may come a moment after the call returned.
    async fn spans_after_tries(&self, tries: usize) -> Vec<SpanData> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let spans = self.spans();
            let finished = spans
                .iter()
                .filter(|span| span.span_kind == SpanKind::Client)
                .count();
            if finished >= tries || tokio::time::Instant::now() >= deadline {
                return spans;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    fn reset(&self) {
        self.exporter.reset();
    }
}

fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn str_attr(span: &SpanData, key: &str) -> Option<String> {
    attr(span, key).map(|value| value.as_str().into_owned())
}

fn int_attr(span: &SpanData, key: &str) -> Option<i64> {
    match attr(span, key) {
        Some(Value::I64(value)) => Some(*value),
        other => panic!("{key} is not an int: {other:?}"),
    }
}

fn f64_attr(span: &SpanData, key: &str) -> Option<f64> {
    match attr(span, key)? {
        Value::F64(value) => Some(*value),
        other => panic!("{key} is not a float: {other:?}"),
    }
}

/// The spans of `kind` (tracing names `http.client.request`, `store_api.operation`,
/// `store_api.submit` export under their `otel.name`; this tells them apart by their attributes).
/// The try spans in the order they started (a span is exported when it closes, which is not always
/// the order of the tries).
fn tries(spans: &[SpanData]) -> Vec<&SpanData> {
    let mut tries: Vec<&SpanData> = spans
        .iter()
        .filter(|span| span.span_kind == SpanKind::Client)
        .collect();
    tries.sort_by_key(|span| span.start_time);
    tries
}

fn operations<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|span| span.name == name).collect()
}

#[tokio::test(flavor = "current_thread")]
async fn a_503_then_a_200_is_one_operation_with_two_tries() {
    let emu = emulator().await;
    let key = key_of(&emu, ALPHA);
    let otel = Otel::install();
    let client = builder_at(&emu.base_url(), ALPHA, &key).build().unwrap();
    emu.inject_fault(on("get_status", FaultKind::Status { status: 503 }))
        .unwrap();
    client.status().await.unwrap();
    drop(client);

    let spans = otel.spans_after_tries(2).await;
    let operation = operations(&spans, "store_api.get_status");
    assert_eq!(operation.len(), 1, "{spans:#?}");
    let operation = operation[0];
    assert_eq!(operation.span_kind, SpanKind::Internal);
    assert_eq!(
        str_attr(operation, "store_api.operation").as_deref(),
        Some("get_status")
    );
    assert_eq!(int_attr(operation, "store_api.tries"), Some(2));
    assert!(f64_attr(operation, "store_api.rate_limit.waited_s").is_some());
    assert_eq!(attr(operation, "error.type"), None, "the call succeeded");
    assert_eq!(operation.status, Status::Unset);
    assert_eq!(operation.parent_span_id, SpanId::INVALID, "a root");

    let tries = tries(&spans);
    assert_eq!(tries.len(), 2, "{spans:#?}");
    let template = template("get_status");
    for try_span in &tries {
        assert_eq!(try_span.name, format!("GET {template}"));
        assert_eq!(try_span.parent_span_id, operation.span_context.span_id());
        assert_eq!(
            try_span.span_context.trace_id(),
            operation.span_context.trace_id()
        );
        assert_eq!(
            str_attr(try_span, "http.request.method").as_deref(),
            Some("GET")
        );
        assert_eq!(
            str_attr(try_span, "server.address").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(int_attr(try_span, "server.port"), Some(port_of(&emu)));
        assert_eq!(
            str_attr(try_span, "url.template").as_deref(),
            Some(template.as_str())
        );
        assert_eq!(
            str_attr(try_span, "url.full"),
            Some(format!("{}/stores/{ALPHA}/status", emu.base_url()))
        );
        assert_eq!(
            str_attr(try_span, "store_api.operation").as_deref(),
            Some("get_status")
        );
    }
    let (first, second) = (tries[0], tries[1]);
    assert!(first.end_time <= second.start_time, "in order");
    assert_eq!(int_attr(first, "http.response.status_code"), Some(503));
    assert_eq!(str_attr(first, "error.type").as_deref(), Some("503"));
    assert!(matches!(first.status, Status::Error { .. }));
    assert_eq!(attr(first, "http.request.resend_count"), None);
    assert_eq!(int_attr(second, "http.response.status_code"), Some(200));
    assert_eq!(int_attr(second, "http.request.resend_count"), Some(1));
    assert_eq!(attr(second, "error.type"), None);
    assert_eq!(second.status, Status::Unset);
}

#[tokio::test(flavor = "current_thread")]
async fn a_429_with_retry_after_is_recorded_on_its_try() {
    let emu = emulator().await;
    let key = key_of(&emu, ALPHA);
    let otel = Otel::install();
    let client = builder_at(&emu.base_url(), ALPHA, &key).build().unwrap();
    emu.inject_fault(on(
        "get_status",
        FaultKind::RateLimited {
            retry_after: "1".into(),
        },
    ))
    .unwrap();
    client.status().await.unwrap();
    drop(client);

    let spans = otel.spans_after_tries(2).await;
    let tries = tries(&spans);
    assert_eq!(tries.len(), 2, "{spans:#?}");
    assert_eq!(int_attr(tries[0], "http.response.status_code"), Some(429));
    assert_eq!(str_attr(tries[0], "error.type").as_deref(), Some("429"));
    assert_eq!(f64_attr(tries[0], "store_api.retry_after_s"), Some(1.0));
    assert_eq!(int_attr(tries[1], "http.response.status_code"), Some(200));
    assert_eq!(int_attr(tries[1], "http.request.resend_count"), Some(1));
    // The emulator's own rate-limit headers, under the store_api.* names.
    for name in [
        "store_api.rate_limit.limit",
        "store_api.rate_limit.remaining",
        "store_api.rate_limit.reset",
    ] {
        if attr(tries[1], name).is_some() {
            assert!(int_attr(tries[1], name).is_some(), "{name}");
        }
    }
    let operation = operations(&spans, "store_api.get_status")[0];
    assert_eq!(int_attr(operation, "store_api.tries"), Some(2));
}

#[tokio::test(flavor = "current_thread")]
async fn the_limiters_wait_is_an_event_of_the_operation() {
    let emu = emulator().await;
    let key = key_of(&emu, ALPHA);
    let otel = Otel::install();
    // One token per 300 ms: the second call waits for it.
    let client = builder_at(&emu.base_url(), ALPHA, &key)
        .in_process_limiter(RateLimiter::with_rate(1, Duration::from_millis(300)))
        .build()
        .unwrap();
    client.status().await.unwrap();
    client.status().await.unwrap();

    let spans = otel.spans();
    let calls = operations(&spans, "store_api.get_status");
    assert_eq!(calls.len(), 2);
    let waited = f64_attr(calls[1], "store_api.rate_limit.waited_s").unwrap();
    assert!(waited >= 0.2, "{waited}");
    let events: Vec<_> = calls[1]
        .events
        .iter()
        .filter(|event| event.name == "waiting for the store's rate limit")
        .collect();
    assert_eq!(events.len(), 1, "{:#?}", calls[1].events);
    let wait_s = events[0]
        .attributes
        .iter()
        .find(|kv| kv.key.as_str() == "store_api.rate_limit.wait_s")
        .map(|kv| kv.value.clone());
    assert!(
        matches!(wait_s, Some(Value::F64(wait)) if wait > 0.2 && wait <= 0.31),
        "{wait_s:?}"
    );
    assert!(
        calls[0].events.is_empty(),
        "the first had its token at once"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_timeout_is_an_error_type_of_its_own() {
    let emu = emulator().await;
    let key = key_of(&emu, ALPHA);
    let otel = Otel::install();
    let client = builder_at(&emu.base_url(), ALPHA, &key)
        .timeout(Duration::from_millis(200))
        .retry_policy(RetryPolicy::never())
        .build()
        .unwrap();
    emu.inject_fault(on(
        "get_status",
        FaultKind::Delay {
            delay: Duration::from_secs(2),
        },
    ))
    .unwrap();
    client.status().await.unwrap_err();

    let spans = otel.spans();
    let tries = tries(&spans);
    assert_eq!(tries.len(), 1, "{spans:#?}");
    assert_eq!(str_attr(tries[0], "error.type").as_deref(), Some("timeout"));
    assert_eq!(attr(tries[0], "http.response.status_code"), None);
    assert!(matches!(tries[0].status, Status::Error { .. }));
    let operation = operations(&spans, "store_api.get_status")[0];
    assert_eq!(
        str_attr(operation, "error.type").as_deref(),
        Some("timeout")
    );
    assert!(matches!(operation.status, Status::Error { .. }));
    assert_eq!(tries[0].parent_span_id, operation.span_context.span_id());
}

#[tokio::test(flavor = "current_thread")]
async fn a_lost_answer_to_a_submission_is_in_its_span() {
    let emu = emulator().await;
    let key = key_of(&emu, ALPHA);
    let otel = Otel::install();
    let client = builder_at(&emu.base_url(), ALPHA, &key).build().unwrap();
    emu.inject_fault(on("create_order", FaultKind::DropAfterCommit))
        .unwrap();
    let external_id = new_external_order_id();
    let submission = client
        .orders()
        .submit(&identified(tee_order(Some(&external_id))))
        .await
        .unwrap();
    assert!(matches!(submission.submitted, Submitted::AlreadyExisted(_)));

    let spans = otel.spans();
    let submit = operations(&spans, "store_api.orders.submit");
    assert_eq!(submit.len(), 1, "{spans:#?}");
    let submit = submit[0];
    assert_eq!(submit.span_kind, SpanKind::Internal);
    assert_eq!(
        str_attr(submit, "store_api.submit.outcome").as_deref(),
        Some("already_existed")
    );
    assert_eq!(
        int_attr(submit, "store_api.submit.attempts"),
        Some(i64::try_from(submission.attempts.len()).unwrap())
    );
    assert_eq!(int_attr(submit, "store_api.submit.attempts"), Some(2));
    assert_eq!(
        str_attr(submit, "store_api.external_order_id"),
        Some(external_id)
    );
    assert_eq!(
        attr(submit, "store_api.submit.preflight"),
        Some(&Value::Bool(true))
    );
    assert!(f64_attr(submit, "store_api.submit.preflight_s").unwrap() > 0.0);
    assert_eq!(attr(submit, "error.type"), None);

    assert_eq!(
        str_attr(submit, "store_api.operation").as_deref(),
        Some("create_order")
    );
    assert!(f64_attr(submit, "store_api.rate_limit.waited_s").is_some());

    // The submit span is the submission's operation-level span: each POST is a try span directly
    // under it (no operation span per attempt); the lookup is an operation of its own beside them.
    assert!(
        operations(&spans, "store_api.create_order").is_empty(),
        "{spans:#?}"
    );
    let post_tries: Vec<_> = tries(&spans)
        .into_iter()
        .filter(|span| span.parent_span_id == submit.span_context.span_id())
        .collect();
    assert_eq!(post_tries.len(), 2, "{spans:#?}");
    for post in &post_tries {
        assert_eq!(
            str_attr(post, "store_api.operation").as_deref(),
            Some("create_order")
        );
        assert_eq!(post.span_context.trace_id(), submit.span_context.trace_id());
    }
    let template = template("create_order");
    assert_eq!(post_tries[0].name, format!("POST {template}"));
    let lost = str_attr(post_tries[0], "error.type");
    assert!(
        matches!(lost.as_deref(), Some("_OTHER" | "timeout")),
        "{lost:?}"
    );
    assert_eq!(attr(post_tries[0], "http.response.status_code"), None);
    assert_eq!(
        int_attr(post_tries[1], "http.response.status_code"),
        Some(409)
    );
    assert_eq!(
        str_attr(post_tries[1], "error.type").as_deref(),
        Some("409")
    );
    assert_eq!(
        int_attr(post_tries[1], "http.request.resend_count"),
        Some(1)
    );
    let lookups = operations(&spans, "store_api.list_orders");
    assert!(!lookups.is_empty(), "{spans:#?}");
    for lookup in lookups {
        assert_eq!(lookup.parent_span_id, submit.span_context.span_id());
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_refusal_and_the_escape_hatch_have_their_names() {
    let emu = emulator().await;
    let key = key_of(&emu, ALPHA);
    let otel = Otel::install();
    let client = builder_at(&emu.base_url(), ALPHA, &key).build().unwrap();
    // An unserved path: no operation, no template.
    let answer = client
        .request(Method::GET, "/nowhere?x=1")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 404);
    // Another origin: refused unsent.
    client
        .request(Method::GET, "http://127.0.0.2:9/store-api/2026-08/x")
        .single_attempt()
        .send()
        .await
        .unwrap_err();

    let spans = otel.spans();
    let calls = operations(&spans, "store_api.api");
    assert_eq!(calls.len(), 2, "{spans:#?}");
    let tries = tries(&spans);
    assert_eq!(tries.len(), 2, "{spans:#?}");
    assert_eq!(tries[0].name, "GET");
    assert_eq!(attr(tries[0], "url.template"), None);
    assert_eq!(
        str_attr(tries[0], "store_api.operation").as_deref(),
        Some("api")
    );
    assert_eq!(str_attr(tries[0], "error.type").as_deref(), Some("404"));
    assert_eq!(
        str_attr(tries[0], "url.full"),
        Some(format!("{}/stores/{ALPHA}/nowhere?x=1", emu.base_url()))
    );
    assert_eq!(str_attr(tries[1], "error.type").as_deref(), Some("refused"));
    assert_eq!(attr(tries[1], "url.full"), None, "another host's URL");
    assert_eq!(str_attr(calls[1], "error.type").as_deref(), Some("refused"));
}

/// A path that embeds `key` somewhere: a segment, a query value or name, percent-encoded or not,
/// or the userinfo of a whole URL.
fn path_with(key: &str, origin: &str, shape: u8, noise: &str) -> String {
    let encoded: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
    match shape % 7 {
        0 => format!("/orders/{key}"),
        1 => format!("/orders?filter[externalOrderId]={key}&limit=1"),
        2 => format!("/{noise}?{key}"),
        3 => format!("/orders/{encoded}?q={noise}"),
        4 => format!("/{noise}/x?a={encoded}&b={noise}"),
        5 => {
            let rest = origin.trim_start_matches("http://");
            format!("http://user:{key}@{rest}/store-api/2026-08/stores/{ALPHA}/status")
        }
        _ => format!("/{noise}{key}{noise}?z={noise}{key}"),
    }
}

/// Every string a span carries: its name, attributes, events and their attributes.
fn texts(span: &SpanData) -> Vec<String> {
    let mut texts = vec![span.name.to_string()];
    let kv_text = |kv: &KeyValue| format!("{}={}", kv.key, kv.value);
    texts.extend(span.attributes.iter().map(kv_text));
    for event in span.events.iter() {
        texts.push(event.name.to_string());
        texts.extend(event.attributes.iter().map(kv_text));
    }
    if let Status::Error { description } = &span.status {
        texts.push(description.to_string());
    }
    texts
}

#[test]
fn no_span_or_event_carries_the_key() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let emu = runtime.block_on(emulator());
    let config = ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(key in service_key(), shape in 0u8..7, noise in "[a-z0-9_-]{1,12}", given in any::<bool>())| {
        let otel = Otel::install();
        let path = path_with(&key, emu.origin(), shape, &noise);
        runtime.block_on(async {
            // The key the client holds, or one given to this request alone: a 401 either way.
            let client = builder_at(&emu.base_url(), ALPHA, if given { "csk_someone_else_000000000000000000" } else { &key })
                .retry_policy(RetryPolicy::never())
                .build()
                .unwrap();
            let mut request = client.request(Method::GET, &path);
            if given {
                request = request.api_key(store_api::ApiKey::new(key.clone()));
            }
            let _ = request.send().await;
        });
        let spans = otel.spans();
        prop_assert!(!tries(&spans).is_empty());
        for span in &spans {
            for text in texts(span) {
                prop_assert!(!text.contains(&key), "{text} carries the key ({path})");
            }
        }
        otel.reset();
    });
}
