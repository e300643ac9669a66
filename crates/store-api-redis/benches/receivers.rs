//! Exactly-once webhook handling across receiver processes (`RedisDedupe`).
//!
//! The conductor (this executable run normally) starts a private `redis-server`, the emulator (webhook
//! retries every 200 ms doubling, five attempts), three receiver processes (copies of itself with
//! `RECEIVERS_CHILD=1`, each an axum server verifying the signature and running `process_once` on a
//! `RedisDedupe` with a 1 s lease), and a round-robin HTTP proxy on loopback in front of them, which
//! answers 502 when its backend is down. Then it creates orders (one `orders_create` event each),
//! kills one receiver (SIGKILL) a third of the way through and starts it again on the same port a
//! second later.
//!
//! Each receiver's handler takes 5 ms, then appends the event id to its own file; the conductor counts
//! the ids of all three files against the events the emulator emitted: processed once, duplicates
//! (more than once), lost (never processed).
//!
//! A second run does the same on a private Redis Cluster (3 primaries, 3 replicas, node timeout 1 s),
//! and also kills (SIGKILL) the primary of one slot half way through: its replica takes over within
//! seconds, and the killed node is started again and rejoins as the promoted primary's replica (the
//! dedupe waits for a replica's acknowledgement and fails closed without one). There the lease is 5 s and the retries start at 500 ms: the lease must outlast a failover
//! (a `complete` that could not land meanwhile keeps trying within it), and the service's retries must
//! outlast the lease of a killed receiver's claims.
//!
//! Full size 1,000 events a run; `--quick` (or `BENCH_QUICK=1`, or without `--bench`) 300. Prints
//! `receivers_*=VALUE` and `receivers_cluster_*=VALUE` lines for `cargo xtask bench`;
//! `RECEIVERS_RUNS=receivers_cluster` (say) runs only that one.

use std::collections::{BTreeMap, HashMap};
use std::error::Error;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use futures::StreamExt;
use store_api::{Client, NewOrder, RateLimiter};
use store_api_fixtures::Emulator;
use store_api_redis::RedisDedupe;
use store_api_redis::testing::{self, RedisCluster, RedisServer};
use store_api_webhooks::dedupe::{
    Claim, ClaimToken, Dedupe, DedupeFuture, process_once, response_status,
};
use store_api_webhooks::{SIGNATURE_HEADER, Verifier};

type BoxError = Box<dyn Error + Send + Sync>;

const RECEIVERS: usize = 3;

fn main() -> Result<(), BoxError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    if std::env::var("RECEIVERS_CHILD").is_ok() {
        return runtime.block_on(receiver());
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick")
        || std::env::var("BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
        || !args.iter().any(|a| a == "--bench");
    runtime.block_on(conduct(if quick { 300 } else { 1_000 }))
}

// ------------------------------------------------------------------------------------------ receiver

#[derive(Clone)]
struct Receiver {
    verifier: Arc<Verifier>,
    dedupe: Arc<Traced>,
    log: Arc<std::sync::Mutex<std::fs::File>>,
}

/// The receiver's `RedisDedupe`, writing every call and its answer to a trace file beside the log
/// (`<log>.trace`: milliseconds since the Unix epoch, event, call, answer), which the conductor shows
/// for the events that were processed twice or never.
struct Traced {
    inner: RedisDedupe,
    trace: std::sync::Mutex<std::fs::File>,
}

impl Traced {
    fn note(&self, event_id: &str, call: &str, answer: &dyn std::fmt::Debug) {
        let at = unix_ms();
        let mut trace = self.trace.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(trace, "{at} {event_id} {call} {answer:?}");
    }
}

impl Dedupe for Traced {
    fn lease(&self) -> Duration {
        self.inner.lease()
    }

    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
        Box::pin(async move {
            let answer = self.inner.begin(event_id).await;
            self.note(event_id, "begin", &answer);
            answer
        })
    }

    fn renew<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        Box::pin(async move {
            let answer = self.inner.renew(event_id, token).await;
            self.note(event_id, "renew", &answer);
            answer
        })
    }

    fn complete<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        Box::pin(async move {
            let answer = self.inner.complete(event_id, token).await;
            self.note(event_id, "complete", &answer);
            answer
        })
    }

    fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()> {
        Box::pin(async move {
            let answer = self.inner.abandon(event_id, token).await;
            self.note(event_id, "abandon", &answer);
            answer
        })
    }
}

