//! The model of the network explored at scale (issue 22): every schedule of up to 3 `POST`s and 3
//! lookups of a submission and of up to 3 reads of `get`, `pages` and `stream` (the exhaustive set of
//! `cargo test`), then seeded random schedules of any length, until at least a million schedules
//! have run (`-- --quick`: 100,000 random ones): nine in ten of them submissions, the rest shared by
//! `get`, `pages` and `stream`. Prints, per invariant, the schedules that checked it
//! and its violations (`sim_<invariant>_checked`, `sim_<invariant>_violations`, target 0), and
//! `sim_schedules`, `sim_exhaustive_schedules`, `sim_random_schedules` (each counted as run to the
//! end with the invariants every run judges, never as asked), `sim_schedules_requested` (the
//! exhaustive runs started and the random schedules asked for), `sim_schedules_unjudged` (requested
//! less judged, target 0: a run that stops early, loses a thread or skips judging misses it),
//! `sim_schedules_per_sec`, `sim_seed`. A violation prints its run and the command that replays it.
//!
//! Run with `cargo bench -p store-api-tests --bench sim` (`-- --quick` for a short run; without
//! `--bench`, as under `cargo test --benches`, 1,000 random schedules and no exhaustive set).

use std::collections::BTreeMap;
use std::time::Instant;

use store_api_tests::sim::{self, Exchange, Invariant, Report, Scenario};

/// Schedules a full run explores, at least.
const FULL_SCHEDULES: u64 = 1_000_000;
/// Random schedules of a quick run.
const QUICK_RANDOM: u64 = 100_000;
/// The share of the random schedules given to the reads (split evenly between them).
const READ_SHARE: f64 = 0.1;
const SEED: u64 = 0x5EED_0022;
const THREADS: usize = 2;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let benched = args.iter().any(|a| a == "--bench");
    let quick = args.iter().any(|a| a == "--quick");
    let seed = store_api_tests::seed_from_env("STORE_API_SIM_SEED", SEED);
    let started = Instant::now();
    let mut reports: Vec<Report> = Vec::new();
    if benched {
        for scenario in Scenario::ALL {
            reports.push(sim::exhaustive(scenario, &Exchange::EXHAUSTIVE, THREADS));
        }
    }
    // Counted as run (each report counts the schedules it judged), not as asked.
    let exhaustive: u64 = reports.iter().map(|r| r.schedules).sum();
    let exhaustive_started: u64 = reports.iter().map(|r| r.schedules + r.unjudged).sum();
    let asked = match (benched, quick) {
        (false, _) => 1_000,
        (true, true) => QUICK_RANDOM,
        (true, false) => FULL_SCHEDULES.saturating_sub(exhaustive).max(QUICK_RANDOM),
    };
    let reads = Scenario::READS;
    let per_read = (asked as f64 * READ_SHARE / reads.len() as f64) as u64;
    let submissions = asked - per_read * reads.len() as u64;
    let requested = exhaustive_started + asked;
    let mut random = 0;
    let report = sim::random(Scenario::Submit, seed, submissions, 0.4, THREADS);
    random += report.schedules;
    reports.push(report);
    for scenario in reads {
        let report = sim::random(scenario, seed, per_read, 0.5, THREADS);
        random += report.schedules;
        reports.push(report);
    }
    let seconds = started.elapsed().as_secs_f64();

    let mut invariants: BTreeMap<Invariant, (u64, u64)> = BTreeMap::new();
    for report in &reports {
        println!("{}", report.summary());
        for (invariant, (checked, broken)) in &report.invariants {
            let entry = invariants.entry(*invariant).or_default();
            entry.0 += checked;
            entry.1 += broken;
        }
    }
    let schedules = exhaustive + random;
    for invariant in Invariant::ALL {
        let (checked, broken) = invariants.get(&invariant).copied().unwrap_or_default();
        println!("sim_{}_checked={checked}", invariant.name());
        println!("sim_{}_violations={broken}", invariant.name());
    }
    println!("sim_schedules={schedules}");
    println!("sim_schedules_requested={requested}");
    println!(
        "sim_schedules_unjudged={}",
        requested.saturating_sub(schedules)
    );
    println!("sim_exhaustive_schedules={exhaustive}");
    println!("sim_random_schedules={random}");
    println!(
        "sim_schedules_per_sec={:.0}",
        schedules as f64 / seconds.max(f64::EPSILON)
    );
    println!("sim_seed={seed}");
}
