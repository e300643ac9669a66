//! The start a user's test feels: `Emulator::start()` (the built-in seed, the rate limit on), one
//! `GET /status`, drop; against its floor, a bare axum server started on a free loopback port, one GET,
//! drop. Both sides alternate in rounds in one process, their requests sent by one shared HTTP client
//! (a new connection each time: each server listens on a new port), so the figure is the emulator's own
//! cost. It prints the median of the rounds' emulator ÷ bare ratios (`emulator_start_vs_bare`) and each
//! side's median time per start.
//!
//! The figure is about a user's tests, which run in a debug build, so `cargo xtask bench` builds this
//! bench with the dev profile: `cargo bench --profile dev -p store-api-fixtures --bench start` (add
//! `-- --quick`, or set `BENCH_QUICK=1`, for fewer rounds). Targets are reported as PASS/MISS; the exit
//! status is 0 either way, since a shared machine is noisy.

use std::error::Error;
use std::time::{Duration, Instant};

use store_api_fixtures::Emulator;

type BoxError = Box<dyn Error + Send + Sync>;

/// Emulator ÷ bare axum, start + one request + drop (issue 25).
const TARGET: f64 = 2.0;
/// Starts of each side per round: enough that a round is not one scheduler hiccup.
const STARTS_PER_ROUND: u32 = 5;
/// Alternating rounds; the figure is the median of their ratios, so a burst of load from elsewhere on
/// a shared machine moves a round, not the figure.
const ROUNDS: u32 = 40;
const QUICK_ROUNDS: u32 = 20;
/// Rounds run and thrown away first (lazy statics, the allocator, the first connections).
const WARM_UP_ROUNDS: u32 = 2;

fn main() -> Result<(), BoxError> {
    let quick = std::env::args().any(|arg| arg == "--quick")
        || std::env::var("BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let rounds = if quick { QUICK_ROUNDS } else { ROUNDS };
    // A test's runtime: `#[tokio::test]` is a current-thread runtime.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(rounds))
}

async fn run(rounds: u32) -> Result<(), BoxError> {
    store_api_raw::tls::install_crypto_provider();
    // One client for both sides, built once: what is measured is each server's start, one answer and
    // its drop. No idle connection is kept: every server it spoke to is gone.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()?;
    let (mut emulator_times, mut bare_times, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..WARM_UP_ROUNDS + rounds {
        let emulator = time(STARTS_PER_ROUND, || emulator_once(&http)).await?;
        let bare = time(STARTS_PER_ROUND, || bare_once(&http)).await?;
        if round >= WARM_UP_ROUNDS {
            ratios.push(emulator.as_secs_f64() / bare.as_secs_f64());
            emulator_times.push(emulator / STARTS_PER_ROUND);
            bare_times.push(bare / STARTS_PER_ROUND);
        }
    }
    let ratio = median(&mut ratios);
    let emulator_ms = median_ms(&mut emulator_times);
    let bare_ms = median_ms(&mut bare_times);
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "start + GET /status + drop, {profile} build, median of {rounds} alternating rounds of {STARTS_PER_ROUND} starts each:"
    );
    println!("  emulator (built-in seed, rate limit on)  {emulator_ms:>7.3} ms");
    println!("  bare axum                                {bare_ms:>7.3} ms");
    let verdict = if ratio <= TARGET { "PASS" } else { "MISS" };
    println!(
        "  emulator ÷ bare                          {ratio:>7.2}   (target ≤ {TARGET}) {verdict}"
    );
    println!("emulator_start_vs_bare={ratio:.3}");
    println!("emulator_start_ms={emulator_ms:.3}");
    println!("bare_start_ms={bare_ms:.3}");
    println!("emulator_start_rounds={rounds}");
    println!("emulator_start_debug={}", u8::from(cfg!(debug_assertions)));
    Ok(())
}

/// Wall time of `times` runs of `once`, one after the other.
async fn time<F, Fut>(times: u32, mut once: F) -> Result<Duration, BoxError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), BoxError>>,
{
    let started = Instant::now();
    for _ in 0..times {
        once().await?;
    }
    Ok(started.elapsed())
}

/// What a user's test does: start, one request, drop.
async fn emulator_once(http: &reqwest::Client) -> Result<(), BoxError> {
    let emulator = Emulator::start().await?;
    let store = emulator
        .store("store_alpha")
        .ok_or("store_alpha is not in the built-in seed")?;
    let status = http
        .get(format!(
            "{}/stores/{}/status",
            emulator.base_url(),
            store.id
        ))
        .header("x-api-key", store.api_key)
        .send()
        .await?
        .status();
    if !status.is_success() {
        return Err(format!("the emulator answered {status}").into());
    }
    drop(emulator);
    Ok(())
}

/// The floor: a bare axum server on tokio answering one route, started, asked once and dropped.
async fn bare_once(http: &reqwest::Client) -> Result<(), BoxError> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/status", listener.local_addr()?);
    let app = axum::Router::new().route(
        "/status",
        axum::routing::get(|| async {
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                r#"{"status":"ok"}"#,
            )
        }),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await;
    });
    let status = http.get(url).send().await?.status();
    if !status.is_success() {
        return Err(format!("the bare server answered {status}").into());
    }
    // As the emulator's drop does: signal the stop, do not wait for it.
    let _ = stop.send(());
    drop(server);
    Ok(())
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn median_ms(values: &mut [Duration]) -> f64 {
    values.sort();
    values
        .get(values.len() / 2)
        .map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
}
