//! The rare faults of issue 10, one test each, over real HTTP against the emulator (through the
//! fault-injecting proxy where the fault is on the wire): in each, an order is billed and `submit` must
//! say so, or nothing is billed and `submit` must say that.

use std::time::Duration;

use serde_json::json;
use store_api::model::ProductStatus;
use store_api::{Client, Error, RetryPolicy, Submitted, new_external_order_id};
use store_api_tests::proxy::{Fault, FaultPlan, FaultProxy};
use store_api_tests::{
    ALPHA, builder_at, client, emulator, key_of, order_from, shipping_address, tee_order,
};
use store_api_tests::{identified, tee_submission};

const SUNSET_TEE: &str = "prod_alpha_sunset_tee";

/// A client of store_alpha through `proxy`, with test settings and `attempts` submit attempts.
fn through(proxy: &FaultProxy, emu: &store_api_fixtures::Emulator, attempts: u32) -> Client {
    builder_at(&proxy.base_url(), ALPHA, &key_of(emu, ALPHA))
        .submit_retry_policy(
            RetryPolicy::default()
                .with_max_attempts(attempts)
                .with_base_delay(Duration::from_millis(5)),
        )
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// A fresh emulator with the fault proxy in front of it.
async fn behind_proxy(plan: FaultPlan) -> (store_api_fixtures::Emulator, FaultProxy) {
    let emu = emulator().await;
    let proxy = FaultProxy::start(emu.origin(), plan).await;
    (emu, proxy)
}

fn order_posts(proxy: &FaultProxy) -> usize {
    proxy
        .exchanges()
        .iter()
        .filter(|e| e.is_order_post())
        .count()
}

async fn archive(emu: &store_api_fixtures::Emulator, product_id: &str) {
    let mut product = client(emu, ALPHA).products().get(product_id).await.unwrap();
    product.status = Some(ProductStatus::Archived);
    emu.update_product(ALPHA, product_id, product).unwrap();
}

// Defect 1: pre-flight (and a 400) ran before reconciliation.
#[tokio::test]
async fn an_order_whose_product_was_archived_since_is_found_not_refused() {
    let emu = emulator().await;
    let external_id = new_external_order_id();
    let order = tee_order(Some(&external_id));
    let first = client(&emu, ALPHA)
        .orders()
        .submit(&identified(order.clone()))
        .await
        .unwrap();
    archive(&emu, SUNSET_TEE).await;

    // A restarted process: a new client, an empty cache that now sees the product archived.
    let rerun = client(&emu, ALPHA)
        .orders()
        .submit(&identified(order.clone()))
        .await;
    match rerun.as_ref().map(|s| &s.submitted) {
        Ok(Submitted::AlreadyExisted(existing)) => assert_eq!(existing.id, first.order().id),
        other => panic!("expected AlreadyExisted, got {other:?}"),
    }
    assert_eq!(emu.order_count(ALPHA), 1);

    // A new order for the archived product is still refused, and says nothing was sent.
    let fresh = client(&emu, ALPHA)
        .orders()
        .submit(&tee_submission(&new_external_order_id()))
        .await;
    assert!(matches!(fresh, Err(Error::Invalid { .. })), "{fresh:?}");
    assert_eq!(emu.order_count(ALPHA), 1);
}

// Defect 2: a reused external id with a different order was reported as success.
#[tokio::test]
async fn a_reused_external_id_with_a_different_order_names_the_differences() {
    let emu = emulator().await;
    let alpha = client(&emu, ALPHA);
    let external_id = new_external_order_id();
    alpha
        .orders()
        .submit(&tee_submission(&external_id))
        .await
        .unwrap();
    let mut address = shipping_address();
    address["address"]["cityOrTown"] = json!("Dallas");
    let other = order_from(json!({
        "externalOrderId": external_id,
        "lineItems": [{ "sku": "AA-TEE-SUN-BLK-M", "quantity": 3 }],
        "shippingAddress": address,
    }));
    let result = alpha.orders().submit(&identified(other.clone())).await;
    let error = match result {
        Ok(submission) => panic!("a different order was reported as {submission:?}"),
        Err(error) => error,
    };
    let text = error.to_string();
    assert!(text.contains("quantity"), "{text}");
    assert!(text.contains("shippingAddress"), "{text}");
    assert!(!error.may_have_been_processed(), "{error:?}");
    assert_eq!(emu.order_count(ALPHA), 1);
    // The same order again is still AlreadyExisted.
    let again = alpha
        .orders()
        .submit(&tee_submission(&external_id))
        .await
        .unwrap();
    assert!(matches!(again.submitted, Submitted::AlreadyExisted(_)));
}

// Defect 3: a 409 whose body is not the service's envelope is reconciled at once.
#[tokio::test]
async fn a_409_with_a_foreign_body_is_reconciled_at_once() {
    let (emu, proxy) = behind_proxy(FaultPlan::first_post(&[Fault::ForeignConflict], 0)).await;
    let submission = through(&proxy, &emu, 10)
        .orders()
        .submit(&tee_submission(&new_external_order_id()))
        .await
        .unwrap();
    assert!(matches!(submission.submitted, Submitted::AlreadyExisted(_)));
    assert_eq!(submission.attempts.len(), 1, "{:?}", submission.attempts);
    assert_eq!(order_posts(&proxy), 1);
    assert_eq!(emu.order_count(ALPHA), 1);
}

// Defect 3: a 201 whose body cannot be read is resolved by a lookup, not reported as not processed.
#[tokio::test]
async fn a_201_with_a_truncated_body_is_resolved_by_a_lookup() {
    for fault in [&[Fault::TruncatedBody], &[Fault::ResetMidBody]] {
        let (emu, proxy) = behind_proxy(FaultPlan::first_post(fault, 0)).await;
        let external_id = new_external_order_id();
        let result = through(&proxy, &emu, 1)
            .orders()
            .submit(&tee_submission(&external_id))
            .await;
        let submission = result.unwrap_or_else(|e| {
            panic!(
                "{fault:?}: {e} (may have been processed: {})",
                e.may_have_been_processed()
            )
        });
        assert_eq!(
            submission.order().external_order_id.as_deref(),
            Some(external_id.as_str())
        );
        assert_eq!(order_posts(&proxy), 1, "{fault:?}");
        assert_eq!(emu.order_count(ALPHA), 1);
    }
}

// Defect 7: when retries run out after an ambiguous attempt, a final lookup gives a definite answer.
#[tokio::test]
async fn a_500_after_commit_with_no_retry_left_is_resolved_by_a_final_lookup() {
    let (emu, proxy) =
        behind_proxy(FaultPlan::first_post(&[Fault::ServerErrorAfterCommit], 0)).await;
    let external_id = new_external_order_id();
    let result = through(&proxy, &emu, 1)
        .orders()
        .submit(&tee_submission(&external_id))
        .await;
    let submission = result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        submission.order().external_order_id.as_deref(),
        Some(external_id.as_str())
    );
    assert_eq!(order_posts(&proxy), 1);
}

