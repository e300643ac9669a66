//! `process_once` over the `Dedupe` trait object, including a store that fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use store_api_webhooks::dedupe::{
    Claim, ClaimToken, Dedupe, DedupeError, DedupeFuture, MemoryDedupe, ProcessError, Processed,
    process_once,
};

#[tokio::test]
async fn failures_are_retried_and_success_is_final_through_a_trait_object() {
    let dedupe: Arc<dyn Dedupe> = Arc::new(MemoryDedupe::new(16));
    let runs = AtomicUsize::new(0);
    let handler = || async {
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
    assert!(matches!(
        dedupe.begin("evt_1").await.unwrap(),
        Claim::Fresh(_)
    ));
    let outcome = process_once(&dedupe, "evt_1", || async { Ok::<_, String>(()) }).await;
    assert!(matches!(outcome, Ok(Processed::InProgress)));
    dedupe.complete("evt_1").await.unwrap();
    let outcome = process_once(&dedupe, "evt_1", || async { Ok::<_, String>(()) }).await;
    assert!(matches!(outcome, Ok(Processed::Duplicate)));
}

/// A store whose database is down.
struct Unavailable;

impl Dedupe for Unavailable {
    fn begin<'a>(&'a self, _: &'a str) -> DedupeFuture<'a, Claim> {
        Box::pin(async { Err(DedupeError::new("connection refused")) })
    }
    fn complete<'a>(&'a self, _: &'a str) -> DedupeFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }
    fn abandon<'a>(&'a self, _: &'a str, _: ClaimToken) -> DedupeFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn a_store_failure_does_not_run_the_handler() {
    let ran = AtomicUsize::new(0);
    let outcome = process_once(&Unavailable, "evt_1", || async {
        ran.fetch_add(1, Ordering::SeqCst);
        Ok::<_, String>(())
    })
    .await;
    let Err(ProcessError::Store(error)) = outcome else {
        panic!("expected a store error, got {outcome:?}");
    };
    assert_eq!(
        error.to_string(),
        "deduplication store failed: connection refused"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}
