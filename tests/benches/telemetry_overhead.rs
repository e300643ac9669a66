//! What OpenTelemetry costs a caller of `store_api::Client` (issue 37, point 6): the same requests
//! against the real emulator on 127.0.0.1, one in flight, by a client in a process with no `tracing`
//! subscriber and no meter provider ("off") and by one in a process with a `tracing_subscriber`
//! registry (INFO and above) and `tracing-opentelemetry`'s layer over opentelemetry_sdk's batch span
//! processor and in-memory exporter, and an `SdkMeterProvider` (a periodic reader over the in-memory
//! metric exporter) installed as the global meter provider ("on"). Both are the same binary, built with
//! store-api's `otel-metrics` feature (this crate turns it on).
//!
//! - `telemetry_get_ratio`: `client.orders().list(limit 100)`, on ÷ off (each against its bare
//!   `GET`, below). Target ≤ 1.02.
//! - `telemetry_submit_ratio`: `client.orders().submit` (pre-flight against the warm snapshot cache, then
//!   one `POST`), on ÷ off (each against its bare `POST`). Target ≤ 1.02.
//! - `telemetry_get_floor`, `telemetry_submit_floor`: the same bare request inside two spans with a
//!   name and a kind only (an operation's and its try's, the least any operation exports), on ÷ off:
//!   what the layer costs whatever the spans carry. No target: it bounds the two above from below.
//! - `telemetry_off_vs_bare` (and `_submit`): the "off" client ÷ a bare `reqwest` call decoded by
//!   `serde_json` into the same type, measured exactly as `client_overhead` measures its ratios (one
//!   `reqwest::Client` under both), so it reads against that figure as measured before this issue.
//!
//! Why two processes: the client's instruments come from the global meter provider once per process
//! (a no-op one when none is installed), so "with the meter" and "without" cannot alternate in one. The
//! bench runs itself twice more (`--side off`, `--side on`), each child with its own emulator holding the
//! same orders, and drives them in rounds over their standard input: each round asks each side for a
//! batch of 10 lists and 10 submissions through its client, as many bare requests and as many spanned
//! ones, which the side times itself; which side goes first, and which of the three goes first within
//! a side, turn over between rounds, so a drift in the machine's load cancels. Two processes differ by
//! themselves (their emulators' heaps, the cores they land on): the control, `--only nothing`,
//! measured the "on" side's batches 4% (lists) and 10% (submissions) slower than the "off" side's with
//! nothing installed on either. So each side's client is measured against its own bare requests, and
//! a figure is the quotient of the two sides' medians of (client batch ÷ bare batch): the difference
//! between the processes cancels. Both children run with glibc's heap thresholds fixed at 64 MiB, as
//! `client_overhead` does, for the same reason (its module docs). At the end the "on" side must have exported spans and the
//! `http.client.request.duration` metric, else the bench fails: a figure of a side that recorded
//! nothing would be meaningless.
//!
//! Run with `cargo bench -p store-api-tests --bench telemetry_overhead` (`-- --quick` for a short run;
//! without `--bench`, as under `cargo test --benches`, a few rounds as a smoke test). `-- --only spans`
//! or `--only metrics` installs one part alone on the "on" side, to see which costs what; `--only
//! nothing` installs nothing there, the control of the two processes' own difference.

use std::error::Error;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use store_api::{Client, IdentifiedOrder, ListOrdersQuery, NewOrder, Submitted};
use store_api::{network, new_external_order_id};
use store_api_raw::auth::API_KEY_HEADER;
use store_api_raw::contract::{CREATE_ORDER, LIST_ORDERS};
use store_api_raw::types;
use store_api_tests::{ALPHA, emulator, key_of, relaxed_limiter, tee_order, tee_submission};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;

type BoxError = Box<dyn Error + Send + Sync>;

/// Orders in each side's store before the run, so each list reads a full page.
const ORDERS: usize = 100;
/// Requests of each side per batch.
const BATCH: usize = 10;
const TARGET: f64 = 1.02;
/// The metric the "on" side must have exported.
const DURATION_METRIC: &str = "http.client.request.duration";

