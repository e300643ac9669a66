//! Pre-flight validation speed: `validate::validate_order` on a 50-line-item custom order against the
//! client's cached store snapshot, per order, on one thread.
//!
//! The snapshot is the real one: a client fetches it from the emulator (`Client::store_snapshot`, the
//! cache `Orders::submit` validates against), so the blanks are the seed's 11 blanks of `store_alpha`
//! with their real locations, methods and print areas. The order is built from that snapshot: 50 custom
//! items, round-robin over the orderable blanks and their orderable variants (no variant twice), each
//! with two decorations in one method at two locations where the blank allows it (one otherwise), sized
//! to half the print area. The bench first checks that the order is valid, so the timed path is the
//! complete one (every rule runs to the end), not an early rejection.
//!
//! Side by side with it, in alternating batches so both see the same machine noise, the bench times
//! `serde_json` decoding the same order from its request body (`serde_json::to_vec` of it) into the same
//! type: `validator_decode_ratio` is validation ÷ decoding, what checking an order costs next to merely
//! reading it. A counting global allocator counts the heap allocations of validating the (valid) order:
//! `validator_allocations_per_order` must be 0.
//!
//! Run with `cargo bench -p store-api-tests --bench validator` (add `-- --quick` for a short run; without
//! `--bench`, as under `cargo test --benches`, a few rounds as a smoke test). Prints machine-readable
//! `validator_*=VALUE` lines; `cargo xtask bench` reads them.

use std::alloc::System;
use std::error::Error;
use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use store_api::validate::StoreSnapshot;
use store_api::{Client, NewOrder, RateLimiter};
use store_api_fixtures::Emulator;
use store_api_raw::types;
use store_api_rules::validate_order;

type BoxError = Box<dyn Error + Send + Sync>;

/// Line items of the order.
const LINE_ITEMS: usize = 50;
/// Calls per timed batch.
const BATCH: u32 = 1_000;
/// The targets.
const TARGET_ORDERS_PER_SECOND: f64 = 200_000.0;
const TARGET_DECODE_RATIO: f64 = 0.25;

/// The system allocator, counting allocations (`stats_alloc`: the workspace forbids `unsafe`).
#[global_allocator]
static ALLOCATOR: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Heap allocations (and reallocations) made by `work`, run `calls` times, per call.
fn allocations_per_call(calls: u32, work: &impl Fn() -> usize) -> f64 {
    let region = Region::new(ALLOCATOR);
    for _ in 0..calls {
        black_box(work());
    }
    let change = region.change();
    (change.allocations + change.reallocations) as f64 / f64::from(calls)
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let smoke_test = !args.iter().any(|a| a == "--bench");
    let rounds: u32 = if smoke_test {
        3
    } else if args.iter().any(|a| a == "--quick") {
        100
    } else {
        1_000
    };

    let snapshot = fetch_snapshot()?;
    let order = custom_order(&snapshot)?;
    if let Err(violations) = validate_order(&order, &snapshot) {
        return Err(format!("the bench order is not valid: {violations:?}").into());
    }
    let decorations: usize = order.line_items.iter().map(|i| i.decorations.len()).sum();
    let variants: usize = snapshot.catalog().iter().map(|c| c.variants.len()).sum();
    let body = serde_json::to_vec(&order)?;
    if serde_json::from_slice::<NewOrder>(&body)? != order {
        return Err("the request body does not decode back to the order".into());
    }

    let validate = || usize::from(validate_order(black_box(&order), black_box(&snapshot)).is_ok());
    let decode =
        || serde_json::from_slice::<NewOrder>(black_box(&body)).map_or(0, |o| o.line_items.len());
    for _ in 0..rounds.min(20) {
        batch(&validate);
        batch(&decode);
    }
    let allocations = allocations_per_call(BATCH, &validate);
    let decode_allocations = allocations_per_call(BATCH, &decode);

    // Alternating which side goes first cancels a drift in the machine's load over a round.
    let mut validation = Vec::with_capacity(rounds as usize);
    let mut decoding = Vec::with_capacity(rounds as usize);
    for round in 0..rounds {
        if round % 2 == 1 {
            decoding.push(batch(&decode));
        }
        validation.push(batch(&validate));
        if round % 2 == 0 {
            decoding.push(batch(&decode));
        }
    }
    let total: Duration = validation.iter().sum();
    let decode_total: Duration = decoding.iter().sum();
    let best = validation.iter().min().copied().unwrap_or_default();
    let per_order = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(rounds) / f64::from(BATCH);
    let us_per_order = per_order(total);
    let decode_us = per_order(decode_total);
    let best_us = best.as_secs_f64() * 1e6 / f64::from(BATCH);
    let ratio = median_ratio(&validation, &decoding);
    let orders_per_second = 1e6 / us_per_order;
    let verdict = |pass: bool| if pass { "PASS" } else { "MISS" };
    println!(
        "validate_order: {LINE_ITEMS} custom line items, {decorations} decorations, against a snapshot of \
         {} blanks ({variants} variants) and {} products; {rounds} rounds of {BATCH}, one thread",
        snapshot.catalog().len(),
        snapshot.products().len()
    );
    println!("  mean       {us_per_order:>9.3} µs/order");
    println!("  best batch {best_us:>9.3} µs/order");
    println!(
        "  rate       {orders_per_second:>9.0} orders/s  target >= {TARGET_ORDERS_PER_SECOND:.0}  {}",
        verdict(orders_per_second >= TARGET_ORDERS_PER_SECOND)
    );
    println!(
        "  decode     {decode_us:>9.3} µs/order  (serde_json, the {}-byte request body)",
        body.len()
    );
    println!(
        "  ratio      {ratio:>9.3} validation ÷ decoding (median of rounds)  target <= {TARGET_DECODE_RATIO}  {}",
        verdict(ratio <= TARGET_DECODE_RATIO)
    );
    println!(
        "  heap       {allocations:>9.2} allocations per validation ({decode_allocations:.0} per decoding)"
    );
    println!("validator_us_per_order={us_per_order:.3}");
    println!("validator_best_us_per_order={best_us:.3}");
    println!("validator_best_orders_per_sec={:.0}", 1e6 / best_us);
    println!("validator_orders_per_sec={orders_per_second:.0}");
    println!("validator_decode_us_per_order={decode_us:.3}");
    println!("validator_decode_ratio={ratio:.4}");
    println!("validator_allocations_per_order={allocations}");
    println!("validator_line_items={LINE_ITEMS}");
    println!("validator_decorations={decorations}");
    Ok(())
}

