//! Issue 31: the recordings as a check of the spec. One scripted session recorded against the
//! deterministic emulator, clean and with each deviation on (old and new): the check reports the
//! clean cassette as held or not seen throughout, and each deviant cassette as differing in exactly
//! the assumption its switch breaks.

use store_api::RateLimiter;
use store_api_cassette::{RecordOptions, Verdict, check};
use store_api_fixtures::artwork::FakeResource;
use store_api_fixtures::{Deviation, Emulator};
use store_api_tests::recorded_session::{
    ARTWORK_URL, record_session, record_session_on, record_session_with, session_emulator,
};
use store_api_tests::{ALPHA, PNG_1X1, key_of};

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

// Under the service's real rate limit (buckets that drain and refill on the real clock), the reset and
// remaining headers vary from answer to answer: the check still finds nothing differing.
#[tokio::test]
async fn a_session_under_the_real_rate_limit_is_held_or_not_seen() {
    let emu = Emulator::builder()
        .rate_limit(true)
        .network_downloads(false)
        .start()
        .await
        .unwrap();
    emu.fake_hosts()
        .insert(ARTWORK_URL, FakeResource::image(PNG_1X1))
        .unwrap();
    let cassette = record_session_on(
        &emu,
        RecordOptions::default().keep_customer_data(true),
        // The client keeps the service's limit (a burst of ten, two a second), as a real one would.
        |builder| builder.in_process_limiter(RateLimiter::new()),
    )
    .await;
    let report = check(&cassette);
    assert_eq!(report.differing().count(), 0, "{report}");
    let Some(Verdict::Held { seen }) = report.assumption("rate-limit-reset").map(|f| &f.verdict)
    else {
        panic!("{report}");
    };
    assert!(
        seen.starts_with(&format!("{} exchanges", cassette.exchanges.len())),
        "{seen}"
    );
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