// Defect 7: a 409 whose lookup does not show the order yet retries the lookup briefly.
#[tokio::test]
async fn a_lookup_that_lags_behind_a_409_is_retried() {
    let (emu, proxy) = behind_proxy(FaultPlan::first_post(&[Fault::LaggingLookup], 2)).await;
    let external_id = new_external_order_id();
    let submission = through(&proxy, &emu, 10)
        .orders()
        .submit(&tee_submission(&external_id))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(submission.submitted, Submitted::AlreadyExisted(_)));
    assert_eq!(emu.order_count(ALPHA), 1);
    assert_eq!(proxy.injected(Fault::LaggingLookup), 2);
}

// Defect 4: no Retry-After value panics; one beyond the retry budget ends the call at once.
#[tokio::test]
async fn an_absurd_retry_after_neither_panics_nor_parks_the_caller() {
    let (emu, proxy) = behind_proxy(FaultPlan::first_post(&[Fault::AbsurdRetryAfter], 0)).await;
    let alpha = through(&proxy, &emu, 10);
    // The first value the proxy sends is u64::MAX seconds.
    let result = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::spawn(async move {
            alpha
                .orders()
                .submit(&tee_submission(&new_external_order_id()))
                .await
        }),
    )
    .await
    .expect("answered at once")
    .expect("no panic");
    match result {
        Err(Error::RateLimited {
            retry_after: Some(wait),
            ..
        }) => assert!(wait > Duration::from_secs(3600), "{wait:?}"),
        other => panic!("expected RateLimited, got {other:?}"),
    }
    assert_eq!(emu.order_count(ALPHA), 0);
}

