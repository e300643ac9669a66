//! Decoding one 100-order page of `GET /orders` into this crate's types, against decoding it into
//! `serde_json::Value`.
//!
//! The page is real emulator output: 100 orders with standard items (by SKU and by variant id), custom
//! items with one or two decorations, and orders moved along the fulfillment ladder (so some carry
//! tracking and timestamps), fetched once as raw bytes. Three decoders run on the same bytes:
//!
//! - `client_path`: `store_api_raw::types::OrderList`, then `store_api::model::Order::from` per item,
//!   exactly what `client.orders().list()` does;
//! - `typed_direct`: an envelope whose `items` are `store_api::model::Order` decoded by serde (through
//!   the wire type, `#[serde(from = "types::Order")]`);
//! - `value`: `serde_json::Value`.
//!
//! Run with `cargo bench -p store-api-tests --bench decode` (criterion), or `-- --quick` for a short run.
//! After criterion, a side-by-side loop times the decoders alternately in the same run and prints
//! `decode_ratio=` (client path ÷ Value) and friends as machine-readable lines.

use std::error::Error;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use serde::Deserialize;
use serde_json::{Value, json};
use store_api::model::Order;
use store_api::{Client, NewOrder, RateLimiter};
use store_api_fixtures::Emulator;
use store_api_fixtures::artwork::FakeResource;
use store_api_raw::types::OrderList;

type BoxError = Box<dyn Error + Send + Sync>;

