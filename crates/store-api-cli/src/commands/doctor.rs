//! `doctor`: the spec's statements and assumptions checked against the service, read-only
//! (`store_api_conformance::probe`), or against recorded traffic (`--cassette`,
//! `store_api_conformance::recordings`), and the service held to the recordings (`--compare`,
//! `store_api_cassette::compare_refused`). A folder's insta snapshots (`*.snap`) are read as
//! cassettes too; a cassette's report is a summary unless `--full`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use store_api::{Client, RetryPolicy};
use store_api_cassette::{Cassette, Comparison, Conformance, compare_refused, conformance};
use store_api_conformance::{ProbeOptions, Report, probe};

use crate::cli::DoctorArgs;
use crate::error::CliError;
use crate::output::Output;
use crate::session::Session;

mod summary;

/// A key of the right shape that no store has: a recorded 401 is sent again with it (the
/// recording's key is not kept, but it was refused).
const REFUSED_KEY: &str = "csk_00000000000000000000000000000000";

/// Runs the probe and prints the report; fails (exit 1) when something differs from the spec.
pub async fn run(args: &DoctorArgs, client: &Client, out: Output) -> Result<(), CliError> {
    let report = probe(
        client,
        &ProbeOptions::default().max_requests(args.max_requests),
    )
    .await;
    out.json(&report)?;
    out.line(&report);
    let differing: Vec<&str> = report.differing().map(|finding| finding.id).collect();
    failed_if_any(&differing, "the service differs from the spec")
}

/// One cassette's report, as `--json` prints a folder's.
#[derive(Serialize)]
struct Checked {
    file: String,
    report: Report,
    /// Every recorded answer against the answers the spec declares.
    conformance: Conformance,
    /// With `--compare`.
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<Comparison>,
    #[serde(skip)]
    cassette: Cassette,
}

/// `doctor --cassette`: checks each cassette and prints its report; fails (exit 1) when a recording
/// differs from the spec. Sends nothing.
pub fn recordings(args: &DoctorArgs, out: Output) -> Result<(), CliError> {
    let Some(path) = &args.cassette else {
        return Ok(());
    };
    let checked = load(path)?;
    print(path, &checked, args.full, out)
}

/// `doctor --cassette --compare`: the check, then each cassette's requests sent again to the
/// session's service with clients that never retry, and the comparison printed; fails (exit 1) when
/// a recording differs from the spec or an answer from the recorded one.
pub async fn compared(args: &DoctorArgs, session: &Session, out: Output) -> Result<(), CliError> {
    let Some(path) = &args.cassette else {
        return Ok(());
    };
    let mut checked = load(path)?;
    // A retried request is one the recording did not send; a 429 or 5xx retried would be hidden.
    let never = |builder: store_api::ClientBuilder| {
        builder
            .retry_policy(RetryPolicy::never())
            .submit_retry_policy(RetryPolicy::never())
    };
    let client = session.client_with(None, never)?;
    let refused = session.client_with(Some(REFUSED_KEY), never)?;
    for one in &mut checked {
        one.comparison = Some(compare_refused(&one.cassette, &client, &refused).await);
    }
    print(path, &checked, args.full, out)
}

/// The cassettes at `path`, each checked.
fn load(path: &Path) -> Result<Vec<Checked>, CliError> {
    let mut checked = Vec::new();
    let mut skipped = Vec::new();
    for file in cassettes(path)? {
        let cassette = match Cassette::load(&file) {
            Ok(cassette) => cassette,
            // A folder of insta snapshots holds other tests' snapshots too: those are no cassettes.
            Err(_) if path.is_dir() && is_snapshot(&file) => {
                skipped.push(file.display().to_string());
                continue;
            }
            Err(e) => return Err(CliError::Usage(e.to_string())),
        };
        checked.push(Checked {
            file: file.display().to_string(),
            report: store_api_conformance::recordings(&cassette),
            conformance: conformance(&cassette),
            comparison: None,
            cassette,
        });
    }
    if !skipped.is_empty() {
        eprintln!(
            "note: {} snapshot(s) hold no cassette, skipped: {}",
            skipped.len(),
            skipped.join(", ")
        );
    }
    if checked.is_empty() {
        return Err(CliError::Usage(format!(
            "--cassette {}: no cassette in this folder (its *.json files and the insta snapshots              (*.snap) whose body is a cassette are read)",
            path.display()
        )));
    }
    Ok(checked)
}