/// The median over rounds of `a[i] ÷ b[i]`: each round's two batches ran back to back.
fn median_ratio(a: &[Duration], b: &[Duration]) -> f64 {
    let mut ratios: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Times `BATCH` calls of `work`.
fn batch(work: &impl Fn() -> usize) -> Duration {
    let started = Instant::now();
    for _ in 0..BATCH {
        black_box(work());
    }
    started.elapsed()
}

/// The store snapshot a client of `store_alpha` caches, fetched from a fresh emulator.
fn fetch_snapshot() -> Result<StoreSnapshot, BoxError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let emulator = Emulator::builder()
            .rate_limit(false)
            .network_downloads(false)
            .start()
            .await?;
        let store = emulator
            .store("store_alpha")
            .ok_or("store_alpha is not in the seed")?;
        let client = Client::builder()
            .base_url(emulator.base_url())
            .store_id(&store.id)
            .api_key(&store.api_key)
            .in_process_limiter(RateLimiter::with_rate(1_000, Duration::from_micros(100)))
            .build()?;
        let shared = client.store_snapshot().await?;
        let snapshot = StoreSnapshot::new(shared.catalog().to_vec(), shared.products().to_vec());
        drop(client);
        emulator.shutdown().await;
        Ok(snapshot)
    })
}

/// A blank that can take an order, with its orderable variants.
struct Blank<'a> {
    product: &'a types::CatalogProduct,
    variants: Vec<&'a str>,
}

/// `LINE_ITEMS` custom items over the snapshot's orderable blanks, as described at the top.
fn custom_order(snapshot: &StoreSnapshot) -> Result<NewOrder, BoxError> {
    let mut blanks: Vec<Blank<'_>> = snapshot
        .catalog()
        .iter()
        .filter(|c| c.is_discontinued != Some(true))
        .map(|product| Blank {
            product,
            variants: product
                .variants
                .iter()
                .filter(|v| v.is_discontinued != Some(true))
                .map(|v| v.id.as_str())
                .collect(),
        })
        .filter(|b| !b.variants.is_empty())
        .collect();
    let mut items = Vec::with_capacity(LINE_ITEMS);
    let mut next_variant = 0;
    while items.len() < LINE_ITEMS {
        let before = items.len();
        for blank in &mut blanks {
            if items.len() == LINE_ITEMS {
                break;
            }
            if let Some(variant) = blank.variants.get(next_variant) {
                items.push(json!({
                    "isCustom": true,
                    "catalogProductVariantId": variant,
                    "quantity": 1 + items.len() % 3,
                    "decorations": decorations(blank.product, items.len())?,
                }));
            }
        }
        if items.len() == before {
            return Err(
                format!("the snapshot has only {before} orderable catalog variants").into(),
            );
        }
        next_variant += 1;
    }
    Ok(serde_json::from_value(json!({
        "externalOrderId": "validator-bench-0001",
        "orderedAt": "2026-08-14T09:30:00.000Z",
        "lineItems": items,
        "shippingAddress": {
            "firstName": "Ada",
            "lastName": "Lovelace",
            "email": "ada@example.com",
            "address": {
                "streetAddress": "1 Main St",
                "cityOrTown": "Austin",
                "stateOrProvince": "TX",
                "zipOrPostalCode": "78701",
                "country": "US"
            }
        }
    }))?)
}

/// Two decorations in one method at two locations that both allow it, or one at the first location.
fn decorations(blank: &types::CatalogProduct, index: usize) -> Result<Vec<Value>, BoxError> {
    let locations = &blank.decoration_locations;
    let shared = locations.iter().enumerate().find_map(|(i, first)| {
        first.decoration_methods.iter().find_map(|method| {
            let second = locations[i + 1..]
                .iter()
                .find(|l| l.decoration_methods.contains(method))?;
            Some((method, vec![first, second]))
        })
    });
    let (method, chosen) = match shared {
        Some(found) => found,
        None => {
            let first = locations.first().ok_or("a blank without locations")?;
            let method = first
                .decoration_methods
                .first()
                .ok_or("a location without methods")?;
            (method, vec![first])
        }
    };
    chosen
        .into_iter()
        .map(|location| {
            let name = location
                .decoration_location
                .as_deref()
                .ok_or("a location without a name")?;
            let width = location
                .physical_width
                .ok_or("a location without a width")?;
            let height = location
                .physical_height
                .ok_or("a location without a height")?;
            Ok(json!({
                "artworkId": format!("art_bench_{}", index % 4),
                "decorationLocation": name,
                "decorationMethod": method.as_str(),
                "physicalWidth": width / 2.0,
                "physicalHeight": height / 2.0,
                "horizontalOffsetFromCenter": 0,
                "verticalOffsetFromTop": 0
            }))
        })
        .collect()
}
