//! Exploring schedules: every one up to a depth (exhaustive), or seeded random ones beyond it, on
//! several threads, each with its own paused-clock runtime.

use std::collections::BTreeMap;
use std::time::Instant;

use super::choice::Tape;
use super::replay::{Replay, branched, describe};
use super::world::{Invariant, Price, Scenario, Verdict, World};

/// How many violations a report keeps in full (every one is counted).
const KEPT_FAILURES: usize = 10;

/// One broken invariant of this model.
pub type Violation = crate::exploration::Violation<Invariant, Replay>;

impl crate::exploration::Named for Invariant {
    fn name(&self) -> &'static str {
        Invariant::name(*self)
    }
}

impl crate::exploration::Replayable for Replay {
    fn command(&self) -> String {
        Replay::command(self)
    }
}

/// What an exploration found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The scenario.
    pub scenario: Scenario,
    /// Schedules run to the end with every invariant judged (what the figures count).
    pub schedules: u64,
    /// Schedules run whose verdict did not judge every invariant (none, unless the judge is broken).
    pub unjudged: u64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Per invariant: runs that checked it, and runs that broke it.
    pub invariants: BTreeMap<Invariant, (u64, u64)>,
    /// Per price: how often it was paid.
    pub prices: BTreeMap<Price, u64>,
    /// Effects of the handler, all runs.
    pub effects: u64,
    /// Schedules in which a run's `complete` was answered late, after its handler returned.
    pub late_complete: u64,
    /// Schedules in which, besides, a delivery claimed the event while that `complete` was
    /// outstanding, past the lease the claim had when the handler returned.
    pub late_complete_redelivered: u64,
    /// Schedules in which a run's `complete` was sent while another run's claim held the event (a
    /// stale `complete`, which its fence must stop).
    pub stale_complete: u64,
    /// Schedules in which a failover lost a write its replica had not received.
    pub failover_lost: u64,
    /// The first violations, in full.
    pub violations: Vec<Violation>,
    /// The seed of a random exploration.
    pub seed: Option<u64>,
}

impl Report {
    fn new(scenario: Scenario, seed: Option<u64>) -> Report {
        Report {
            scenario,
            schedules: 0,
            unjudged: 0,
            seconds: 0.0,
            invariants: BTreeMap::new(),
            prices: BTreeMap::new(),
            effects: 0,
            late_complete: 0,
            late_complete_redelivered: 0,
            stale_complete: 0,
            failover_lost: 0,
            violations: Vec::new(),
            seed,
        }
    }

    /// Violations of every invariant.
    pub fn violation_count(&self) -> u64 {
        self.invariants.values().map(|(_, broken)| broken).sum()
    }

    /// Schedules per second of wall time.
    pub fn rate(&self) -> f64 {
        self.schedules as f64 / self.seconds.max(f64::EPSILON)
    }

    /// Adds `other`'s counts.
    pub fn merge(&mut self, other: Report) {
        self.schedules += other.schedules;
        self.unjudged += other.unjudged;
        self.effects += other.effects;
        self.late_complete += other.late_complete;
        self.late_complete_redelivered += other.late_complete_redelivered;
        self.stale_complete += other.stale_complete;
        self.failover_lost += other.failover_lost;
        for (invariant, (checked, broken)) in other.invariants {
            let entry = self.invariants.entry(invariant).or_default();
            entry.0 += checked;
            entry.1 += broken;
        }
        for (price, paid) in other.prices {
            *self.prices.entry(price).or_default() += paid;
        }
        for violation in other.violations {
            if self.violations.len() < KEPT_FAILURES {
                self.violations.push(violation);
            }
        }
    }

    fn record(&mut self, scenario: Scenario, verdict: &Verdict, tape: &Tape) {
        // Counted as run only once every invariant was judged on its history.
        if Invariant::ALL
            .iter()
            .all(|invariant| verdict.checks.contains_key(invariant))
        {
            self.schedules += 1;
        } else {
            self.unjudged += 1;
        }
        self.effects += verdict.effects;
        self.late_complete += u64::from(verdict.late_complete);
        self.late_complete_redelivered += u64::from(verdict.late_complete_redelivered);
        self.stale_complete += u64::from(verdict.stale_complete);
        self.failover_lost += u64::from(verdict.failover_lost);
        for (price, paid) in &verdict.prices {
            *self.prices.entry(*price).or_default() += paid;
        }
        for (invariant, why) in &verdict.checks {
            let entry = self.invariants.entry(*invariant).or_default();
            entry.0 += 1;
            if let Some(why) = why {
                entry.1 += 1;
                if self.violations.len() < KEPT_FAILURES {
                    self.violations.push(Violation {
                        invariant: *invariant,
                        why: why.clone(),
                        run: describe(tape, scenario),
                        replay: Replay::of(scenario, tape),
                    });
                }
            }
        }
    }

