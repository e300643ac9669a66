//! How the emulator's `GET /orders?limit=100` grows with the store: the default list, the list filtered
//! by `status`, and the `externalOrderId` lookup (the exactly-once check), on one store grown to 1,000,
//! 10,000 and 100,000 orders (1,000 and 10,000 with `--quick`), and the emulator's memory per order.
//!
//! Run with `cargo bench -p store-api-fixtures --bench growth` (add `-- --quick`, or set
//! `BENCH_QUICK=1`). Orders are created through the emulator's in-process API (the same rules as
//! `POST /orders`, without HTTP), so seeding is fast; one emulator per size. Every list is then timed
//! over real HTTP on 127.0.0.1, one request at a time on warm keep-alive connections, the sizes in
//! turn, and its median reported. Every request carries its own `sample=N` parameter, which the
//! emulator ignores but which misses the page it keeps for a repeated query: the figures measure the
//! indexes, not that kept page. Prints
//! `growth_*=VALUE` lines: the median per size, the ratio of the largest size to the smallest (the
//! figure with a target), and RSS growth ÷ orders.

use std::error::Error;
use std::time::{Duration, Instant};

use store_api_fixtures::{AppAction, Emulator};
use store_api_raw::types;

mod common;

type BoxError = Box<dyn Error + Send + Sync>;

/// Store sizes of a full run and of a quick one.
const SIZES: &[usize] = &[1_000, 10_000, 100_000];
const QUICK_SIZES: &[usize] = &[1_000, 10_000];
/// Timed requests per list and size (the median of these is the figure).
const SAMPLES: usize = 61;
/// Untimed requests first, so the connection and caches are warm.
const WARM_UP: usize = 5;
/// The external id the lookup asks for: an order that exists at every size.
const LOOKED_UP: &str = "growth-500";

/// The three lists: metric name, what it is, and its query.
const LISTS: [(&str, &str, &str); 3] = [
    ("default", "GET /orders?limit=100", "limit=100"),
    (
        "status",
        "… &filter[status]=pending",
        "limit=100&filter%5Bstatus%5D=pending",
    ),
    (
        "external",
        "… &filter[externalOrderId]=…",
        "limit=100&filter%5BexternalOrderId%5D=growth-500",
    ),
];

