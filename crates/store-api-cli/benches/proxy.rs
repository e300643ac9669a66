//! `store-api proxy` under load (issue 35): the real, release-built `store-api` binary as the proxy,
//! the emulator served by the same binary (`store-api emulator`, the server of `store-api-emulator`:
//! both run `store_api_fixtures::ServeArgs::serve`; this bench's package builds the one binary, whose
//! path Cargo gives a bench as `CARGO_BIN_EXE_store-api`), real HTTP on 127.0.0.1, no mocks.
//!
//! 1. **Recording stays linear.** `store-api proxy --record DIR` in front of the emulator (rate limit
//!    off: a 429 would measure the limiter's wait, not the proxy); 1,000 exchanges sent one after the
//!    other, in a cycle of 10 kinds (GETs of products, the catalog, order lists, one order, a lookup by
//!    external id and the status, of two stores, and 2 `POST /orders` with customer data), each with
//!    its store's `X-API-Key`. The store holds 20 orders before the first exchange (created at the
//!    emulator directly), so every order list is a full page from the start and the last exchanges do
//!    not carry bigger bodies than the first. Time per exchange of a window of 100 (10 cycles): for each
//!    kind the median of its 10, averaged over the 10 kinds: every kind counts with its own weight,
//!    and one stall of the shared machine does not move it as it moves a mean of 100 (the means are
//!    printed too). Figure: the last 100 ÷ the first 100, target ≤ 1.5 (a save that rewrote the whole
//!    cassette made it 5× at 250 exchanges). After SIGTERM the cassette must hold every exchange sent
//!    (the bench fails otherwise).
//!
//!    The cassettes are written to a RAM-backed folder (`/dev/shm`) when there is one: the proxy syncs
//!    the file after each exchange, and on the shared machine's disk that `fdatasync` alone took from
//!    0.2 ms to 7 ms depending on what the neighbours' builds were writing (windows of 100 jumped from
//!    0.6 ms to 7 ms per exchange and back within one run; in `/dev/shm` 0.4 to 0.5 ms throughout). The
//!    sync costs the same for the first exchange and the thousandth (an append's new pages); what the
//!    figure must see is the proxy's own cost growing with the cassette. `--on-disk` writes under
//!    Cargo's target folder instead.
//! 2. **A replay miss on 40 MB stays cheap and blocks no one.** A cassette recorded through the proxy
//!    (a catalog page, a product list, one `POST /orders`, then many `GET /status`), replayed by
//!    `store-api proxy --replay`. First the usual time of a `GET /status` the cassette holds, alone
//!    (median of 50, after 5 warm-ups). Then, from another thread and connection, a `POST /orders` of a
//!    40 MB JSON order that no cassette holds (answered 500 "Cassette Miss" with its diff), while this
//!    thread keeps sending that `GET /status`, one every 5 ms, until the miss is answered. Figures: the
//!    miss's answer time (sent to last byte, the 40 MB upload included), target ≤ 1 s; the slowest GET
//!    sent while the miss was in flight, target ≤ [`CONCURRENT_BOUND_MS`] (why a bound and not a ratio:
//!    see there); how many there were (at least one, or nothing was measured); their median ÷ the usual
//!    one (reported). The proxy's peak RSS is reported (Linux), and after the miss it must still answer
//!    and stop on SIGTERM with exit 0.
//!
//! Run with `cargo bench -p store-api-cli --bench proxy` (`-- --quick` is accepted and runs the same:
//! the whole bench takes a few seconds). Prints `proxy_*=VALUE` lines, which `cargo xtask bench`
//! reads.

use std::error::Error;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use serde_json::{Value, json};

type BoxError = Box<dyn Error + Send + Sync>;

