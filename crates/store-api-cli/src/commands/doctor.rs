//! `doctor`: the spec's statements and assumptions checked against the service, read-only
//! (`store_api::doctor`).

use store_api::Client;
use store_api::doctor::{DoctorOptions, diagnose};

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
    if differing.is_empty() {
        Ok(())
    } else {
        Err(CliError::Failed(format!(
            "the service differs from the spec: {}",
            differing.join(", ")
        )))
    }
}
