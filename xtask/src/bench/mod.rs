//! `cargo xtask bench [--quick]`: measures the SDK against its targets on this machine, prints a table
//! and rewrites `BENCHMARKS.md`.
//!
//! Steps: one build of every bench (release, but for the start bench's debug build; timed, not counted
//! as measurement), then each bench with
//! `cargo bench` (their `name=value` lines are the figures), Prism's mock server under the throughput
//! bench's load generator, and in a full run the build-cost builds and the mutation run ([`mutants`]).
//! Every figure is judged against its target ([`figures::all`]); the command exits non-zero when a
//! figure misses beyond its gate's margin, a zero-tolerance figure could not be measured, or a bench
//! failed.

pub mod build_cost;
pub mod figures;
pub mod machine;
pub mod metrics;
pub mod mutants;
pub mod plots;
pub mod prism;
pub mod report;
pub mod runner;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use figures::Row;
use machine::{Load, Machine, Sample};
use metrics::Metrics;
use runner::BenchRun;

/// How big a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every bench at its reduced size (for CI); no build-cost builds.
    Quick,
    /// Every bench at full size, and the build-cost builds.
    Full,
}

impl Mode {
    /// The command that runs this mode.
    pub fn command(self) -> &'static str {
        match self {
            Mode::Quick => "cargo xtask bench --quick",
            Mode::Full => "cargo xtask bench",
        }
    }
}

/// Why the command could not run.
#[derive(Debug)]
pub enum BenchError {
    /// A file or process operation failed.
    Io(String, std::io::Error),
    /// A command failed.
    Command {
        /// The command.
        command: String,
        /// How it failed.
        detail: String,
    },
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(what, e) => write!(f, "{what}: {e}"),
            Self::Command { command, detail } => write!(f, "`{command}` failed: {detail}"),
        }
    }
}

impl std::error::Error for BenchError {}

/// One step of a run: a bench, the Prism measurement or the builds.
#[derive(Debug, Clone)]
pub struct Step {
    /// What it ran.
    pub run: BenchRun,
    /// Whether its failure fails the command (Prism needs Node.js and npm, which a machine may lack).
    pub required: bool,
    /// How busy the machine was otherwise while it ran.
    pub load: Option<Load>,
}

impl Step {
    /// Runs `work` as a step, sampling the machine's load around it.
    fn sampled(required: bool, work: impl FnOnce() -> BenchRun) -> Step {
        let before = Sample::now();
        let run = work();
        let load = before
            .zip(Sample::now())
            .and_then(|(before, after)| after.load_since(before));
        Step {
            run,
            required,
            load,
        }
    }
}

/// Everything a run produced.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Quick or full.
    pub mode: Mode,
    /// The path Prism answered the orders page under, when it ran.
    pub prism_path: Option<String>,
    /// The machine.
    pub machine: Machine,
    /// The build of the benches (before measuring).
    pub build_time: Duration,
    /// Every step, in order.
    pub steps: Vec<Step>,
    /// Every figure and its verdict.
    pub rows: Vec<Row>,
    /// Time from the first measurement to the last.
    pub measurement_time: Duration,
    /// How busy the machine was otherwise during the measurements.
    pub load: Option<Load>,
    /// The plots written beside `BENCHMARKS.md`.
    pub plots: Vec<plots::Plot>,
}

impl Summary {
    /// Whether the command fails: a gated miss, or a required step that failed.
    pub fn failed(&self) -> bool {
        self.rows.iter().any(Row::fails)
            || self
                .steps
                .iter()
                .any(|s| s.required && s.run.failure.is_some())
    }
}

