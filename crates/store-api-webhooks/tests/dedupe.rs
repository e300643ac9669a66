//! `process_once` over the `Dedupe` trait object, including a store that fails, and the claim's renewal
//! on tokio's paused clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use store_api_webhooks::dedupe::{
    Claim, ClaimToken, DEFAULT_LEASE, Dedupe, DedupeError, DedupeFuture, Lease, MemoryDedupe,
    ProcessError, Processed, process_once,
};
use tokio::time::{Instant, sleep};

#[tokio::test]
async fn failures_are_retried_and_success_is_final_through_a_trait_object() {
    let dedupe: Arc<dyn Dedupe> = Arc::new(MemoryDedupe::new(16));
    let runs = AtomicUsize::new(0);
    let handler = |_: Lease| async {
        let run = runs.fetch_add(1, Ordering::SeqCst);
        if run < 2 {
            Err(format!("attempt {run} failed"))
        } else {
            Ok(run)
        }
    };
    let mut outcomes = Vec::new();
    for _ in 0..4 {
        outcomes.push(match process_once(&dedupe, "evt_1", handler).await {
            Ok(Processed::Done(run)) => format!("done {run}"),
            Ok(Processed::Duplicate) => "duplicate".to_owned(),
            Ok(other) => format!("{other:?}"),
            Err(ProcessError::Handler(message)) => message,
            Err(other) => format!("{other}"),
        });
    }
    assert_eq!(
        outcomes,
        [
            "attempt 0 failed",
            "attempt 1 failed",
            "done 2",
            "duplicate"
        ]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_claim_held_by_another_delivery_is_reported_in_progress() {
    let dedupe = MemoryDedupe::new(16);
    let Claim::Fresh(token) = dedupe.begin("evt_1").await.unwrap() else {
        panic!("expected a fresh claim");
    };
    let outcome = process_once(&dedupe, "evt_1", |_| async { Ok::<_, String>(()) }).await;
    assert!(matches!(outcome, Ok(Processed::InProgress)));
    assert_eq!(outcome.map(|o| o.status_code()).ok(), Some(503));
    assert!(dedupe.complete("evt_1", token).await.unwrap());
    let outcome = process_once(&dedupe, "evt_1", |_| async { Ok::<_, String>(()) }).await;
    assert!(matches!(outcome, Ok(Processed::Duplicate)));
    assert_eq!(outcome.map(|o| o.status_code()).ok(), Some(204));
}

#[tokio::test]
async fn a_full_store_answers_busy_and_503() {
    let dedupe = MemoryDedupe::new(1);
    assert!(matches!(
        dedupe.begin("evt_1").await.unwrap(),
        Claim::Fresh(_)
    ));
    let outcome = process_once(&dedupe, "evt_2", |_| async { Ok::<_, String>(()) }).await;
    assert!(matches!(outcome, Ok(Processed::Busy)));
    assert_eq!(outcome.map(|o| o.status_code()).ok(), Some(503));
}

/// A store whose database is down.
struct Unavailable;

impl Dedupe for Unavailable {
    fn lease(&self) -> Duration {
        DEFAULT_LEASE
    }
    fn begin<'a>(&'a self, _: &'a str) -> DedupeFuture<'a, Claim> {
        Box::pin(async { Err(DedupeError::new("connection refused")) })
    }
    fn renew<'a>(&'a self, _: &'a str, _: ClaimToken) -> DedupeFuture<'a, bool> {
        Box::pin(async { Ok(false) })
    }
    fn complete<'a>(&'a self, _: &'a str, _: ClaimToken) -> DedupeFuture<'a, bool> {
        Box::pin(async { Ok(true) })
    }
    fn abandon<'a>(&'a self, _: &'a str, _: ClaimToken) -> DedupeFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn a_store_failure_does_not_run_the_handler() {
    let ran = AtomicUsize::new(0);
    let outcome = process_once(&Unavailable, "evt_1", |_| async {
        ran.fetch_add(1, Ordering::SeqCst);
        Ok::<_, String>(())
    })
    .await;
    assert_eq!(
        outcome.as_ref().err().map(ProcessError::status_code),
        Some(503)
    );
    let Err(ProcessError::Store(error)) = outcome else {
        panic!("expected a store error, got {outcome:?}");
    };
    assert_eq!(
        error.to_string(),
        "deduplication store failed: connection refused"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

// Issue 29, defect 5: nothing kept a claim alive while its handler ran, so a redelivery after the lease
// ran the handler a second time while the first run still worked.
#[tokio::test(start_paused = true)]
async fn a_handler_slower_than_its_lease_is_not_run_again_by_a_redelivery() {
    let dedupe = Arc::new(MemoryDedupe::new(16));
    let lease = dedupe.lease();
    let runs = Arc::new(AtomicUsize::new(0));
    let handler = move |runs: Arc<AtomicUsize>| {
        move |held: Lease| async move {
            runs.fetch_add(1, Ordering::SeqCst);
            sleep(lease * 3).await;
            Ok::<_, String>(held.is_held())
        }
    };
    let first = tokio::spawn({
        let (dedupe, runs) = (dedupe.clone(), runs.clone());
        async move { process_once(&*dedupe, "evt_1", handler(runs)).await }
    });
    // Redeliveries within the first lease and well past it.
    let start = Instant::now();
    for tenths in [1, 5, 12, 20, 25] {
        tokio::time::sleep_until(start + lease * tenths / 10).await;
        let again = process_once(&*dedupe, "evt_1", handler(runs.clone())).await;
        assert_eq!(
            again.ok(),
            Some(Processed::InProgress),
            "redelivery at {tenths}/10 of the lease"
        );
    }
    assert_eq!(
        first.await.unwrap().ok(),
        Some(Processed::Done(true)),
        "the slow run kept its claim"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let later = process_once(&*dedupe, "evt_1", handler(runs.clone())).await;
    assert_eq!(later.ok(), Some(Processed::Duplicate));
}

/// A [`MemoryDedupe`] whose renewals do not get through while `partitioned` (the store unreachable
/// for this receiver only).
struct Partitioned {
    inner: Arc<MemoryDedupe>,
    partitioned: AtomicBool,
}

impl Dedupe for Partitioned {
    fn lease(&self) -> Duration {
        self.inner.lease()
    }
    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
        self.inner.begin(event_id)
    }
    fn renew<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        if self.partitioned.load(Ordering::SeqCst) {
            return Box::pin(async { Err(DedupeError::new("timed out")) });
        }
        self.inner.renew(event_id, token)
    }
    fn complete<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        self.inner.complete(event_id, token)
    }
    fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()> {
        self.inner.abandon(event_id, token)
    }
}

// Issue 29, defect 5: a run that could not renew for longer than the lease is told (the lease is lost),
// and its late `complete` does not mark done the claim another delivery holds now.
#[tokio::test(start_paused = true)]
async fn a_run_that_cannot_renew_is_told_and_its_stale_complete_marks_nothing() {
    let shared = Arc::new(MemoryDedupe::new(16));
    let cut_off = Arc::new(Partitioned {
        inner: shared.clone(),
        partitioned: AtomicBool::new(true),
    });
    let (told_tx, told_rx) = tokio::sync::oneshot::channel();
    let first = tokio::spawn({
        let cut_off = cut_off.clone();
        async move {
            process_once(&*cut_off, "evt_1", |lease: Lease| async move {
                let start = Instant::now();
                lease.lost().await;
                let _ = told_tx.send(start.elapsed());
                assert!(!lease.is_held());
                // The handler does its (in-store) work anyway, late: its complete must be refused.
                sleep(Duration::from_secs(5)).await;
                Ok::<_, String>("late")
            })
            .await
        }
    });
    let told_after = told_rx.await.unwrap();
    assert_eq!(
        told_after, DEFAULT_LEASE,
        "told once a lease passed unrenewed"
    );
    // A redelivery on another receiver finds the claim expired and takes the event over.
    let (second_started_tx, second_started_rx) = tokio::sync::oneshot::channel();
    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    let second = tokio::spawn({
        let shared = shared.clone();
        async move {
            process_once(&*shared, "evt_1", |lease: Lease| async move {
                let _ = second_started_tx.send(());
                let _ = release_rx.await;
                Ok::<_, String>(lease.is_held())
            })
            .await
        }
    });
    second_started_rx.await.unwrap();
    assert_eq!(
        first.await.unwrap().ok(),
        Some(Processed::Done("late")),
        "the stale run ends"
    );
    assert_eq!(
        shared.begin("evt_1").await.unwrap(),
        Claim::InProgress,
        "the stale complete did not mark the event done under the second run"
    );
    release_tx.send(()).unwrap();
    assert_eq!(second.await.unwrap().ok(), Some(Processed::Done(true)));
    assert_eq!(shared.begin("evt_1").await.unwrap(), Claim::Duplicate);
}

#[tokio::test(start_paused = true)]
async fn a_renewal_answered_not_yours_loses_the_lease_at_once() {
    let store = Partitioned {
        inner: Arc::new(MemoryDedupe::new(16).with_lease(Duration::from_secs(9))),
        partitioned: AtomicBool::new(false),
    };
    let store = &store;
    let outcome = process_once(store, "evt_1", |lease: Lease| async move {
        assert!(lease.is_held());
        let start = Instant::now();
        sleep(Duration::from_secs(4)).await;
        assert!(lease.is_held(), "renewed at 3 s");
        // The store loses the claim (a restart without persistence): the next renewal says so.
        store
            .inner
            .abandon("evt_1", ClaimToken::new(0))
            .await
            .unwrap();
        lease.lost().await;
        Ok::<_, String>((start.elapsed(), lease.is_held()))
    })
    .await;
    // Renewals every 3 s: the one at 6 s finds the claim gone.
    assert_eq!(
        outcome.ok(),
        Some(Processed::Done((Duration::from_secs(6), false)))
    );
}

#[tokio::test(start_paused = true)]
async fn a_lease_for_a_handler_outside_process_once_lasts_its_duration() {
    let lease = Lease::held_for(Duration::from_secs(2));
    assert!(lease.is_held());
    let start = Instant::now();
    lease.lost().await;
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    assert!(!lease.is_held());
}

#[test]
fn public_types_are_send_and_sync() {
    fn check<T: Send + Sync + std::fmt::Debug>() {}
    check::<Lease>();
    check::<MemoryDedupe>();
    check::<Claim>();
    check::<Processed<()>>();
    check::<ProcessError<std::io::Error>>();
}
