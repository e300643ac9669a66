//! Exactly-once order submission under network and service faults: 1,000 `submit` calls through a
//! proxy that breaks about 30% of the exchanges, and the emulator ends up with exactly one order per
//! external id. Both runs here are soak runs of 1,000 submissions: the slow tier (`RUN_SLOW_TESTS=1`,
//! which CI sets). The quick tier checks the same faults one by one (`emulator_faults`, `rare_faults`)
//! and in the model (`sim`).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use futures::StreamExt;
use store_api::{Client, RateLimiter, RetryPolicy, Submitted, new_external_order_id};
use store_api_tests::proxy::{Fault, FaultPlan, FaultProxy};
use store_api_tests::{ALPHA, emulator, key_of};
use store_api_tests::{skip_slow_tests, tee_submission};

const SUBMISSIONS: usize = 1_000;
const CONCURRENCY: usize = 16;
const CLIENT_TIMEOUT: Duration = Duration::from_millis(500);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_submissions_through_faults_create_each_order_exactly_once() {
    if skip_slow_tests() {
        return;
    }
    let emu = emulator().await;
    // 429s pause the client's whole store for Retry-After (1 s), so only a few are injected.
    let plan = FaultPlan::faults(
        0x5EED_0001,
        0.3,
        CLIENT_TIMEOUT + Duration::from_millis(300),
        6,
    );
    let proxy = FaultProxy::start(emu.origin(), plan).await;
    let client = Client::builder()
        .base_url(proxy.base_url())
        .store_id(ALPHA)
        .api_key(key_of(&emu, ALPHA))
        .timeout(CLIENT_TIMEOUT)
        .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
        .submit_retry_policy(
            RetryPolicy::default()
                .with_max_attempts(12)
                .with_base_delay(Duration::from_millis(5)),
        )
        // Reads (pre-flight, and the lookup after a 409) meet the same faults: enough attempts that one
        // of the ~2,000 requests failing ten times in a row (0.3^10) is out of the question.
        .retry_policy(
            RetryPolicy::default()
                .with_max_attempts(10)
                .with_base_delay(Duration::from_millis(5)),
        )
        .build()
        .unwrap();

    let external_ids: Vec<String> = (0..SUBMISSIONS).map(|_| new_external_order_id()).collect();
    let started = Instant::now();
    let results: Vec<_> = futures::stream::iter(external_ids.clone())
        .map(|external_id| {
            let client = client.clone();
            async move {
                let result = client.orders().submit(&tee_submission(&external_id)).await;
                (external_id, result)
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let elapsed = started.elapsed();

    // Every call returned the order with its own external id.
    let mut returned = HashMap::new();
    let (mut created, mut already_existed, mut attempts) = (0, 0, 0);
    for (external_id, result) in results {
        let submission = result.unwrap_or_else(|e| panic!("{external_id}: {e}"));
        attempts += submission.attempts.len();
        match &submission.submitted {
            Submitted::Created(_) => created += 1,
            Submitted::AlreadyExisted(_) => already_existed += 1,
            other => panic!("{other:?}"),
        }
        let order = submission.order();
        assert_eq!(
            order.external_order_id.as_deref(),
            Some(external_id.as_str())
        );
        assert!(
            returned.insert(order.id.clone(), external_id).is_none(),
            "two calls returned one order"
        );
    }

    // The emulator holds exactly one order per external id: none lost, none twice.
    let stored = emu.orders(ALPHA);
    assert_eq!(stored.len(), SUBMISSIONS, "orders in the emulator");
    let stored_ids: HashSet<_> = stored
        .iter()
        .filter_map(|o| o.external_order_id.clone())
        .collect();
    assert_eq!(
        stored_ids.len(),
        SUBMISSIONS,
        "duplicate external ids in the emulator"
    );
    assert_eq!(
        stored_ids,
        external_ids.iter().cloned().collect::<HashSet<_>>()
    );
    for order in &stored {
        assert_eq!(
            returned.get(&order.id),
            order.external_order_id.as_ref(),
            "order {}",
            order.id
        );
    }

    let exchanges = proxy.exchanges();
    let injected: Vec<_> = Fault::ALL
        .iter()
        .map(|f| (*f, proxy.injected(*f)))
        .collect();
    let faults: usize = injected.iter().map(|(_, n)| n).sum();
    eprintln!(
        "{SUBMISSIONS} submissions in {elapsed:?}: {created} created, {already_existed} already existed, \
         {attempts} submit attempts, {} requests through the proxy, {faults} faults injected {injected:?}",
        exchanges.len()
    );
    // The interesting case happened: an order committed whose answer was lost, found again by its id.
    assert!(
        proxy.injected(Fault::DropAfterCommit) > 0 && proxy.injected(Fault::DelayPastTimeout) > 0
    );
    assert!(
        already_existed > 0,
        "no submission met a lost answer after commit"
    );
    assert_eq!(created + already_existed, SUBMISSIONS);
    assert!(attempts > SUBMISSIONS, "faults caused retries");
}

// Issue 10: the rare-fault matrix, 125 submissions per kind (1,000 in all): every column 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rare_fault_matrix_is_zero_in_every_column() {
    if skip_slow_tests() {
        return;
    }
    let rows = store_api_tests::matrix::run(125).await;
    let mut table = String::from("kind: duplicates lost wrong undecided (refused, faults)\n");
    for (kind, row) in &rows {
        table.push_str(&format!(
            "{}: {} {} {} {} ({}, {})\n",
            kind.name(),
            row.duplicates,
            row.lost,
            row.wrong,
            row.undecided,
            row.refused,
            row.faults
        ));
    }
    eprintln!("{table}");
    assert_eq!(
        rows.iter().map(|(_, r)| r.submissions).sum::<usize>(),
        1_000
    );
    for (kind, row) in &rows {
        assert!(row.is_clean(), "{}: {row:?}\n{table}", kind.name());
        assert!(row.faults > 0, "{}: no fault was injected", kind.name());
    }
}