/// glibc's tunables that fix both heap thresholds at 64 MiB (see `client_overhead`'s module docs).
const STEADY_HEAP: &str =
    "glibc.malloc.trim_threshold=67108864:glibc.malloc.mmap_threshold=67108864";

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|at| args.get(at + 1))
            .map(String::as_str)
    };
    // `--only spans` or `--only metrics`: the "on" side installs that part alone, to see which costs
    // what (the figures are read from runs without it).
    let parts = match value("--only") {
        None => Parts::BOTH,
        Some("spans") => Parts {
            spans: true,
            metrics: false,
        },
        Some("metrics") => Parts {
            spans: false,
            metrics: true,
        },
        // The control: the "on" side installs nothing, so the ratios show the two processes' own
        // difference (1 within the noise).
        Some("nothing") => Parts {
            spans: false,
            metrics: false,
        },
        Some(other) => {
            return Err(format!("--only takes spans, metrics or nothing, not {other}").into());
        }
    };
    match value("--side") {
        Some("on") => return child(Some(parts)),
        Some("off") => return child(None),
        Some(other) => return Err(format!("--side takes on or off, not {other}").into()),
        None => {}
    }
    let rounds = if !args.iter().any(|a| a == "--bench") {
        3
    } else if args.iter().any(|a| a == "--quick") {
        100
    } else {
        200
    };
    drive(rounds, parts)
}

/// What the "on" side installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parts {
    /// The subscriber with tracing-opentelemetry's layer.
    spans: bool,
    /// The global meter provider.
    metrics: bool,
}

impl Parts {
    const BOTH: Parts = Parts {
        spans: true,
        metrics: true,
    };

    fn arg(self) -> Option<&'static str> {
        match (self.spans, self.metrics) {
            (true, false) => Some("spans"),
            (false, true) => Some("metrics"),
            (false, false) => Some("nothing"),
            (true, true) => None,
        }
    }
}

/// A child process, spoken to by lines.
struct Worker {
    process: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Worker {
    /// Starts the "off" side (`None`), or the "on" side with `parts` installed.
    fn start(side: Option<Parts>) -> Result<Worker, BoxError> {
        let mut command = Command::new(std::env::current_exe()?);
        command.args(["--side", if side.is_some() { "on" } else { "off" }]);
        if let Some(only) = side.and_then(Parts::arg) {
            command.args(["--only", only]);
        }
        let mut process = command
            .env("GLIBC_TUNABLES", STEADY_HEAP)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let input = process.stdin.take().ok_or("no stdin of the child")?;
        let output = BufReader::new(process.stdout.take().ok_or("no stdout of the child")?);
        let mut worker = Worker {
            process,
            input,
            output,
        };
        let ready = worker.read()?;
        if ready != "ready" {
            return Err(format!("a side said {ready:?} instead of ready").into());
        }
        Ok(worker)
    }

    fn read(&mut self) -> Result<String, BoxError> {
        let mut line = String::new();
        if self.output.read_line(&mut line)? == 0 {
            return Err("a side of the bench ended early (its error is above)".into());
        }
        Ok(line.trim_end().to_owned())
    }

    /// Sends a command, returns its answer.
    fn ask(&mut self, command: &str) -> Result<String, BoxError> {
        writeln!(self.input, "{command}")?;
        self.input.flush()?;
        self.read()
    }

    /// A batch's time in seconds, as the side measured it.
    fn time(&mut self, command: &str) -> Result<f64, BoxError> {
        let answer = self.ask(command)?;
        answer
            .parse()
            .map_err(|_| format!("{command}: the side answered {answer:?}").into())
    }

    fn finish(mut self) -> Result<String, BoxError> {
        let summary = self.ask("finish")?;
        drop(self.input);
        let status = self.process.wait()?;
        if !status.success() {
            return Err(format!("a side of the bench ended with {status}").into());
        }
        Ok(summary)
    }
}

/// Per-round batch times of one process, seconds: its client's, its bare requests', and its bare
/// requests inside the two spans the layer must export for each (the floor).
#[derive(Default)]
struct Batches {
    client: Vec<f64>,
    bare: Vec<f64>,
    spanned: Vec<f64>,
}

impl Batches {
    /// Median over rounds of client ÷ bare.
    fn ratio(&self) -> f64 {
        median_quotient(&self.client, &self.bare)
    }

    /// Median over rounds of spanned ÷ bare.
    fn floor(&self) -> f64 {
        median_quotient(&self.spanned, &self.bare)
    }

