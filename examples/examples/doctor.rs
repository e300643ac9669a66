//! The spec's statements and assumptions judged against evidence with `store-api-conformance`: a
//! read-only probe of a running service, or a cassette of recorded traffic. What `store-api doctor`
//! prints, as a library.
//!
//! `cargo run -p store-api-examples --example doctor` probes the service named by `STORE_API_KEY`,
//! `STORE_API_STORE_ID` and `STORE_API_BASE_URL` ([`Client::from_env`]) with at most 20 `GET`s, prints
//! the report and exits with 1 when a fact differs from the spec; with `DOCTOR_CASSETTE=FILE` it judges
//! that cassette (a `.json` cassette or an insta `.snap`) instead and sends nothing. `cargo test -p
//! store-api-examples --example doctor` probes an in-process emulator (nothing differs), one made to
//! deviate from an assumption (exactly that one differs), and judges the cassette of the
//! `cassette_replay` example.

use std::error::Error;
use std::process::ExitCode;

use store_api::Client;
use store_api_cassette::Cassette;
use store_api_conformance::{ProbeOptions, Report, probe, recordings};

/// The report on the service `client` speaks to: read-only, within the default budget of requests.
async fn diagnose(client: &Client) -> Report {
    probe(client, &ProbeOptions::default()).await
}

/// The report on the recorded traffic in the file at `path`: nothing is sent.
fn diagnose_recording(path: &str) -> Result<Report, store_api_cassette::CassetteError> {
    Ok(recordings(&Cassette::load(path)?))
}

/// The ids of the facts that differ from the spec.
fn differing(report: &Report) -> Vec<&'static str> {
    report.differing().map(|finding| finding.id).collect()
}

#[tokio::main]
async fn main() -> Result<ExitCode, Box<dyn Error>> {
    let report = match std::env::var("DOCTOR_CASSETTE") {
        Ok(path) => diagnose_recording(&path)?,
        Err(_) => diagnose(&Client::from_env()?).await,
    };
    println!("{report}");
    Ok(if differing(&report).is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use store_api::RateLimiter;
    use store_api_conformance::{Evidence, Verdict};
    use store_api_fixtures::{Deviation, Emulator};

    use super::*;

    /// A client of `store_alpha` on an emulator started with `deviation`, if any.
    async fn emulator(deviation: Option<Deviation>) -> (Emulator, Client) {
        let mut builder = Emulator::builder()
            .rate_limit(false)
            .network_downloads(false);
        if let Some(deviation) = deviation {
            builder = builder.deviate(deviation);
        }
        let emu = builder.start().await.unwrap();
        let store = emu.store("store_alpha").unwrap();
        let client = Client::builder()
            .base_url(emu.base_url())
            .store_id(&store.id)
            .api_key(store.api_key)
            .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
            .build()
            .unwrap();
        (emu, client)
    }

    #[tokio::test]
    async fn the_emulator_holds_to_the_spec() {
        let (emu, client) = emulator(None).await;
        let report = diagnose(&client).await;
        assert_eq!(differing(&report), Vec::<&str>::new(), "{report}");
        assert!(matches!(
            report
                .assumption("page-past-end")
                .map(|finding| &finding.verdict),
            Some(Verdict::Held { .. })
        ));
        // Read-only: the probe sent `GET`s and nothing else.
        let sent = emu.requests("store_alpha").unwrap();
        assert!(!sent.is_empty());
        assert!(sent.iter().all(|request| request.method == "GET"));
    }

    #[tokio::test]
    async fn a_deviation_is_reported_on_its_assumption_alone() {
        let (_emu, client) = emulator(Some(Deviation::PastEndPageWithoutTotals)).await;
        let report = diagnose(&client).await;
        assert_eq!(differing(&report), ["page-past-end"], "{report}");
        assert!(report.to_string().contains("page-past-end"));
    }

    #[test]
    fn a_recorded_session_is_judged_without_sending() {
        let snapshot = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/snapshots/cassette_replay__checkout.snap"
        );
        let report = diagnose_recording(snapshot).unwrap();
        assert!(
            matches!(report.evidence, Evidence::Recordings { exchanges, .. } if exchanges > 0),
            "{:?}",
            report.evidence
        );
        assert_eq!(differing(&report), Vec::<&str>::new(), "{report}");
    }
}
