//! Every endpoint end to end: `store_api::Client` over real HTTP against the emulator, the typed results
//! snapshotted (yaml) with generated ids, timestamps and the emulator's port redacted. Seeded ids are
//! stable and stay visible.

use chrono::{TimeDelta, Utc};
use futures::TryStreamExt;
use insta::assert_yaml_snapshot;
use rust_decimal::Decimal;
use serde_json::{Value, json};
use store_api::model::{
    DecorationMethod, FulfillmentStatus, OrderStatus, PaymentStatus, ProductStatus, SortDirection,
};
use store_api::{
    Error, ListArtworksQuery, ListCatalogProductsQuery, ListOrdersQuery, ListProductsQuery, Page,
    Submitted, new_external_order_id,
};
use store_api_fixtures::AppAction;
use store_api_fixtures::artwork::FakeResource;
use store_api_tests::{
    ALPHA, BETA, PNG_1X1, client, emulator, order_from, shipping_address, tee_order,
};
use store_api_tests::{identified, tee_submission};

/// A page's envelope counts and a projection of its items, for compact snapshots of lists.
fn summary<T>(page: &Page<T>, project: impl Fn(&T) -> Value) -> Value {
    json!({
        "page": page.page,
        "totalItems": page.total_items,
        "totalPages": page.total_pages,
        "items": page.items.iter().map(project).collect::<Vec<_>>(),
    })
}

fn blank(product: &store_api::model::CatalogProduct) -> Value {
    json!({
        "id": product.id,
        "name": product.name,
        "productType": product.product_type,
        "decorationMethods": product.decoration_methods.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
    })
}

fn product_line(product: &store_api::model::Product) -> Value {
    json!({ "id": product.id, "name": product.name, "status": product.status.as_ref().map(|s| s.as_str()) })
}

#[tokio::test]
async fn status_reports_the_version_and_the_store() {
    let emu = emulator().await;
    let status = client(&emu, ALPHA).status().await.unwrap();
    assert_eq!(status.version.as_deref(), Some("2026-08"));
    assert_eq!(status.store.as_ref().map(|s| s.id.as_str()), Some(ALPHA));
    assert_yaml_snapshot!(status, { ".checkedAt" => "[ts]" });
}

#[tokio::test]
async fn catalog_lists_filter_by_type_and_method_and_sort() {
    let emu = emulator().await;
    let alpha = client(&emu, ALPHA);
    let by_name = ListCatalogProductsQuery::new().sort_name(SortDirection::Asc);

    let all = alpha.catalog().list(&by_name).await.unwrap();
    assert_eq!(
        all.total_items, 11,
        "store_alpha sees its private blank too"
    );
    let names: Vec<_> = all
        .items
        .iter()
        .map(|p| p.name.clone().unwrap_or_default())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "sort[name]=asc");

    let tees = alpha
        .catalog()
        .list(&by_name.clone().product_type(["t-shirt"]))
        .await
        .unwrap();
    assert!(
        tees.items
            .iter()
            .all(|p| p.product_type.as_deref() == Some("t-shirt"))
    );

    let methods = [
        DecorationMethod::from("engraving"),
        DecorationMethod::from("liquid_3d"),
    ];
    let by_method = alpha
        .catalog()
        .list(&by_name.clone().decoration_method(methods.clone()))
        .await
        .unwrap();
    assert!(
        by_method
            .items
            .iter()
            .all(|p| p.decoration_methods.iter().any(|m| methods.contains(m)))
    );

    let newest_first = alpha
        .catalog()
        .list(&ListCatalogProductsQuery::new().limit(3).page(2))
        .await
        .unwrap();
    assert_eq!(
        (
            newest_first.page,
            newest_first.total_pages,
            newest_first.items.len()
        ),
        (2, 4, 3)
    );

    let beta = client(&emu, BETA)
        .catalog()
        .collect_all(&ListCatalogProductsQuery::new())
        .await
        .unwrap();
    assert_eq!(beta.len(), 10);
    assert!(
        beta.iter().all(|p| p.id != "cp_cc1717"),
        "the private blank is store_alpha's only"
    );

    assert_yaml_snapshot!("catalog_all_by_name", summary(&all, blank));
    assert_yaml_snapshot!("catalog_tees_by_name", summary(&tees, blank));
    assert_yaml_snapshot!("catalog_engraving_or_liquid_3d", summary(&by_method, blank));
}

