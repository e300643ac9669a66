//! The emulator's faults on demand against the real client: every fault kind, injected in process,
//! meets `store_api::Client` as the SDK documents (`submit` bills once; reads are retried; a 429 pauses).

use std::time::{Duration, Instant};

use store_api::{Client, Error, Submitted, new_external_order_id};
use store_api_fixtures::{Emulator, Fault, FaultKind};
use store_api_tests::{ALPHA, builder_at, emulator, identified, key_of, tee_order, tee_submission};

/// A client of store_alpha with a short timeout, so a held answer times out quickly.
fn client(emu: &Emulator) -> Client {
    builder_at(&emu.base_url(), ALPHA, &key_of(emu, ALPHA))
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap()
}

fn on_create(kind: FaultKind) -> Fault {
    Fault::new(kind).operation("create_order").store(ALPHA)
}

/// Submits one new order through `fault` and returns how it ended; the store then holds it once.
async fn submit_through(fault: Fault) -> (Submitted, usize) {
    let emu = emulator().await;
    emu.inject_fault(fault).unwrap();
    let order = tee_order(Some(&new_external_order_id()));
    let submission = client(&emu)
        .orders()
        .submit(&identified(order.clone()))
        .await
        .unwrap();
    assert!(emu.pending_faults().is_empty(), "the fault fired");
    assert_eq!(emu.order_count(ALPHA), 1, "billed exactly once");
    (submission.submitted, submission.attempts.len())
}

#[tokio::test]
async fn submit_bills_once_through_every_fault_kind() {
    let created_after_retry = [
        FaultKind::Status { status: 503 },
        FaultKind::Status { status: 500 },
        FaultKind::Reset,
        FaultKind::RateLimited {
            retry_after: "0".into(),
        },
    ];
    for kind in created_after_retry {
        let (submitted, attempts) = submit_through(on_create(kind.clone())).await;
        assert!(matches!(submitted, Submitted::Created(_)), "{kind:?}");
        assert_eq!(attempts, 2, "{kind:?}");
    }
    // Committed but unanswered (or answered with an error): found, never created twice.
    for kind in [
        FaultKind::DropAfterCommit,
        FaultKind::StatusAfterCommit { status: 500 },
        FaultKind::Delay {
            delay: Duration::from_secs(2),
        },
        FaultKind::ForeignConflict,
    ] {
        let (submitted, _) = submit_through(on_create(kind.clone())).await;
        assert!(
            matches!(submitted, Submitted::AlreadyExisted(_)),
            "{kind:?}"
        );
    }
    // A 201 whose body was cut off: the order is looked up and reported as created, with no second POST.
    for kind in [FaultKind::TruncatedBody, FaultKind::ResetMidBody] {
        let (submitted, attempts) = submit_through(on_create(kind.clone())).await;
        assert!(
            matches!(submitted, Submitted::Created(_)),
            "{kind:?}: {submitted:?}"
        );
        assert_eq!(attempts, 1, "{kind:?}");
    }
}

#[tokio::test]
async fn a_lookup_that_lags_behind_a_lost_answer_is_asked_again() {
    let emu = emulator().await;
    emu.inject_fault(on_create(FaultKind::DropAfterCommit))
        .unwrap();
    emu.inject_fault(
        Fault::new(FaultKind::EmptyPage)
            .operation("list_orders")
            .store(ALPHA)
            .times(2),
    )
    .unwrap();
    let order = tee_submission(&new_external_order_id());
    let submission = client(&emu).orders().submit(&order).await.unwrap();
    assert!(
        matches!(submission.submitted, Submitted::AlreadyExisted(_)),
        "{:?}",
        submission.submitted
    );
    assert!(emu.pending_faults().is_empty(), "both empty pages were met");
    assert_eq!(emu.order_count(ALPHA), 1, "billed exactly once");
}

#[tokio::test]
async fn reads_are_retried_and_a_refusal_is_not() {
    let emu = emulator().await;
    let client = client(&emu);
    emu.inject_fault(
        Fault::new(FaultKind::Reset)
            .operation("get_status")
            .times(2),
    )
    .unwrap();
    client.status().await.unwrap();
    emu.inject_fault(Fault::new(FaultKind::Status { status: 404 }).operation("get_status"))
        .unwrap();
    let error = client.status().await.unwrap_err();
    assert!(!error.is_retryable(), "{error:?}");
    assert!(emu.pending_faults().is_empty());
}

#[tokio::test]
async fn a_rate_limit_pauses_the_store_for_its_retry_after() {
    let emu = emulator().await;
    let client = client(&emu);
    emu.inject_fault(Fault::new(FaultKind::RateLimited {
        retry_after: "1".into(),
    }))
    .unwrap();
    let started = Instant::now();
    client.status().await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    // A day's Retry-After is not waited out: the call ends at once with the typed 429.
    emu.inject_fault(Fault::new(FaultKind::RateLimited {
        retry_after: "86400".into(),
    }))
    .unwrap();
    let started = Instant::now();
    let error = client.status().await.unwrap_err();
    assert!(matches!(error, Error::RateLimited { .. }), "{error:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

// The intermediaries' fault kinds (issue 22) against the real client: a submission bills at most once,
// and the client reports what answered.
#[tokio::test]
async fn submit_bills_at_most_once_through_what_an_intermediary_answers() {
    // A redirect is never followed (the service never redirects): an error naming it, nothing billed.
    let emu = emulator().await;
    emu.inject_fault(on_create(FaultKind::Redirect {
        status: 307,
        location: None,
    }))
    .unwrap();
    let order = tee_submission(&new_external_order_id());
    let error = client(&emu).orders().submit(&order).await.unwrap_err();
    let Error::Redirect { status, location } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(*status, 307);
    assert!(
        location
            .as_deref()
            .is_some_and(|l| l.starts_with("http://127.0.0.2:")),
        "{location:?}"
    );
    assert_eq!(emu.order_count(ALPHA), 0);

    // A firewall's page (the emulator processed nothing): the client cannot know that, so it reports
    // the intermediary and that the order may have been placed; nothing was billed.
    let emu = emulator().await;
    emu.inject_fault(on_create(FaultKind::ForeignPage { status: 403 }))
        .unwrap();
    let error = client(&emu).orders().submit(&order).await.unwrap_err();
    assert!(
        matches!(error, Error::Intermediary { status: 403, .. }),
        "{error:?}"
    );
    assert!(error.may_have_been_processed());
    assert_eq!(emu.order_count(ALPHA), 0);

    // Processed, then an answer that never ends or arrives too slowly for the client's timeout: the
    // order is found, never created twice.
    for kind in [
        FaultKind::EndlessBody,
        FaultKind::SlowBody {
            interval: Duration::from_millis(200),
            bytes: 1,
        },
    ] {
        let (submitted, _) = submit_through(on_create(kind.clone())).await;
        assert!(
            matches!(submitted, Submitted::Created(_)),
            "{kind:?}: {submitted:?}"
        );
    }
}
