//! The mutation run as a step of a full run (issue 39, finding 6): `.ci/mutants` runs cargo-mutants on
//! the receiver side and the submission's decisions, then the hand-written mutations of `RedisDedupe`'s
//! Lua scripts; this module runs it, reads its figures (every mutant caught or explained) and writes its
//! table per file for `BENCHMARKS.md`. CI runs its own share (`.ci/mutants --ci`, in `.ci/run`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::figures::{Figure, Gate, Target};
use super::metrics::Metrics;
use super::runner::BenchRun;

/// What the step measures, for the report.
pub const MEASURES: &str = "mutation testing (cargo-mutants and the Lua scripts' mutations)";

/// The script, from the workspace's root.
const SCRIPT: &str = ".ci/mutants";

/// Runs `.ci/mutants` (every group), its output shown as it comes; its `name=value` lines are the
/// figures. The script fails on a surviving mutant it cannot explain, which the figures say too, so
/// only a run that printed no figures counts as a failed step.
pub fn measure(root: &Path) -> BenchRun {
    let started = Instant::now();
    let command = format!("bash {SCRIPT}");
    eprintln!("==> {command}");
    let output = Command::new("bash")
        .arg(SCRIPT)
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output();
    let (metrics, failure) = match output {
        Ok(output) => {
            let text = String::from_utf8_lossy(&output.stdout);
            print!("{text}");
            let metrics = Metrics::parse(&text);
            let failure = (metrics.get("mutants_tested").is_none()).then(|| {
                format!(
                    "{SCRIPT} printed no figures ({}): see target/mutants",
                    output.status
                )
            });
            (metrics, failure)
        }
        Err(error) => (
            Metrics::default(),
            Some(format!("running {SCRIPT}: {error}")),
        ),
    };
    BenchRun {
        command,
        measures: MEASURES,
        elapsed: started.elapsed(),
        metrics,
        failure,
    }
}

/// A figure of the mutation run, measured by a full run only.
fn figure(label: &'static str, metric: &'static str) -> Figure {
    Figure {
        label,
        metric,
        unit: "",
        decimals: 0,
        target: Target::None,
        gate: Gate::ReportOnly,
        full_only: true,
        known_cause: "",
    }
}

/// The run's figures: what survived unexplained and the Lua mutations missed must be 0.
pub fn figures() -> Vec<Figure> {
    let zero = |label, metric| Figure {
        target: Target::Equals(0.0),
        gate: Gate::ZeroTolerance,
        ..figure(label, metric)
    };
    vec![
        figure("mutation testing: mutants tested", "mutants_tested"),
        figure("mutation testing: mutants caught", "mutants_caught"),
        zero(
            "mutation testing: mutants that survived, not explained as equivalent",
            "mutants_unexplained",
        ),
        figure(
            "mutation testing: mutants that survived, explained as equivalent",
            "mutants_equivalent",
        ),
        zero(
            "mutation testing: mutants listed as equivalent that did not survive",
            "mutants_stale",
        ),
        figure("mutation testing: Lua mutations", "lua_mutations"),
        zero(
            "mutation testing: Lua mutations missed",
            "lua_mutations_missed",
        ),
    ]
}

/// The report's section: how the run works, its table per file and the Lua mutations, from what
/// `.ci/mutants` left in `target/mutants`; `None` when the run left nothing (a quick run).
pub fn section(root: &Path) -> Option<String> {
    let out = root.join("target/mutants");
    let table = std::fs::read_to_string(out.join("summary.md")).ok()?;
    let lua = std::fs::read_to_string(out.join("lua-mutants.tsv")).unwrap_or_default();
    let times = std::fs::read_to_string(out.join("times.tsv")).unwrap_or_default();
    Some(render(&table, &lua, &times))
}

/// Puts `section` into the report before its plots (after the results and the fault matrix), or at
/// its end when it has no plots.
pub fn insert_section(report: &mut String, section: &str) {
    match report.find("\n## Plots\n") {
        Some(at) => report.insert_str(at, section),
        None => report.push_str(section),
    }
}

/// Tab-separated lines as their fields, blank lines skipped.
fn rows(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.split('\t').collect())
        .collect()
}

