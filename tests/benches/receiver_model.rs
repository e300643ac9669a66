//! The receiver side as a model, explored at scale (issue 29): the deeper exhaustive set of the small
//! worlds (2 receivers, 1 event, up to 5 deliveries; `Scenario::deep_limits`), then seeded random
//! schedules of every scenario until at least a million schedules have run (`-- --quick`: the
//! exhaustive set of `cargo test` and 100,000 random ones). Prints, per invariant, the schedules that
//! checked it and its violations (`receiver_model_<invariant>_checked`,
//! `receiver_model_<invariant>_violations`, target 0), each documented price paid
//! (`receiver_model_price_<price>`), and `receiver_model_schedules`,
//! `receiver_model_exhaustive_schedules`, `receiver_model_random_schedules` (each counted as run to
//! the end with every invariant judged, never as asked), `receiver_model_schedules_requested` (the
//! exhaustive runs started and the random schedules asked for), `receiver_model_schedules_unjudged`
//! (requested less judged, target 0: a run that stops early, loses a thread or skips judging misses
//! it), `receiver_model_stale_complete_schedules` (a run's `complete` sent while another run's claim
//! held the event, which its fence must stop) and `receiver_model_failover_lost_schedules` (a
//! failover lost a write its replica had not received), `receiver_model_schedules_per_sec`,
//! `receiver_model_seed`, and the schedules (of all of them) in
//! which a run's `complete` was answered after its handler returned
//! (`receiver_model_late_complete_schedules`) and, of those, the ones in which a delivery claimed the
//! event meanwhile, past the lease the claim had when the handler returned (issue 35, defect 13:
//! `receiver_model_late_complete_redelivered_schedules`). A violation prints its run and the
//! command that replays it.
//!
//! Run with `cargo bench -p store-api-tests --bench receiver_model` (`-- --quick` for a short run;
//! without `--bench`, as under `cargo test --benches`, 600 random schedules and no exhaustive set).

use std::collections::BTreeMap;
use std::time::Instant;

use store_api_tests::receivers::{self, Invariant, Price, Report, Scenario};

/// Schedules a full run explores, at least.
const FULL_SCHEDULES: u64 = 1_000_000;
/// Random schedules of a quick run.
const QUICK_RANDOM: u64 = 100_000;
const SEED: u64 = 0x5EED_0029;
const THREADS: usize = 2;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let benched = args.iter().any(|a| a == "--bench");
    let quick = args.iter().any(|a| a == "--quick");
    let seed = store_api_tests::seed_from_env("STORE_API_RECEIVER_SEED", SEED);
    let started = Instant::now();
    let mut reports: Vec<Report> = Vec::new();
    if benched {
        for scenario in Scenario::EXHAUSTIVE {
            let limits = if quick {
                scenario.exhaustive_limits()
            } else {
                scenario.deep_limits()
            };
            reports.push(receivers::exhaustive(scenario, limits, THREADS));
        }
    }
    // Counted as run (each report counts the schedules whose invariants were all judged), not as
    // asked; the exhaustive runs started are what was asked of that set.
    let exhaustive: u64 = reports.iter().map(|r| r.schedules).sum();
    let exhaustive_started: u64 = reports.iter().map(|r| r.schedules + r.unjudged).sum();
    let requested = match (benched, quick) {
        (false, _) => 600,
        (true, true) => QUICK_RANDOM,
        (true, false) => FULL_SCHEDULES.saturating_sub(exhaustive).max(QUICK_RANDOM),
    };
    let scenarios = Scenario::ALL;
    let per = requested.div_ceil(scenarios.len() as u64);
    let requested = exhaustive_started + per * scenarios.len() as u64;
    let mut random = 0;
    for scenario in scenarios {
        let report = receivers::random(scenario, seed, per, THREADS);
        random += report.schedules;
        reports.push(report);
    }
    let seconds = started.elapsed().as_secs_f64();

    let mut invariants: BTreeMap<Invariant, (u64, u64)> = BTreeMap::new();
    let mut prices: BTreeMap<Price, u64> = BTreeMap::new();
    let mut effects = 0;
    let (mut late_complete, mut late_complete_redelivered) = (0, 0);
    let (mut stale_complete, mut failover_lost) = (0, 0);
    for report in &reports {
        println!("{}", report.summary());
        effects += report.effects;
        late_complete += report.late_complete;
        late_complete_redelivered += report.late_complete_redelivered;
        stale_complete += report.stale_complete;
        failover_lost += report.failover_lost;
        for (invariant, (checked, broken)) in &report.invariants {
            let entry = invariants.entry(*invariant).or_default();
            entry.0 += checked;
            entry.1 += broken;
        }
        for (price, paid) in &report.prices {
            *prices.entry(*price).or_default() += paid;
        }
    }
    let schedules = exhaustive + random;
    for invariant in Invariant::ALL {
        let (checked, broken) = invariants.get(&invariant).copied().unwrap_or_default();
        println!("receiver_model_{}_checked={checked}", invariant.name());
        println!("receiver_model_{}_violations={broken}", invariant.name());
    }
    for price in Price::ALL {
        println!(
            "receiver_model_price_{}={}",
            price.name(),
            prices.get(&price).copied().unwrap_or_default()
        );
    }
    println!("receiver_model_effects={effects}");
    println!("receiver_model_late_complete_schedules={late_complete}");
    println!("receiver_model_late_complete_redelivered_schedules={late_complete_redelivered}");
    println!("receiver_model_stale_complete_schedules={stale_complete}");
    println!("receiver_model_failover_lost_schedules={failover_lost}");
    println!("receiver_model_schedules={schedules}");
    println!("receiver_model_schedules_requested={requested}");
    println!(
        "receiver_model_schedules_unjudged={}",
        requested.saturating_sub(schedules)
    );
    println!("receiver_model_exhaustive_schedules={exhaustive}");
    println!("receiver_model_random_schedules={random}");
    println!(
        "receiver_model_schedules_per_sec={:.0}",
        schedules as f64 / seconds.max(f64::EPSILON)
    );
    println!("receiver_model_seed={seed}");
}
