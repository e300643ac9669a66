//! Issue 24: the live probe (`store_api_conformance::probe`, once `store_api::doctor`) against the
//! emulator. Every probed assumption holds; an emulator made to deviate on one assumption is reported
//! as differing on exactly that one; only `GET`s are sent (the emulator's request log says so); the
//! report is pinned by a snapshot of `store-api doctor` (the CLI's tests).

use store_api::ApiKey;
use store_api::hook::Method;
use store_api::model::{Product, ProductStatus};
use store_api_conformance::{Evidence, ProbeOptions, Report, Verdict, probe};
use store_api_fixtures::{Deviation, Emulator, Fault, FaultKind};
use store_api_tests::hostile::Hostile;
use store_api_tests::{ALPHA, builder_at, client_of, key_of, tee_order};

/// The assumptions the probe observes (every other one is reported as not checked).
const PROBED: &[&str] = &[
    "page-limit-minimum",
    "rate-limit-reset",
    "rate-limit-limit",
    "rate-limit-headers",
    "page-past-end",
    "sort-order",
    "unknown-filter-values",
    "external-id-filter-commas",
    "product-status-values",
    "order-status-values",
];

/// An emulator with what every probe can read: two orders with external ids and a product whose status
/// the spec does not list.
async fn emulator(rate_limit: bool, deviation: Option<Deviation>) -> Emulator {
    let mut builder = Emulator::builder()
        .rate_limit(rate_limit)
        .network_downloads(false);
    if let Some(deviation) = deviation {
        builder = builder.deviate(deviation);
    }
    let emu = builder.start().await.unwrap();
    for external_id in ["doctor-1", "doctor-2"] {
        emu.create_order_in_app(ALPHA, tee_order(Some(external_id)))
            .unwrap();
    }
    let mut scheduled = Product::default();
    scheduled.name = Some("Scheduled tee".into());
    scheduled.status = Some(ProductStatus::from("scheduled"));
    emu.create_product(ALPHA, scheduled).unwrap();
    emu
}

/// [`emulator`] and the probe's report on it (with `options`).
async fn diagnosed(
    rate_limit: bool,
    deviation: Option<Deviation>,
    options: ProbeOptions,
) -> (Emulator, Report) {
    let emu = emulator(rate_limit, deviation).await;
    let client = client_of(&emu, ALPHA);
    let report = probe(&client, &options).await;
    (emu, report)
}

/// The requests the probe sent, and its budget.
fn requests(report: &Report) -> (u32, u32) {
    match &report.evidence {
        Evidence::Probe {
            requests,
            max_requests,
            ..
        } => (*requests, *max_requests),
        other => panic!("not a probe's report: {other:?}"),
    }
}

fn verdicts(report: &Report) -> Vec<(&str, &Verdict)> {
    report
        .stated
        .iter()
        .chain(&report.assumptions)
        .map(|finding| (finding.id, &finding.verdict))
        .collect()
}

/// The probe's ids with the verdict it gave, for the assertions' messages.
fn held_or_not(report: &Report) -> Vec<&str> {
    verdicts(report)
        .into_iter()
        .filter(|(_, verdict)| matches!(verdict, Verdict::Held { .. }))
        .map(|(id, _)| id)
        .collect()
}

#[tokio::test]
async fn against_the_emulator_every_probed_fact_holds_and_only_gets_are_sent() {
    let (emu, report) = diagnosed(false, None, ProbeOptions::default()).await;

    assert_eq!(report.differing().count(), 0, "{report}");
    for finding in &report.stated {
        assert!(matches!(finding.verdict, Verdict::Held { .. }), "{report}");
    }
    let held = held_or_not(&report);
    for id in PROBED {
        assert!(held.contains(id), "{id} did not hold:\n{report}");
    }
    // Every other assumption is listed as not checked, none forgotten.
    assert_eq!(
        report.assumptions.len(),
        store_api_raw::contract::ASSUMPTIONS.len()
    );
    let unknown = report.assumption("product-status-values").unwrap();
    assert!(
        matches!(&unknown.verdict, Verdict::Held { seen: Some(seen) } if seen.contains("status scheduled")),
        "{report}"
    );

    let (sent, max) = requests(&report);
    let requests = emu.requests(ALPHA).unwrap();
    assert_eq!(requests.len(), sent as usize, "{requests:?}");
    assert!(sent <= max);
    assert!(
        requests.iter().all(|request| request.method == "GET"),
        "{requests:?}"
    );
}