fn main() -> Result<(), BoxError> {
    // reqwest under `rustls` (unified in from the workspace) needs a crypto provider.
    store_api_raw::tls::install_crypto_provider();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick")
        || std::env::var("BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let sizes = if quick { QUICK_SIZES } else { SIZES };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(sizes))
}

async fn run(sizes: &[usize]) -> Result<(), BoxError> {
    // One emulator per size, all in this process: the samples of every size are then taken in turn,
    // so a busy machine's noise falls on all of them alike instead of on whichever size ran last.
    let client = reqwest::Client::new();
    let mut stores = Vec::new();
    let mut rss_per_order = f64::NAN;
    for &size in sizes {
        let (emulator, store) = common::quiet_emulator().await?;
        let before = rss_bytes()?;
        let started = Instant::now();
        seed(&emulator, &store.id, size)?;
        let seeding = started.elapsed();
        let after = rss_bytes()?;
        rss_per_order = after.saturating_sub(before) as f64 / size as f64;
        eprintln!(
            "{size} orders: seeded in {:.1} s; RSS grew {:.1} MiB",
            seeding.as_secs_f64(),
            after.saturating_sub(before) as f64 / 1_048_576.0
        );
        let orders_url = format!("{}/stores/{}/orders", emulator.base_url(), store.id);
        let urls: Vec<String> = LISTS
            .iter()
            .map(|(_, _, query)| format!("{orders_url}?{query}"))
            .collect();
        stores.push((emulator, store.api_key, urls));
    }

    // latencies[list][size index]
    let mut latencies = vec![vec![Vec::with_capacity(SAMPLES); sizes.len()]; LISTS.len()];
    for round in 0..WARM_UP + SAMPLES {
        for (s, (_, key, urls)) in stores.iter().enumerate() {
            for (l, url) in urls.iter().enumerate() {
                let url = format!("{url}&sample={round}");
                let elapsed = timed_get(&client, &url, key).await?;
                if round >= WARM_UP {
                    latencies[l][s].push(elapsed);
                }
            }
        }
    }
    let medians: Vec<Vec<f64>> = latencies
        .into_iter()
        .map(|per_size| per_size.into_iter().map(median_ms).collect())
        .collect();

    println!("store-api-fixtures emulator: GET /orders cost against the store's size");
    println!(
        "build: {}; emulator in-process on 127.0.0.1, rate limit off; median of {SAMPLES} sequential \
         requests per list and size, the sizes taken in turn, after {WARM_UP} untimed",
        if cfg!(debug_assertions) {
            "DEBUG (numbers not meaningful)"
        } else {
            "release"
        }
    );
    println!(
        "data: store_alpha; one order in two pending, one in four on hold, one in four canceled"
    );
    println!();
    print!("{:<32}", "list (median ms)");
    for size in sizes {
        print!(" {size:>10}");
    }
    println!(" {:>10}", "ratio");
    for (i, (_, label, _)) in LISTS.iter().enumerate() {
        print!("{label:<32}");
        for value in &medians[i] {
            print!(" {value:>10.3}");
        }
        println!(" {:>10.2}", ratio(&medians[i]));
    }
    println!();
    for (i, (name, _, _)) in LISTS.iter().enumerate() {
        for (size, value) in sizes.iter().zip(&medians[i]) {
            println!("growth_{name}_ms_{size}={value:.4}");
        }
        println!("growth_{name}_ratio={:.3}", ratio(&medians[i]));
    }
    println!("growth_rss_bytes_per_order={rss_per_order:.0}");
    for (emulator, _, _) in stores {
        emulator.shutdown().await;
    }
    Ok(())
}

/// The largest size's median ÷ the smallest's.
fn ratio(medians: &[f64]) -> f64 {
    match (medians.first(), medians.last()) {
        (Some(first), Some(last)) if *first > 0.0 => last / first,
        _ => f64::NAN,
    }
}

/// Grows the store to `size` orders through the emulator's own API: one in four put on hold, one in
/// four canceled, so the status filter matches half the store.
fn seed(emulator: &Emulator, store_id: &str, size: usize) -> Result<(), BoxError> {
    for n in emulator.order_count(store_id)..size {
        let n = n as u64;
        let request: types::CreateOrderRequest =
            serde_json::from_value(common::order_body(&format!("growth-{n}"), n))?;
        let order = emulator.create_order_in_app(store_id, request)?;
        let action = match n % 4 {
            1 => AppAction::Hold,
            2 => AppAction::Cancel,
            _ => continue,
        };
        emulator.app_action(store_id, &order.id, action)?;
    }
    Ok(())
}

/// The time of one `GET url` answered 200 with its whole body (the lookup checked to find its order).
async fn timed_get(client: &reqwest::Client, url: &str, key: &str) -> Result<Duration, BoxError> {
    let sent = Instant::now();
    let response = client.get(url).header("x-api-key", key).send().await?;
    let status = response.status();
    let body = response.bytes().await?;
    let elapsed = sent.elapsed();
    if status != 200 {
        let body = String::from_utf8_lossy(&body);
        return Err(format!("GET {url} answered {status}: {body}").into());
    }
    if url.ends_with(LOOKED_UP) {
        let page: serde_json::Value = serde_json::from_slice(&body)?;
        if page["totalItems"] != 1 {
            return Err(format!("the lookup of {LOOKED_UP} found {}", page["totalItems"]).into());
        }
    }
    Ok(elapsed)
}

/// The median of `samples`, in milliseconds.
fn median_ms(mut samples: Vec<Duration>) -> f64 {
    samples.sort_unstable();
    samples
        .get(samples.len() / 2)
        .map_or(f64::NAN, |d| d.as_secs_f64() * 1_000.0)
}

/// The process's resident memory (`VmRSS` of `/proc/self/status`), in bytes.
fn rss_bytes() -> Result<u64, BoxError> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .ok_or("no VmRSS line in /proc/self/status")?;
    Ok(kib * 1024)
}