/// The `store-api` binary of this build (Cargo builds a package's binaries for its benches).
const BIN: &str = env!("CARGO_BIN_EXE_store-api");
/// Exchanges recorded through the proxy.
const EXCHANGES: usize = 1_000;
/// Exchanges of the first and of the last window compared.
const WINDOW: usize = 100;
/// Target of the recording's last window ÷ its first (issue 35).
const GROWTH_TARGET: f64 = 1.5;
/// Orders the store holds before the recording starts: a full page of the order lists.
const SEEDED_ORDERS: usize = 20;
/// Size of the body of the miss.
const MISS_BODY_BYTES: usize = 40 * 1024 * 1024;
/// Target of the miss's answer time (issue 35).
const MISS_TARGET_MS: f64 = 1_000.0;
/// `GET /status` timed alone: warm-ups, then samples.
const ALONE_WARM_UP: usize = 5;
const ALONE_SAMPLES: usize = 50;
/// Pause between the GETs sent during the miss: they sample the whole time it is in flight without
/// using up the cassette's recorded answers (each GET consumes one).
const CONCURRENT_PACE: Duration = Duration::from_millis(5);
/// `GET /status` answers the replayed cassette holds: enough for the GETs alone and for those during a
/// miss of several seconds at [`CONCURRENT_PACE`].
const RECORDED_STATUS: usize = 600;
/// Bound of the slowest GET answered while the miss is in flight, in ms: "answered in its usual
/// time". Not a ratio to the usual GET (0.05 ms): while the miss is in flight its upload and its
/// digest keep a core busy, and on the shared 2-core machine a GET that waits for the other one waits
/// for the scheduler, which took the slowest GET to 3.9 to 14 ms (300× the usual) under a load average
/// of 6 with the proxy working as it should. What the figure must catch is a GET held *behind* the
/// miss: with the replay's lock taken before the live request's digest (tried while choosing this
/// bound) the slowest GET took 75 to 119 ms, and issue 35 measured 14 s behind a diff under the lock.
/// 50 ms lies between the two.
const CONCURRENT_BOUND_MS: f64 = 50.0;
/// The store the orders go to, and a second one read beside it.
const STORE: &str = "store_alpha";
const OTHER_STORE: &str = "store_beta";
/// The API's path prefix.
const PREFIX: &str = "/store-api/2026-08";
/// Orderable SKUs of `store_alpha` (crates/store-api-fixtures/seed/README.md).
const SKUS: &[&str] = &[
    "AA-TEE-SUN-BLK-S",
    "AA-TEE-SUN-BLK-M",
    "AA-TEE-SUN-BLK-L",
    "AA-HOOD-MTN-BLK-M",
    "AA-CAP-LOGO-BLK-OS",
    "AA-MUG-FUEL-WHT-11OZ",
];

fn main() -> Result<(), BoxError> {
    store_api::install_crypto_provider();
    // `--quick` (as `cargo xtask bench --quick` passes it) runs the same sizes: the bench is short.
    let on_disk = std::env::args().any(|arg| arg == "--on-disk");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(on_disk))
}

