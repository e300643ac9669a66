//! Exploring schedules: every one up to a depth (exhaustive), or seeded random ones beyond it, on
//! several threads, each with its own world and its own paused clock.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Instant;

use super::exchange::Exchange;
use super::network::{Limits, Step, Tape};
use super::world::{Invariant, Scenario, World};

/// How many violations a report keeps in full (every one is counted).
const KEPT_FAILURES: usize = 10;

impl Scenario {
    /// The exchanges the exhaustive exploration branches on: the first 3 `POST`s and the first 3
    /// lookups of a submission; the first 3 reads of a read.
    pub fn exhaustive_limits(self) -> Limits {
        match self {
            Scenario::Submit => Limits {
                posts: 3,
                lookups: 3,
                reads: 0,
            },
            _ => Limits {
                posts: 0,
                lookups: 0,
                reads: 3,
            },
        }
    }

    /// The exchanges random schedules (and replays) branch on: every one of the scenario's kinds.
    pub fn open_limits(self) -> Limits {
        match self {
            Scenario::Submit => Limits {
                posts: usize::MAX,
                lookups: usize::MAX,
                reads: 0,
            },
            _ => Limits {
                posts: 0,
                lookups: 0,
                reads: usize::MAX,
            },
        }
    }

    fn branches_on(self, step: Step) -> bool {
        let limits = self.open_limits();
        match step {
            Step::Post => limits.posts > 0,
            Step::Lookup => limits.lookups > 0,
            Step::Read => limits.reads > 0,
            Step::Other => false,
        }
    }
}

/// A schedule that replays one run: the scenario and what each of its exchanges of the scenario's
/// kinds got, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// The scenario.
    pub scenario: Scenario,
    /// What each exchange got.
    pub script: Vec<Exchange>,
}

impl Replay {
    fn of(scenario: Scenario, tape: &Tape) -> Replay {
        let script = tape
            .exchanges
            .iter()
            .filter(|(step, _, _)| scenario.branches_on(*step))
            .map(|(_, exchange, _)| *exchange)
            .collect();
        Replay { scenario, script }
    }

    /// Reads the form [`Replay`]'s `Display` writes: `submit: lost-after page-403 deliver`.
    pub fn parse(text: &str) -> Result<Replay, String> {
        let (name, script) = text
            .split_once(':')
            .ok_or_else(|| format!("{text:?}: expected `scenario: exchange exchange …`"))?;
        let scenario = Scenario::named(name.trim())
            .ok_or_else(|| format!("{name:?} is not a scenario (submit, get, pages, stream)"))?;
        let script = script
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()?;
        Ok(Replay { scenario, script })
    }

    /// The one command that replays it.
    pub fn command(&self) -> String {
        format!(
            "STORE_API_SIM_REPLAY='{self}' cargo test -p store-api-tests --test it -- sim::replay_a_schedule --exact --nocapture"
        )
    }
}

impl fmt::Display for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.scenario.name())?;
        for exchange in &self.script {
            write!(f, " {exchange}")?;
        }
        Ok(())
    }
}

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
    /// Schedules run to the end with the invariants every run judges judged (what the figures count).
    pub schedules: u64,
    /// Schedules run whose verdict lacks one of those (none, unless the run or its judge is broken).
    pub unjudged: u64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Per invariant: runs that checked it, and runs that broke it.
    pub invariants: BTreeMap<Invariant, (u64, u64)>,
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
            violations: Vec::new(),
            seed,
        }
    }

    /// Violations of every invariant.
    pub fn violation_count(&self) -> u64 {
        self.invariants.values().map(|(_, broken)| broken).sum()
    }

    /// The scenario's invariants that no run of this exploration checked.
    pub fn unchecked(&self) -> Vec<Invariant> {
        self.scenario
            .invariants()
            .iter()
            .copied()
            .filter(|invariant| self.invariants.get(invariant).is_none_or(|(c, _)| *c == 0))
            .collect()
    }

    /// Schedules per second of wall time.
    pub fn rate(&self) -> f64 {
        self.schedules as f64 / self.seconds.max(f64::EPSILON)
    }

    fn merge(&mut self, other: Report) {
        self.schedules += other.schedules;
        self.unjudged += other.unjudged;
        for (invariant, (checked, broken)) in other.invariants {
            let entry = self.invariants.entry(invariant).or_default();
            entry.0 += checked;
            entry.1 += broken;
        }
        for violation in other.violations {
            if self.violations.len() < KEPT_FAILURES {
                self.violations.push(violation);
            }
        }
    }

    fn record(&mut self, scenario: Scenario, verdict: &super::world::Verdict, tape: &Tape) {
        if Invariant::EVERY_RUN
            .iter()
            .all(|invariant| verdict.checks.contains_key(invariant))
        {
            self.schedules += 1;
        } else {
            self.unjudged += 1;
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
                        run: tape.describe(),
                        replay: Replay::of(scenario, tape),
                    });
                }
            }
        }
    }

    /// The report as text: per invariant, schedules and violations; then the violations kept.
    pub fn summary(&self) -> String {
        let mut text = format!(
            "{} {}: {} schedules judged in {:.1} s ({:.0}/s){}{}\n",
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
                format!(", {} run without their invariants judged", self.unjudged)
            } else {
                String::new()
            },
            self.seed
                .map(|seed| format!(", seed {seed} (STORE_API_SIM_SEED={seed} reruns it)"))
                .unwrap_or_default()
        );
        for (invariant, (checked, broken)) in &self.invariants {
            text.push_str(&format!(
                "  {:<28} checked {checked:>9}  violated {broken}\n",
                invariant.name()
            ));
        }
        for violation in &self.violations {
            text.push_str(&format!("{violation}\n"));
        }
        text
    }
}