#[tokio::test]
async fn catalog_get_returns_a_blank_and_hides_private_ones() {
    let emu = emulator().await;
    let cap = client(&emu, ALPHA)
        .catalog()
        .get("cp_yp6089m")
        .await
        .unwrap();
    assert_eq!(cap.variants.len(), 3);
    assert_yaml_snapshot!(cap);

    let private = client(&emu, ALPHA)
        .catalog()
        .get("cp_cc1717")
        .await
        .unwrap();
    assert_eq!(private.id, "cp_cc1717");
    for (store, id) in [(BETA, "cp_cc1717"), (ALPHA, "cp_nope")] {
        match client(&emu, store).catalog().get(id).await {
            Err(Error::NotFound { message }) => assert_eq!(message, "Catalog product not found"),
            other => panic!("{store} {id}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn products_list_by_status_and_get_one() {
    let emu = emulator().await;
    let alpha = client(&emu, ALPHA);
    let by_name = ListProductsQuery::new().sort_name(SortDirection::Asc);

    let all = alpha.products().list(&by_name).await.unwrap();
    assert_eq!(
        all.total_items, 10,
        "every status is listed without a filter"
    );
    let not_orderable = alpha
        .products()
        .list(
            &by_name
                .clone()
                .status([ProductStatus::Draft, ProductStatus::Archived]),
        )
        .await
        .unwrap();
    assert!(not_orderable.items.iter().all(|p| matches!(
        p.status,
        Some(ProductStatus::Draft | ProductStatus::Archived)
    )));
    assert_eq!(not_orderable.total_items, 3);

    let cap = alpha.products().get("prod_alpha_logo_cap").await.unwrap();
    assert_eq!(
        cap.variants[0].cost.map(|c| c.to_string()).as_deref(),
        Some("16.25")
    );
    let draft = alpha.products().get("prod_alpha_wave_tote").await.unwrap();
    assert_eq!(
        draft.status.as_ref(),
        Some(&ProductStatus::Draft),
        "a product of any status can be read"
    );

    assert_yaml_snapshot!("products_all_by_name", summary(&all, product_line));
    assert_yaml_snapshot!(
        "products_draft_or_archived",
        summary(&not_orderable, product_line)
    );
    assert_yaml_snapshot!("product_logo_cap", cap);
}

#[tokio::test]
async fn artworks_create_list_and_get() {
    let emu = emulator().await;
    let origin = emu.origin().to_owned();
    let url = "https://art.example.com/logo.png";
    emu.fake_hosts()
        .insert(url, FakeResource::image(PNG_1X1))
        .unwrap();
    let alpha = client(&emu, ALPHA);

    let first = alpha.artworks().create("Logo", url).await.unwrap();
    let second = alpha.artworks().create("Another logo", url).await.unwrap();
    assert_ne!(
        first.id, second.id,
        "the same image twice makes two artworks"
    );
    let stored = first
        .image
        .as_ref()
        .and_then(|i| i.url.clone())
        .unwrap_or_default();
    assert!(
        stored.starts_with(&origin),
        "the service serves its own copy: {stored}"
    );

    let fetched = alpha.artworks().get(&first.id).await.unwrap();
    assert_eq!(fetched, first);
    let listed = alpha
        .artworks()
        .list(&ListArtworksQuery::new().sort_name(SortDirection::Asc))
        .await
        .unwrap();
    let names: Vec<_> = listed
        .items
        .iter()
        .filter_map(|a| a.name.as_deref())
        .collect();
    assert_eq!(names, ["Another logo", "Logo"]);
    assert_eq!(
        alpha
            .artworks()
            .collect_all(&ListArtworksQuery::new())
            .await
            .unwrap()
            .len(),
        2
    );

    match client(&emu, BETA).artworks().get(&first.id).await {
        Err(Error::NotFound { message }) => assert_eq!(message, "Artwork not found"),
        other => panic!("another store's artwork: {other:?}"),
    }

    // The stored copy's URL names the emulator's port and a generated image id.
    let images = format!("{origin}/_emulator/images/");
    let stored_copy = insta::dynamic_redaction(move |value, _| match value.as_str() {
        Some(url) if url.starts_with(&images) => {
            "http://[emulator]/_emulator/images/[image id]".into()
        }
        _ => value,
    });
    assert_yaml_snapshot!("artwork_created", first, {
        ".id" => "[id]", ".image.id" => "[id]", ".image.url" => stored_copy,
        ".createdAt" => "[ts]", ".updatedAt" => "[ts]",
    });
    assert_yaml_snapshot!(
        "artworks_by_name",
        summary(&listed, |a| json!({ "name": a.name }))
    );
}

/// An order with a standard line item and a custom one decorated with `artwork_id`.
fn mixed_order(external_id: &str, artwork_id: &str) -> store_api::NewOrder {
    order_from(json!({
        "externalOrderId": external_id,
        "lineItems": [
            { "sku": "AA-TEE-SUN-BLK-M", "quantity": 2 },
            {
                "isCustom": true,
                "catalogProductVariantId": "cv_3001_blk_m",
                "quantity": 3,
                "decorations": [
                    {
                        "decorationLocation": "front", "decorationMethod": "direct_to_garment",
                        "artworkId": artwork_id, "physicalWidth": 10, "physicalHeight": 12,
                        "horizontalOffsetFromCenter": 0, "verticalOffsetFromTop": 2
                    },
                    {
                        "decorationLocation": "left_chest", "decorationMethod": "direct_to_garment",
                        "artworkId": artwork_id, "physicalWidth": 3, "physicalHeight": 3,
                        "horizontalOffsetFromCenter": -0.5, "verticalOffsetFromTop": 0.5
                    }
                ]
            }
        ],
        "shippingAddress": shipping_address(),
    }))
}

#[tokio::test]
async fn orders_submit_get_list_find_and_stream() {
    let emu = emulator().await;
    let url = "https://art.example.com/logo.png";
    emu.fake_hosts()
        .insert(url, FakeResource::image(PNG_1X1))
        .unwrap();
    let alpha = client(&emu, ALPHA);
    let artwork = alpha.artworks().create("Logo", url).await.unwrap();

    let external_id = new_external_order_id();
    let submission = alpha
        .orders()
        .submit(&identified(mixed_order(&external_id, &artwork.id)))
        .await
        .unwrap();
    assert_eq!(submission.attempts.len(), 1);
    let Submitted::Created(order) = submission.submitted else {
        panic!("a new external id creates: {:?}", submission.submitted);
    };
    assert_eq!(
        order.external_order_id.as_deref(),
        Some(external_id.as_str())
    );
    assert_eq!(
        (
            order.status.clone(),
            order.fulfillment_status.clone(),
            order.payment_status.clone()
        ),
        (
            Some(OrderStatus::Pending),
            Some(FulfillmentStatus::Pending),
            Some(PaymentStatus::Due)
        )
    );
    // The seed's price model: tee 2 × 11.50; custom 3 × (8.25 blank + 2 × 3.25 DTG); shipping
    // 4.99 + 4 × 1.50.
    let cents = |amount: i64| Some(store_api::model::Money::from(Decimal::new(amount, 2)));
    assert_eq!(
        (order.subtotal_cost, order.shipping_cost, order.total_cost),
        (cents(6725), cents(1099), cents(7824))
    );
    let custom = &order.line_items[1];
    assert!(custom.is_custom && custom.product_id.is_none());
    assert_eq!(custom.unit_cost, cents(1475));
    let age = Utc::now() - order.created_at.unwrap();
    assert!(
        age >= TimeDelta::zero() && age < TimeDelta::minutes(1),
        "createdAt is now: {age}"
    );

    assert_eq!(alpha.orders().get(&order.id).await.unwrap(), order);
    let found = alpha
        .orders()
        .find_by_external_id(&external_id)
        .await
        .unwrap();
    assert_eq!(
        found.as_ref().map(|o| o.id.as_str()),
        Some(order.id.as_str())
    );
    assert_eq!(
        alpha
            .orders()
            .find_by_external_id("never-used")
            .await
            .unwrap(),
        None
    );

    // A second order, moved along by the app, to exercise the filters.
    let second = alpha
        .orders()
        .submit(&tee_submission(&new_external_order_id()))
        .await
        .unwrap();
    let second = second.order().clone();
    emu.advance_order(ALPHA, &second.id).unwrap();
    emu.app_action(ALPHA, &second.id, AppAction::MarkPaid)
        .unwrap();

    let listed = alpha.orders().list(&ListOrdersQuery::new()).await.unwrap();
    let ids: Vec<_> = listed.items.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, [second.id.as_str(), order.id.as_str()], "newest first");
    let check = |query: ListOrdersQuery, expected: &[&str]| {
        let alpha = alpha.clone();
        let expected: Vec<String> = expected.iter().map(|s| (*s).to_owned()).collect();
        async move {
            let page = alpha.orders().list(&query).await.unwrap();
            let ids: Vec<_> = page.items.iter().map(|o| o.id.clone()).collect();
            assert_eq!(ids, expected, "{query:?}");
        }
    };
    check(
        ListOrdersQuery::new().fulfillment_status([FulfillmentStatus::ProductionRequested]),
        &[&second.id],
    )
    .await;
    check(
        ListOrdersQuery::new().payment_status([PaymentStatus::Paid]),
        &[&second.id],
    )
    .await;
    check(
        ListOrdersQuery::new().payment_status([PaymentStatus::Due]),
        &[&order.id],
    )
    .await;
    check(
        ListOrdersQuery::new().status([OrderStatus::Pending, OrderStatus::ProductionRequested]),
        &[&second.id, &order.id],
    )
    .await;
    check(
        ListOrdersQuery::new().sort_created_at(SortDirection::Asc),
        &[&order.id, &second.id],
    )
    .await;

    let streamed: Vec<_> = alpha
        .orders()
        .stream(&ListOrdersQuery::new())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(
        streamed.iter().map(|o| o.id.as_str()).collect::<Vec<_>>(),
        ids
    );

    assert_yaml_snapshot!("order_submitted", order, {
        ".id" => "[id]", ".externalOrderId" => "[external id]",
        ".lineItems[].id" => "[id]", ".lineItems[].decorations[].artworkId" => "[artwork id]",
        ".createdAt" => "[ts]", ".updatedAt" => "[ts]", ".orderedAt" => "[ts]",
    });
}

/// `filter[externalOrderId]` (how `submit` finds an order after a 409) works for ids with URL syntax.
#[tokio::test]
async fn external_ids_with_special_characters_are_found_again_by_filter() {
    let emu = emulator().await;
    let alpha = client(&emu, ALPHA);
    for external_id in [
        "a&b=c",
        "plus+sign",
        "space here",
        "per%cent",
        "hash#tag",
        "ünï/cødé?x",
        "[bracket]",
    ] {
        let order = tee_order(Some(external_id));
        let created = alpha.orders().create(&order).await.unwrap();
        let found = alpha
            .orders()
            .find_by_external_id(external_id)
            .await
            .unwrap();
        assert_eq!(
            found.map(|o| o.id),
            Some(created.id.clone()),
            "{external_id:?}"
        );
        // The retry path: a 409, then the lookup by external id.
        let again = alpha
            .orders()
            .submit(&identified(order.clone()))
            .await
            .unwrap();
        assert_eq!(again.order().id, created.id, "{external_id:?}");
    }
}
