//! Throughput of the emulator under a small load generator: `GET /orders?limit=100` and `POST /orders`
//! over 16 concurrent keep-alive connections, each for a fixed time. The GET alternates in rounds with
//! its floor, a bare axum server on tokio answering the same page from memory under the same load, and
//! prints emulator ÷ floor for the same query asked again (`emulator_vs_floor_get`: the emulator
//! answers with the page it kept) and for a query that differs every time
//! (`emulator_vs_floor_get_written`: every page read off the indexes and written).
//!
//! Run with `cargo bench -p store-api-fixtures --bench throughput` (add `-- --quick`, or set
//! `BENCH_QUICK=1`, for 1 s per scenario instead of 5 s). Prints a table and machine-readable
//! `emulator_*=VALUE` lines. Targets are reported as PASS/MISS; the exit status is 0 either way, since
//! a shared machine is noisy.
//!
//! With `-- --target-url URL [--header 'Name: value']...` the same load generator (same connections,
//! warm-up and duration) sends `GET URL` to an external server instead, expecting 200, and prints
//! `target_get_*=VALUE` lines; `cargo xtask bench` uses it to measure another mock server of the spec
//! with the load generator that measures the emulator.

use std::error::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;

mod common;
use common::order_body;

type BoxError = Box<dyn Error + Send + Sync>;

/// Concurrent connections (and requests in flight) of the load generator.
const CONNECTIONS: usize = 16;
/// Orders in the store before the GET scenario.
const SEEDED_ORDERS: usize = 300;
/// The targets for `GET /orders` on a 2-core machine.
const GET_TARGET_RPS: f64 = 5_000.0;
const GET_TARGET_P99_MS: f64 = 5.0;
/// Emulator ÷ bare axum on the same page (issue 15).
const FLOOR_TARGET: f64 = 0.8;
/// Alternating rounds of the emulator and its floor. Many short rounds, and the median of their
/// ratios, so that a burst of load from elsewhere on a shared machine moves one round, not the figure.
const FLOOR_ROUNDS: u32 = 20;
/// Time to open the connections and warm up before each measured run.
const WARM_UP: Duration = Duration::from_millis(300);

fn main() -> Result<(), BoxError> {
    // reqwest under `rustls` (unified in from the workspace) needs a crypto provider before it builds a
    // client, and the Prism comparison builds one with no emulator started.
    store_api_raw::tls::install_crypto_provider();
    let options = Options::from_args(std::env::args().skip(1).collect())?;
    let quick =
        options.quick || std::env::var("BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let duration = Duration::from_secs(if quick { 1 } else { 5 });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match &options.target_url {
        Some(url) => runtime.block_on(run_external(url, &options.headers, duration)),
        None => runtime.block_on(run(duration, &options.filters)),
    }
}

/// The command line after `--`.
#[derive(Debug, Default)]
struct Options {
    quick: bool,
    /// Other arguments (cargo passes `--bench`) that are not flags select scenarios by substring of
    /// their metric name, e.g. `-- get` for profiling one of them.
    filters: Vec<String>,
    /// Load an external server at this URL instead of the emulator.
    target_url: Option<String>,
    /// `(name, value)` headers sent with every request to `target_url`.
    headers: Vec<(String, String)>,
}

impl Options {
    fn from_args(args: Vec<String>) -> Result<Options, BoxError> {
        let mut options = Options::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => {
                    (flag.to_owned(), Some(value.to_owned()))
                }
                _ => (arg.clone(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| args.next())
                    .ok_or(format!("{flag} needs a value"))
            };
            match flag.as_str() {
                "--quick" => options.quick = true,
                "--target-url" => options.target_url = Some(value()?),
                "--header" => {
                    let header = value()?;
                    let (name, value) = header
                        .split_once(':')
                        .ok_or(format!("--header {header:?} is not `Name: value`"))?;
                    options
                        .headers
                        .push((name.trim().to_owned(), value.trim().to_owned()));
                }
                _ if arg.starts_with("--") => {}
                _ => options.filters.push(arg),
            }
        }
        Ok(options)
    }
}

/// What one scenario measured.
#[derive(Debug, Default)]
struct Outcome {
    /// Latency of every request, sorted.
    latencies: Vec<Duration>,
    errors: usize,
    elapsed: Duration,
}

