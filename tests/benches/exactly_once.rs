//! Exactly-once order submission under faults, as a figure: `submit` calls through the fault-injecting
//! proxy of this crate (`store_api_tests::proxy`, about 30% of exchanges broken), then what the emulator
//! holds: orders, duplicates, lost orders, and how many extra requests each fault cost.
//!
//! The setup is the integration test's (`it/exactly_once.rs`): 16 submissions in flight, a 500 ms client
//! timeout, faults drawn from every kind the proxy knows (dropped answer after commit, 500, a few 429s,
//! reset, answer held past the timeout), fast retries. The test asserts; this bench counts, so a run
//! that loses or doubles an order still prints the numbers.
//!
//! - `exactly_once_orders`: orders the emulator holds after the run (target: the number of calls);
//! - `exactly_once_duplicates`: orders beyond one per external id (target 0);
//! - `exactly_once_lost`: external ids submitted that the emulator does not hold (target 0);
//! - `exactly_once_errors`: `submit` calls that returned an error;
//! - `exactly_once_faults`: faults the proxy injected;
//! - `exactly_once_extra_requests_per_fault`: requests beyond the fault-free minimum (one `POST` per call
//!   plus the store-snapshot reads that succeeded), divided by the faults;
//! - `exactly_once_orders_per_sec`: calls per second of wall time of that run, faults and retries included;
//! - `exactly_once_clean_orders_per_sec`: the same calls through the same proxy with no fault
//!   (`FaultPlan::none()`), run first on a fresh emulator; the run must end with every order held once.
//!   Both rates are regression gates for later changes, not targets: they move with the machine's load.
//!
//! Then the rare-fault matrix of issue 10 (`store_api_tests::matrix`): 125 calls per rare fault kind
//! (1,000 in all, in both modes), and per kind `exactly_once_matrix_<kind>_{duplicates,lost,wrong,
//! undecided}` (each target 0), `_refused` and `_faults`, plus `exactly_once_matrix_submissions`.
//!
//! Run with `cargo bench -p store-api-tests --bench exactly_once` (1,000 calls; `-- --quick`: 200; without
//! `--bench`, as under `cargo test --benches`: 50 calls and 5 per matrix kind).

use std::collections::{HashMap, HashSet};
use std::error::Error;
use std::time::{Duration, Instant};

use futures::StreamExt;
use store_api::{Client, RateLimiter, RetryPolicy, Submitted, new_external_order_id};
use store_api_tests::matrix;
use store_api_tests::proxy::{Fault, FaultPlan, FaultProxy, Outcome};
use store_api_tests::tee_submission;
use store_api_tests::{ALPHA, emulator, key_of};

type BoxError = Box<dyn Error + Send + Sync>;

const CONCURRENCY: usize = 16;
const CLIENT_TIMEOUT: Duration = Duration::from_millis(500);
const FAULT_RATE: f64 = 0.3;
/// 429s pause the client's whole store for `Retry-After` (1 s), so only a few are injected.
const MAX_RATE_LIMITED: usize = 6;

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let benched = args.iter().any(|a| a == "--bench");
    let calls = if !benched {
        50
    } else if args.iter().any(|a| a == "--quick") {
        200
    } else {
        1_000
    };
    // The matrix is the 1,000 submissions in both modes; a smoke run keeps it small.
    let per_kind = if benched { 125 } else { 5 };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let clean = runtime.block_on(run(calls, FaultPlan::none()))?;
    clean.print_clean()?;
    let plan = FaultPlan::faults(
        0x5EED_0001,
        FAULT_RATE,
        CLIENT_TIMEOUT + Duration::from_millis(300),
        MAX_RATE_LIMITED,
    );
    let report = runtime.block_on(run(calls, plan))?;
    report.print();
    let rows = runtime.block_on(matrix::run(per_kind));
    print_matrix(&rows);
    Ok(())
}

fn print_matrix(rows: &[(matrix::Kind, matrix::Row)]) {
    let submissions: usize = rows.iter().map(|(_, row)| row.submissions).sum();
    println!("exactly-once fault matrix: {submissions} submit calls");
    println!(
        "  {:<24} {:>10} {:>6} {:>6} {:>10} {:>8} {:>7}",
        "fault kind", "duplicates", "lost", "wrong", "undecided", "refused", "faults"
    );
    for (kind, row) in rows {
        println!(
            "  {:<24} {:>10} {:>6} {:>6} {:>10} {:>8} {:>7}",
            kind.name(),
            row.duplicates,
            row.lost,
            row.wrong,
            row.undecided,
            row.refused,
            row.faults
        );
    }
    println!("exactly_once_matrix_submissions={submissions}");
    for (kind, row) in rows {
        let name = kind.name();
        println!("exactly_once_matrix_{name}_duplicates={}", row.duplicates);
        println!("exactly_once_matrix_{name}_lost={}", row.lost);
        println!("exactly_once_matrix_{name}_wrong={}", row.wrong);
        println!("exactly_once_matrix_{name}_undecided={}", row.undecided);
        println!("exactly_once_matrix_{name}_refused={}", row.refused);
        println!("exactly_once_matrix_{name}_faults={}", row.faults);
    }
}

/// What one run counted.
#[derive(Debug)]
struct Report {
    calls: usize,
    orders: usize,
    duplicates: usize,
    lost: usize,
    errors: usize,
    created: usize,
    already_existed: usize,
    requests: usize,
    snapshot_reads: usize,
    faults: Vec<(Fault, usize)>,
    elapsed: Duration,
}

impl Report {
    fn fault_count(&self) -> usize {
        self.faults.iter().map(|(_, n)| n).sum()
    }

