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
//! For diagnosis it also times the same order against the same snapshot with its lookups indexed by id
//! (`validator_indexed_us_per_order`): the difference is what `StoreSnapshot`'s linear scans cost.
//!
//! Run with `cargo bench -p store-api --bench validator` (add `-- --quick` for a short run; without
//! `--bench`, as under `cargo test --benches`, a few rounds as a smoke test). Prints machine-readable
//! `validator_*=VALUE` lines; `cargo xtask bench` reads them.

use std::collections::HashMap;
use std::error::Error;
use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use store_api::validate::{OrderContext, validate_order};
use store_api::{Client, NewOrder, RateLimiter, StoreSnapshot};
use store_api_fixtures::Emulator;
use store_api_raw::types;

type BoxError = Box<dyn Error + Send + Sync>;

/// Line items of the order.
const LINE_ITEMS: usize = 50;
/// Validations per timed batch.
const BATCH: u32 = 1_000;
/// The target.
const TARGET_ORDERS_PER_SECOND: f64 = 100_000.0;

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

    let indexed = Indexed::new(&snapshot);
    if validate_order(&order, &indexed).is_err() {
        return Err("the indexed snapshot disagrees with the snapshot".into());
    }
    let validate = || {
        validate_order(black_box(&order), black_box(&snapshot)).map_or(0, |r| r.line_items.len())
    };
    let validate_indexed =
        || validate_order(black_box(&order), black_box(&indexed)).map_or(0, |r| r.line_items.len());
    for _ in 0..rounds.min(20) {
        batch(&validate);
        batch(&validate_indexed);
    }
    // The diagnostic side alternates with the measured one, so both see the same machine noise.
    let mut total = Duration::ZERO;
    let mut best = Duration::MAX;
    let mut indexed_total = Duration::ZERO;
    for round in 0..rounds {
        if round % 2 == 1 {
            indexed_total += batch(&validate_indexed);
        }
        let elapsed = batch(&validate);
        total += elapsed;
        best = best.min(elapsed);
        if round % 2 == 0 {
            indexed_total += batch(&validate_indexed);
        }
    }
    let indexed_us = indexed_total.as_secs_f64() * 1e6 / f64::from(rounds) / f64::from(BATCH);

    let us_per_order = total.as_secs_f64() * 1e6 / f64::from(rounds) / f64::from(BATCH);
    let best_us = best.as_secs_f64() * 1e6 / f64::from(BATCH);
    let orders_per_second = 1e6 / us_per_order;
    let verdict = if orders_per_second >= TARGET_ORDERS_PER_SECOND {
        "PASS"
    } else {
        "MISS"
    };
    println!(
        "validate_order: {LINE_ITEMS} custom line items, {decorations} decorations, against a snapshot of \
         {} blanks ({variants} variants) and {} products; {rounds} rounds of {BATCH}, one thread",
        snapshot.catalog().len(),
        snapshot.products().len()
    );
    println!("  mean      {us_per_order:>9.3} µs/order");
    println!("  best batch {best_us:>8.3} µs/order");
    println!(
        "  rate      {orders_per_second:>9.0} orders/s  target >= {TARGET_ORDERS_PER_SECOND:.0}  {verdict}"
    );
    println!(
        "  indexed   {indexed_us:>9.3} µs/order  (same snapshot, lookups by hash map: diagnosis only)"
    );
    println!("validator_us_per_order={us_per_order:.3}");
    println!("validator_best_us_per_order={best_us:.3}");
    println!("validator_orders_per_sec={orders_per_second:.0}");
    println!("validator_indexed_us_per_order={indexed_us:.3}");
    println!("validator_line_items={LINE_ITEMS}");
    println!("validator_decorations={decorations}");
    Ok(())
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
            .rate_limiter(RateLimiter::with_rate(1_000, Duration::from_micros(100)))
            .build()?;
        let shared = client.store_snapshot().await?;
        let snapshot = StoreSnapshot::new(shared.catalog().to_vec(), shared.products().to_vec());
        drop(client);
        emulator.shutdown().await;
        Ok(snapshot)
    })
}

/// The snapshot with its three lookups indexed by id; artworks are treated as `StoreSnapshot` does.
struct Indexed<'a> {
    variants: HashMap<&'a str, (&'a types::Product, &'a types::ProductVariant)>,
    skus: HashMap<&'a str, (&'a types::Product, &'a types::ProductVariant)>,
    catalog: HashMap<&'a str, (&'a types::CatalogProduct, &'a types::CatalogVariant)>,
}

impl<'a> Indexed<'a> {
    fn new(snapshot: &'a StoreSnapshot) -> Indexed<'a> {
        let product_variants = || {
            snapshot
                .products()
                .iter()
                .flat_map(|p| p.variants.iter().map(move |v| (p, v)))
        };
        Indexed {
            variants: product_variants()
                .map(|(p, v)| (v.id.as_str(), (p, v)))
                .collect(),
            skus: product_variants()
                .filter_map(|(p, v)| Some((v.sku.as_deref()?, (p, v))))
                .collect(),
            catalog: snapshot
                .catalog()
                .iter()
                .flat_map(|c| c.variants.iter().map(move |v| (v.id.as_str(), (c, v))))
                .collect(),
        }
    }
}

impl OrderContext for Indexed<'_> {
    fn product_variant(&self, id: &str) -> Option<(&types::Product, &types::ProductVariant)> {
        self.variants.get(id).copied()
    }

    fn product_variant_by_sku(
        &self,
        sku: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        self.skus.get(sku).copied()
    }

    fn catalog_variant(
        &self,
        id: &str,
    ) -> Option<(&types::CatalogProduct, &types::CatalogVariant)> {
        self.catalog.get(id).copied()
    }

    fn artwork_exists(&self, _artwork_id: &str) -> bool {
        true
    }
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