// Defect 7: one retry layer, so `attempts` lists every request sent.
#[tokio::test]
async fn attempts_list_every_post_that_was_sent() {
    let (emu, proxy) = behind_proxy(FaultPlan::first_post(&[Fault::RateLimited], 0)).await;
    let submission = through(&proxy, &emu, 10)
        .orders()
        .submit(&tee_submission(&new_external_order_id()))
        .await
        .unwrap();
    assert_eq!(submission.attempts.len(), order_posts(&proxy));
    assert_eq!(order_posts(&proxy), 2);
}

// Defect 7: an external id the lookup cannot find is refused before sending: `submit` takes only an
// `IdentifiedOrder`, and the conversion refuses it, so no request can carry it.
#[test]
fn an_external_id_with_a_comma_is_refused_before_sending() {
    let error = store_api::IdentifiedOrder::try_from(tee_order(Some("batch-7,line-2")))
        .expect_err("refused");
    assert_eq!(error.field(), "externalOrderId");
    assert!(error.to_string().contains("comma"), "{error}");
}

// Defect 4: the store-wide pause after a 429 is capped, so `Retry-After: 86400` does not park every
// client of the store for a day.
#[tokio::test]
async fn the_store_wide_pause_is_capped() {
    let (emu, proxy) = behind_proxy(FaultPlan::first_post(&[Fault::AbsurdRetryAfter], 0)).await;
    let alpha = builder_at(&proxy.base_url(), ALPHA, &key_of(&emu, ALPHA))
        .max_rate_limit_pause(Duration::from_millis(200))
        .build()
        .unwrap();
    let result = alpha
        .orders()
        .submit(&tee_submission(&new_external_order_id()))
        .await;
    assert!(
        matches!(result, Err(Error::RateLimited { .. })),
        "{result:?}"
    );
    let started = std::time::Instant::now();
    alpha.status().await.unwrap();
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(100) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
}

// Issue 35, defect 14: a service that keeps the address normalised ("texas" as TX, a phone's
// punctuation dropped, an empty field omitted) answers the retry after a lost 201 with a 409 for the
// same order: it is the order this run billed, not an external id reused.
#[tokio::test]
async fn an_order_kept_normalised_by_the_service_is_the_same_order_after_a_lost_answer() {
    let emu = store_api_fixtures::Emulator::builder()
        .rate_limit(false)
        .network_downloads(false)
        .deviate(store_api_fixtures::Deviation::NormalisesAddresses)
        .start()
        .await
        .unwrap();
    let proxy = FaultProxy::start(
        emu.origin(),
        FaultPlan::first_post(&[Fault::ServerErrorAfterCommit], 0),
    )
    .await;
    let mut address = shipping_address();
    address["firstName"] = json!("  Ada ");
    address["phone"] = json!("+1 (512) 555-0100");
    address["address"]["stateOrProvince"] = json!("texas");
    address["address"]["apartmentOrSuite"] = json!("");
    let order = order_from(json!({
        "externalOrderId": new_external_order_id(),
        "lineItems": [{ "sku": "AA-TEE-SUN-BLK-M", "quantity": 1 }],
        "shippingAddress": address,
    }));
    let submission = through(&proxy, &emu, 10)
        .orders()
        .submit(&identified(order))
        .await
        .unwrap();
    let held = submission.order().shipping_address.clone().unwrap();
    assert_eq!(
        held.address.unwrap().state_or_province.as_deref(),
        Some("TX"),
        "the emulator kept it normalised"
    );
    assert!(matches!(submission.submitted, Submitted::AlreadyExisted(_)));
    assert_eq!(emu.order_count(ALPHA), 1);
}