/// Runs `work` on `threads` threads, each with its own paused-clock runtime and world, and merges
/// their reports.
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
                runtime.block_on(async move {
                    let world = World::new(&format!("sim{thread}")).await;
                    work(thread, world).await
                })
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

/// Every schedule of `scenario` over `alphabet` within the scenario's exhaustive limits, split over
/// `threads`.
pub fn exhaustive(scenario: Scenario, alphabet: &'static [Exchange], threads: usize) -> Report {
    let threads = threads.max(1);
    on_threads(
        scenario,
        None,
        threads,
        move |thread, mut world| async move {
            let limits = scenario.exhaustive_limits();
            let mut report = Report::new(scenario, None);
            let mut stack: Vec<Vec<Exchange>> = vec![Vec::new()];
            let mut children_at_root = 0usize;
            while let Some(prefix) = stack.pop() {
                let root = prefix.is_empty();
                if root && thread != 0 {
                    // Every thread runs the root to find its children; only the first counts it.
                    let (_, tape) = world
                        .run(scenario, Tape::new(Vec::new(), limits, None))
                        .await;
                    push_children(&mut stack, &prefix, tape.branch_points(), alphabet, |_| {
                        children_at_root += 1;
                        (children_at_root - 1) % threads == thread
                    });
                    continue;
                }
                let (verdict, tape) = world
                    .run(scenario, Tape::new(prefix.clone(), limits, None))
                    .await;
                report.record(scenario, &verdict, &tape);
                push_children(&mut stack, &prefix, tape.branch_points(), alphabet, |_| {
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
/// then `Deliver` up to that point, then any other exchange there. `mine` says which to keep.
fn push_children(
    stack: &mut Vec<Vec<Exchange>>,
    prefix: &[Exchange],
    branch_points: usize,
    alphabet: &[Exchange],
    mut mine: impl FnMut(&[Exchange]) -> bool,
) {
    for at in prefix.len()..branch_points {
        for exchange in alphabet.iter().filter(|e| **e != Exchange::Deliver) {
            let mut child = prefix.to_vec();
            child.resize(at, Exchange::Deliver);
            child.push(exchange.at(at));
            if mine(&child) {
                stack.push(child);
            }
        }
    }
}

/// `count` random schedules of `scenario` from `seed` (a `Deliver` at each exchange with probability
/// `deliver`), split over `threads`.
pub fn random(scenario: Scenario, seed: u64, count: u64, deliver: f64, threads: usize) -> Report {
    let threads = threads.max(1);
    on_threads(
        scenario,
        Some(seed),
        threads,
        move |thread, mut world| async move {
            let mut report = Report::new(scenario, Some(seed));
            let mut index = thread as u64;
            while index < count {
                let tape = Tape::new(
                    Vec::new(),
                    scenario.open_limits(),
                    Some((mix(seed, index), deliver)),
                );
                let (verdict, tape) = world.run(scenario, tape).await;
                report.record(scenario, &verdict, &tape);
                index += threads as u64;
            }
            report
        },
    )
}

/// Runs one schedule in a fresh world; returns the report of that one run.
pub fn replay(replay: &Replay) -> Report {
    let replay = replay.clone();
    let scenario = replay.scenario;
    let script = std::sync::Arc::new(replay.script);
    on_threads(scenario, None, 1, move |_, mut world| {
        let script = script.clone();
        async move {
            let mut report = Report::new(scenario, None);
            let tape = Tape::new(script.to_vec(), scenario.open_limits(), None);
            let (verdict, tape) = world.run(scenario, tape).await;
            report.record(scenario, &verdict, &tape);
            eprintln!("run: {}", tape.describe());
            report
        }
    })
}

/// The seed of run `index` of a random exploration from `seed` (splitmix64).
fn mix(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