async fn run(on_disk: bool) -> Result<(), BoxError> {
    // In RAM unless asked (see the module's documentation), else under the target folder.
    let in_memory = if on_disk {
        None
    } else {
        tempfile::Builder::new()
            .prefix("store-api-proxy-bench-")
            .tempdir_in("/dev/shm")
            .ok()
    };
    let folder = if in_memory.is_some() {
        "/dev/shm (RAM)"
    } else {
        "the target folder (disk)"
    };
    let work = match in_memory {
        Some(work) => work,
        None => tempfile::Builder::new()
            .prefix("proxy-bench-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))?,
    };
    let http = client()?;
    let emulator = Server::start(
        "emulator",
        &["emulator", "--listen", "127.0.0.1:0", "--no-rate-limit"],
        work.path(),
        "store-api-emulator listening on ",
    )?;
    let keys = Keys::read(&http, &emulator.origin).await?;
    for n in 0..SEEDED_ORDERS {
        let url = format!("{}{PREFIX}/stores/{STORE}/orders", emulator.origin);
        let body = order(&format!("bench-seed-{n}"), n);
        expect(
            http.post(&url).header("x-api-key", &keys.alpha).json(&body),
            201,
        )
        .await?;
    }

    let profile = if cfg!(debug_assertions) {
        "DEBUG (numbers not meaningful)"
    } else {
        "release"
    };
    println!("store-api proxy, {profile} build: {BIN}");
    println!("emulator: `store-api emulator --no-rate-limit` (a process of its own), 127.0.0.1");
    println!("cassettes in {folder}");
    println!();
    recording(&http, &emulator, &keys, work.path()).await?;
    println!();
    replay_miss(&http, &emulator, &keys, work.path()).await?;
    emulator.stop()?;
    Ok(())
}

/// Part 1: 1,000 exchanges recorded; the last window's time per exchange ÷ the first's.
async fn recording(
    http: &reqwest::Client,
    emulator: &Server,
    keys: &Keys,
    work: &Path,
) -> Result<(), BoxError> {
    let dir = work.join("recorded");
    let proxy = Server::start(
        "proxy-record",
        &[
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--record",
            path_str(&dir)?,
            "--base-url",
            &emulator.origin,
        ],
        work,
        "store-api proxy recording into ",
    )?;
    let mut mix = Mix::new(&proxy.origin, keys);
    let mut times = Vec::with_capacity(EXCHANGES);
    for n in 0..EXCHANGES {
        let (request, status) = mix.request(http, n);
        let started = Instant::now();
        let body = expect(request, status).await?;
        times.push(started.elapsed());
        mix.answered(n, &body)?;
    }
    proxy.stop()?;
    let cassette = store_api_cassette::Cassette::load(dir.join("proxy.json"))?;
    let kept = cassette.exchanges.len();

    let start = per_exchange(&times[..WINDOW]);
    let end = per_exchange(&times[EXCHANGES - WINDOW..]);
    let ratio = end / start;
    let mean = |window: &[Duration]| ms(window.iter().sum::<Duration>()) / window.len() as f64;
    let (start_mean, end_mean) = (mean(&times[..WINDOW]), mean(&times[EXCHANGES - WINDOW..]));
    let total: Duration = times.iter().sum();
    println!(
        "recording: {EXCHANGES} exchanges one after the other through `store-api proxy --record`, a cycle of {KINDS} kinds (2 POST /orders)"
    );
    println!("  time per exchange (median of each kind, averaged over the kinds)");
    println!("    first {WINDOW}                      {start:>8.3} ms   (mean {start_mean:.3} ms)");
    println!("    last {WINDOW}                       {end:>8.3} ms   (mean {end_mean:.3} ms)");
    let verdict = if ratio <= GROWTH_TARGET {
        "PASS"
    } else {
        "MISS"
    };
    println!(
        "    last ÷ first                   {ratio:>8.3}      (target ≤ {GROWTH_TARGET}) {verdict}"
    );
    let windows: Vec<String> = times
        .chunks(WINDOW)
        .map(|window| format!("{:.2}", per_exchange(window)))
        .collect();
    println!(
        "  every window of {WINDOW}, ms          {}",
        windows.join(" ")
    );
    println!("  whole run                        {:>8.0} ms", ms(total));
    println!("  cassette after SIGTERM           {kept:>8} exchanges (of {EXCHANGES} sent)");
    println!("proxy_record_exchanges={EXCHANGES}");
    println!("proxy_record_kept={kept}");
    println!("proxy_record_start_ms={start:.3}");
    println!("proxy_record_end_ms={end:.3}");
    println!("proxy_record_start_mean_ms={start_mean:.3}");
    println!("proxy_record_end_mean_ms={end_mean:.3}");
    println!("proxy_record_growth_ratio={ratio:.3}");
    println!("proxy_record_total_ms={:.0}", ms(total));
    if kept != EXCHANGES {
        return Err(format!(
            "the cassette holds {kept} exchanges after SIGTERM, {EXCHANGES} were recorded"
        )
        .into());
    }
    Ok(())
}

/// Part 2: a miss on a 40 MB body, and GETs answered meanwhile.
async fn replay_miss(
    http: &reqwest::Client,
    emulator: &Server,
    keys: &Keys,
    work: &Path,
) -> Result<(), BoxError> {
    // The cassette: a few requests of a session, then the GETs the measurement replays.
    let dir = work.join("replayed");
    let recorder = Server::start(
        "proxy-record-for-replay",
        &[
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--record",
            path_str(&dir)?,
            "--base-url",
            &emulator.origin,
        ],
        work,
        "store-api proxy recording into ",
    )?;
    let base = format!("{}{PREFIX}/stores/{STORE}", recorder.origin);
    let get = |path: &str| {
        http.get(format!("{base}{path}"))
            .header("x-api-key", &keys.alpha)
    };
    expect(get("/catalog-products?limit=5"), 200).await?;
    expect(get("/products?limit=10"), 200).await?;
    let posted = http
        .post(format!("{base}/orders"))
        .header("x-api-key", &keys.alpha)
        .json(&order("bench-replay-1", 1));
    expect(posted, 201).await?;
    for _ in 0..RECORDED_STATUS {
        expect(get("/status"), 200).await?;
    }
    recorder.stop()?;

    let proxy = Server::start(
        "proxy-replay",
        &[
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--replay",
            path_str(&dir)?,
        ],
        work,
        "store-api proxy replaying ",
    )?;
    let status_url = format!("{}{PREFIX}/stores/{STORE}/status", proxy.origin);
    let status = || http.get(&status_url).header("x-api-key", &keys.alpha);
    let mut alone = Vec::with_capacity(ALONE_SAMPLES);
    for n in 0..ALONE_WARM_UP + ALONE_SAMPLES {
        let started = Instant::now();
        expect(status(), 200).await?;
        if n >= ALONE_WARM_UP {
            alone.push(started.elapsed());
        }
    }
    let usual = median_ms(&mut alone.clone());
    let slowest_alone = alone.iter().max().map_or(0.0, |d| ms(*d));

    // The miss, from a thread of its own with its own client and connection: its upload must not
    // delay this thread's GETs on the client's side.
    let body = Bytes::from(huge_order(MISS_BODY_BYTES));
    let body_bytes = body.len();
    let miss_url = format!("{}{PREFIX}/stores/{STORE}/orders", proxy.origin);
    let miss_key = keys.alpha.clone();
    let (done_tx, mut done_rx) = tokio::sync::oneshot::channel();
    let miss = std::thread::spawn(move || -> Result<(Duration, u16, String), String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let answered = runtime.block_on(async {
            let http = client().map_err(|e| e.to_string())?;
            let started = Instant::now();
            let answer = http
                .post(&miss_url)
                .header("x-api-key", &miss_key)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let status = answer.status().as_u16();
            let marker = answer
                .headers()
                .get("x-store-api-proxy")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            let text = answer.text().await.map_err(|e| e.to_string())?;
            let elapsed = started.elapsed();
            Ok((elapsed, status, format!("{marker}\n{text}")))
        });
        let _ = done_tx.send(());
        answered
    });
    let mut concurrent = Vec::new();
    let budget = RECORDED_STATUS - ALONE_WARM_UP - ALONE_SAMPLES - 1;
    loop {
        let started = Instant::now();
        expect(status(), 200).await?;
        concurrent.push(started.elapsed());
        if concurrent.len() == budget {
            break;
        }
        tokio::select! {
            _ = &mut done_rx => break,
            () = tokio::time::sleep(CONCURRENT_PACE) => {}
        }
    }
    let (miss_time, miss_status, miss_answer) =
        miss.join().map_err(|_| "the miss's thread panicked")??;
    let (marker, envelope) = miss_answer.split_once('\n').unwrap_or_default();
    let envelope: Value = serde_json::from_str(envelope).unwrap_or(Value::Null);
    if miss_status != 500 || marker != "cassette-miss" || envelope["error"] != "Cassette Miss" {
        return Err(format!(
            "the 40 MB miss was answered {miss_status} ({marker:?}), not 500 Cassette Miss: {}",
            envelope.to_string().chars().take(500).collect::<String>()
        )
        .into());
    }
    let message = envelope["message"].as_str().unwrap_or_default();
    // After the miss, the proxy still answers (one recorded answer was kept back for this).
    expect(status(), 200).await?;
    let rss = proxy.peak_rss_mb();
    proxy.stop()?;

    let miss_ms = ms(miss_time);
    let slowest = concurrent.iter().max().map_or(0.0, |d| ms(*d));
    let concurrent_median = median_ms(&mut concurrent.clone());
    let ratio = concurrent_median / usual;
    let verdict = |met: bool| if met { "PASS" } else { "MISS" };
    println!(
        "replay miss: `store-api proxy --replay`, POST /orders of {:.1} MB that no cassette holds, GET /status meanwhile",
        body_bytes as f64 / 1_048_576.0
    );
    println!(
        "  GET /status alone, median of {ALONE_SAMPLES}      {usual:>8.3} ms   (slowest {slowest_alone:.3} ms)"
    );
    println!(
        "  the miss, sent to answered          {miss_ms:>8.1} ms   (target ≤ {MISS_TARGET_MS:.0} ms) {}",
        verdict(miss_ms <= MISS_TARGET_MS)
    );
    println!(
        "  GETs answered during the miss       {:>8}      (one every {} ms)",
        concurrent.len(),
        CONCURRENT_PACE.as_millis()
    );
    println!(
        "    median                            {concurrent_median:>8.3} ms   ({ratio:.2} × the usual)"
    );
    println!(
        "    slowest                           {slowest:>8.3} ms   (target ≤ {CONCURRENT_BOUND_MS:.0} ms) {}",
        verdict(slowest <= CONCURRENT_BOUND_MS)
    );
    println!(
        "  the miss's message                  {:>8} bytes",
        message.len()
    );
    if let Some(rss) = rss {
        println!("  proxy peak RSS                      {rss:>8.0} MB");
        println!("proxy_miss_peak_rss_mb={rss:.0}");
    }
    println!("proxy_miss_body_bytes={body_bytes}");
    println!("proxy_miss_ms={miss_ms:.1}");
    println!("proxy_miss_message_bytes={}", message.len());
    println!("proxy_miss_get_alone_ms={usual:.3}");
    println!("proxy_miss_concurrent_gets={}", concurrent.len());
    println!("proxy_miss_concurrent_get_median_ms={concurrent_median:.3}");
    println!("proxy_miss_concurrent_get_max_ms={slowest:.3}");
    println!("proxy_miss_concurrent_get_median_ratio={ratio:.3}");
    Ok(())
}

