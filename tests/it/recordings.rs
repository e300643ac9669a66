//! Issue 31: the recordings as a check of the spec. One scripted session recorded against the
//! deterministic emulator, clean and with each deviation on (old and new): the check reports the
//! clean cassette as held or not seen throughout, and each deviant cassette as differing in exactly
//! the assumption its switch breaks.

use store_api_cassette::{RecordOptions, Verdict, check};
use store_api_fixtures::Deviation;
use store_api_tests::recorded_session::{record_session, record_session_with, session_emulator};
use store_api_tests::{ALPHA, key_of};

#[tokio::test]
async fn the_recordings_check_reports_each_deviation_as_exactly_the_assumption_it_breaks() {
    let clean = record_session(None).await;
    let report = check(&clean);
    assert_eq!(
        report.differing().map(|f| f.id).collect::<Vec<_>>(),
        Vec::<&str>::new(),
        "{report}"
    );
    // The session shows every fact a deviation is about, and those of request bodies.
    for id in Deviation::ALL.iter().map(|d| d.assumption()).chain([
        "max-body-size",
        "us-states",
        "country-codes",
        "external-id-not-empty",
        "line-items-not-empty",
        "design-size-positive",
        "artwork-created-201",
        "unknown-filter-values",
        "order-status-values",
        "product-status-values",
        "external-id-filter-commas",
        "custom-item-fields",
        "ordered-at-default",
    ]) {
        assert!(
            matches!(
                report.assumption(id).map(|f| &f.verdict),
                Some(Verdict::Held { .. })
            ),
            "{id} is not held:\n{report}"
        );
    }
    // The cassette holds no key.
    let emu = session_emulator(None).await;
    assert!(!clean.to_text().contains(&key_of(&emu, ALPHA)));
    // Redacted, the same session is still all held or not seen (a state that is a placeholder is not
    // judged).
    let redacted = record_session_with(None, RecordOptions::default()).await;
    let report = check(&redacted);
    assert_eq!(report.differing().count(), 0, "{report}");
    assert!(
        matches!(
            report.assumption("null-fields").map(|f| &f.verdict),
            Some(Verdict::Held { .. })
        ),
        "{report}"
    );

    for deviation in Deviation::ALL {
        let cassette = record_session(Some(*deviation)).await;
        let report = check(&cassette);
        let differing: Vec<&str> = report.differing().map(|f| f.id).collect();
        assert_eq!(
            differing,
            [deviation.assumption()],
            "{deviation:?}:\n{report}"
        );
    }
}

#[tokio::test]
#[ignore = "prints what the check says of each deviant cassette"]
async fn print_deviant_reports() {
    for deviation in Deviation::ALL {
        let report = check(&record_session(Some(*deviation)).await);
        for finding in report.differing() {
            println!("{deviation:?}: {} {:?}", finding.id, finding.verdict);
        }
    }
}