/// Runs the command and turns its outcome into an exit code.
pub fn command(mode: Mode) -> ExitCode {
    match run(mode) {
        Ok(summary) if summary.failed() => {
            eprintln!(
                "error: a figure missed its target beyond its margin, or a step failed (see above)"
            );
            ExitCode::FAILURE
        }
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Measures everything, prints the table and writes `BENCHMARKS.md`.
pub fn run(mode: Mode) -> Result<Summary, BenchError> {
    let root = crate::workspace_root();
    let machine = Machine::detect();
    let (build_time, executables) = runner::build(&root)?;
    let started = Instant::now();
    let first_sample = Sample::now();
    let mut steps = Vec::new();
    let mut prism_path = None;
    for bench in runner::SUITE {
        // `build_release` checked that every bench of the suite has an executable.
        let Some(executable) = executables.get(bench.name) else {
            continue;
        };
        steps.push(Step::sampled(true, || {
            runner::run(&root, executable, bench, mode, &[])
        }));
        if bench.name == THROUGHPUT {
            steps.push(Step::sampled(false, || {
                let (run, path) = measure_prism(&root, executable, bench, mode);
                prism_path = path;
                run
            }));
        }
    }
    if mode == Mode::Full {
        steps.push(Step::sampled(true, || measure_build_cost(&root)));
        // Last: it builds for tens of minutes, which would weigh on any measurement after it.
        steps.push(Step::sampled(true, || mutants::measure(&root)));
    }
    let measurement_time = started.elapsed();
    let load = first_sample
        .zip(Sample::now())
        .and_then(|(before, after)| after.load_since(before));

    let mut metrics = Metrics::default();
    for step in &steps {
        metrics.extend(step.run.metrics.clone());
    }
    if let Some(ratio) = metrics.ratio("emulator_get_orders_rps", "target_get_rps") {
        metrics.insert("emulator_vs_prism_get", ratio);
    }
    let failures: Vec<String> = steps
        .iter()
        .filter_map(|s| {
            s.run
                .failure
                .as_ref()
                .map(|f| format!("{}: {f}", s.run.measures))
        })
        .collect();
    let mut all = figures::all(mode);
    if mode == Mode::Full {
        all.extend(mutants::figures());
    }
    let rows = figures::evaluate(all, &metrics, mode, |_| {
        if failures.is_empty() {
            "its bench printed no value".to_owned()
        } else {
            format!("not printed; failed steps: {}", failures.join("; "))
        }
    });
    let plots = plots::write_all(&root, &metrics)?;
    let summary = Summary {
        mode,
        prism_path,
        machine,
        build_time,
        steps,
        rows,
        measurement_time,
        load,
        plots,
    };
    println!("{}", report::table(&summary));
    let path = root.join("BENCHMARKS.md");
    let mut text = report::markdown(&summary, &metrics);
    if mode == Mode::Full
        && let Some(section) = mutants::section(&root)
    {
        mutants::insert_section(&mut text, &section);
    }
    write_report(&path, &text)?;
    println!("wrote {}", path.display());
    Ok(summary)
}

/// The throughput bench, whose `--target-url` mode measures Prism.
const THROUGHPUT: &str = "throughput";

/// Prism's mock server under the throughput bench's generator, as one step; with the path Prism served.
fn measure_prism(
    root: &Path,
    throughput: &runner::Executable,
    bench: &runner::Bench,
    mode: Mode,
) -> (BenchRun, Option<String>) {
    let started = Instant::now();
    let measures = "Prism mock (same GET)";
    let failed = |command: &str, error: BenchError| BenchRun {
        command: command.to_owned(),
        measures,
        elapsed: started.elapsed(),
        metrics: Metrics::default(),
        failure: Some(error.to_string()),
    };
    let binary = match prism::install(root) {
        Ok(binary) => binary,
        Err(error) => return (failed("npm install", error), None),
    };
    let logs = root.join("target/bench");
    if let Err(error) = std::fs::create_dir_all(&logs) {
        let error = BenchError::Io(format!("creating {}", logs.display()), error);
        return (failed("prism mock", error), None);
    }
    let spec = root.join("spec/store-api.yaml");
    let server = match prism::MockServer::start(&binary, &spec, &logs.join("prism.log")) {
        Ok(server) => server,
        Err(error) => return (failed("prism mock", error), None),
    };
    let bench = runner::Bench { measures, ..*bench };
    let extra = [
        "--target-url".to_owned(),
        server.orders_url(),
        "--header".to_owned(),
        format!("X-API-Key: {}", prism::API_KEY),
    ];
    let mut run = runner::run(root, throughput, &bench, mode, &extra);
    run.command = format!(
        "prism mock spec/store-api.yaml -p PORT -h 127.0.0.1 (Prism {}); {}",
        prism::VERSION,
        run.command
    );
    let path = server.orders_path.clone();
    drop(server);
    run.elapsed = started.elapsed();
    (run, Some(path))
}

/// The build-cost builds, as one step.
fn measure_build_cost(root: &Path) -> BenchRun {
    let started = Instant::now();
    let (metrics, failure) = match build_cost::measure(root) {
        Ok(metrics) => (metrics, None),
        Err(error) => (Metrics::default(), Some(error.to_string())),
    };
    BenchRun {
        command: format!(
            "cargo build --offline -p store-api --target-dir target/bench-build/store-api (clean); \
             cargo build --offline --target-dir target/bench-build/scratch in target/bench-scratch (clean); \
             touch {}; the first again; \
             cargo build --offline -p store-api-webhooks --no-default-features --target-dir target/bench-build/receiver (clean); \
             cargo package --workspace --exclude xtask --exclude store-api-tests (verified)",
            build_cost::TOUCHED
        ),
        measures: "build cost",
        elapsed: started.elapsed(),
        metrics,
        failure,
    }
}

fn write_report(path: &PathBuf, text: &str) -> Result<(), BenchError> {
    std::fs::write(path, text).map_err(|e| BenchError::Io(format!("writing {}", path.display()), e))
}