impl Outcome {
    /// Adds another run of the same scenario.
    fn merge(&mut self, other: Outcome) {
        self.latencies.extend(other.latencies);
        self.latencies.sort_unstable();
        self.errors += other.errors;
        self.elapsed += other.elapsed;
    }

    fn requests(&self) -> usize {
        self.latencies.len()
    }

    fn rps(&self) -> f64 {
        self.requests() as f64 / self.elapsed.as_secs_f64()
    }

    /// The latency below which `fraction` of the requests finished (nearest rank), in milliseconds.
    fn percentile_ms(&self, fraction: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let rank = (fraction * self.latencies.len() as f64).ceil() as usize;
        let index = rank.clamp(1, self.latencies.len()) - 1;
        self.latencies[index].as_secs_f64() * 1_000.0
    }
}

/// The middle value (the upper of the two middle ones for an even count, as the growth bench takes it).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Builds the `n`th request of a scenario.
type MakeRequest = Arc<dyn Fn(u64) -> reqwest::RequestBuilder + Send + Sync>;

/// Runs `CONNECTIONS` workers sending requests back to back for `duration`; a request counts as an
/// error unless it answers `expected` with a complete body.
async fn drive(make: MakeRequest, expected: u16, duration: Duration) -> Outcome {
    let sequence = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + duration;
    let workers: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let make = make.clone();
            let sequence = sequence.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(16 * 1024);
                let mut errors = 0;
                while Instant::now() < deadline {
                    let request = make(sequence.fetch_add(1, Ordering::Relaxed));
                    let sent = Instant::now();
                    let ok = match request.send().await {
                        Ok(response) => {
                            response.status().as_u16() == expected && response.bytes().await.is_ok()
                        }
                        Err(_) => false,
                    };
                    latencies.push(sent.elapsed());
                    errors += usize::from(!ok);
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut outcome = Outcome {
        latencies: Vec::new(),
        errors: 0,
        elapsed: Duration::ZERO,
    };
    for worker in workers {
        match worker.await {
            Ok((latencies, errors)) => {
                outcome.latencies.extend(latencies);
                outcome.errors += errors;
            }
            Err(_) => outcome.errors += 1,
        }
    }
    outcome.elapsed = started.elapsed();
    outcome.latencies.sort_unstable();
    outcome
}

async fn seed_orders(
    client: &reqwest::Client,
    orders_url: &str,
    key: &str,
) -> Result<(), BoxError> {
    let created: Vec<Result<u16, reqwest::Error>> = futures::stream::iter(0..SEEDED_ORDERS as u64)
        .map(|n| {
            let request = client
                .post(orders_url)
                .header("x-api-key", key)
                .json(&order_body(&format!("bench-seed-{n}"), n));
            async move { request.send().await.map(|r| r.status().as_u16()) }
        })
        .buffer_unordered(CONNECTIONS)
        .collect()
        .await;
    for status in created {
        let status = status?;
        if status != 201 {
            return Err(format!("seeding an order answered {status}").into());
        }
    }
    Ok(())
}

struct Row {
    label: &'static str,
    metric: &'static str,
    outcome: Outcome,
    /// Requests per second and p99 (ms) to meet, if the issue sets any.
    target: Option<(f64, f64)>,
}

async fn run(duration: Duration, filters: &[String]) -> Result<(), BoxError> {
    let (emulator, store) = common::quiet_emulator().await?;
    let orders_url = format!("{}/stores/{}/orders", emulator.base_url(), store.id);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CONNECTIONS)
        .build()?;
    seed_orders(&client, &orders_url, &store.api_key).await?;

    let list_url = format!("{orders_url}?limit=100");
    let page = client
        .get(&list_url)
        .header("x-api-key", &store.api_key)
        .send()
        .await?
        .bytes()
        .await?;
    let get: MakeRequest = {
        let (client, url, key) = (client.clone(), list_url.clone(), store.api_key.clone());
        Arc::new(move |_| client.get(&url).header("x-api-key", &key))
    };
    let post = |prefix: &'static str| -> MakeRequest {
        let (client, url, key) = (client.clone(), orders_url.clone(), store.api_key.clone());
        Arc::new(move |n| {
            client
                .post(&url)
                .header("x-api-key", &key)
                .json(&order_body(&format!("{prefix}-{n}"), n))
        })
    };

    let selected =
        |metric: &str| filters.is_empty() || filters.iter().any(|f| metric.contains(f.as_str()));
    let mut rows = Vec::new();
    let mut floor_ratios = None;
    if selected("emulator_get_orders") {
        // The floor: axum on tokio answering the same page from memory, loaded by the same generator.
        // The emulator's two GETs and the floor alternate in short rounds, so all three see the same
        // share of a busy machine's noise. The first GET asks the same query every time (a poller: the
        // emulator answers with the page it kept); the second adds a distinct `sample=N` parameter,
        // which the emulator ignores but which misses the kept page, so every page is read off the
        // indexes and written again.
        let (floor_url, floor_server) = bare_server(page.clone()).await?;
        let floor: MakeRequest = {
            let (client, key) = (client.clone(), store.api_key.clone());
            Arc::new(move |_| client.get(&floor_url).header("x-api-key", &key))
        };
        let fresh: MakeRequest = {
            let (client, url, key) = (client.clone(), list_url.clone(), store.api_key.clone());
            Arc::new(move |n| {
                client
                    .get(format!("{url}&sample={n}"))
                    .header("x-api-key", &key)
            })
        };
        drive(get.clone(), 200, WARM_UP).await;
        drive(floor.clone(), 200, WARM_UP).await;
        drive(fresh.clone(), 200, WARM_UP).await;
        let round = duration / FLOOR_ROUNDS;
        let (mut kept, mut bare, mut written) =
            (Outcome::default(), Outcome::default(), Outcome::default());
        let (mut kept_ratios, mut written_ratios) = (Vec::new(), Vec::new());
        for _ in 0..FLOOR_ROUNDS {
            let kept_round = drive(get.clone(), 200, round).await;
            let bare_round = drive(floor.clone(), 200, round).await;
            let written_round = drive(fresh.clone(), 200, round).await;
            kept_ratios.push(kept_round.rps() / bare_round.rps());
            written_ratios.push(written_round.rps() / bare_round.rps());
            kept.merge(kept_round);
            bare.merge(bare_round);
            written.merge(written_round);
        }
        floor_server.abort();
        floor_ratios = Some((median(&mut kept_ratios), median(&mut written_ratios)));
        rows.push(Row {
            label: "GET /orders?limit=100",
            metric: "emulator_get_orders",
            outcome: kept,
            target: Some((GET_TARGET_RPS, GET_TARGET_P99_MS)),
        });
        rows.push(Row {
            label: "  … every page written",
            metric: "emulator_get_orders_written",
            outcome: written,
            target: Some((GET_TARGET_RPS, GET_TARGET_P99_MS)),
        });
        rows.push(Row {
            label: "same bytes, bare axum",
            metric: "emulator_floor_get",
            outcome: bare,
            target: None,
        });
    }
    // After the GETs: the orders it creates would change the store the GETs list.
    if selected("emulator_post_orders") {
        drive(post("bench-warm-up"), 201, WARM_UP).await;
        rows.push(Row {
            label: "POST /orders",
            metric: "emulator_post_orders",
            outcome: drive(post("bench-post"), 201, duration).await,
            target: None,
        });
    }

    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    println!("store-api-fixtures emulator throughput");
    println!(
        "build: {}; emulator in-process on 127.0.0.1, rate limit off",
        if cfg!(debug_assertions) {
            "DEBUG (numbers not meaningful)"
        } else {
            "release"
        }
    );
    println!(
        "load: {CONNECTIONS} concurrent keep-alive connections (tokio + reqwest), {} s per scenario after a {} ms warm-up",
        duration.as_secs(),
        WARM_UP.as_millis()
    );
    println!(
        "note: the load generator runs in the same process and shares the machine's {cores} core(s) with the server,"
    );
    println!("      so these numbers are lower bounds of what the server alone sustains");
    println!(
        "data: store_alpha with {SEEDED_ORDERS} seeded orders; a GET page of 100 orders is {} bytes",
        page.len()
    );
    println!();
    println!(
        "{:<24} {:>9} {:>10} {:>8} {:>8} {:>7}  {:<26} result",
        "scenario", "requests", "req/s", "p50 ms", "p99 ms", "errors", "target"
    );
    for row in &rows {
        let o = &row.outcome;
        let (target, verdict) = match row.target {
            Some((rps, p99)) => {
                let met = o.rps() >= rps && o.percentile_ms(0.99) < p99 && o.errors == 0;
                (
                    format!(">= {rps:.0} req/s, p99 < {p99} ms"),
                    if met { "PASS" } else { "MISS" },
                )
            }
            None => ("none".to_owned(), "-"),
        };
        println!(
            "{:<24} {:>9} {:>10.0} {:>8.2} {:>8.2} {:>7}  {:<26} {verdict}",
            row.label,
            o.requests(),
            o.rps(),
            o.percentile_ms(0.50),
            o.percentile_ms(0.99),
            o.errors,
            target
        );
    }
    println!();
    if let Some((kept, written)) = floor_ratios {
        println!(
            "emulator ÷ bare axum answering the same bytes, the median of {FLOOR_ROUNDS} alternating rounds:"
        );
        println!("  the same query (the kept page): {kept:.3} (target >= {FLOOR_TARGET})");
        println!("  every page written:             {written:.3} (reported)");
        println!();
        println!("emulator_floor_rounds={FLOOR_ROUNDS}");
        println!("emulator_vs_floor_get={kept:.4}");
        println!("emulator_vs_floor_get_written={written:.4}");
    }
    println!("emulator_get_orders_bytes={}", page.len());
    for row in &rows {
        let (o, m) = (&row.outcome, row.metric);
        println!("{m}_rps={:.0}", o.rps());
        println!("{m}_p50_ms={:.2}", o.percentile_ms(0.50));
        println!("{m}_p99_ms={:.2}", o.percentile_ms(0.99));
        println!("{m}_errors={}", o.errors);
    }
    emulator.shutdown().await;
    Ok(())
}

