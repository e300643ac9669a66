//! One store's rate limit shared by several OS processes through Redis (`RedisLimiter`).
//!
//! This executable is both the conductor and its replicas: run normally it starts a private
//! `redis-server` and the emulator with the service's limit (burst 10, then 2 requests/s), then runs
//! copies of itself (`SHARED_LIMIT_CHILD=1`), each with 8 tokio tasks calling `GET /status` on one
//! store, all starting at the same instant. Three runs:
//!
//! 1. `shared`: every replica uses a `RedisLimiter` on the same Redis. Figures: 429 count (target 0) and
//!    wall time ÷ the theoretical minimum `(requests − 10) / 2` s (target ≤ 1.05).
//! 2. `unshared`: every replica uses its own in-process limiter (today's default). Figures: 429 count and
//!    the ratio, for comparison.
//! 3. `restart`: as `shared`, with Redis killed at 40% of the theoretical minimum and started again
//!    (empty) a second later; the replicas fall back to `1 / replicas` of the limit meanwhile
//!    (`RedisLimiterBuilder::replicas`). Figures: 429 count (target 0) and the ratio.
//! 4. `cluster`: as `shared`, on a private Redis Cluster of 3 primaries and 3 replicas (the replicas
//!    given its nodes as seeds). Figures: 429 count (target 0) and the ratio (target ≤ 1.05).
//! 5. `failover`: as `cluster`, with the primary holding the store's keys killed (SIGKILL) at 40% of
//!    the theoretical minimum; its replica takes over within seconds (node timeout 1 s), the replicas
//!    fall back meanwhile. Figures: 429 count (target 0), the ratio, and how long the slot had no
//!    primary.
//!
//! 429s are counted in each replica by wrapping its limiter: the transport calls `pause_for` for a 429
//! and for nothing else. Full size: 4 processes × 8 tasks × 4 calls (128 requests, about 60 s a run);
//! `--quick` (or `BENCH_QUICK=1`, or without `--bench` as `cargo test --benches` runs it): 4 × 8 × 2
//! (64 requests, about 27 s a run), without the `unshared` run (its figures are a comparison, with no
//! target): CI runs the quick mode, and at the service's 2 requests a second the runs' length is the
//! step's whole cost. Not fewer calls: with one call a task, every task asks the limiter at the start
//! and none while Redis is down, so the restart and failover runs would prove nothing. Prints
//! `shared_limit_*=VALUE` lines for `cargo xtask bench`.
//! `SHARED_LIMIT_MODES=cluster,failover` (say) runs only those runs.

use std::error::Error;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use store_api::{Client, Limiter, LimiterFuture, RateLimiter};
use store_api_fixtures::Emulator;
use store_api_redis::RedisLimiter;
use store_api_redis::testing::{self, RedisCluster, RedisServer};

type BoxError = Box<dyn Error + Send + Sync>;

const PROCESSES: u32 = 4;
const TASKS: u32 = 8;
const BURST: f64 = 10.0;
const PER_SECOND: f64 = 2.0;
const TARGET_RATIO: f64 = 1.05;

fn main() -> Result<(), BoxError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    if std::env::var("SHARED_LIMIT_CHILD").is_ok() {
        return runtime.block_on(child());
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick")
        || std::env::var("BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
        || !args.iter().any(|a| a == "--bench");
    let calls = if quick { 2 } else { 4 };
    runtime.block_on(conduct(calls, quick))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Shared,
    Unshared,
    Restart,
    Cluster,
    Failover,
}

impl Mode {
    const ALL: [Mode; 5] = [
        Mode::Shared,
        Mode::Unshared,
        Mode::Restart,
        Mode::Cluster,
        Mode::Failover,
    ];

    fn name(self) -> &'static str {
        match self {
            Mode::Shared => "shared",
            Mode::Unshared => "unshared",
            Mode::Restart => "restart",
            Mode::Cluster => "cluster",
            Mode::Failover => "failover",
        }
    }

    fn on_cluster(self) -> bool {
        matches!(self, Mode::Cluster | Mode::Failover)
    }

    /// When Redis is hit, as a fraction of the theoretical minimum.
    fn fault_at(self) -> Option<f64> {
        matches!(self, Mode::Restart | Mode::Failover).then_some(0.4)
    }
}

/// The Redis of the runs: one server, and a cluster started for the runs that need it.
struct Backends {
    server: RedisServer,
    cluster: Option<RedisCluster>,
}

#[derive(Debug, Default)]
struct Run {
    requests: u64,
    status_429: u64,
    errors: u64,
    fallback: u64,
    wall: Duration,
    /// How long the store's slot had no primary (failover run).
    failover: Option<Duration>,
}

impl Run {
    fn minimum(&self) -> f64 {
        ((self.requests - self.status_429) as f64 - BURST).max(1.0) / PER_SECOND
    }

    fn ratio(&self) -> f64 {
        self.wall.as_secs_f64() / self.minimum()
    }
}

