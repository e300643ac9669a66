//! Issue 37: the client's metrics (feature `otel-metrics`) as OpenTelemetry's SDK collects them from
//! the global meter provider (an `InMemoryMetricExporter` behind a periodic reader, flushed by hand),
//! against the emulator with faults: instruments, units, bucket boundaries, attributes without ids,
//! and never the key (a property over keys and paths).
//!
//! A binary of its own: the meter provider is process-wide, and the client makes its instruments once,
//! from whichever provider is global at its first request. The tests take turns (one lock) and read
//! delta points, so each sees only its own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider, Temporality,
};
use proptest::prelude::*;
use store_api::hook::Method;
use store_api::{RateLimiter, RetryPolicy, Submitted, new_external_order_id};
use store_api_fixtures::FaultKind;
use store_api_tests::telemetry::{on, port_of, service_key, template};
use store_api_tests::{
    ALPHA, builder_at, emulator, emulator_with_rate_limit, identified, key_of, relaxed_limiter,
    tee_order,
};

/// The conventions' bucket advice for `http.client.request.duration`.
const BOUNDARIES: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

struct Global {
    provider: SdkMeterProvider,
    exporter: InMemoryMetricExporter,
    /// Held by the test whose points are being read (across its awaits: an async lock).
    turn: tokio::sync::Mutex<()>,
}

/// The process's meter provider, made global before any client's first request.
fn global() -> &'static Global {
    static GLOBAL: OnceLock<Global> = OnceLock::new();
    GLOBAL.get_or_init(|| {
        let exporter = opentelemetry_sdk::metrics::InMemoryMetricExporterBuilder::new()
            .with_temporality(Temporality::Delta)
            .build();
        // Read by hand (`force_flush`); the interval only has to be longer than any test.
        let reader = PeriodicReader::builder(exporter.clone())
            .with_interval(Duration::from_secs(3600))
            .build();
        let provider = SdkMeterProvider::builder().with_reader(reader).build();
        opentelemetry::global::set_meter_provider(provider.clone());
        Global {
            provider,
            exporter,
            turn: tokio::sync::Mutex::new(()),
        }
    })
}

/// This test's turn, with what earlier tests recorded collected away.
async fn turn() -> tokio::sync::MutexGuard<'static, ()> {
    let guard = global().turn.lock().await;
    drain();
    guard
}

/// [`turn`], for a test outside a runtime.
fn blocking_turn() -> tokio::sync::MutexGuard<'static, ()> {
    let guard = global().turn.blocking_lock();
    drain();
    guard
}

/// The points recorded since the last drain.
fn drain() -> Vec<ResourceMetrics> {
    let global = global();
    global.provider.force_flush().unwrap();
    let metrics = global.exporter.get_finished_metrics().unwrap();
    global.exporter.reset();
    metrics
}

/// One data point, flattened: instrument name, unit, attributes, and its value (a sum's value, or a
/// histogram's count) with the histogram's bounds.
#[derive(Debug, Clone)]
struct Point {
    name: String,
    unit: String,
    attributes: Vec<KeyValue>,
    value: f64,
    bounds: Vec<f64>,
}

impl Point {
    fn attr(&self, key: &str) -> Option<&Value> {
        self.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| &kv.value)
    }

    fn has(&self, key: &str, value: impl Into<Value>) -> bool {
        self.attr(key) == Some(&value.into())
    }
}

fn points(metrics: &[ResourceMetrics]) -> Vec<Point> {
    let mut points = Vec::new();
    for resource in metrics {
        for scope in resource.scope_metrics() {
            if scope.scope().name() != "store-api" {
                continue;
            }
            assert_eq!(scope.scope().version(), Some(env!("CARGO_PKG_VERSION")));
            for metric in scope.metrics() {
                let base = |attributes: Vec<KeyValue>, value: f64, bounds: Vec<f64>| Point {
                    name: metric.name().to_owned(),
                    unit: metric.unit().to_owned(),
                    attributes,
                    value,
                    bounds,
                };
                match metric.data() {
                    AggregatedMetrics::F64(MetricData::Histogram(histogram)) => {
                        for point in histogram.data_points() {
                            points.push(base(
                                point.attributes().cloned().collect(),
                                point.count() as f64,
                                point.bounds().collect(),
                            ));
                        }
                    }
                    AggregatedMetrics::U64(MetricData::Sum(sum)) => {
                        for point in sum.data_points() {
                            points.push(base(
                                point.attributes().cloned().collect(),
                                point.value() as f64,
                                Vec::new(),
                            ));
                        }
                    }
                    other => panic!("{}: unexpected data {other:?}", metric.name()),
                }
            }
        }
    }
    points
}

