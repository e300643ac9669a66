//! The client's spans and metrics exported by OTLP over HTTP (docs/telemetry.md lists them all).
//!
//! `cargo run -p store-api-examples --example otel` sends to the collector at
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (by default `http://127.0.0.1:4318`, an OpenTelemetry Collector's or
//! Jaeger's OTLP/HTTP port): the spans through `tracing-opentelemetry`'s layer, the metrics
//! (`http.client.request.duration` and the others of store-api's `otel-metrics` feature) through the
//! global meter provider. It talks to the store named by `STORE_API_KEY`, `STORE_API_STORE_ID` and
//! `STORE_API_BASE_URL` ([`Client::from_env`]) when they are set (reads only: a status check and a page
//! of orders), else to an emulator it starts in this process, where it also submits an order.
//! `cargo test -p store-api-examples --example otel` runs the same against an in-process emulator and a
//! small OTLP/HTTP collector of its own, and checks that both signals reached it.

use std::error::Error;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::metrics::periodic_reader_with_async_runtime::PeriodicReader;
use opentelemetry_sdk::runtime;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;
use store_api::{
    AddressLines, Client, ListOrdersQuery, OrderBuilder, RateLimiter, ShipTo, ShipToAddress,
    new_external_order_id,
};
use store_api_fixtures::Emulator;
use tracing::Instrument;
use tracing::instrument::WithSubscriber;
use tracing_subscriber::layer::SubscriberExt;

type BoxError = Box<dyn Error + Send + Sync>;

/// The OTLP/HTTP endpoint when `OTEL_EXPORTER_OTLP_ENDPOINT` is unset: a collector on this machine.
const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:4318";

/// Both providers, kept to be shut down (which exports what is still buffered).
struct Telemetry {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
}

/// OTLP/HTTP exporters of spans and metrics to `endpoint` (a base URL: the signal paths `/v1/traces`
/// and `/v1/metrics` are appended, as the OTLP specification says of `OTEL_EXPORTER_OTLP_ENDPOINT`),
/// and the meter provider installed as the global one, where store-api's instruments live.
///
/// The exporters send with the async `reqwest` client (`reqwest-client`), so they run on the Tokio
/// runtime (`runtime::Tokio`): the SDK's default processors export from threads of their own, where
/// an async client has no runtime to run on.
fn install(endpoint: &str) -> Result<Telemetry, BoxError> {
    let endpoint = endpoint.trim_end_matches('/');
    let resource = Resource::builder()
        .with_service_name("store-api-otel-example")
        .build();

    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(format!("{endpoint}/v1/traces"))
        .with_timeout(Duration::from_secs(5))
        .build()?;
    let tracer_provider = SdkTracerProvider::builder()
        .with_span_processor(BatchSpanProcessor::builder(spans, runtime::Tokio).build())
        .with_resource(resource.clone())
        .build();

    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_endpoint(format!("{endpoint}/v1/metrics"))
        .with_timeout(Duration::from_secs(5))
        .build()?;
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(
            PeriodicReader::builder(metrics, runtime::Tokio)
                .with_interval(Duration::from_secs(10))
                .build(),
        )
        .with_resource(resource)
        .build();
    // store-api's instruments are created from the global meter provider on first use.
    opentelemetry::global::set_meter_provider(meter_provider.clone());
    Ok(Telemetry {
        tracer_provider,
        meter_provider,
    })
}

impl Telemetry {
    /// A `tracing` subscriber whose spans go to the tracer provider: store-api's spans, with their
    /// `otel.name` and `otel.kind`, become OpenTelemetry spans unchanged.
    fn subscriber(&self) -> impl tracing::Subscriber + Send + Sync + use<> {
        let tracer = self.tracer_provider.tracer("store-api-otel-example");
        // Without timing every poll, the code location and the thread of each span: each costs per
        // span, and none helps reading a trace of HTTP calls (docs/telemetry.md).
        let layer = tracing_opentelemetry::layer()
            .with_tracked_inactivity(false)
            .with_location(false)
            .with_threads(false)
            .with_tracer(tracer);
        tracing_subscriber::registry().with(layer)
    }

    /// Exports what is buffered and stops both providers. Their shutdown blocks until the exporting
    /// task, which runs on this runtime, has answered: so it runs on a blocking thread, never on one
    /// of the runtime's workers (with a current-thread runtime that would wait forever).
    async fn shutdown(self, endpoint: &str) -> Result<(), BoxError> {
        let (spans, metrics) = tokio::task::spawn_blocking(move || {
            (
                self.tracer_provider.shutdown(),
                self.meter_provider.shutdown(),
            )
        })
        .await?;
        spans.map_err(|e| format!("exporting the spans to {endpoint}: {e}"))?;
        metrics.map_err(|e| format!("exporting the metrics to {endpoint}: {e}"))?;
        Ok(())
    }
}

/// What the example does with the client: a status check, a page of orders, and, when `submit`, one
/// order placed exactly once (with the emulator only: against the real service an order is printed,
/// shipped and billed).
async fn traffic(client: &Client, submit: bool) -> Result<(), BoxError> {
    let status = client.status().await?;
    println!("status: {:?}", status.version);
    let page = client
        .orders()
        .list(&ListOrdersQuery::new().limit(5))
        .await?;
    println!("{} orders on the first page", page.items.len());
    if submit {
        let address = ShipToAddress::new(AddressLines {
            street_address: "1 Main St",
            city_or_town: "Austin",
            state_or_province: "TX",
            postal_code: "78701",
            country: "US",
        })?;
        let order = OrderBuilder::new(
            &new_external_order_id(),
            ShipTo::new("Ada", "Lovelace", address)?,
        )?
        .sku("AA-TEE-SUN-BLK-M", 1)
        .build()?;
        let submission = client.orders().submit(&order).await?;
        println!(
            "submitted {} in {} attempt(s)",
            submission.order().id,
            submission.attempts.len()
        );
    }
    // A count of the program's own beside store-api's, on the same meter provider.
    opentelemetry::global::meter("store-api-otel-example")
        .u64_counter("example.runs")
        .build()
        .add(1, &[KeyValue::new("example.submitted", submit)]);
    Ok(())
}

/// A client of the emulator's active store, its limiter relaxed (the emulator's rate limit is off).
fn emulator_client(emu: &Emulator) -> Result<Client, BoxError> {
    let store = emu
        .active_store()
        .ok_or("the emulator has no active store")?;
    Ok(Client::builder()
        .base_url(emu.base_url())
        .store_id(&store.id)
        .api_key(store.api_key)
        .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
        .build()?)
}

/// Installs the exporters, sends the traffic under the subscriber, and shuts the providers down.
async fn run(endpoint: &str, client: &Client, submit: bool) -> Result<(), BoxError> {
    let telemetry = install(endpoint)?;
    // The subscriber holds for this future only (`with_subscriber`), so a test may install another; a
    // program would call `tracing::subscriber::set_global_default` once at start instead.
    let result = async {
        // A span of the program's own, the parent of the client's: one trace for the unit of work.
        let work = tracing::info_span!("otel_example", "otel.kind" = "internal");
        traffic(client, submit).instrument(work).await
    }
    .with_subscriber(telemetry.subscriber())
    .await;
    telemetry.shutdown(endpoint).await?;
    result
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .ok()
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned());
    if std::env::var_os(store_api::ENV_API_KEY).is_some() {
        let client = Client::from_env()?;
        run(&endpoint, &client, false).await?;
    } else {
        let emu = Emulator::builder().rate_limit(false).start().await?;
        let client = emulator_client(&emu)?;
        run(&endpoint, &client, true).await?;
        emu.shutdown().await;
    }
    println!("exported to {endpoint}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex, PoisonError};

    use axum::Router;
    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    use axum::routing::post;

    use super::*;

    /// What the collector received: requests and bodies, by signal.
    #[derive(Debug, Default)]
    struct Received {
        traces: Vec<Bytes>,
        metrics: Vec<Bytes>,
    }

    type Shared = Arc<Mutex<Received>>;

    /// An OTLP/HTTP collector reduced to what the exporters need: it takes `POST /v1/traces` and
    /// `/v1/metrics` and answers with an empty protobuf message, a full success in OTLP.
    async fn collector() -> (String, Shared, tokio::task::JoinHandle<()>) {
        async fn traces(State(seen): State<Shared>, body: Bytes) -> impl IntoResponse {
            lock(&seen).traces.push(body);
            accepted()
        }
        async fn metrics(State(seen): State<Shared>, body: Bytes) -> impl IntoResponse {
            lock(&seen).metrics.push(body);
            accepted()
        }
        fn accepted() -> impl IntoResponse {
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/x-protobuf")],
                Bytes::new(),
            )
        }
        let seen = Shared::default();
        let app = Router::new()
            .route("/v1/traces", post(traces))
            .route("/v1/metrics", post(metrics))
            .with_state(seen.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        (format!("http://{address}"), seen, server)
    }

    fn lock(seen: &Shared) -> std::sync::MutexGuard<'_, Received> {
        seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `needle` occurs in any of `bodies` (protobuf keeps strings as they are).
    fn carries(bodies: &[Bytes], needle: &str) -> bool {
        bodies
            .iter()
            .any(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn spans_and_metrics_reach_an_otlp_collector() {
        let (endpoint, seen, server) = collector().await;
        let emu = Emulator::builder().rate_limit(false).start().await.unwrap();
        let client = emulator_client(&emu).unwrap();
        let key = emu.active_store().unwrap().api_key;

        run(&endpoint, &client, true).await.unwrap();

        // Taken out of the collector's state: no lock is held across the awaits below.
        let received = std::mem::take(&mut *lock(&seen));
        let bytes = |bodies: &[Bytes]| bodies.iter().map(Bytes::len).sum::<usize>();
        assert!(!received.traces.is_empty(), "no span export reached it");
        assert!(!received.metrics.is_empty(), "no metric export reached it");
        assert!(bytes(&received.traces) > 0 && bytes(&received.metrics) > 0);
        println!(
            "collector: {} trace requests ({} bytes), {} metric requests ({} bytes)",
            received.traces.len(),
            bytes(&received.traces),
            received.metrics.len(),
            bytes(&received.metrics)
        );
        // Our own span and counter, and what store-api records by the conventions.
        assert!(carries(&received.traces, "otel_example"));
        assert!(carries(&received.traces, "store-api-otel-example"));
        assert!(carries(&received.metrics, "example.runs"));
        assert!(carries(&received.traces, "http.request.method"));
        assert!(carries(&received.metrics, "http.client.request.duration"));
        assert!(carries(&received.metrics, "store_api.orders.submissions"));
        // Never the key, in either signal.
        assert!(!carries(&received.traces, &key));
        assert!(!carries(&received.metrics, &key));

        server.abort();
        emu.shutdown().await;
    }
}