/// Serves `page` at `GET /orders` from memory with axum on tokio (the stack the emulator runs on, without
/// the emulator): the floor its throughput is measured against.
async fn bare_server(
    page: bytes::Bytes,
) -> Result<(String, tokio::task::JoinHandle<()>), BoxError> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/orders", listener.local_addr()?);
    let app = axum::Router::new().route(
        "/orders",
        axum::routing::get(move || {
            let page = page.clone();
            async move {
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    page,
                )
            }
        }),
    );
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((url, task))
}

/// Loads `GET url` on an external server with the same generator and prints `target_get_*` lines.
async fn run_external(
    url: &str,
    headers: &[(String, String)],
    duration: Duration,
) -> Result<(), BoxError> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CONNECTIONS)
        .build()?;
    let get: MakeRequest = {
        let (client, url, headers) = (client.clone(), url.to_owned(), headers.to_vec());
        Arc::new(move |_| {
            headers
                .iter()
                .fold(client.get(&url), |request, (name, value)| {
                    request.header(name, value)
                })
        })
    };
    let probe = get(0).send().await?;
    let status = probe.status().as_u16();
    let body = probe.bytes().await?;
    if status != 200 {
        return Err(format!(
            "GET {url} answered {status}: {}",
            String::from_utf8_lossy(&body)
        )
        .into());
    }
    drive(get.clone(), 200, WARM_UP).await;
    let outcome = drive(get, 200, duration).await;
    println!("external server throughput: GET {url}");
    println!(
        "load: {CONNECTIONS} concurrent keep-alive connections (tokio + reqwest), {} s after a {} ms warm-up; \
         the answer is {} bytes",
        duration.as_secs(),
        WARM_UP.as_millis(),
        body.len()
    );
    println!(
        "{:>9} requests {:>10.0} req/s  p50 {:.2} ms  p99 {:.2} ms  {} errors",
        outcome.requests(),
        outcome.rps(),
        outcome.percentile_ms(0.50),
        outcome.percentile_ms(0.99),
        outcome.errors
    );
    println!("target_get_rps={:.0}", outcome.rps());
    println!("target_get_p50_ms={:.2}", outcome.percentile_ms(0.50));
    println!("target_get_p99_ms={:.2}", outcome.percentile_ms(0.99));
    println!("target_get_errors={}", outcome.errors);
    println!("target_get_bytes={}", body.len());
    Ok(())
}