async fn receiver() -> Result<(), BoxError> {
    let var = |name: &str| std::env::var(name).map_err(|_| format!("{name} is not set"));
    let state = Receiver {
        verifier: Arc::new(Verifier::new(var("RC_KEY")?)),
        dedupe: Arc::new(Traced {
            inner: RedisDedupe::builder(
                testing::config_from_urls(&var("RC_REDIS")?),
                var("RC_STORE")?,
            )
            .lease(Duration::from_millis(var("RC_LEASE_MS")?.parse()?))
            .key_prefix(var("RC_PREFIX")?)
            .build()?,
            trace: std::sync::Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(format!("{}.trace", var("RC_LOG")?))?,
            ),
        }),
        log: Arc::new(std::sync::Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(var("RC_LOG")?)?,
        )),
    };
    let app = Router::new()
        .route("/hooks", post(handle))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind(var("RC_ADDR")?).await?;
    println!("ready");
    axum::serve(listener, app).await?;
    Ok(())
}

async fn handle(State(state): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let signature = headers
        .get(SIGNATURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let Ok(event) = state.verifier.verify(signature, &body) else {
        return StatusCode::UNAUTHORIZED;
    };
    let (dedupe, log) = (&state.dedupe, &state.log);
    let id = &event.id;
    let outcome = process_once(&**dedupe, id, |lease| async move {
        // The work: long enough for a kill to land in the middle of some.
        tokio::time::sleep(Duration::from_millis(5)).await;
        // The effect outside the store only while the claim is ours (the run is told, not cancelled).
        if !lease.is_held() {
            return Err(std::io::Error::other("the claim was lost"));
        }
        let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
        writeln!(log, "{id}")?;
        dedupe.note(id, "effect", &lease);
        Ok(())
    })
    .await;
    // 204 once processed; 503 while in progress or the store fails (fail closed: the service delivers
    // again later); 500 when the handler failed.
    StatusCode::from_u16(response_status(&outcome)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

// ----------------------------------------------------------------------------------------- conductor

/// One run: where the markers live, how long a claim lasts, and how fast the service retries.
#[derive(Debug, Clone, Copy)]
struct Scenario {
    /// Prefix of the printed figures.
    name: &'static str,
    cluster: bool,
    lease: Duration,
    backoff: Duration,
}

const SCENARIOS: [Scenario; 2] = [
    Scenario {
        name: "receivers",
        cluster: false,
        lease: Duration::from_secs(1),
        backoff: Duration::from_millis(200),
    },
    Scenario {
        name: "receivers_cluster",
        cluster: true,
        lease: Duration::from_secs(5),
        backoff: Duration::from_millis(500),
    },
];

/// The Redis of a run.
enum Backend {
    Server(RedisServer),
    Cluster(RedisCluster),
}

impl Backend {
    fn urls(&self) -> String {
        match self {
            Backend::Server(server) => server.url(),
            Backend::Cluster(cluster) => cluster.urls().join(","),
        }
    }
}

async fn conduct(events: usize) -> Result<(), BoxError> {
    let only = std::env::var("RECEIVERS_RUNS").unwrap_or_default();
    for scenario in SCENARIOS {
        if !only.is_empty() && !only.split(',').any(|run| run == scenario.name) {
            continue;
        }
        let backend = if scenario.cluster {
            RedisCluster::start()?.map(Backend::Cluster)
        } else {
            RedisServer::start()?.map(Backend::Server)
        };
        let Some(backend) = backend else {
            println!("{}_skipped=1", scenario.name);
            continue;
        };
        run(scenario, backend, events).await?;
    }
    Ok(())
}

async fn run(scenario: Scenario, mut backend: Backend, events: usize) -> Result<(), BoxError> {
    let emulator = Emulator::builder()
        .rate_limit(false)
        .network_downloads(false)
        .webhook_backoff(scenario.backoff)
        .start()
        .await?;
    let store = emulator
        .active_store()
        .ok_or("the seed has no active store")?;
    let dir = tempfile::tempdir()?;
    let prefix = format!("bench:{}:{}", scenario.name, std::process::id());
    let mut addrs = Vec::new();
    for _ in 0..RECEIVERS {
        // A free port, kept by the receiver across its restart.
        let probe = std::net::TcpListener::bind("127.0.0.1:0")?;
        addrs.push(probe.local_addr()?);
    }
    let redis_urls = backend.urls();
    let spawn = |index: usize| -> Result<tokio::process::Child, BoxError> {
        let mut command = tokio::process::Command::new(std::env::current_exe()?);
        command
            .env("RECEIVERS_CHILD", "1")
            .env("RC_KEY", &store.api_key)
            .env("RC_STORE", &store.id)
            .env("RC_REDIS", &redis_urls)
            .env("RC_LEASE_MS", scenario.lease.as_millis().to_string())
            .env("RC_PREFIX", &prefix)
            .env("RC_LOG", log_path(dir.path(), index))
            .env("RC_ADDR", addrs[index].to_string())
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true);
        Ok(command.spawn()?)
    };
    let mut children = (0..RECEIVERS).map(spawn).collect::<Result<Vec<_>, _>>()?;
    for addr in &addrs {
        wait_listening(*addr).await?;
    }
    let proxy = proxy(addrs.clone()).await?;
    emulator.set_webhooks(
        &store.id,
        BTreeMap::from([("orders_create".to_owned(), format!("http://{proxy}/hooks"))]),
    )?;

    let client = Client::builder()
        .base_url(emulator.base_url())
        .store_id(&store.id)
        .api_key(&store.api_key)
        .in_process_limiter(RateLimiter::with_rate(1_000, Duration::from_micros(100)))
        .build()?;
    let started = Instant::now();
    let created = Arc::new(AtomicUsize::new(0));
    let creating = {
        let created = created.clone();
        tokio::spawn(async move {
            futures::stream::iter(0..events)
                .map(|i| {
                    let client = client.clone();
                    let created = created.clone();
                    async move {
                        let order = new_order(i)?;
                        client.orders().create(&order).await?;
                        created.fetch_add(1, Ordering::SeqCst);
                        // Spread the events over a few seconds, so the kills land mid-run.
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        Ok::<_, BoxError>(())
                    }
                })
                .buffer_unordered(4)
                .collect::<Vec<_>>()
                .await
        })
    };
    let reach = |share: usize| {
        let created = created.clone();
        async move {
            while created.load(Ordering::SeqCst) < share {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    reach(events / 3).await;
    children[1].kill().await?;
    let receiver_killed_at = Instant::now();
    let mut timeline = vec![("receiver 1 killed", unix_ms())];
    eprintln!(
        "receiver 1 killed after {} events",
        created.load(Ordering::SeqCst)
    );
    // On the cluster, a primary dies half way through, while receiver 1 is still down.
    let failover = match &mut backend {
        Backend::Cluster(cluster) => {
            reach(events / 2).await;
            let key = format!("{prefix}:failover");
            let killed = cluster.kill_primary_of(&key)?;
            timeline.push(("primary killed", unix_ms()));
            eprintln!(
                "primary {killed} killed after {} events",
                created.load(Ordering::SeqCst)
            );
            Some((key, killed, Instant::now()))
        }
        Backend::Server(_) => None,
    };
    tokio::time::sleep(Duration::from_secs(1).saturating_sub(receiver_killed_at.elapsed())).await;
    children[1] = spawn(1)?;
    timeline.push(("receiver 1 started", unix_ms()));
    wait_listening(addrs[1]).await?;
    eprintln!("receiver 1 started again");
    let mut outage = None;
    if let (Backend::Cluster(cluster), Some((key, killed, killed_at))) = (&mut backend, failover) {
        // Polls the nodes; the emulator and the proxy run on in this runtime meanwhile.
        let promoted = tokio::task::block_in_place(|| {
            cluster.wait_for_failover(&key, Duration::from_secs(30))
        })?;
        outage = Some(killed_at.elapsed());
        timeline.push(("replica promoted", unix_ms()));
        eprintln!(
            "node {promoted} took over after {:.2} s",
            killed_at.elapsed().as_secs_f64()
        );
        // The promoted primary has no replica, and the dedupe confirms nothing there until it has
        // one (fail closed: its events are answered 503 meanwhile). The killed node comes back as its
        // replica, as an operator or an orchestrator would bring it back.
        tokio::task::block_in_place(|| cluster.rejoin(killed, Duration::from_secs(30)))?;
        timeline.push(("killed node replicates", unix_ms()));
        eprintln!(
            "node {killed} replicates node {promoted} after {:.2} s",
            killed_at.elapsed().as_secs_f64()
        );
    }
    let creation_errors = creating.await?.into_iter().filter(Result::is_err).count();

    // Wait until every event got a 2xx, or its five attempts are spent.
    let deadline = Instant::now() + Duration::from_secs(120);
    let (delivered, emitted) = loop {
        let deliveries = emulator.webhook_deliveries(&store.id)?;
        let mut per_event: HashMap<String, (bool, u32)> = HashMap::new();
        for d in &deliveries {
            let entry = per_event.entry(d.event_id.clone()).or_default();
            entry.0 |= d.status.is_some_and(|s| (200..300).contains(&s));
            entry.1 = entry.1.max(d.attempt);
        }
        let settled = per_event
            .values()
            .filter(|(ok, attempts)| *ok || *attempts >= 5)
            .count();
        if (settled >= events && per_event.len() >= events) || Instant::now() > deadline {
            let delivered = per_event.values().filter(|(ok, _)| *ok).count();
            break (delivered, per_event.into_keys().collect::<Vec<_>>());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let wall = started.elapsed();
    for mut child in children {
        let _ = child.kill().await;
    }
    drop(backend);

    let mut processed: HashMap<String, u32> = HashMap::new();
    for index in 0..RECEIVERS {
        let text = std::fs::read_to_string(log_path(dir.path(), index)).unwrap_or_default();
        for id in text.lines() {
            *processed.entry(id.to_owned()).or_default() += 1;
        }
    }
    let once = emitted
        .iter()
        .filter(|id| processed.get(*id) == Some(&1))
        .count();
    let duplicates = processed.values().filter(|&&n| n > 1).count();
    let lost = emitted
        .iter()
        .filter(|id| !processed.contains_key(*id))
        .count();
    let attempts = emulator.webhook_deliveries(&store.id)?.len();
    emulator.shutdown().await;
    // What the receivers' dedupe answered for a few of the events processed twice or never.
    let odd: Vec<&String> = processed
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| id)
        .take(3)
        .chain(
            emitted
                .iter()
                .filter(|id| !processed.contains_key(*id))
                .take(3),
        )
        .collect();
    if !odd.is_empty() {
        for index in 0..RECEIVERS {
            let path = format!("{}.trace", log_path(dir.path(), index).display());
            let text = std::fs::read_to_string(path).unwrap_or_default();
            for line in text.lines() {
                if odd
                    .iter()
                    .any(|id| line.split(' ').nth(1) == Some(id.as_str()))
                {
                    eprintln!("trace receiver {index}: {line}");
                }
            }
        }
        eprintln!("failover timeline: {timeline:?}");
    }

    let name = scenario.name;
    println!();
    println!(
        "{name}: {RECEIVERS} processes behind a round-robin proxy, {events} events, one receiver killed and restarted{}",
        if outage.is_some() {
            ", one cluster primary killed"
        } else {
            ""
        }
    );
    println!("{name}_events={}", emitted.len());
    println!("{name}_processed_once={once}");
    println!("{name}_duplicates={duplicates}");
    println!("{name}_lost={lost}");
    println!("{name}_delivered={delivered}");
    println!("{name}_attempts={attempts}");
    println!("{name}_creation_errors={creation_errors}");
    println!("{name}_wall_s={:.3}", wall.as_secs_f64());
    if let Some(outage) = outage {
        println!("{name}_outage_s={:.3}", outage.as_secs_f64());
    }
    let passed = once == events && duplicates == 0 && lost == 0;
    println!("{name} targets: {}", if passed { "PASS" } else { "MISS" });
    Ok(())
}

/// Milliseconds since the Unix epoch, the clock of the receivers' traces.
fn unix_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis())
}

fn log_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("receiver-{index}.log"))
}

async fn wait_listening(addr: SocketAddr) -> Result<(), BoxError> {
    for _ in 0..500 {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err(format!("receiver {addr} did not start").into())
}

/// A round-robin HTTP proxy: each request goes to the next backend; 502 when it cannot be reached.
async fn proxy(backends: Vec<SocketAddr>) -> Result<SocketAddr, BoxError> {
    #[derive(Clone)]
    struct Proxy {
        backends: Arc<Vec<SocketAddr>>,
        next: Arc<AtomicUsize>,
        http: reqwest::Client,
    }
    async fn forward(State(proxy): State<Proxy>, headers: HeaderMap, body: Bytes) -> StatusCode {
        let index = proxy.next.fetch_add(1, Ordering::SeqCst) % proxy.backends.len();
        let url = format!("http://{}/hooks", proxy.backends[index]);
        let mut request = proxy.http.post(url).body(body);
        for (name, value) in &headers {
            if name != "host" && name != "content-length" {
                request = request.header(name, value);
            }
        }
        match request.send().await {
            Ok(response) => {
                StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY)
            }
            Err(_) => StatusCode::BAD_GATEWAY,
        }
    }
    let state = Proxy {
        backends: Arc::new(backends),
        next: Arc::default(),
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()?,
    };
    let app = Router::new()
        .route("/hooks", post(forward))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(addr)
}

fn new_order(index: usize) -> Result<NewOrder, serde_json::Error> {
    serde_json::from_value(serde_json::json!({
        "externalOrderId": format!("bench-receivers-{index:05}"),
        "lineItems": [{ "sku": "AA-TEE-SUN-BLK-M", "quantity": 1 }],
        "shippingAddress": { "firstName": "Ada", "lastName": "Lovelace",
            "address": { "streetAddress": "1 Main St", "cityOrTown": "Austin", "stateOrProvince": "TX",
                         "zipOrPostalCode": "78701", "country": "US" } }
    }))
}
