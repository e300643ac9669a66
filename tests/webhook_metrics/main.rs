//! Issue 37: the webhook metrics (`store_api.webhooks.deliveries`, `store_api.webhooks.handler.duration`)
//! read through OpenTelemetry's SDK, for deliveries signed with the crate's signer and posted over HTTP
//! to an axum receiver on 127.0.0.1. Alone in its binary: the instruments come from the process-wide
//! global meter provider, created once, so it is installed before the first delivery.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use opentelemetry::{KeyValue, global};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use store_api_tests::post_body;
use store_api_webhooks::axum::VerifiedEvent;
use store_api_webhooks::dedupe::{MemoryDedupe, process_once, response_status};
use store_api_webhooks::{Verifier, sign};

const KEY: &str = "sk_store_metrics_key_00000000000000000";

#[derive(Clone)]
struct App {
    verifier: Verifier,
    dedupe: Arc<MemoryDedupe>,
}

impl FromRef<App> for Verifier {
    fn from_ref(app: &App) -> Self {
        app.verifier.clone()
    }
}

async fn receive(State(app): State<App>, VerifiedEvent(event): VerifiedEvent) -> StatusCode {
    let failing = event.id.starts_with("evt_fail");
    let outcome = process_once(&*app.dedupe, &event.id, |_lease| async move {
        if failing {
            Err("database unavailable")
        } else {
            Ok(())
        }
    })
    .await;
    StatusCode::from_u16(response_status(&outcome)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn event(id: &str, topic: &str) -> String {
    format!(r#"{{"id":"{id}","storeId":"store_1","topic":"{topic}","data":{{"id":"ord_1"}}}}"#)
}

/// Attributes as a sorted `key=value` list, for comparing points.
fn labels<'a>(attributes: impl Iterator<Item = &'a KeyValue>) -> Vec<String> {
    let mut labels: Vec<_> = attributes
        .map(|kv| format!("{}={}", kv.key, kv.value))
        .collect();
    labels.sort();
    labels
}

/// The points of the instrument `name` of scope `store-api-webhooks`: attributes → counter value,
/// or histogram count.
fn points(metrics: &[ResourceMetrics], name: &str) -> (String, BTreeMap<Vec<String>, u64>) {
    let mut unit = String::new();
    let mut points = BTreeMap::new();
    let scopes = metrics.iter().flat_map(ResourceMetrics::scope_metrics);
    for scope in scopes.filter(|scope| scope.scope().name() == "store-api-webhooks") {
        assert_eq!(scope.scope().version(), Some(env!("CARGO_PKG_VERSION")));
        for metric in scope.metrics().filter(|metric| metric.name() == name) {
            unit = metric.unit().to_owned();
            match metric.data() {
                AggregatedMetrics::U64(MetricData::Sum(sum)) => {
                    assert!(sum.is_monotonic());
                    for point in sum.data_points() {
                        points.insert(labels(point.attributes()), point.value());
                    }
                }
                AggregatedMetrics::F64(MetricData::Histogram(histogram)) => {
                    for point in histogram.data_points() {
                        let bounds: Vec<f64> = point.bounds().collect();
                        assert_eq!(bounds.first(), Some(&0.005), "the conventions' buckets");
                        assert_eq!(bounds.last(), Some(&10.0));
                        assert!(point.sum() >= 0.0);
                        points.insert(labels(point.attributes()), point.count());
                    }
                }
                other => panic!("{name}: unexpected data {other:?}"),
            }
        }
    }
    (unit, points)
}

fn point(labels: &[&str], value: u64) -> (Vec<String>, u64) {
    (
        labels.iter().map(|label| (*label).to_owned()).collect(),
        value,
    )
}

#[tokio::test]
async fn deliveries_are_counted_by_verdict_and_topic_and_handlers_timed() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    global::set_meter_provider(provider.clone());

    let app = Router::new()
        .route("/webhooks", post(receive))
        .with_state(App {
            verifier: Verifier::new(KEY),
            dedupe: Arc::new(MemoryDedupe::new(100)),
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{address}/webhooks");

    let deliveries = [
        (event("evt_1", "orders_create"), KEY, 204),
        (event("evt_1", "orders_create"), KEY, 204),
        (event("evt_2", "products_update"), KEY, 204),
        (event("evt_fail_3", "orders_update"), KEY, 500),
        (event("evt_4", "returns_create"), KEY, 204),
        (event("evt_5", "orders_create"), "another key", 401),
        (r#"{"id":"evt_6"}"#.to_owned(), KEY, 400),
    ];
    for (body, key, status) in deliveries {
        assert_eq!(
            post_body(&url, Some(&sign(key, body.as_bytes())), body.clone().into())
                .await
                .0,
            status,
            "{body}"
        );
    }
    provider.force_flush().unwrap();
    let metrics = exporter.get_finished_metrics().unwrap();

    let (unit, counted) = points(&metrics, "store_api.webhooks.deliveries");
    assert_eq!(unit, "{delivery}");
    let expected = BTreeMap::from([
        point(
            &[
                "store_api.webhook.topic=orders_create",
                "store_api.webhook.verdict=processed",
            ],
            1,
        ),
        point(
            &[
                "store_api.webhook.topic=orders_create",
                "store_api.webhook.verdict=duplicate",
            ],
            1,
        ),
        point(
            &[
                "store_api.webhook.topic=products_update",
                "store_api.webhook.verdict=processed",
            ],
            1,
        ),
        point(
            &[
                "store_api.webhook.topic=orders_update",
                "store_api.webhook.verdict=handler_failed",
            ],
            1,
        ),
        // An unknown topic is not an attribute value of its own (the sender could pick any).
        point(
            &[
                "store_api.webhook.topic=_OTHER",
                "store_api.webhook.verdict=processed",
            ],
            1,
        ),
        // Refused before the body is read or parsed: no topic.
        point(&["store_api.webhook.verdict=bad_signature"], 1),
        point(&["store_api.webhook.verdict=malformed"], 1),
    ]);
    assert_eq!(counted, expected);

    let (unit, timed) = points(&metrics, "store_api.webhooks.handler.duration");
    assert_eq!(unit, "s");
    let expected = BTreeMap::from([
        point(
            &[
                "store_api.webhook.topic=orders_create",
                "store_api.webhook.verdict=processed",
            ],
            1,
        ),
        point(
            &[
                "store_api.webhook.topic=products_update",
                "store_api.webhook.verdict=processed",
            ],
            1,
        ),
        point(
            &[
                "store_api.webhook.topic=orders_update",
                "store_api.webhook.verdict=handler_failed",
            ],
            1,
        ),
        point(
            &[
                "store_api.webhook.topic=_OTHER",
                "store_api.webhook.verdict=processed",
            ],
            1,
        ),
    ]);
    assert_eq!(timed, expected, "a handler that did not run is not timed");

    // No event id in any attribute (low cardinality).
    for (labels, _) in counted.iter().chain(&timed) {
        assert!(
            labels.iter().all(|label| !label.contains("evt_")),
            "{labels:?}"
        );
    }
}