/// Kinds of exchange in the recording's cycle.
const KINDS: usize = 10;

/// The recording's cycle of requests, and what it learns from their answers.
struct Mix<'a> {
    origin: &'a str,
    keys: &'a Keys,
    /// The order the last `POST` created.
    last_order: Option<String>,
}

impl<'a> Mix<'a> {
    fn new(origin: &'a str, keys: &'a Keys) -> Mix<'a> {
        Mix {
            origin,
            keys,
            last_order: None,
        }
    }

    /// Request `n` of the run and the status it must get.
    fn request(&self, http: &reqwest::Client, n: usize) -> (reqwest::RequestBuilder, u16) {
        let alpha = format!("{}{PREFIX}/stores/{STORE}", self.origin);
        let beta = format!("{}{PREFIX}/stores/{OTHER_STORE}", self.origin);
        let get_alpha = |path: String| {
            http.get(format!("{alpha}{path}"))
                .header("x-api-key", &self.keys.alpha)
        };
        let get_beta = |path: String| {
            http.get(format!("{beta}{path}"))
                .header("x-api-key", &self.keys.beta)
        };
        let post = || {
            let body = order(&format!("bench-record-{n}"), n);
            (
                http.post(format!("{alpha}/orders"))
                    .header("x-api-key", &self.keys.alpha)
                    .json(&body),
                201,
            )
        };
        match n % KINDS {
            0 => (get_alpha("/products?limit=10".into()), 200),
            1 => (get_alpha("/catalog-products?limit=5".into()), 200),
            2 => post(),
            3 => {
                let order = self.last_order.as_deref().unwrap_or("unknown");
                (get_alpha(format!("/orders/{order}")), 200)
            }
            4 => (get_beta("/products".into()), 200),
            5 => (get_alpha("/orders?limit=20".into()), 200),
            6 => (
                get_alpha(format!("/products/{}", ALPHA_PRODUCTS[n / KINDS % 4])),
                200,
            ),
            7 => (get_alpha("/status".into()), 200),
            8 => post(),
            _ => (
                get_alpha(format!(
                    "/orders?filter%5BexternalOrderId%5D=bench-record-{}",
                    n - 1
                )),
                200,
            ),
        }
    }

    /// Keeps what the next requests need of answer `n`.
    fn answered(&mut self, n: usize, body: &[u8]) -> Result<(), BoxError> {
        if n % KINDS == 2 {
            let created: Value = serde_json::from_slice(body)?;
            let id = created["id"].as_str().ok_or("a created order has no id")?;
            self.last_order = Some(id.to_owned());
        }
        Ok(())
    }
}

