//! Instructions per call with the OpenTelemetry layer and meter installed and without (issue 37 point
//! 6); `../otel.sh` builds and runs it. `installed|none` × `submit|list|bare_submit|spanned_submit`
//! N: N calls against the in-process emulator on a current-thread runtime,
//! counted by callgrind over the whole process (the emulator, hyper and the exporter's thread too),
//! so a ratio reads like the timed bench's: what a call costs the machine, not only the client.
//! `bare_*` is one reqwest request decoded by serde_json; `spanned_*` the same inside the two spans an
//! operation exports at the least (its own and its try's), each with a name and a kind only: what the
//! layer costs whatever the spans carry.

mod common;

use common::{ALPHA, order, set_up};
use opentelemetry::trace::TracerProvider as _;
use store_api::{IdentifiedOrder, ListOrdersQuery};
use tracing::Instrument as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// The layer as docs/telemetry.md recommends it and the timed bench installs it, over a batch span
/// processor; the meter provider over a periodic reader. Kept alive until the end.
fn install() -> (
    opentelemetry_sdk::trace::SdkTracerProvider,
    opentelemetry_sdk::metrics::SdkMeterProvider,
) {
    let spans = opentelemetry_sdk::trace::InMemorySpanExporter::default();
    let tracer_provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .build();
    let layer = tracing_opentelemetry::layer()
        .with_tracked_inactivity(false)
        .with_location(false)
        .with_threads(false)
        .with_tracer(tracer_provider.tracer("instr-bench"));
    tracing::subscriber::set_global_default(
        tracing_subscriber::registry()
            .with(tracing_subscriber::filter::LevelFilter::INFO)
            .with(layer),
    )
    .unwrap();
    let metrics = opentelemetry_sdk::metrics::InMemoryMetricExporter::default();
    let meter_provider = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_periodic_exporter(metrics)
        .build();
    opentelemetry::global::set_meter_provider(meter_provider.clone());
    (tracer_provider, meter_provider)
}

async fn spanned<T>(name: &'static str, request: impl std::future::Future<Output = T>) -> T {
    let operation = tracing::info_span!(
        "operation",
        "otel.name" = "operation",
        "otel.kind" = "internal"
    );
    let attempt =
        tracing::info_span!(parent: &operation, "try", "otel.name" = name, "otel.kind" = "client");
    request.instrument(attempt).instrument(operation).await
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let installed = (args[0] == "installed").then(install);
    let mode = args[1].as_str();
    let n: usize = args[2].parse().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (emu, client, key) = set_up().await;
        let http = reqwest::Client::new();
        let orders_url = format!("{}/stores/{ALPHA}/orders", emu.base_url());
        let bare_post = |o: &IdentifiedOrder| {
            let body = serde_json::to_vec(o.as_request()).unwrap();
            let request = http
                .post(&orders_url)
                .header("x-api-key", &key)
                .header("content-type", "application/json")
                .body(body);
            async move {
                let body = request.send().await.unwrap().bytes().await.unwrap();
                serde_json::from_slice::<serde_json::Value>(&body).unwrap()
            }
        };
        let query = ListOrdersQuery::new().limit(100);
        // Warm: the connections, the snapshot cache, every lazily built thing.
        for i in 0..5 {
            client.orders().list(&query).await.unwrap();
            let o = IdentifiedOrder::try_from(order(&format!("warm-{i}"))).unwrap();
            client.orders().submit(&o).await.unwrap();
            bare_post(&IdentifiedOrder::try_from(order(&format!("warm-bare-{i}"))).unwrap()).await;
        }
        for i in 0..n {
            let o = IdentifiedOrder::try_from(order(&format!("bench-{i}"))).unwrap();
            match mode {
                "list" => assert_eq!(client.orders().list(&query).await.unwrap().items.len(), 100),
                "submit" => drop(client.orders().submit(&o).await.unwrap()),
                "bare_submit" => drop(bare_post(&o).await),
                "spanned_submit" => drop(spanned("POST", bare_post(&o)).await),
                other => panic!("unknown mode {other}"),
            }
        }
        drop(client);
        emu.shutdown().await;
    });
    if let Some((tracer_provider, meter_provider)) = installed {
        tracer_provider.shutdown().unwrap();
        meter_provider.shutdown().unwrap();
    }
}
