//! `doctor`: the spec's statements and assumptions checked against the service, read-only
//! (`store_api::doctor`), or against recorded traffic (`--cassette`, `store_api_cassette::check`).

use std::path::{Path, PathBuf};

use serde::Serialize;
use store_api::Client;
use store_api::doctor::{DoctorOptions, diagnose};
use store_api_cassette::{Cassette, RecordingsReport, check};

use crate::cli::DoctorArgs;
use crate::error::CliError;
use crate::output::Output;

/// Runs the probe and prints the report; fails (exit 1) when something differs from the spec.
pub async fn run(args: &DoctorArgs, client: &Client, out: Output) -> Result<(), CliError> {
    let report = diagnose(
        client,
        &DoctorOptions::default().max_requests(args.max_requests),
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
    report: RecordingsReport,
}

/// `doctor --cassette`: checks each cassette and prints its report; fails (exit 1) when a recording
/// differs from the spec. Sends nothing.
pub fn recordings(args: &DoctorArgs, out: Output) -> Result<(), CliError> {
    let Some(path) = &args.cassette else {
        return Ok(());
    };
    let files = cassettes(path)?;
    let mut checked = Vec::new();
    for file in &files {
        let cassette = Cassette::load(file).map_err(|e| CliError::Usage(e.to_string()))?;
        checked.push(Checked {
            file: file.display().to_string(),
            report: check(&cassette),
        });
    }
    let mut differing: Vec<&str> = Vec::new();
    for one in &checked {
        for finding in one.report.differing() {
            if !differing.contains(&finding.id) {
                differing.push(finding.id);
            }
        }
    }
    if path.is_dir() {
        out.json(&checked)?;
    } else if let Some(one) = checked.first() {
        out.json(&one.report)?;
    }
    for (index, one) in checked.iter().enumerate() {
        if index > 0 {
            out.line("");
        }
        out.line(format!("{}:\n{}", one.file, one.report));
    }
    failed_if_any(&differing, "the recordings differ from the spec")
}

/// The cassettes at `path`: the file itself, or every `*.json` file of the folder, by name.
fn cassettes(path: &Path) -> Result<Vec<PathBuf>, CliError> {
    if !path.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let entries = std::fs::read_dir(path)
        .map_err(|e| CliError::Usage(format!("--cassette {}: {e}", path.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|file| file.is_file() && file.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(CliError::Usage(format!(
            "--cassette {}: no *.json cassette in this folder",
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