    /// Requests beyond one `POST` per call and the snapshot reads that succeeded, per fault.
    fn extra_requests_per_fault(&self) -> f64 {
        let minimum = self.calls + self.snapshot_reads;
        let extra = self.requests.saturating_sub(minimum);
        match self.fault_count() {
            0 => 0.0,
            faults => extra as f64 / faults as f64,
        }
    }

    /// Calls per second of wall time.
    fn orders_per_second(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }

    /// Prints the fault-free run's rate; an error when it did not hold every order exactly once, which
    /// would make the rate meaningless.
    fn print_clean(&self) -> Result<(), BoxError> {
        println!(
            "exactly-once without faults: {} submit calls through the proxy, {CONCURRENCY} in flight, in {:.2} s: {:.0} orders/s",
            self.calls,
            self.elapsed.as_secs_f64(),
            self.orders_per_second()
        );
        if self.orders != self.calls || self.duplicates + self.lost + self.errors > 0 {
            return Err(format!("the fault-free run went wrong: {self:?}").into());
        }
        println!(
            "exactly_once_clean_orders_per_sec={:.1}",
            self.orders_per_second()
        );
        Ok(())
    }

    fn print(&self) {
        println!(
            "exactly-once: {} submit calls through the fault proxy ({:.0}% faults), {CONCURRENCY} in flight, in {:.1} s: {:.0} orders/s",
            self.calls,
            FAULT_RATE * 100.0,
            self.elapsed.as_secs_f64(),
            self.orders_per_second()
        );
        println!(
            "  orders held {} (target {}), duplicates {}, lost {}, errors {}",
            self.orders, self.calls, self.duplicates, self.lost, self.errors
        );
        println!(
            "  {} created, {} found existing after a lost answer",
            self.created, self.already_existed
        );
        println!(
            "  {} requests through the proxy ({} snapshot reads), {} faults {:?}",
            self.requests,
            self.snapshot_reads,
            self.fault_count(),
            self.faults
        );
        println!("exactly_once_calls={}", self.calls);
        println!("exactly_once_orders={}", self.orders);
        println!("exactly_once_duplicates={}", self.duplicates);
        println!("exactly_once_lost={}", self.lost);
        println!("exactly_once_errors={}", self.errors);
        println!("exactly_once_already_existed={}", self.already_existed);
        println!("exactly_once_requests={}", self.requests);
        println!("exactly_once_faults={}", self.fault_count());
        println!(
            "exactly_once_extra_requests_per_fault={:.3}",
            self.extra_requests_per_fault()
        );
        println!("exactly_once_wall_s={:.2}", self.elapsed.as_secs_f64());
        println!(
            "exactly_once_orders_per_sec={:.1}",
            self.orders_per_second()
        );
    }
}

/// `calls` submissions through the proxy with `plan`, on a fresh emulator.
async fn run(calls: usize, plan: FaultPlan) -> Result<Report, BoxError> {
    let emu = emulator().await;
    let proxy = FaultProxy::start(emu.origin(), plan).await;
    let client = Client::builder()
        .base_url(proxy.base_url())
        .store_id(ALPHA)
        .api_key(key_of(&emu, ALPHA))
        .timeout(CLIENT_TIMEOUT)
        .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
        .submit_retry_policy(
            RetryPolicy::default()
                .with_max_attempts(12)
                .with_base_delay(Duration::from_millis(5)),
        )
        .retry_policy(
            RetryPolicy::default()
                .with_max_attempts(10)
                .with_base_delay(Duration::from_millis(5)),
        )
        .build()?;

    let external_ids: Vec<String> = (0..calls).map(|_| new_external_order_id()).collect();
    let started = Instant::now();
    let results: Vec<_> = futures::stream::iter(external_ids.clone())
        .map(|external_id| {
            let client = client.clone();
            async move {
                let result = client.orders().submit(&tee_submission(&external_id)).await;
                (external_id, result)
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let elapsed = started.elapsed();

    let (mut created, mut already_existed, mut errors) = (0, 0, 0);
    for (external_id, result) in &results {
        match result.as_ref().map(|s| &s.submitted) {
            Ok(Submitted::Created(_)) => created += 1,
            Ok(Submitted::AlreadyExisted(_)) => already_existed += 1,
            Ok(other) => eprintln!("{external_id}: unexpected result {other:?}"),
            Err(error) => {
                errors += 1;
                eprintln!("{external_id}: {error}");
            }
        }
    }

    // One order per external id: count per id what the emulator holds.
    let mut held: HashMap<String, usize> = HashMap::new();
    let stored = emu.orders(ALPHA);
    for order in &stored {
        if let Some(id) = &order.external_order_id {
            *held.entry(id.clone()).or_default() += 1;
        }
    }
    let submitted: HashSet<&String> = external_ids.iter().collect();
    let duplicates = held.values().map(|n| n.saturating_sub(1)).sum();
    let lost = submitted
        .iter()
        .filter(|id| !held.contains_key(**id))
        .count();

    let exchanges = proxy.exchanges();
    let snapshot_reads = exchanges
        .iter()
        .filter(|e| {
            e.method == "GET"
                && !e.target.contains("/orders")
                && matches!(e.outcome, Outcome::Relayed(200))
        })
        .count();
    let faults = Fault::ALL
        .iter()
        .map(|f| (*f, proxy.injected(*f)))
        .collect();
    drop(client);
    drop(proxy);
    Ok(Report {
        calls,
        orders: stored.len(),
        duplicates,
        lost,
        errors,
        created,
        already_existed,
        requests: exchanges.len(),
        snapshot_reads,
        faults,
        elapsed,
    })
}