/// Products of `store_alpha` read one by one.
const ALPHA_PRODUCTS: [&str; 4] = [
    "prod_alpha_sunset_tee",
    "prod_alpha_fuel_mug",
    "prod_alpha_mountain_hoodie",
    "prod_alpha_logo_cap",
];

/// The keys of the two stores, from the emulator's control plane (asked directly, not through the
/// proxy, which refuses it).
struct Keys {
    alpha: String,
    beta: String,
}

impl Keys {
    async fn read(http: &reqwest::Client, origin: &str) -> Result<Keys, BoxError> {
        let stores: Value = http
            .get(format!("{origin}/_emulator/stores"))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let key = |id: &str| -> Result<String, BoxError> {
            stores
                .as_array()
                .and_then(|stores| stores.iter().find(|s| s["id"] == id))
                .and_then(|store| store["apiKey"].as_str())
                .map(str::to_owned)
                .ok_or_else(|| format!("the emulator has no store {id}").into())
        };
        Ok(Keys {
            alpha: key(STORE)?,
            beta: key(OTHER_STORE)?,
        })
    }
}

/// A valid order of one to three line items, with the customer data a recording redacts.
fn order(external_id: &str, n: usize) -> Value {
    let line_items: Vec<Value> = (0..n % 3 + 1)
        .map(|i| json!({ "sku": SKUS[(n + i) % SKUS.len()], "quantity": n % 4 + 1 }))
        .collect();
    json!({
        "externalOrderId": external_id,
        "lineItems": line_items,
        "shippingAddress": {
            "firstName": "Ada",
            "lastName": format!("Lovelace-{n}"),
            "email": format!("ada{n}@example.com"),
            "address": {
                "streetAddress": format!("{n} Main St"),
                "cityOrTown": "Springfield",
                "stateOrProvince": "NY",
                "zipOrPostalCode": "12345",
                "country": "US"
            }
        }
    })
}