#[tokio::test]
async fn with_the_real_rate_limit_the_reset_header_is_read_as_seconds() {
    // The bucket drains while the probe runs, so X-RateLimit-Reset is not always 0 here.
    let (_emu, report) = diagnosed(true, None, ProbeOptions::default()).await;
    assert_eq!(report.differing().count(), 0, "{report}");
    for id in ["rate-limit-reset", "rate-limit-headers", "rate-limit-limit"] {
        assert!(held_or_not(&report).contains(&id), "{report}");
    }
}

#[tokio::test]
async fn each_deviation_of_the_emulator_is_reported_as_exactly_that_assumption_differing() {
    // Only requests with bodies show these (the recordings check does: tests/it/recordings.rs); the
    // read-only probe sees no difference and says it did not check.
    let unseen = [
        Deviation::NullFieldsAsAbsent,
        Deviation::ConflictBeforeValidation,
        Deviation::EmptyIdsRefused,
        Deviation::NormalisesAddresses,
    ];
    for deviation in Deviation::ALL {
        let (emu, report) = diagnosed(false, Some(*deviation), ProbeOptions::default()).await;
        let differing: Vec<&str> = report.differing().map(|finding| finding.id).collect();
        if unseen.contains(deviation) {
            assert_eq!(differing, Vec::<&str>::new(), "{deviation:?}:\n{report}");
            assert!(
                matches!(
                    report
                        .assumption(deviation.assumption())
                        .map(|f| &f.verdict),
                    Some(Verdict::NotChecked { .. })
                ),
                "{deviation:?}:\n{report}"
            );
        } else {
            assert_eq!(
                differing,
                [deviation.assumption()],
                "{deviation:?}:\n{report}"
            );
        }
        assert!(
            emu.requests(ALPHA)
                .unwrap()
                .iter()
                .all(|request| request.method == "GET")
        );
    }
}

#[tokio::test]
async fn a_small_budget_is_kept_and_what_it_leaves_out_is_not_checked() {
    let (emu, report) = diagnosed(false, None, ProbeOptions::default().max_requests(3)).await;
    assert_eq!(requests(&report).0, 3);
    assert_eq!(emu.requests(ALPHA).unwrap().len(), 3);
    assert_eq!(report.differing().count(), 0, "{report}");
    let page_past_end = report.assumption("page-past-end").unwrap();
    assert!(
        matches!(&page_past_end.verdict, Verdict::NotChecked { why } if why.contains("budget of 3")),
        "{report}"
    );
}

#[tokio::test]
async fn no_service_is_no_answer_not_a_difference() {
    let emu = emulator(false, None).await;
    let client = client_of(&emu, ALPHA);
    drop(emu);
    let report = probe(&client, &ProbeOptions::default()).await;
    assert_eq!(report.differing().count(), 0, "{report}");
    assert!(
        verdicts(&report)
            .iter()
            .all(|(_, verdict)| matches!(verdict, Verdict::NotChecked { .. })),
        "{report}"
    );
}

#[tokio::test]
async fn a_429_is_not_a_difference_but_a_fact_not_checked() {
    let emu = emulator(false, None).await;
    emu.inject_fault(
        Fault::new(FaultKind::RateLimited {
            retry_after: "0".into(),
        })
        .operation("get_status")
        .times(1),
    )
    .unwrap();
    let client = client_of(&emu, ALPHA);
    let report = probe(&client, &ProbeOptions::default()).await;
    assert_eq!(report.differing().count(), 0, "{report}");
    let status = report.stated.iter().find(|f| f.id == "status").unwrap();
    assert!(
        matches!(&status.verdict, Verdict::NotChecked { why } if why.contains("429")),
        "{report}"
    );
}

