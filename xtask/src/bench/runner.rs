//! Running the benches: one build of all of them (in release, but for the few measured in a debug
//! build), then each built executable with the arguments
//! `cargo bench` would give it, its output shown as it comes and its `name=value` lines kept.
//!
//! The executables are run directly rather than through one `cargo bench` per bench: every bench then
//! measures the same build, and no measurement waits for Cargo's build-directory lock, which other
//! builds on a shared machine may hold for minutes.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::metrics::Metrics;
use super::{BenchError, Mode};

/// One bench target of the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bench {
    /// Cargo package.
    pub package: &'static str,
    /// `[[bench]]` name.
    pub name: &'static str,
    /// What it measures, for the report.
    pub measures: &'static str,
    /// The build it is measured in.
    pub profile: Profile,
}

/// The build a bench is measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// `cargo bench`'s own (optimised): what a service runs.
    Release,
    /// The dev profile, `cargo bench --profile dev`: what a user's tests run in.
    Debug,
}

impl Profile {
    /// The arguments that select it after `cargo bench`.
    fn args(self) -> &'static [&'static str] {
        match self {
            Profile::Release => &[],
            Profile::Debug => &["--profile", "dev"],
        }
    }
}

/// Every bench the report reads, in the order they run (the throughput bench's Prism run comes after).
pub const SUITE: &[Bench] = &[
    Bench {
        package: "store-api-tests",
        name: "rate_limit",
        measures: "rate-limit efficiency",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-tests",
        name: "exactly_once",
        measures: "exactly-once under faults",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-tests",
        name: "sim",
        measures: "the model of the network, explored",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-tests",
        name: "receiver_model",
        measures: "the receiver side as a model, explored",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-redis",
        name: "shared_limit",
        measures: "rate limit shared by processes (Redis)",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-redis",
        name: "receivers",
        measures: "webhooks once across receivers (Redis)",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-webhooks",
        name: "verify_ratio",
        measures: "webhook verification",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-tests",
        name: "decode",
        measures: "page decode",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-tests",
        name: "client_overhead",
        measures: "client overhead",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-tests",
        name: "telemetry_overhead",
        measures: "OpenTelemetry's cost to the client",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-tests",
        name: "store_scale",
        measures: "pre-flight at merchant scale (20,000 products)",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-fixtures",
        name: "throughput",
        measures: "emulator throughput",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-tests",
        name: "validator",
        measures: "validator",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-fixtures",
        name: "growth",
        measures: "emulator cost against the store's size",
        profile: Profile::Release,
    },
    Bench {
        package: "store-api-fixtures",
        name: "start",
        measures: "emulator start (debug build)",
        profile: Profile::Debug,
    },
    Bench {
        package: "store-api-cli",
        name: "proxy",
        measures: "store-api proxy: recording 1,000 exchanges, a 40 MB replay miss",
        profile: Profile::Release,
    },
];

/// What running one bench produced.
#[derive(Debug, Clone)]
pub struct BenchRun {
    /// The command, as a shell would show it.
    pub command: String,
    /// What it measures.
    pub measures: &'static str,
    /// Wall time, build check included (the build is already done).
    pub elapsed: Duration,
    /// Its figures.
    pub metrics: Metrics,
    /// Why it failed, when it did.
    pub failure: Option<String>,
}

/// The `cargo` that runs this xtask (`cargo` sets `CARGO` for `cargo run`), or `cargo` from the path.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// A built bench: its executable and the package folder it runs in (as under `cargo bench`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executable {
    /// The bench binary.
    pub path: PathBuf,
    /// Its package's folder.
    pub package_dir: PathBuf,
}

/// Built benches by `[[bench]]` name.
pub type Executables = HashMap<String, Executable>;

/// Builds every bench of the suite in its profile (the release ones in one `cargo bench --no-run`, the
/// debug ones in another), without running them; returns how long it took and where the executables are.
pub fn build(root: &Path) -> Result<(Duration, Executables), BenchError> {
    let started = Instant::now();
    let mut executables = Executables::new();
    let mut shown = Vec::new();
    for profile in [Profile::Release, Profile::Debug] {
        let benches: Vec<&Bench> = SUITE.iter().filter(|b| b.profile == profile).collect();
        if benches.is_empty() {
            continue;
        }
        let mut command = Command::new(cargo());
        command
            .current_dir(root)
            .args(["bench", "--no-run"])
            .args(profile.args())
            .arg("--message-format=json-render-diagnostics");
        let mut packages: Vec<&str> = benches.iter().map(|b| b.package).collect();
        packages.sort_unstable();
        packages.dedup();
        for package in packages {
            command.args(["-p", package]);
        }
        for bench in &benches {
            command.args(["--bench", bench.name]);
        }
        eprintln!("==> build: {}", show(&command));
        let output = command
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| BenchError::Io("running cargo".to_owned(), e))?;
        if !output.status.success() {
            return Err(BenchError::Command {
                command: show(&command),
                detail: output.status.to_string(),
            });
        }
        executables.extend(bench_executables(&String::from_utf8_lossy(&output.stdout)));
        shown.push(show(&command));
    }
    if let Some(missing) = SUITE.iter().find(|b| !executables.contains_key(b.name)) {
        return Err(BenchError::Command {
            command: shown.join("; "),
            detail: format!(
                "cargo reported no executable for the bench {}",
                missing.name
            ),
        });
    }
    Ok((started.elapsed(), executables))
}

