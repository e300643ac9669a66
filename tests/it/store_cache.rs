//! Issue 34: the client's copy of the store at a merchant's size. After the first fill, a refresh
//! reads only what changed (by the emulator's request log), a due refresh never holds up a validation,
//! a refusal is read again before it is returned, and removals reach the copy (webhooks, full reads).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use store_api::model::{Product, ProductStatus};
use store_api::store_cache::RestoreError;
use store_api::{Client, SubmitOptions, Submitted, new_external_order_id};
use store_api_fixtures::Emulator;
use store_api_tests::{
    ALPHA, BETA, builder_at, client, emulator, grow_store, identified, key_of, order_from,
    shipping_address, tee_copy,
};

/// Requests store_alpha has received so far.
fn requests(emu: &Emulator) -> Vec<String> {
    emu.requests(ALPHA)
        .unwrap()
        .into_iter()
        .map(|r| format!("{} {}", r.method, r.operation_id.unwrap_or(r.path)))
        .collect()
}

fn order_for_sku(sku: &str) -> store_api::IdentifiedOrder {
    identified(order_from(json!({
        "externalOrderId": new_external_order_id(),
        "lineItems": [{ "sku": sku, "quantity": 1 }],
        "shippingAddress": shipping_address(),
    })))
}

fn renamed(mut product: Product, name: &str) -> Product {
    product.name = Some(name.to_owned());
    product
}

#[tokio::test]
async fn a_refresh_reads_one_page_per_list_and_one_per_hundred_changes() {
    let emu = emulator().await;
    let tee = grow_store(&emu, 250).await;
    let client = client(&emu, ALPHA);
    let cache = client.store_cache();
    let filled = cache.refresh().await.unwrap();
    assert!(filled.full);
    // The seeded products and 250 copies: 3 pages of 100.
    assert_eq!(filled.product_pages, 3);
    let store_size = cache.current().unwrap().products().count();
    assert_eq!(store_size, 260);
    for changes in [0usize, 1, 99, 100, 150] {
        for n in 0..changes {
            let name = format!("renamed {changes}/{n}");
            emu.update_product(
                ALPHA,
                &format!("prod_copy_{n}"),
                renamed(tee_copy(&tee, n), &name),
            )
            .unwrap();
        }
        let before = requests(&emu).len();
        let refreshed = cache.refresh().await.unwrap();
        let sent = requests(&emu).len() - before;
        let bound = changes.div_ceil(100) as u32 + 1;
        assert!(!refreshed.full);
        assert!(
            refreshed.product_pages <= bound,
            "{changes} changes: {} product pages, at most {bound}",
            refreshed.product_pages
        );
        assert_eq!(refreshed.catalog_pages, 1);
        assert_eq!(
            sent as u32,
            refreshed.product_pages + refreshed.catalog_pages
        );
        let copy = cache.current().unwrap();
        for n in 0..changes {
            let held = copy
                .products()
                .find(|p| p.id == format!("prod_copy_{n}"))
                .unwrap();
            assert_eq!(
                held.name.as_deref(),
                Some(format!("renamed {changes}/{n}").as_str())
            );
        }
        assert_eq!(copy.products().count(), store_size);
    }
}

#[tokio::test]
async fn an_order_for_a_product_added_after_the_fill_costs_one_incremental_read() {
    let emu = emulator().await;
    let tee = grow_store(&emu, 120).await;
    let client = client(&emu, ALPHA);
    client.store_cache().refresh().await.unwrap();
    emu.create_product(ALPHA, tee_copy(&tee, 9999)).unwrap();
    let before = requests(&emu).len();
    let submission = client
        .orders()
        .submit(&order_for_sku("AA-TEE-SUN-BLK-M-C9999"))
        .await
        .unwrap();
    assert!(matches!(submission.submitted, Submitted::Created(_)));
    // The unknown SKU cost one page of each list, then the POST: no full read.
    assert_eq!(
        requests(&emu)[before..],
        [
            "GET listCatalogProducts",
            "GET listProducts",
            "POST createOrder"
        ]
    );
}

#[tokio::test]
async fn a_stale_copy_never_refuses_a_good_order() {
    let emu = emulator().await;
    let client = client(&emu, ALPHA);
    let tee = client
        .products()
        .get("prod_alpha_sunset_tee")
        .await
        .unwrap();
    let mut archived = tee.clone();
    archived.status = Some(ProductStatus::Archived);
    emu.update_product(ALPHA, &tee.id, archived).unwrap();
    client.store_cache().refresh().await.unwrap();
    // Active again in the app; the copy still holds it archived.
    let id = tee.id.clone();
    emu.update_product(ALPHA, &id, tee).unwrap();
    let submission = client
        .orders()
        .submit(&order_for_sku("AA-TEE-SUN-BLK-M"))
        .await
        .unwrap();
    assert!(matches!(submission.submitted, Submitted::Created(_)));
    // A refusal of the request's own shape is not read again: no request at all.
    let before = requests(&emu).len();
    let duplicate_lines = identified(order_from(json!({
        "externalOrderId": new_external_order_id(),
        "lineItems": [{ "sku": "AA-TEE-SUN-BLK-M", "quantity": 1 }, { "sku": "AA-TEE-SUN-BLK-M", "quantity": 2 }],
        "shippingAddress": shipping_address(),
    })));
    let refused = client
        .orders()
        .preflight(duplicate_lines.as_request())
        .await;
    assert!(refused.is_err());
    assert_eq!(requests(&emu).len(), before);
}

