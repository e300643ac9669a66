//! Issue 31: the recordings as a check of the spec (`store_api_conformance::recordings`, once
//! `store_api_cassette::check`). One scripted session recorded against the deterministic emulator,
//! clean and with each deviation on (old and new): the check reports the clean cassette as held or
//! not checked throughout, and each deviant cassette as differing in exactly the assumption its
//! switch breaks; the same cassettes replayed against a default emulator of the same seed
//! (`store_api_cassette::compare_refused`) differ at the exchanges the check names, and nowhere else.

use std::collections::BTreeSet;
use std::time::Duration;

use store_api::{Client, RateLimiter, RetryPolicy};
use store_api_cassette::{Outcome, RecordOptions, compare_refused};
use store_api_conformance::{Verdict, recordings as check};
use store_api_fixtures::artwork::FakeResource;
use store_api_fixtures::{Deviation, Emulator};
use store_api_tests::recorded_session::{
    ARTWORK_URL, WRONG_KEY, record_session, record_session_on, record_session_with,
    session_emulator,
};
use store_api_tests::{ALPHA, PNG_1X1, builder_at, key_of};

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
    // Redacted, the same session is still all held or not checked (a state that is a placeholder is not
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
async fn a_session_under_the_real_rate_limit_is_held_or_not_checked() {
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
    let Some(Verdict::Held { seen: Some(seen) }) =
        report.assumption("rate-limit-reset").map(|f| &f.verdict)
    else {
        panic!("{report}");
    };
    assert!(
        seen.starts_with(&format!("{} exchanges", cassette.exchanges.len())),
        "{seen}"
    );
}

/// A client of store_alpha on `emu` with `key` that sends each request once (a replay must not send
/// one the recording did not) and is not held back by its own limiter.
fn replaying(emu: &Emulator, key: &str) -> Client {
    builder_at(&emu.base_url(), ALPHA, key)
        .retry_policy(RetryPolicy::never())
        .submit_retry_policy(RetryPolicy::never())
        .max_rate_limit_pause(Duration::ZERO)
        .build()
        .unwrap()
}

#[tokio::test]
async fn each_deviant_recording_differs_from_the_default_emulator_where_the_check_says_and_nowhere_else()
 {
    let clean = record_session(None).await;
    // The exchange whose request body was over the size the cassette keeps: it cannot be sent again.
    let unkept: BTreeSet<usize> = clean
        .exchanges
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            matches!(
                e.request.body,
                Some(store_api_cassette::RecordedBody::Omitted { .. })
            )
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(unkept.len(), 1, "the session sends one body over 1 MiB");

    let mut sessions = vec![(None, clean)];
    for deviation in Deviation::ALL {
        sessions.push((Some(*deviation), record_session(Some(*deviation)).await));
    }
    for (deviation, cassette) in sessions {
        let fresh = session_emulator(None).await;
        let comparison = compare_refused(
            &cassette,
            &replaying(&fresh, &key_of(&fresh, ALPHA)),
            &replaying(&fresh, WRONG_KEY),
        )
        .await;
        assert_eq!(comparison.exchanges.len(), cassette.exchanges.len());
        // Not comparable: only the body the cassette did not keep (the wrong key's 401 is sent with
        // a key the target refuses too).
        let not_comparable: BTreeSet<usize> = comparison
            .exchanges
            .iter()
            .filter(|e| matches!(e.outcome, Outcome::NotComparable { .. }))
            .map(|e| e.exchange)
            .collect();
        assert_eq!(not_comparable, unkept, "{deviation:?}: {comparison}");
        let differing: BTreeSet<usize> = comparison.differing().into_iter().collect();
        let Some(deviation) = deviation else {
            assert!(differing.is_empty(), "clean: {comparison}");
            continue;
        };
        let report = check(&cassette);
        let Some(Verdict::Differs {
            exchange: Some(shown),
            ..
        }) = report
            .assumption(deviation.assumption())
            .map(|f| &f.verdict)
        else {
            panic!("{deviation:?}:\n{report}");
        };
        let exchange = &shown.index;
        if deviation == Deviation::NormalisesAddresses {
            // A comparison judges the shape of answers, not the values the service chose: an address
            // answered normalised has the shape of one answered as sent. The check sees it (above).
            assert!(differing.is_empty(), "{deviation:?}: {comparison}");
            continue;
        }
        let expected: BTreeSet<usize> = match deviation {
            // Every answer carries the reset: every exchange sent shows it (the check names the
            // first), the first of them the check's.
            Deviation::ResetAsUnixTime => (0..cassette.exchanges.len())
                .filter(|i| !unkept.contains(i))
                .collect(),
            _ => BTreeSet::from([*exchange]),
        };
        assert!(expected.contains(exchange), "{deviation:?}");
        assert_eq!(differing, expected, "{deviation:?}: {comparison}");
        let says = match deviation {
            Deviation::ResetAsUnixTime => "in the recording only: header x-ratelimit-reset is",
            Deviation::NoRateLimitHeadersOn401 => {
                "header x-ratelimit-limit: sent by the target, not recorded"
            }
            Deviation::PastEndPageWithoutTotals => {
                "the list's totalItems: 0 recorded, 10 from the target, where both answered totalItems 10 for the same collection at #2"
            }
            Deviation::LimitBelowMinimumDefaulted => "status 200 recorded, 400 from the target",
            Deviation::NullFieldsAsAbsent => "status 201 recorded, 400 from the target",
            Deviation::ConflictBeforeValidation => "status 409 recorded, 400 from the target",
            Deviation::EmptyIdsRefused => "status 400 recorded, 201 from the target",
            other => panic!("a deviation this test does not know: {other:?}"),
        };
        assert!(
            matches!(&comparison.exchanges[*exchange].outcome,
                Outcome::Differs { what } if what.iter().any(|w| w.starts_with(says))),
            "{deviation:?}: {comparison}"
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