/// An order of `bytes` bytes or a little more: a valid order's fields and a line-item list as long
/// as it takes (what a client that lost count of its cart would send).
fn huge_order(bytes: usize) -> Vec<u8> {
    let mut text = serde_json::to_string(&order("bench-replay-huge", 7)).unwrap_or_default();
    // Replace the line items with many: `"lineItems":[...]` is the second field.
    let item = r#"{"sku":"AA-TEE-SUN-BLK-S","quantity":1}"#;
    let mut items = String::with_capacity(bytes + item.len());
    while items.len() < bytes {
        if !items.is_empty() {
            items.push(',');
        }
        items.push_str(item);
    }
    if let (Some(start), Some(end)) = (
        text.find("\"lineItems\":["),
        text.find("],\"shippingAddress\""),
    ) {
        text.replace_range(start + "\"lineItems\":[".len()..end, &items);
    }
    text.into_bytes()
}

/// A client for 127.0.0.1: no proxy of the environment, keep-alive connections.
fn client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder().no_proxy().build()
}

/// Sends `request`, reads the whole answer, and fails unless its status is `status`.
async fn expect(request: reqwest::RequestBuilder, status: u16) -> Result<Bytes, BoxError> {
    let answer = request.send().await?;
    let got = answer.status().as_u16();
    let body = answer.bytes().await?;
    if got != status {
        return Err(format!(
            "expected {status}, got {got}: {}",
            String::from_utf8_lossy(&body[..body.len().min(500)])
        )
        .into());
    }
    Ok(body)
}