fn named<'a>(points: &'a [Point], name: &str) -> Vec<&'a Point> {
    points.iter().filter(|point| point.name == name).collect()
}

fn sum(points: &[&Point]) -> f64 {
    points.iter().map(|point| point.value).sum()
}

/// No attribute carries an id: the store's, an order's or an external one.
fn assert_no_ids(points: &[Point], ids: &[&str]) {
    for point in points {
        for kv in &point.attributes {
            let text = kv.value.to_string();
            for id in ids {
                assert!(!text.contains(id), "{} carries {id}: {kv:?}", point.name);
            }
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_503_then_a_200_is_two_duration_points_and_one_retry() {
    let _turn = turn().await;
    let emu = emulator().await;
    let client = builder_at(&emu.base_url(), ALPHA, &key_of(&emu, ALPHA))
        .build()
        .unwrap();
    emu.inject_fault(on("get_status", FaultKind::Status { status: 503 }))
        .unwrap();
    client.status().await.unwrap();

    let points = points(&drain());
    let durations = named(&points, "http.client.request.duration");
    assert_eq!(durations.len(), 2, "{points:#?}");
    let template = template("get_status");
    for point in &durations {
        assert_eq!(point.unit, "s");
        assert_eq!(point.bounds, BOUNDARIES);
        assert_eq!(point.value, 1.0, "one try each");
        assert!(point.has("http.request.method", "GET"));
        assert!(point.has("server.address", "127.0.0.1"));
        assert!(point.has("server.port", port_of(&emu)));
        assert!(point.has("url.template", template.clone()));
    }
    let failed = durations
        .iter()
        .find(|point| point.has("http.response.status_code", 503_i64))
        .expect("the 503's point");
    assert!(failed.has("error.type", "503"));
    let answered = durations
        .iter()
        .find(|point| point.has("http.response.status_code", 200_i64))
        .expect("the 200's point");
    assert_eq!(answered.attr("error.type"), None);

    let retries = named(&points, "store_api.client.retries");
    assert_eq!(retries.len(), 1, "{points:#?}");
    assert_eq!(retries[0].unit, "{retry}");
    assert_eq!(retries[0].value, 1.0);
    assert!(retries[0].has("store_api.operation", "get_status"));
    assert!(retries[0].has("error.type", "503"));
    assert_no_ids(&points, &[ALPHA]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_429_counts_a_pause_and_a_retry() {
    let _turn = turn().await;
    let emu = emulator().await;
    let client = builder_at(&emu.base_url(), ALPHA, &key_of(&emu, ALPHA))
        .build()
        .unwrap();
    emu.inject_fault(on(
        "get_status",
        FaultKind::RateLimited {
            retry_after: "0".into(),
        },
    ))
    .unwrap();
    client.status().await.unwrap();

    let points = points(&drain());
    let pauses = named(&points, "store_api.client.rate_limit.pauses");
    assert_eq!(pauses.len(), 1, "{points:#?}");
    assert_eq!(pauses[0].unit, "{pause}");
    assert!(pauses[0].has("store_api.rate_limit.reason", "429"));
    assert_eq!(pauses[0].value, 1.0);
    let retries = named(&points, "store_api.client.retries");
    assert!(retries[0].has("error.type", "429"));
    let limited = named(&points, "http.client.request.duration");
    assert!(
        limited.iter().any(|point| point.has("error.type", "429")
            && point.has("http.response.status_code", 429_i64)),
        "{points:#?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn an_empty_server_bucket_counts_a_pause() {
    let _turn = turn().await;
    let emu = emulator_with_rate_limit().await;
    let client = builder_at(&emu.base_url(), ALPHA, &key_of(&emu, ALPHA))
        .in_process_limiter(relaxed_limiter())
        .build()
        .unwrap();
    // The service's burst is ten: the tenth answer says none remain.
    for _ in 0..store_api_raw::contract::RATE_LIMIT_BURST {
        client.status().await.unwrap();
    }
    let points = points(&drain());
    let pauses = named(&points, "store_api.client.rate_limit.pauses");
    assert!(
        pauses
            .iter()
            .any(|point| point.has("store_api.rate_limit.reason", "remaining_zero")),
        "{points:#?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_limiters_wait_is_a_histogram_point() {
    let _turn = turn().await;
    let emu = emulator().await;
    let client = builder_at(&emu.base_url(), ALPHA, &key_of(&emu, ALPHA))
        .in_process_limiter(RateLimiter::with_rate(1, Duration::from_millis(200)))
        .build()
        .unwrap();
    client.status().await.unwrap();
    client.status().await.unwrap();

    let points = points(&drain());
    let waits = named(&points, "store_api.client.rate_limit.wait.duration");
    assert_eq!(waits.len(), 1, "{points:#?}");
    assert_eq!(waits[0].unit, "s");
    assert_eq!(waits[0].value, 1.0, "only the second try waited");
    assert!(waits[0].attributes.is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn submissions_are_counted_by_outcome() {
    let _turn = turn().await;
    let emu = emulator().await;
    let client = builder_at(&emu.base_url(), ALPHA, &key_of(&emu, ALPHA))
        .build()
        .unwrap();
    let first = new_external_order_id();
    let created = client
        .orders()
        .submit(&identified(tee_order(Some(&first))))
        .await
        .unwrap();
    assert!(matches!(created.submitted, Submitted::Created(_)));
    emu.inject_fault(on("create_order", FaultKind::DropAfterCommit))
        .unwrap();
    let second = new_external_order_id();
    let lost = client
        .orders()
        .submit(&identified(tee_order(Some(&second))))
        .await
        .unwrap();
    assert!(matches!(lost.submitted, Submitted::AlreadyExisted(_)));

    let points = points(&drain());
    let submissions = named(&points, "store_api.orders.submissions");
    assert_eq!(submissions[0].unit, "{submission}");
    for outcome in ["created", "already_existed"] {
        let counted: Vec<_> = submissions
            .iter()
            .copied()
            .filter(|point| point.has("store_api.submit.outcome", outcome))
            .collect();
        assert_eq!(sum(&counted), 1.0, "{outcome}: {points:#?}");
    }
    // The POSTs and the lookups have their points too: by template, never by id.
    let durations = named(&points, "http.client.request.duration");
    assert!(
        durations
            .iter()
            .any(|point| point.has("url.template", template("create_order"))
                && point.has("http.request.method", "POST")),
        "{points:#?}"
    );
    assert_no_ids(
        &points,
        &[
            ALPHA,
            &first,
            &second,
            &created.order().id,
            &lost.order().id,
        ],
    );
}

#[test]
fn no_metric_attribute_carries_the_key() {
    let _turn = blocking_turn();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let emu = runtime.block_on(emulator());
    let config = ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(key in service_key(), shape in 0u8..4, noise in "[a-z0-9_-]{1,12}")| {
        let encoded: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
        let path = match shape {
            0 => format!("/orders/{key}"),
            1 => format!("/orders?filter[externalOrderId]={key}&limit=1"),
            2 => format!("/{noise}/{encoded}?{key}={noise}"),
            _ => format!("/stores/{key}/status"),
        };
        runtime.block_on(async {
            let client = builder_at(&emu.base_url(), ALPHA, &key)
                .retry_policy(RetryPolicy::never())
                .build()
                .unwrap();
            let _ = client.request(Method::GET, &path).send().await;
        });
        let points = points(&drain());
        prop_assert!(!named(&points, "http.client.request.duration").is_empty());
        for point in &points {
            for kv in &point.attributes {
                let text = format!("{}={}", kv.key, kv.value);
                prop_assert!(!text.contains(&key), "{text} carries the key ({path})");
            }
        }
    });
}