    /// Median per-request time of the client, µs.
    fn micros(&self) -> f64 {
        median(self.client.iter().map(|s| s * 1e6 / BATCH as f64).collect())
    }
}

/// Median over rounds of `numerators[i] ÷ denominators[i]`.
fn median_quotient(numerators: &[f64], denominators: &[f64]) -> f64 {
    median(
        numerators
            .iter()
            .zip(denominators)
            .map(|(n, d)| n / d)
            .collect(),
    )
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The parent: starts both sides, drives the rounds, prints the figures.
fn drive(rounds: usize, parts: Parts) -> Result<(), BoxError> {
    let mut off = Worker::start(None)?;
    let mut on = Worker::start(Some(parts))?;
    // [off, on] × [list, submit]
    let mut batches: [[Batches; 2]; 2] = Default::default();
    for round in 0..rounds {
        // Which process goes first turns over every round, and within each, which of client, bare
        // and spanned goes first rotates every other round: each of the three leads as often.
        let on_first = round % 2 == 0;
        let first_turn = (round / 2) % 3;
        for (k, kind) in ["list", "submit"].into_iter().enumerate() {
            for side_on in [on_first, !on_first] {
                let worker = if side_on { &mut on } else { &mut off };
                let side = &mut batches[usize::from(side_on)][k];
                for turn in (0..3).map(|t| (t + first_turn) % 3) {
                    match turn {
                        0 => side.client.push(worker.time(kind)?),
                        1 => side.bare.push(worker.time(&format!("bare_{kind}"))?),
                        _ => side.spanned.push(worker.time(&format!("spanned_{kind}"))?),
                    }
                }
            }
        }
    }
    let [[off_list, off_submit], [on_list, on_submit]] = &batches;
    let exported = on.finish()?;
    off.finish()?;
    let spans: u64 = exported
        .split_whitespace()
        .find_map(|w| w.strip_prefix("spans="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let has_metric = exported
        .split_whitespace()
        .any(|w| w == format!("metric={DURATION_METRIC}"));
    if (parts.spans && spans == 0) || (parts.metrics && !has_metric) {
        return Err(format!(
            "the side with telemetry exported {spans} spans and {} {DURATION_METRIC}: it measured nothing ({exported})",
            if has_metric { "its" } else { "no" }
        )
        .into());
    }

    let off_vs_bare = off_list.ratio();
    let off_vs_bare_submit = off_submit.ratio();
    // Each process's client against its own bare requests, so what differs between the processes
    // (their emulators' heaps, their cores) cancels: the control (`--only nothing`) measured 1.04
    // and 1.10 as on ÷ off batches directly, with nothing installed on either side.
    let get_ratio = on_list.ratio() / off_vs_bare;
    let submit_ratio = on_submit.ratio() / off_vs_bare_submit;
    // The floor: what the layer costs for the two spans alone, around a bare request.
    let get_floor = on_list.floor() / off_list.floor();
    let submit_floor = on_submit.floor() / off_submit.floor();
    let verdict = |ratio: f64| if ratio <= TARGET { "PASS" } else { "MISS" };
    if parts != Parts::BOTH {
        println!("(the side with telemetry installed {parts:?} only)");
    }
    println!(
        "telemetry overhead: {rounds} rounds of {BATCH} requests per side, one in flight, against the emulator on 127.0.0.1"
    );
    println!(
        "  GET /orders?limit=100  off {:>8.1} µs  on {:>8.1} µs  ratio {get_ratio:.3}  target <= {TARGET}  {}",
        off_list.micros(),
        on_list.micros(),
        verdict(get_ratio)
    );
    println!(
        "  submit                 off {:>8.1} µs  on {:>8.1} µs  ratio {submit_ratio:.3}  target <= {TARGET}  {}",
        off_submit.micros(),
        on_submit.micros(),
        verdict(submit_ratio)
    );
    println!(
        "  off ÷ bare reqwest: GET {off_vs_bare:.3} (bare {:.1} µs), submit ÷ one POST {off_vs_bare_submit:.3} (bare {:.1} µs)",
        median(
            off_list
                .bare
                .iter()
                .map(|s| s * 1e6 / BATCH as f64)
                .collect()
        ),
        median(
            off_submit
                .bare
                .iter()
                .map(|s| s * 1e6 / BATCH as f64)
                .collect()
        )
    );
    println!(
        "  floor, two spans with no attributes around the bare request, on ÷ off: GET {get_floor:.3}, submit {submit_floor:.3}"
    );
    println!("  the side with telemetry exported {spans} spans");
    println!("telemetry_rounds={rounds}");
    println!("telemetry_get_ratio={get_ratio:.4}");
    println!("telemetry_submit_ratio={submit_ratio:.4}");
    println!("telemetry_get_off_us={:.1}", off_list.micros());
    println!("telemetry_get_on_us={:.1}", on_list.micros());
    println!("telemetry_submit_off_us={:.1}", off_submit.micros());
    println!("telemetry_submit_on_us={:.1}", on_submit.micros());
    println!("telemetry_off_vs_bare={off_vs_bare:.4}");
    println!("telemetry_off_vs_bare_submit={off_vs_bare_submit:.4}");
    println!("telemetry_get_floor={get_floor:.4}");
    println!("telemetry_submit_floor={submit_floor:.4}");
    println!("telemetry_spans_exported={spans}");
    Ok(())
}

/// What the "on" side installed, kept to flush and count at the end.
struct Installed {
    spans: Option<(SdkTracerProvider, InMemorySpanExporter)>,
    metrics: Option<(SdkMeterProvider, InMemoryMetricExporter)>,
}

/// A set-up as a service would have it: spans of INFO and above through `tracing-opentelemetry` to a
/// batch processor, metrics through the global meter provider to a periodic reader. Installed before
/// the client's first request, so its instruments come from this provider.
fn install(parts: Parts) -> Result<Installed, BoxError> {
    let mut installed = Installed {
        spans: None,
        metrics: None,
    };
    if parts.spans {
        let spans = InMemorySpanExporter::default();
        let tracer_provider = SdkTracerProvider::builder()
            .with_batch_exporter(spans.clone())
            .build();
        let tracer = tracer_provider.tracer("telemetry_overhead");
        tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(LevelFilter::INFO).with(
                // As docs/telemetry.md recommends for production: no timing of every poll, no
                // code location or thread per span (each costs per span, none is needed to read
                // a trace of HTTP calls).
                tracing_opentelemetry::layer()
                    .with_tracked_inactivity(false)
                    .with_location(false)
                    .with_threads(false)
                    .with_tracer(tracer),
            ),
        )?;
        installed.spans = Some((tracer_provider, spans));
    }
    if parts.metrics {
        let metrics = InMemoryMetricExporter::default();
        let meter_provider = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics.clone())
            .build();
        opentelemetry::global::set_meter_provider(meter_provider.clone());
        installed.metrics = Some((meter_provider, metrics));
    }
    Ok(installed)
}

/// A side: sets up, says `ready`, then answers each command with a batch's time in seconds.
fn child(side: Option<Parts>) -> Result<(), BoxError> {
    let installed = side.map(install).transpose()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let bench = runtime.block_on(Bench::set_up())?;
    let stdout = std::io::stdout();
    println!("ready");
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let answer = match line.as_str() {
            "finish" => {
                println!("{}", installed.as_ref().map_or_else(String::new, summary));
                break;
            }
            command => runtime.block_on(bench.batch(command))?.as_secs_f64(),
        };
        let mut out = stdout.lock();
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
    runtime.block_on(bench.shut_down());
    Ok(())
}

/// What the "on" side exported: `spans=N metric=NAME…`, after a flush of both providers.
fn summary(installed: &Installed) -> String {
    let spans = installed.spans.as_ref().map_or(0, |(provider, exporter)| {
        let _ = provider.force_flush();
        exporter.get_finished_spans().map_or(0, |spans| spans.len())
    });
    let metrics = installed.metrics.as_ref().map(|(provider, exporter)| {
        let _ = provider.force_flush();
        exporter.get_finished_metrics().unwrap_or_default()
    });
    let mut names: Vec<String> = metrics
        .unwrap_or_default()
        .iter()
        .flat_map(|rm| rm.scope_metrics())
        .flat_map(|scope| scope.metrics())
        .map(|metric| format!("metric={}", metric.name()))
        .collect();
    names.sort();
    names.dedup();
    format!("spans={spans} {}", names.join(" "))
}

/// One side's emulator, client and bare requests.
struct Bench {
    emu: store_api_fixtures::Emulator,
    client: Client,
    http: reqwest::Client,
    key: String,
    list_url: String,
    post_url: String,
    query: ListOrdersQuery,
}

impl Bench {
    async fn set_up() -> Result<Bench, BoxError> {
        let emu = emulator().await;
        let key = key_of(&emu, ALPHA);
        // One reqwest client for the client and the bare side, as in `client_overhead`.
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let client = Client::builder()
            .network(Arc::new(SharedPool(http.clone())))
            .base_url(emu.base_url())
            .store_id(ALPHA)
            .api_key(&key)
            .timeout(Duration::from_secs(30))
            .in_process_limiter(relaxed_limiter())
            .build()?;
        for _ in 0..ORDERS {
            client
                .orders()
                .create(&tee_order(Some(&new_external_order_id())))
                .await?;
        }
        let bench = Bench {
            list_url: format!(
                "{}{}?limit=100",
                emu.base_url(),
                LIST_ORDERS.path.replace("{storeId}", ALPHA)
            ),
            post_url: format!(
                "{}{}",
                emu.base_url(),
                CREATE_ORDER.path.replace("{storeId}", ALPHA)
            ),
            query: ListOrdersQuery::new().limit(100),
            emu,
            client,
            http,
            key,
        };
        // The same page both ways, and the snapshot cache warm before anything is timed.
        let page = bench.client.orders().list(&bench.query).await?;
        if page.items.len() != 100 || page.items != bench.bare_list().await?.items {
            return Err("the client and the bare request read different pages".into());
        }
        bench
            .client
            .orders()
            .preflight(&tee_order(Some(&new_external_order_id())))
            .await?;
        Ok(bench)
    }

    /// Runs one batch of `command` (`list`, `submit`, `bare_list`, `bare_submit`) and times it.
    async fn batch(&self, command: &str) -> Result<Duration, BoxError> {
        let orders: Vec<IdentifiedOrder> = (0..BATCH)
            .map(|_| tee_submission(&new_external_order_id()))
            .collect();
        let started = Instant::now();
        for order in &orders {
            match command {
                "list" => {
                    self.client.orders().list(&self.query).await?;
                }
                "bare_list" => {
                    self.bare_list().await?;
                }
                "submit" => {
                    let submission = self.client.orders().submit(order).await?;
                    if !matches!(submission.submitted, Submitted::Created(_)) {
                        return Err("a fresh external id found an existing order".into());
                    }
                }
                "bare_submit" => {
                    self.bare_post(order.as_request()).await?;
                }
                "spanned_list" => {
                    spanned("GET /orders", self.bare_list()).await?;
                }
                "spanned_submit" => {
                    spanned("POST /orders", self.bare_post(order.as_request())).await?;
                }
                other => return Err(format!("unknown command {other:?}").into()),
            }
        }
        Ok(started.elapsed())
    }

    async fn shut_down(self) {
        drop(self.client);
        self.emu.shutdown().await;
    }

    /// The bare side: one `reqwest` call with the API key, the body decoded by `serde_json`.
    async fn bare_list(&self) -> Result<types::OrderList, BoxError> {
        let response = self
            .http
            .get(&self.list_url)
            .header(API_KEY_HEADER, &self.key)
            .send()
            .await?
            .error_for_status()?;
        Ok(serde_json::from_slice(&response.bytes().await?)?)
    }

    async fn bare_post(&self, order: &NewOrder) -> Result<types::Order, BoxError> {
        let response = self
            .http
            .post(&self.post_url)
            .header(API_KEY_HEADER, &self.key)
            .json(order)
            .send()
            .await?
            .error_for_status()?;
        Ok(serde_json::from_slice(&response.bytes().await?)?)
    }
}

/// `request` inside the two spans an operation exports at the least (the operation's, and its try's),
/// each with no attribute but its name and kind, entered on every poll as the client enters its own:
/// what the layer costs a caller whatever the spans carry.
async fn spanned<T>(name: &str, request: impl std::future::Future<Output = T>) -> T {
    use tracing::Instrument as _;
    let operation = tracing::info_span!(
        "operation",
        "otel.name" = "operation",
        "otel.kind" = "internal"
    );
    let attempt =
        tracing::info_span!(parent: &operation, "try", "otel.name" = name, "otel.kind" = "client");
    request.instrument(attempt).instrument(operation).await
}

/// The client's network: the bare side's reqwest client.
#[derive(Debug)]
struct SharedPool(reqwest::Client);

impl network::Network for SharedPool {
    fn send(&self, request: reqwest::Request) -> network::NetworkFuture<'_> {
        Box::pin(async move { Ok(self.0.execute(request).await?) })
    }
}
