//! Per-operation latency from a request hook, against the local emulator.
//!
//! `cargo run -p store-api-examples --example latency` starts the emulator in this process, makes a
//! few calls through a client with a [`RequestHook`] that records each attempt's duration by operation,
//! and prints a table (count, errors, mean, max). A real exporter would feed a histogram of its metrics
//! library from `after` the same way, labelled by the operation id and path template (never by URL: the
//! ids in it can be customer data).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use store_api::hook::{RequestHook, TryInfo, TryOutcome};
use store_api::{ListCatalogProductsQuery, ListProductsQuery};
use store_api_fixtures::Emulator;

/// Durations of every attempt, by operation.
#[derive(Debug, Default)]
struct Latency {
    by_operation: Mutex<BTreeMap<(&'static str, &'static str), Stats>>,
}

#[derive(Debug, Default)]
struct Stats {
    count: u32,
    errors: u32,
    total: Duration,
    max: Duration,
}

impl RequestHook for Latency {
    fn after(&self, attempt: &TryInfo, outcome: &TryOutcome, duration: Duration) {
        // A poisoned map still holds whole numbers: a metrics hook must never fail a request.
        let mut map = self
            .by_operation
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let stats = map
            .entry((attempt.operation_id, attempt.path_template))
            .or_default();
        stats.count += 1;
        stats.total += duration;
        stats.max = stats.max.max(duration);
        if !matches!(outcome, TryOutcome::Status(200..=299)) {
            stats.errors += 1;
        }
    }
}

impl Latency {
    fn report(&self) -> String {
        let map = self
            .by_operation
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut out = format!(
            "{:<22} {:<40} {:>5} {:>6} {:>10} {:>10}\n",
            "operation", "path", "count", "errors", "mean", "max"
        );
        for ((operation, path), stats) in map.iter() {
            let mean = stats.total / stats.count.max(1);
            out.push_str(&format!(
                "{operation:<22} {path:<40} {:>5} {:>6} {:>10.2?} {:>10.2?}\n",
                stats.count, stats.errors, mean, stats.max
            ));
        }
        out
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let emu = Emulator::builder().rate_limit(false).start().await?;
    let store = emu
        .active_store()
        .ok_or("the emulator has no active store")?;
    let latency = Arc::new(Latency::default());
    let client = store_api::Client::builder()
        .base_url(emu.base_url())
        .store_id(&store.id)
        .api_key(store.api_key)
        .hook(latency.clone())
        .build()?;

    client.status().await?;
    let blanks = client
        .catalog()
        .collect_all(&ListCatalogProductsQuery::new())
        .await?;
    let products = client
        .products()
        .collect_all(&ListProductsQuery::new())
        .await?;
    for product in products.iter().take(3) {
        client.products().get(&product.id).await?;
    }
    // A missing order: the 404 is counted as an error of its operation.
    let _ = client.orders().get("ord_does_not_exist").await;

    println!("{} blanks, {} products", blanks.len(), products.len());
    print!("{}", latency.report());
    emu.shutdown().await;
    Ok(())
}