// Issue 29, defect 9: the "wrong key" of the 401 check was the key with its last character changed,
// so every log of rejected keys (the service's, a proxy's, this front's) held the key to within one
// character. It is random now, of the key's shape: its length and its brand prefix (`csk_`).
#[tokio::test]
async fn the_wrong_key_shares_no_more_than_the_brand_prefix_with_the_key() {
    let emu = emulator(false, None).await;
    let key = key_of(&emu, ALPHA);
    let front = Hostile::forwarding(emu.origin()).await;
    let client = builder_at(&front.origin(), ALPHA, &key).build().unwrap();
    let mut wrong_keys = Vec::new();
    for _ in 0..3 {
        let report = probe(&client, &ProbeOptions::default().max_requests(2)).await;
        let unauthorized = report.stated.iter().find(|f| f.id == "unauthorized");
        assert!(
            unauthorized.is_some_and(|f| matches!(f.verdict, Verdict::Held { .. })),
            "{report}"
        );
        let seen = front.seen();
        let sent: Vec<&str> = seen
            .iter()
            .filter_map(|seen| seen.headers.get("x-api-key")?.to_str().ok())
            .filter(|sent| *sent != key)
            .collect();
        let wrong = sent.last().copied().unwrap_or_default().to_owned();
        assert_eq!(sent.len(), wrong_keys.len() + 1, "one wrong key per run");
        wrong_keys.push(wrong);
    }
    let prefix = "csk_";
    assert!(
        key.starts_with(prefix) && key.len() > 20,
        "the emulator's key shape changed"
    );
    for wrong in &wrong_keys {
        assert_eq!(wrong.len(), key.len(), "{wrong}");
        assert!(wrong.starts_with(prefix), "{wrong}");
        // Past the prefix, random: a character matches the key's by chance about once in 62; eight
        // or more of them (less than one chance in 10^8) would be the key leaking through.
        let same = wrong[prefix.len()..]
            .chars()
            .zip(key[prefix.len()..].chars())
            .filter(|(a, b)| a == b)
            .count();
        assert!(
            same < 8,
            "{same} of the key's {} characters after {prefix} are in the wrong key",
            key.len() - prefix.len()
        );
    }
    assert!(
        wrong_keys[0] != wrong_keys[1] || wrong_keys[1] != wrong_keys[2],
        "a new wrong key each run"
    );
}

// Issue 36, point 3: what the probe needs of the client is public, documented options of the escape
// hatch. `single_attempt` sends once whatever the retry policy (a 5xx is the answer, not replayed);
// `api_key` sends another key for that request alone (the handle keeps the client's).
#[tokio::test]
async fn the_escape_hatch_sends_a_single_attempt_and_another_key_when_asked() {
    let emu = emulator(false, None).await;
    let key = key_of(&emu, ALPHA);
    // A front that records every request it forwards (faulted ones too).
    let front = Hostile::forwarding(emu.origin()).await;
    let client = builder_at(&front.origin(), ALPHA, &key).build().unwrap();
    let failing = || {
        Fault::new(FaultKind::Status { status: 503 })
            .operation("get_status")
            .times(1)
    };

    emu.inject_fault(failing()).unwrap();
    let once = client
        .request(Method::GET, "/status")
        .single_attempt()
        .send()
        .await
        .unwrap();
    assert_eq!(once.status(), 503);
    assert_eq!(front.seen().len(), 1);

    // The client's retry policy replays the same 503 otherwise.
    emu.inject_fault(failing()).unwrap();
    let retried = client.request(Method::GET, "/status").send().await.unwrap();
    assert_eq!(retried.status(), 200);
    assert_eq!(front.seen().len(), 3);

    let other = "csk_00000000000000000000000000000000";
    let refused = client
        .request(Method::GET, "/status")
        .api_key(ApiKey::new(other))
        .single_attempt()
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let status = client.request(Method::GET, "/status").send().await.unwrap();
    assert_eq!(status.status(), 200);
    let keys: Vec<String> = front
        .seen()
        .iter()
        .filter_map(|seen| Some(seen.headers.get("x-api-key")?.to_str().ok()?.to_owned()))
        .collect();
    assert_eq!(keys[3..], [other, key.as_str()]);
    assert_eq!(client.key_handle().current().expose_secret(), key);
}