async fn conduct(calls: u32, quick: bool) -> Result<(), BoxError> {
    let Some(server) = RedisServer::start()? else {
        // Loud message already printed; nothing to measure.
        println!("shared_limit_skipped=1");
        return Ok(());
    };
    let mut backends = Backends {
        server,
        cluster: None,
    };
    let emulator = Emulator::builder()
        .rate_limit(true)
        .network_downloads(false)
        .start()
        .await?;
    let mut results = Vec::new();
    // `SHARED_LIMIT_MODES=restart` (say) runs only some of the runs, for a diagnosis.
    let only = std::env::var("SHARED_LIMIT_MODES").unwrap_or_default();
    for mode in Mode::ALL {
        if !only.is_empty() && !only.split(',').any(|m| m == mode.name()) {
            continue;
        }
        if quick && mode == Mode::Unshared {
            continue;
        }
        if mode.on_cluster() && backends.cluster.is_none() {
            backends.cluster = Some(RedisCluster::start()?.ok_or("redis-server is missing")?);
        }
        // Stores are independent buckets on the emulator: give each run a full one by waiting it out.
        tokio::time::sleep(Duration::from_secs(6)).await;
        let run = run(mode, calls, &emulator, &mut backends).await?;
        eprintln!(
            "{:>8}: {} requests ({} through the fallback), {} × 429, {} errors, wall {:.2} s, minimum {:.2} s, ratio {:.4}",
            mode.name(),
            run.requests,
            run.fallback,
            run.status_429,
            run.errors,
            run.wall.as_secs_f64(),
            run.minimum(),
            run.ratio()
        );
        results.push((mode, run));
    }
    emulator.shutdown().await;
    println!();
    println!(
        "shared limit: {PROCESSES} processes × {TASKS} tasks × {calls} calls, one store, emulator with the service's limit"
    );
    let mut passed = true;
    for (mode, run) in &results {
        let name = mode.name();
        println!("shared_limit_{name}_ratio={:.4}", run.ratio());
        println!("shared_limit_{name}_429={}", run.status_429);
        println!("shared_limit_{name}_requests={}", run.requests);
        println!("shared_limit_{name}_errors={}", run.errors);
        println!("shared_limit_{name}_fallback={}", run.fallback);
        println!("shared_limit_{name}_wall_s={:.3}", run.wall.as_secs_f64());
        if let Some(failover) = run.failover {
            println!("shared_limit_{name}_outage_s={:.3}", failover.as_secs_f64());
        }
        // The fault runs' target is 429s only: after an outage the replicas assume the service's
        // bucket is empty (they cannot know), which costs up to a burst's worth of intervals.
        match mode {
            Mode::Shared | Mode::Cluster => {
                passed &= run.status_429 == 0 && run.ratio() <= TARGET_RATIO;
            }
            Mode::Restart | Mode::Failover => passed &= run.status_429 == 0,
            Mode::Unshared => {}
        }
    }
    println!("shared_limit_processes={PROCESSES}");
    println!("shared_limit_tasks={TASKS}");
    println!("shared_limit_calls={calls}");
    println!(
        "shared limit targets: {}",
        if passed { "PASS" } else { "MISS" }
    );
    Ok(())
}

async fn run(
    mode: Mode,
    calls: u32,
    emulator: &Emulator,
    backends: &mut Backends,
) -> Result<Run, BoxError> {
    let store = emulator
        .active_store()
        .ok_or("the seed has no active store")?;
    let start_at = unix_ms() + 1_500;
    // A fresh bucket per run, as a fresh store would have.
    let prefix = format!("bench:{}:{}", mode.name(), start_at);
    let redis = match (mode, &backends.cluster) {
        (Mode::Unshared, _) => String::new(),
        (Mode::Cluster | Mode::Failover, Some(cluster)) => cluster.urls().join(","),
        _ => backends.server.url(),
    };
    let mut children = Vec::new();
    for _ in 0..PROCESSES {
        let mut command = tokio::process::Command::new(std::env::current_exe()?);
        command
            .env("SHARED_LIMIT_CHILD", "1")
            .env("SL_BASE_URL", emulator.base_url())
            .env("SL_STORE", &store.id)
            .env("SL_KEY", &store.api_key)
            .env("SL_REDIS", &redis)
            .env("SL_PREFIX", &prefix)
            .env("SL_CALLS", calls.to_string())
            .env("SL_START_AT", start_at.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        children.push(command.spawn()?);
    }
    let mut failover = None;
    if let Some(fraction) = mode.fault_at() {
        let minimum = (f64::from(PROCESSES * TASKS * calls) - BURST) / PER_SECOND;
        let fault_at = start_at + (minimum * fraction * 1_000.0) as u64;
        tokio::time::sleep(Duration::from_millis(fault_at.saturating_sub(unix_ms()))).await;
        if let Some(cluster) = backends.cluster.as_mut().filter(|_| mode.on_cluster()) {
            let key = limiter(&redis, emulator.base_url(), &store.id, &prefix)?
                .key()
                .to_owned();
            let killed = cluster.kill_primary_of(&key)?;
            let killed_at = std::time::Instant::now();
            eprintln!(
                "   primary {killed} of the store's slot killed at {} ms",
                unix_ms()
            );
            // Polls the nodes; the emulator runs on in this runtime meanwhile.
            let promoted = tokio::task::block_in_place(|| {
                cluster.wait_for_failover(&key, Duration::from_secs(30))
            })?;
            failover = Some(killed_at.elapsed());
            eprintln!(
                "   node {promoted} took over after {:.2} s",
                killed_at.elapsed().as_secs_f64()
            );
        } else {
            backends.server.stop();
            eprintln!("   redis-server killed at {} ms", unix_ms());
            tokio::time::sleep(Duration::from_secs(1)).await;
            backends.server.restart()?;
            eprintln!("   redis-server started again (empty) at {} ms", unix_ms());
        }
    }
    let mut total = Run {
        failover,
        ..Run::default()
    };
    let mut end = start_at;
    for child in children {
        let output = child.wait_with_output().await?;
        if !output.status.success() {
            return Err(format!("a replica failed: {}", output.status).into());
        }
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let Some((name, value)) = line.split_once('=') else {
                continue;
            };
            let value: u64 = value.trim().parse().unwrap_or(0);
            match name {
                "requests" => total.requests += value,
                "429" => total.status_429 += value,
                "errors" => total.errors += value,
                "fallback" => total.fallback += value,
                "end_ms" => end = end.max(value),
                _ => {}
            }
        }
    }
    total.wall = Duration::from_millis(end - start_at);
    Ok(total)
}