/// Time per exchange of a window: for each kind, the median of its exchanges; the mean of those.
fn per_exchange(window: &[Duration]) -> f64 {
    let mut total = 0.0;
    for kind in 0..KINDS {
        let mut times: Vec<Duration> = window.iter().skip(kind).step_by(KINDS).copied().collect();
        total += median_ms(&mut times);
    }
    total / KINDS as f64
}

fn median_ms(values: &mut [Duration]) -> f64 {
    values.sort_unstable();
    values.get(values.len() / 2).map_or(0.0, |d| ms(*d))
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

fn path_str(path: &Path) -> Result<&str, BoxError> {
    path.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", path.display()).into())
}

/// A `store-api` process serving on 127.0.0.1: the emulator or a proxy.
struct Server {
    name: &'static str,
    child: Child,
    origin: String,
    stderr: PathBuf,
}

impl Server {
    /// Starts `store-api ARGS`, its stderr to a file in `work`, and waits for its ready line (on
    /// stdout, starting with `ready`; the origin, or the base URL, follows the last space).
    fn start(
        name: &'static str,
        args: &[&str],
        work: &Path,
        ready: &str,
    ) -> Result<Server, BoxError> {
        let stderr = work.join(format!("{name}.stderr"));
        let mut command = Command::new(BIN);
        // Nothing of the caller's environment or configuration.
        for var in [
            "STORE_API_KEY",
            "STORE_API_STORE_ID",
            "STORE_API_BASE_URL",
            "STORE_API_PROFILE",
            "RUST_LOG",
        ] {
            command.env_remove(var);
        }
        let mut child = command
            .env("STORE_API_CONFIG", work.join("no-config.toml"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr)?)
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = sender.send(lines.next());
            // Drained, so the process never blocks on a full pipe.
            for _ in lines {}
        });
        let mut server = Server {
            name,
            child,
            origin: String::new(),
            stderr,
        };
        let line = match receiver.recv_timeout(Duration::from_secs(30)) {
            Ok(Some(Ok(line))) => line,
            other => {
                return Err(
                    format!("{name} did not start ({other:?}): {}", server.stderr_tail()).into(),
                );
            }
        };
        if !line.starts_with(ready) {
            return Err(format!("{name}: unexpected ready line {line:?}").into());
        }
        // The proxy's line ends with its base URL (the version prefix included), the emulator's
        // with its origin.
        server.origin = line
            .rsplit(' ')
            .next()
            .map(|url| url.strip_suffix(PREFIX).unwrap_or(url))
            .filter(|origin| origin.starts_with("http://127.0.0.1:"))
            .ok_or_else(|| format!("{name}: no origin in {line:?}"))?
            .to_owned();
        Ok(server)
    }

    /// SIGTERM, as a supervisor stops it; it must exit 0 within 30 s.
    fn stop(mut self) -> Result<(), BoxError> {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status()?;
        if !sent.success() {
            return Err(format!("kill -TERM {pid} ({}) failed", self.name).into());
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait()? {
                if status.success() {
                    return Ok(());
                }
                return Err(format!(
                    "{} exited with {status} on SIGTERM: {}",
                    self.name,
                    self.stderr_tail()
                )
                .into());
            }
            if Instant::now() > deadline {
                return Err(format!("{} did not stop within 30 s of SIGTERM", self.name).into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The process's peak resident memory, in MB (Linux's `VmHWM`).
    fn peak_rss_mb(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let kb: f64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kb / 1024.0)
    }

    fn stderr_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let start = text.len().saturating_sub(2_000);
        let start = (start..text.len())
            .find(|&at| text.is_char_boundary(at))
            .unwrap_or(text.len());
        text[start..].to_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Stopped already, or the bench failed: never leave a server behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