/// The bench executables in Cargo's JSON messages (`compiler-artifact` of a `bench` target).
fn bench_executables(messages: &str) -> Executables {
    messages
        .lines()
        .filter(|line| line.starts_with('{'))
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"].as_str() == Some("compiler-artifact"))
        .filter(|message| {
            message["target"]["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k.as_str() == Some("bench")))
        })
        .filter_map(|message| {
            let name = message["target"]["name"].as_str()?.to_owned();
            let path = PathBuf::from(message["executable"].as_str()?);
            let package_dir = Path::new(message["manifest_path"].as_str()?)
                .parent()?
                .to_path_buf();
            Some((name, Executable { path, package_dir }))
        })
        .collect()
}

/// Runs a built bench with `--bench [--quick] EXTRA...` (what `cargo bench -p PACKAGE --bench NAME --
/// [--quick] EXTRA...` runs), echoing its output.
pub fn run(
    root: &Path,
    executable: &Executable,
    bench: &Bench,
    mode: Mode,
    extra: &[String],
) -> BenchRun {
    let quick: &[&str] = if mode == Mode::Quick {
        &["--quick"]
    } else {
        &[]
    };
    let mut equivalent = Command::new("cargo");
    equivalent.arg("bench").args(bench.profile.args()).args([
        "-p",
        bench.package,
        "--bench",
        bench.name,
    ]);
    if !quick.is_empty() || !extra.is_empty() {
        equivalent.arg("--").args(quick).args(extra);
    }
    let shown = show(&equivalent);
    let mut command = Command::new(&executable.path);
    command
        .current_dir(&executable.package_dir)
        .env("CARGO_MANIFEST_DIR", &executable.package_dir)
        // Where `cargo bench` would have criterion keep its history.
        .env("CRITERION_HOME", root.join("target/criterion"))
        .arg("--bench")
        .args(quick)
        .args(extra);
    eprintln!("==> {}: {shown}", bench.measures);
    let started = Instant::now();
    let (output, failure) = match capture(&mut command) {
        Ok((output, true)) => (output, None),
        Ok((output, false)) => (output, Some("the bench exited with an error".to_owned())),
        Err(error) => (String::new(), Some(error.to_string())),
    };
    BenchRun {
        command: shown,
        measures: bench.measures,
        elapsed: started.elapsed(),
        metrics: Metrics::parse(&output),
        failure,
    }
}

/// Runs `command`, echoing its standard output to our standard error line by line (its standard error
/// goes straight through), and returns the output and whether it succeeded.
fn capture(command: &mut Command) -> Result<(String, bool), BenchError> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| BenchError::Io(format!("starting {}", show(command)), e))?;
    let mut output = String::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line =
                line.map_err(|e| BenchError::Io("reading a bench's output".to_owned(), e))?;
            eprintln!("    {line}");
            output.push_str(&line);
            output.push('\n');
        }
    }
    let status = child
        .wait()
        .map_err(|e| BenchError::Io("waiting for a bench".to_owned(), e))?;
    Ok((output, status.success()))
}

/// A command as a shell would show it (arguments with spaces quoted).
pub fn show(command: &Command) -> String {
    let program = Path::new(command.get_program())
        .file_name()
        .map_or_else(
            || command.get_program().to_string_lossy(),
            |n| n.to_string_lossy(),
        )
        .into_owned();
    std::iter::once(program)
        .chain(command.get_args().map(|arg| {
            let arg = arg.to_string_lossy();
            if arg.contains(' ') {
                format!("'{arg}'")
            } else {
                arg.into_owned()
            }
        }))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_shown_as_typed() {
        let mut command = Command::new("/usr/bin/cargo");
        command.args(["bench", "--", "--header", "X-API-Key: k"]);
        assert_eq!(show(&command), "cargo bench -- --header 'X-API-Key: k'");
    }

    #[test]
    fn finds_bench_executables_in_cargo_messages() {
        let messages = r#"{"reason":"compiler-artifact","manifest_path":"/w/crates/store-api/Cargo.toml","target":{"kind":["bench"],"name":"decode"},"executable":"/w/target/release/deps/decode-1"}
{"reason":"compiler-artifact","manifest_path":"/w/crates/store-api/Cargo.toml","target":{"kind":["lib"],"name":"store_api"},"executable":null}
{"reason":"compiler-message","target":{"kind":["bench"],"name":"validator"},"executable":"/x"}
{"reason":"build-finished","success":true}
Finished"#;
        let executables = bench_executables(messages);
        assert_eq!(executables.len(), 1);
        assert_eq!(
            executables["decode"],
            Executable {
                path: PathBuf::from("/w/target/release/deps/decode-1"),
                package_dir: PathBuf::from("/w/crates/store-api"),
            }
        );
    }

    #[test]
    fn every_bench_of_the_suite_is_declared_by_its_package() {
        let root = crate::workspace_root();
        for bench in SUITE {
            let folder = match bench.package {
                "store-api-tests" => "tests".to_owned(),
                package => format!("crates/{package}"),
            };
            let manifest = std::fs::read_to_string(root.join(&folder).join("Cargo.toml")).unwrap();
            assert!(
                manifest.contains(&format!("name = \"{}\"", bench.name)),
                "{folder}/Cargo.toml declares no bench {}",
                bench.name
            );
            assert!(
                root.join(&folder)
                    .join("benches")
                    .join(format!("{}.rs", bench.name))
                    .exists()
            );
        }
    }
}