/// A replica's limiter: on the Redis `redis` names (one URL, or a cluster's nodes separated by
/// commas), falling back to a quarter of the limit each.
fn limiter(
    redis: &str,
    base_url: impl Into<String>,
    store: &str,
    prefix: &str,
) -> Result<RedisLimiter, BoxError> {
    Ok(
        RedisLimiter::builder(testing::config_from_urls(redis), base_url, store)
            .key_prefix(prefix)
            .replicas(PROCESSES)
            .command_timeout(Duration::from_millis(250))
            .build()?,
    )
}

/// One replica: 8 tasks × `SL_CALLS` calls of `GET /status`, from `SL_START_AT`.
async fn child() -> Result<(), BoxError> {
    let var = |name: &str| std::env::var(name).map_err(|_| format!("{name} is not set"));
    let base_url = var("SL_BASE_URL")?;
    let store = var("SL_STORE")?;
    let redis_url = var("SL_REDIS")?;
    let calls: u32 = var("SL_CALLS")?.parse()?;
    let start_at: u64 = var("SL_START_AT")?.parse()?;
    let shared = if redis_url.is_empty() {
        None
    } else {
        Some(limiter(&redis_url, &base_url, &store, &var("SL_PREFIX")?)?)
    };
    let limiter: Arc<Counting> = match &shared {
        None => Counting::new(Arc::new(RateLimiter::new())),
        Some(shared) => Counting::new(Arc::new(shared.clone())),
    };
    let client = Client::builder()
        .base_url(&base_url)
        .store_id(&store)
        .api_key(var("SL_KEY")?)
        .limiter(limiter.clone())
        .build()?;
    tokio::time::sleep(Duration::from_millis(start_at.saturating_sub(unix_ms()))).await;
    let errors = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let client = client.clone();
            let errors = errors.clone();
            tokio::spawn(async move {
                for _ in 0..calls {
                    if client.status().await.is_err() {
                        errors.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await?;
    }
    println!("end_ms={}", unix_ms());
    println!("requests={}", limiter.acquired.load(Ordering::SeqCst));
    println!("429={}", limiter.refused.load(Ordering::SeqCst));
    println!("errors={}", errors.load(Ordering::SeqCst));
    println!(
        "fallback={}",
        shared.as_ref().map_or(0, RedisLimiter::fallback_tokens)
    );
    Ok(())
}

/// Counts the transport's calls: acquires are requests; `pause_for` is called for 429s only.
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn Limiter>,
    acquired: AtomicU64,
    refused: AtomicU64,
}

impl Counting {
    fn new(inner: Arc<dyn Limiter>) -> Arc<Counting> {
        Arc::new(Counting {
            inner,
            acquired: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        })
    }
}

impl Limiter for Counting {
    fn acquire(&self) -> LimiterFuture<'_> {
        self.acquired.fetch_add(1, Ordering::SeqCst);
        self.inner.acquire()
    }

    fn pause_for(&self, duration: Duration) -> LimiterFuture<'_> {
        self.refused.fetch_add(1, Ordering::SeqCst);
        if std::env::var("SHARED_LIMIT_TRACE").is_ok() {
            eprintln!("   429 at {} ms (pid {})", unix_ms(), std::process::id());
        }
        self.inner.pause_for(duration)
    }

    fn observe_remaining(&self, remaining: u64) -> LimiterFuture<'_> {
        self.inner.observe_remaining(remaining)
    }
}

/// The wall clock in ms: the one clock every replica on this machine shares, to start together.
fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