/// The section from `.ci/mutants`' table, `.ci/lua-mutants`' results (`name`, `caught` or `missed`,
/// the tests that caught it) and the time of each group (`group`, seconds); tab-separated.
fn render(table: &str, lua: &str, times: &str) -> String {
    let mut out = String::from(
        "\n## Mutation testing\n\n\
         `.ci/mutants` (cargo-mutants, pinned by `.ci/install-mutants`) mutates the receiver side \
         (`MemoryDedupe`, `process_once` and the lease in `store-api-webhooks`; `RedisDedupe` and its \
         scripts' Rust side in `store-api-redis`) and the submission's decisions (`store-api`'s \
         `submit.rs`: created, already existed, undecided), as `.cargo/mutants.toml` scopes it; each \
         mutant is built and judged by the quick tier of the tests that `.ci/mutants-tests` picks for its \
         package (the crate's own, the receiver model and its differential test against `redis-server`, \
         the money-path model and the integration tests that submit through faults). *Caught*: a test \
         failed; *timeout*: the tests hung and were stopped; *unviable*: the mutant does not build (a \
         replacement the type has no value for). Every mutant that survived must be listed in \
         `.cargo/mutants-equivalent.md` with the reason no test can tell it apart: the script fails on \
         one it cannot explain, and on a listed one that no longer survives. The Lua scripts are string \
         constants the tool cannot reach: `.ci/lua-mutants` applies each hand-written mutation to \
         `crates/store-api-redis/src/dedupe.rs`, runs `RedisDedupe`'s tests on a private `redis-server` \
         and the differential test, and restores the file; each must fail at least one (one found \
         equivalent is listed in the same file, with its reason, and not applied). A timeout counts as \
         caught. CI runs a share of both (`.ci/mutants --ci`, see `.ci/run`); a full run of this \
         command runs them all.\n\n",
    );
    out.push_str(table.trim_end());
    out.push('\n');
    let lua = rows(lua);
    if !lua.is_empty() {
        out.push_str("\n| Lua mutation | result | caught by |\n|---|---|---|\n");
        for row in lua {
            let field = |i: usize| row.get(i).copied().unwrap_or("");
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                field(0),
                field(1),
                field(2)
            ));
        }
    }
    let times: Vec<String> = rows(times)
        .iter()
        .filter_map(|row| Some(format!("{} {} s", row.first()?, row.get(1)?)))
        .collect();
    if !times.is_empty() {
        out.push_str(&format!(
            "\nTime of each part (builds included): {}.\n",
            times.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_shows_the_table_and_each_lua_mutation() {
        let table = "| file | mutants |\n|---|---|\n| `a.rs` | 3 |\n";
        let lua = "complete-without-fence\tcaught\tRedisDedupe's tests, the differential test\n\
                   abandon-deletes-nothing\tmissed\t\n";
        let text = render(table, lua, "webhooks\t1092\nlua\t200\n");
        assert!(text.starts_with("\n## Mutation testing\n\n"));
        assert!(text.contains("| `a.rs` | 3 |\n"));
        assert!(text.contains(
            "| `complete-without-fence` | caught | RedisDedupe's tests, the differential test |\n"
        ));
        assert!(text.contains("| `abandon-deletes-nothing` | missed |  |\n"));
        assert!(
            text.ends_with("\nTime of each part (builds included): webhooks 1092 s, lua 200 s.\n")
        );
    }

    #[test]
    fn the_section_goes_before_the_plots() {
        let mut report = "# Benchmarks\n\n## Results\n\n## Plots\n\nplots\n".to_owned();
        insert_section(&mut report, "\n## Mutation testing\n\ntable\n");
        assert_eq!(
            report,
            "# Benchmarks\n\n## Results\n\n## Mutation testing\n\ntable\n\n## Plots\n\nplots\n"
        );
        let mut bare = "# Benchmarks\n".to_owned();
        insert_section(&mut bare, "\n## Mutation testing\n");
        assert_eq!(bare, "# Benchmarks\n\n## Mutation testing\n");
    }

    #[test]
    fn what_survived_unexplained_fails_the_command() {
        let figures = figures();
        for metric in [
            "mutants_unexplained",
            "mutants_stale",
            "lua_mutations_missed",
        ] {
            let figure = figures.iter().find(|f| f.metric == metric).unwrap();
            assert_eq!(figure.gate, Gate::ZeroTolerance, "{metric}");
            assert_eq!(figure.target, Target::Equals(0.0), "{metric}");
        }
        assert!(figures.iter().all(|f| f.full_only));
    }
}