#[tokio::test]
async fn a_due_refresh_runs_in_the_background_while_validation_uses_the_copy_it_has() {
    let emu = emulator().await;
    let tee = grow_store(&emu, 1).await;
    let client = builder_at(&emu.base_url(), ALPHA, &key_of(&emu, ALPHA))
        .cache_ttl(Duration::from_millis(50))
        .build()
        .unwrap();
    let first = client.store_snapshot().await.unwrap();
    emu.create_product(ALPHA, tee_copy(&tee, 7)).unwrap();
    tokio::time::sleep(Duration::from_millis(80)).await;
    let due = client.store_snapshot().await.unwrap();
    // The copy it had, at once; the refresh started behind it.
    assert!(Arc::ptr_eq(&first, &due));
    let found = poll(|| {
        client
            .store_cache()
            .current()
            .is_some_and(|copy| copy.products().any(|p| p.id == "prod_copy_7"))
    })
    .await;
    assert!(found, "the background refresh brought the new product");
}

#[tokio::test]
async fn removals_reach_the_copy_by_webhook_and_by_a_full_read_when_the_counts_differ() {
    let emu = emulator().await;
    let tee = grow_store(&emu, 3).await;
    // By webhook: keep_store_cache follows a product event into the copy.
    let client = client(&emu, ALPHA);
    client.store_cache().refresh().await.unwrap();
    emu.delete_product(ALPHA, "prod_copy_0").unwrap();
    emu.update_product(
        ALPHA,
        "prod_copy_1",
        renamed(tee_copy(&tee, 1), "by webhook"),
    )
    .unwrap();
    for (topic, id) in [
        ("products_delete", "prod_copy_0"),
        ("products_update", "prod_copy_1"),
    ] {
        let event: store_api_webhooks::Event = serde_json::from_value(json!({
            "id": format!("evt_{id}"), "storeId": ALPHA, "topic": topic, "data": { "id": id },
            "isTest": false, "createdAt": "2026-08-01T00:00:00.000Z",
        }))
        .unwrap();
        store_api_webhooks::keep_store_cache(&client, &event)
            .await
            .unwrap();
    }
    let copy = client.store_cache().current().unwrap();
    assert!(!copy.products().any(|p| p.id == "prod_copy_0"));
    let held = copy.products().find(|p| p.id == "prod_copy_1").unwrap();
    assert_eq!(held.name.as_deref(), Some("by webhook"));

    // Without webhooks: an incremental read cannot see a removal, but the service's count says
    // something is gone, and the background full read that follows settles it.
    let background = builder_at(&emu.base_url(), ALPHA, &key_of(&emu, ALPHA))
        .cache_ttl(Duration::ZERO)
        .build()
        .unwrap();
    background.store_cache().refresh().await.unwrap();
    emu.delete_product(ALPHA, "prod_copy_2").unwrap();
    let mut gone = false;
    for _ in 0..500 {
        // Each look starts the read that is due, in the background (the TTL is zero).
        let copy = background.store_cache().snapshot().await.unwrap();
        if !copy.products().any(|p| p.id == "prod_copy_2") {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "the removed product left the copy");
}

#[tokio::test]
async fn a_saved_copy_restores_into_its_own_store_only() {
    let emu = emulator().await;
    let client = client(&emu, ALPHA);
    assert!(client.store_cache().save().is_none());
    client.store_cache().refresh().await.unwrap();
    let saved = client.store_cache().save().unwrap();
    let text = serde_json::to_string(&saved).unwrap();
    assert!(
        !text.contains(&key_of(&emu, ALPHA)),
        "the saved copy holds no key"
    );

    let later = store_api_tests::client(&emu, ALPHA);
    later
        .store_cache()
        .restore(serde_json::from_str(&text).unwrap())
        .unwrap();
    let restored = later.store_cache().current().unwrap();
    assert_eq!(
        restored.products().count(),
        client.store_cache().current().unwrap().products().count()
    );
    assert_eq!(
        later.store_cache().refreshed_at(),
        client.store_cache().refreshed_at()
    );

    let beta = store_api_tests::client(&emu, BETA);
    assert!(matches!(
        beta.store_cache()
            .restore(serde_json::from_str(&text).unwrap()),
        Err(RestoreError::OtherStore { .. })
    ));
    let older = text.replacen("\"format\":1", "\"format\":0", 1);
    assert!(matches!(
        later
            .store_cache()
            .restore(serde_json::from_str(&older).unwrap()),
        Err(RestoreError::Format { found: 0, .. })
    ));
}

#[tokio::test]
async fn a_submission_without_preflight_reads_nothing_first() {
    let emu = emulator().await;
    let client: Client = client(&emu, ALPHA);
    let submission = client
        .orders()
        .submit_with(
            &order_for_sku("AA-TEE-SUN-BLK-M"),
            &SubmitOptions::new().preflight(false),
        )
        .await
        .unwrap();
    assert!(matches!(submission.submitted, Submitted::Created(_)));
    assert_eq!(requests(&emu), ["POST createOrder"]);
    assert!(client.store_cache().current().is_none());
}

/// Polls `done` every 20 ms for up to 10 s.
async fn poll(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Callers that find no copy together wait for one fill, not one each (a service's first burst of
/// submissions read the store once per caller: the exactly-once bench's throughput fell by a third).
#[tokio::test]
async fn concurrent_first_validations_share_one_fill() {
    let emu = emulator().await;
    let client = client(&emu, ALPHA);
    let fills = (0..8).map(|_| client.store_snapshot());
    for copy in futures::future::join_all(fills).await {
        copy.unwrap();
    }
    assert_eq!(
        requests(&emu),
        ["GET listCatalogProducts", "GET listProducts"]
    );
}