/// Whether `file` is an insta snapshot (`*.snap`): a cassette kept by `insta::assert_snapshot!`, or
/// another test's snapshot.
fn is_snapshot(file: &Path) -> bool {
    file.extension().is_some_and(|ext| ext == "snap")
}

/// Prints the reports (and comparisons); the error names what differs.
/// Each cassette's report is [`summary::summary`] unless `full`.
fn print(path: &Path, checked: &[Checked], full: bool, out: Output) -> Result<(), CliError> {
    let mut differing: Vec<&str> = Vec::new();
    for one in checked {
        for finding in one.report.differing() {
            if !differing.contains(&finding.id) {
                differing.push(finding.id);
            }
        }
    }
    if path.is_dir() {
        out.json(&checked)?;
    } else if let Some(one) = checked.first() {
        match &one.comparison {
            // One file compared: its report and its comparison.
            Some(comparison) => out.json(&serde_json::json!({
                "report": &one.report,
                "conformance": &one.conformance,
                "comparison": comparison,
            }))?,
            None => out.json(&serde_json::json!({
                "report": &one.report,
                "conformance": &one.conformance,
            }))?,
        }
    }
    for (index, one) in checked.iter().enumerate() {
        if index > 0 {
            out.line("");
        }
        if full {
            out.line(format!("{}:\n{}", one.file, one.report));
            out.line(format!(
                "\n{}, answers against the spec: {}",
                one.file,
                one.conformance.to_string().trim_end()
            ));
        } else {
            out.line(summary::summary(&one.file, &one.report, &one.conformance).trim_end());
        }
        if let Some(comparison) = &one.comparison {
            out.line(format!(
                "\n{} against the service: {}",
                one.file,
                comparison.to_string().trim_end()
            ));
        }
    }
    // Recorded answers the spec does not declare: `FILE #N, #M`.
    let undeclared: Vec<String> = checked
        .iter()
        .filter(|one| !one.conformance.conforms())
        .map(|one| {
            let mut at: Vec<usize> = one
                .conformance
                .findings
                .iter()
                .map(|f| f.exchange)
                .collect();
            at.sort_unstable();
            at.dedup();
            let at: Vec<String> = at.iter().map(|i| format!("#{i}")).collect();
            format!("{} {}", one.file, at.join(", "))
        })
        .collect();
    // Where the service answered otherwise than recorded: `FILE #N, #M`.
    let compared: Vec<String> = checked
        .iter()
        .filter_map(|one| {
            let at = one.comparison.as_ref()?.differing();
            (!at.is_empty()).then(|| {
                let at: Vec<String> = at.iter().map(|i| format!("#{i}")).collect();
                format!("{} {}", one.file, at.join(", "))
            })
        })
        .collect();
    let mut failures = Vec::new();
    if !differing.is_empty() {
        failures.push(format!(
            "the recordings differ from the spec: {}",
            differing.join(", ")
        ));
    }
    if !undeclared.is_empty() {
        failures.push(format!(
            "recorded answers the spec does not declare: {}",
            undeclared.join("; ")
        ));
    }
    if !compared.is_empty() {
        failures.push(format!(
            "the service answered otherwise than recorded: {}",
            compared.join("; ")
        ));
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(CliError::Failed(failures.join("; ")))
    }
}

/// The cassettes at `path`: the file itself (a `.snap` too: [`Cassette::load`] skips insta's
/// header), or every `*.json` and `*.snap` file of the folder, by name.
fn cassettes(path: &Path) -> Result<Vec<PathBuf>, CliError> {
    if !path.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let entries = std::fs::read_dir(path)
        .map_err(|e| CliError::Usage(format!("--cassette {}: {e}", path.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|file| {
            file.is_file()
                && file
                    .extension()
                    .is_some_and(|ext| ext == "json" || ext == "snap")
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(CliError::Usage(format!(
            "--cassette {}: no *.json cassette or *.snap snapshot in this folder",
            path.display()
        )));
    }
    Ok(files)
}

fn failed_if_any(differing: &[&str], what: &str) -> Result<(), CliError> {
    if differing.is_empty() {
        Ok(())
    } else {
        Err(CliError::Failed(format!(
            "{what}: {}",
            differing.join(", ")
        )))
    }
}