    /// The report as text: per invariant, schedules and violations; the prices paid; then the
    /// violations kept.
    pub fn summary(&self) -> String {
        let mut text = format!(
            "receivers {} {}: {} schedules judged in {:.1} s ({:.0}/s){}{}\n",
            self.scenario.name(),
            if self.seed.is_some() {
                "random"
            } else {
                "exhaustive"
            },
            self.schedules,
            self.seconds,
            self.rate(),
            if self.unjudged > 0 {
                format!(", {} run without every invariant judged", self.unjudged)
            } else {
                String::new()
            },
            self.seed
                .map(|seed| format!(", seed {seed} (STORE_API_RECEIVER_SEED={seed} reruns it)"))
                .unwrap_or_default()
        );
        for (invariant, (checked, broken)) in &self.invariants {
            text.push_str(&format!(
                "  {:<28} checked {checked:>9}  violated {broken}\n",
                invariant.name()
            ));
        }
        let prices: Vec<String> = self
            .prices
            .iter()
            .map(|(price, paid)| format!("{} {paid}", price.name()))
            .collect();
        text.push_str(&format!(
            "  complete answered after the handler returned: {} schedules, a delivery claiming \
             meanwhile past the claim's old lease in {}\n",
            self.late_complete, self.late_complete_redelivered
        ));
        text.push_str(&format!(
            "  a stale complete (another run's claim held the event): {} schedules; a failover \
             that lost a write: {}\n",
            self.stale_complete, self.failover_lost
        ));
        text.push_str(&format!(
            "  effects {}; prices paid: {}\n",
            self.effects,
            if prices.is_empty() {
                "none".to_owned()
            } else {
                prices.join(", ")
            }
        ));
        for violation in &self.violations {
            text.push_str(&format!("{violation}\n"));
        }
        text
    }
}