/// Orders on the page (the largest page size).
const ORDERS: usize = 100;
/// A fake public image, so the store can hold an artwork for custom items.
const IMAGE_URL: &str = "https://cdn.decode-bench.example/logo.png";
const PNG: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, b'I', b'H', b'D', b'R',
];

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo test --benches` runs without `--bench`: criterion then runs each benchmark once, and the
    // side-by-side loop only checks that it works.
    let smoke_test = !args.iter().any(|a| a == "--bench");
    let rounds = if smoke_test {
        10
    } else if args.iter().any(|a| a == "--quick") {
        200
    } else {
        2_000
    };
    let page = fetch_page()?;
    check_decoders(&page)?;

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("decode_order_page");
    group.throughput(Throughput::Bytes(page.len() as u64));
    group.bench_function("client_path", |b| {
        b.iter(|| decode_client_path(black_box(&page)))
    });
    group.bench_function("typed_direct", |b| {
        b.iter(|| decode_typed_direct(black_box(&page)))
    });
    group.bench_function("value", |b| b.iter(|| decode_value(black_box(&page))));
    group.finish();
    criterion.final_summary();

    side_by_side(&page, rounds);
    Ok(())
}

// ---------------------------------------------------------------- the decoders

/// The client's own path (crates/store-api/src/resources.rs, `Listed for Order`): the generated list
/// envelope, whose orders carry money as decimals already.
fn decode_client_path(bytes: &[u8]) -> Result<Vec<Order>, serde_json::Error> {
    let list: OrderList = serde_json::from_slice(bytes)?;
    Ok(list.items)
}

/// The page envelope with domain orders decoded by serde directly.
#[derive(Debug, Deserialize)]
struct DomainPage {
    items: Vec<Order>,
    #[serde(rename = "totalItems")]
    _total_items: Option<i64>,
    #[serde(rename = "totalPages")]
    _total_pages: Option<i64>,
}

fn decode_typed_direct(bytes: &[u8]) -> Result<Vec<Order>, serde_json::Error> {
    serde_json::from_slice::<DomainPage>(bytes).map(|page| page.items)
}

fn decode_value(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(bytes)
}

/// Every decoder reads the whole page, and the two typed ones agree.
fn check_decoders(page: &[u8]) -> Result<(), BoxError> {
    let client_path = decode_client_path(page)?;
    let direct = decode_typed_direct(page)?;
    let value = decode_value(page)?;
    let value_items = value["items"].as_array().map_or(0, Vec::len);
    if client_path.len() != ORDERS || direct != client_path || value_items != ORDERS {
        return Err(format!(
            "decoders disagree: client path {}, direct {}, value {value_items} items",
            client_path.len(),
            direct.len()
        )
        .into());
    }
    let custom = client_path
        .iter()
        .flat_map(|o| &o.line_items)
        .filter(|item| item.is_custom)
        .count();
    let line_items: usize = client_path.iter().map(|o| o.line_items.len()).sum();
    println!(
        "page: {} bytes, {ORDERS} orders, {line_items} line items ({custom} custom)",
        page.len()
    );
    Ok(())
}

// ---------------------------------------------------------------- side by side

/// Times the decoders alternately, `rounds` times each, so they share the machine's noise.
fn side_by_side(page: &[u8], rounds: u32) {
    let mut client_path = Duration::ZERO;
    let mut direct = Duration::ZERO;
    let mut value = Duration::ZERO;
    for _ in 0..rounds {
        client_path += timed(|| drop(black_box(decode_client_path(black_box(page)))));
        direct += timed(|| drop(black_box(decode_typed_direct(black_box(page)))));
        value += timed(|| drop(black_box(decode_value(black_box(page)))));
    }
    let micros = |total: Duration| total.as_secs_f64() * 1e6 / f64::from(rounds);
    let mib_per_s = |total: Duration| {
        page.len() as f64 * f64::from(rounds) / total.as_secs_f64() / (1 << 20) as f64
    };
    println!();
    println!(
        "side by side, {rounds} rounds of a {}-byte page of {ORDERS} orders:",
        page.len()
    );
    for (name, total) in [
        ("client_path", client_path),
        ("typed_direct", direct),
        ("value", value),
    ] {
        println!(
            "  {name:<13} {:>9.1} µs/page  {:>7.1} MiB/s",
            micros(total),
            mib_per_s(total)
        );
    }
    println!("decode_client_path_us={:.1}", micros(client_path));
    println!("decode_typed_direct_us={:.1}", micros(direct));
    println!("decode_value_us={:.1}", micros(value));
    println!(
        "decode_ratio={:.3}",
        client_path.as_secs_f64() / value.as_secs_f64()
    );
    println!(
        "decode_ratio_direct={:.3}",
        direct.as_secs_f64() / value.as_secs_f64()
    );
}

fn timed(work: impl FnOnce()) -> Duration {
    let started = Instant::now();
    work();
    started.elapsed()
}

// ---------------------------------------------------------------- the page

/// Creates 100 varied orders on an emulator and returns the raw body of `GET /orders?limit=100`.
fn fetch_page() -> Result<Vec<u8>, BoxError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let emulator = Emulator::builder()
            .rate_limit(false)
            .network_downloads(false)
            .start()
            .await?;
        emulator
            .fake_hosts()
            .insert(IMAGE_URL, FakeResource::image(PNG))?;
        let store = emulator
            .active_store()
            .ok_or("the seed has no active store")?;
        let client = Client::builder()
            .base_url(emulator.base_url())
            .store_id(&store.id)
            .api_key(&store.api_key)
            .in_process_limiter(RateLimiter::with_rate(1_000, Duration::from_micros(100)))
            .build()?;
        let artwork = client.artworks().create("Logo", IMAGE_URL).await?;
        for index in 0..ORDERS {
            let order = client
                .orders()
                .create(&new_order(index, &artwork.id)?)
                .await?;
            // Spread the orders over the fulfillment ladder: later rungs carry tracking and dates.
            for _ in 0..index % 5 {
                if emulator.advance_order(&store.id, &order.id).is_err() {
                    break;
                }
            }
        }
        let url = format!(
            "{}/stores/{}/orders?limit={ORDERS}",
            emulator.base_url(),
            store.id
        );
        let body = reqwest::Client::new()
            .get(url)
            .header("x-api-key", &store.api_key)
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
        drop(client);
        emulator.shutdown().await;
        Ok(body.to_vec())
    })
}

/// Order `index`: one to three standard items, and every other order custom items too.
fn new_order(index: usize, artwork_id: &str) -> Result<NewOrder, serde_json::Error> {
    let mut items = vec![json!({ "sku": "AA-TEE-SUN-BLK-M", "quantity": 1 + index % 4 })];
    if index.is_multiple_of(3) {
        items.push(json!({ "productVariantId": "pv_aa_cap_blk_os", "quantity": 1 }));
    }
    if index % 4 == 1 {
        items.push(json!({ "sku": "AA-HOOD-MTN-BLK-M", "quantity": 2 }));
    }
    if index.is_multiple_of(2) {
        items.push(json!({
            "isCustom": true,
            "catalogProductVariantId": "cv_3001_blk_m",
            "quantity": 3,
            "decorations": [
                decoration(artwork_id, "front", "direct_to_garment", 10.0, 12.0),
                decoration(artwork_id, "back", "direct_to_garment", 11.5, 14.0),
            ]
        }));
    }
    if index % 6 == 3 {
        items.push(json!({
            "isCustom": true,
            "catalogProductVariantId": "cv_18500_nvy_xl",
            "quantity": 1,
            "decorations": [decoration(artwork_id, "left_chest", "embroidery", 3.0, 3.0)]
        }));
    }
    serde_json::from_value(json!({
        "externalOrderId": format!("decode-bench-{index:03}"),
        "orderedAt": "2026-07-14T09:30:00.000Z",
        "lineItems": items,
        "shippingAddress": {
            "firstName": "Ada",
            "lastName": "Lovelace",
            "email": "ada@example.com",
            "phone": "+1 555 0100",
            "address": {
                "streetAddress": "1 Main St",
                "apartmentOrSuite": "Apt 2",
                "cityOrTown": "Springfield",
                "stateOrProvince": "NY",
                "zipOrPostalCode": "12345",
                "country": "US"
            }
        }
    }))
}

fn decoration(artwork_id: &str, location: &str, method: &str, width: f64, height: f64) -> Value {
    json!({
        "artworkId": artwork_id,
        "decorationLocation": location,
        "decorationMethod": method,
        "physicalWidth": width,
        "physicalHeight": height,
        "horizontalOffsetFromCenter": 0,
        "verticalOffsetFromTop": 1
    })
}