/// Runs `work` on `threads` threads, each with its own paused-clock runtime, and merges their reports.
fn on_threads<F, Fut>(scenario: Scenario, seed: Option<u64>, threads: usize, work: F) -> Report
where
    F: Fn(usize, World) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Report>,
{
    let started = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|thread| {
            let work = work.clone();
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .start_paused(true)
                    .build()
                    .expect("a runtime");
                runtime.block_on(async move { work(thread, World::new(scenario)).await })
            })
        })
        .collect();
    let mut report = Report::new(scenario, seed);
    for handle in handles {
        match handle.join() {
            Ok(part) => report.merge(part),
            Err(_) => {
                let entry = report.invariants.entry(Invariant::NoPanic).or_default();
                entry.0 += 1;
                entry.1 += 1;
            }
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    report
}

/// Every schedule of `scenario` that branches on at most `limits` points of each kind (deliveries,
/// runs, exchanges, as [`Scenario::exhaustive_limits`]), split over `threads`. The receivers are
/// alike, so the first delivery goes to receiver 0 (its mirror image would add nothing).
pub fn exhaustive(scenario: Scenario, limits: [usize; 3], threads: usize) -> Report {
    let threads = threads.max(1);
    on_threads(
        scenario,
        None,
        threads,
        move |thread, mut world| async move {
            let mut report = Report::new(scenario, None);
            let mut stack: Vec<Vec<u8>> = vec![Vec::new()];
            let mut children_at_root = 0usize;
            while let Some(prefix) = stack.pop() {
                let root = prefix.is_empty();
                let (verdict, tape) = world.run(Tape::new(prefix.clone(), limits, None)).await;
                // Every thread runs the root to find its children; only the first counts it.
                if !root || thread == 0 {
                    report.record(scenario, &verdict, &tape);
                }
                push_children(&mut stack, &prefix, &branched(&tape, scenario), |child| {
                    if child.len() == 1 && !scenario.first_delivery_to_receiver_0(child[0]) {
                        return false;
                    }
                    if root {
                        children_at_root += 1;
                        (children_at_root - 1) % threads == thread
                    } else {
                        true
                    }
                });
            }
            report
        },
    )
}

/// Pushes the schedules that differ from the run of `prefix` at one branch point past it: `prefix`,
/// then the first choice up to that point, then any other choice there. `mine` says which to keep.
fn push_children(
    stack: &mut Vec<Vec<u8>>,
    prefix: &[u8],
    arities: &[usize],
    mut mine: impl FnMut(&[u8]) -> bool,
) {
    for (at, arity) in arities.iter().enumerate().skip(prefix.len()) {
        for choice in 1..*arity {
            let mut child = prefix.to_vec();
            child.resize(at, 0);
            child.push(u8::try_from(choice).unwrap_or(0));
            if mine(&child) {
                stack.push(child);
            }
        }
    }
}

/// `count` random schedules of `scenario` from `seed`, split over `threads`.
pub fn random(scenario: Scenario, seed: u64, count: u64, threads: usize) -> Report {
    let threads = threads.max(1);
    on_threads(
        scenario,
        Some(seed),
        threads,
        move |thread, mut world| async move {
            let mut report = Report::new(scenario, Some(seed));
            let mut index = thread as u64;
            while index < count {
                let tape = Tape::new(Vec::new(), scenario.open_limits(), Some(mix(seed, index)));
                let (verdict, tape) = world.run(tape).await;
                report.record(scenario, &verdict, &tape);
                index += threads as u64;
            }
            report
        },
    )
}

/// Runs one schedule in a fresh world; returns the report of that one run (and prints the run).
pub fn replay(replay: &Replay) -> Report {
    let scenario = replay.scenario;
    let script: std::sync::Arc<Vec<u8>> =
        std::sync::Arc::new(replay.script.iter().map(|(_, choice)| *choice).collect());
    on_threads(scenario, None, 1, move |_, mut world| {
        let script = script.clone();
        world.trace = true;
        async move {
            let mut report = Report::new(scenario, None);
            let tape = Tape::new(script.to_vec(), scenario.open_limits(), None);
            let (verdict, tape) = world.run(tape).await;
            report.record(scenario, &verdict, &tape);
            eprintln!("run: {}", describe(&tape, scenario));
            report
        }
    })
}

/// One run, as a replay test compares it: its schedule, every choice it made, and its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The schedule that replays it.
    pub replay: Replay,
    /// Every choice, with its point, as a failure prints the run.
    pub choices: String,
    /// The verdict in full: each invariant's check and why it broke, the prices, the effects.
    pub verdict: String,
}

impl Run {
    fn of(scenario: Scenario, verdict: &Verdict, tape: &Tape) -> Run {
        Run {
            replay: Replay::of(scenario, tape),
            choices: describe(tape, scenario),
            verdict: format!("{verdict:?}"),
        }
    }
}

/// Runs `work` on one thread with a paused-clock runtime.
fn on_one_thread<T: Send + 'static>(
    scenario: Scenario,
    work: impl AsyncFnOnce(World) -> T + Send + 'static,
) -> T {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("a runtime")
            .block_on(work(World::new(scenario)))
    })
    .join()
    .expect("the runs end without a panic")
}

/// The first `count` random schedules of `scenario` from `seed` (those of [`random`]), each run in
/// full.
pub fn random_runs(scenario: Scenario, seed: u64, count: u64) -> Vec<Run> {
    on_one_thread(scenario, async move |mut world| {
        let mut runs = Vec::new();
        for index in 0..count {
            let tape = Tape::new(Vec::new(), scenario.open_limits(), Some(mix(seed, index)));
            let (verdict, tape) = world.run(tape).await;
            runs.push(Run::of(scenario, &verdict, &tape));
        }
        runs
    })
}

/// `replay` run again in a fresh world, in full.
pub fn replay_run(replay: &Replay) -> Run {
    let replay = replay.clone();
    on_one_thread(replay.scenario, async move |mut world| {
        let script = replay.script.iter().map(|(_, choice)| *choice).collect();
        let tape = Tape::new(script, replay.scenario.open_limits(), None);
        let (verdict, tape) = world.run(tape).await;
        Run::of(replay.scenario, &verdict, &tape)
    })
}

/// The seed of run `index` of a random exploration from `seed` (splitmix64).
fn mix(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
