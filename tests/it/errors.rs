//! Typed errors: what the service refuses comes back as the right `Error` variant, and what the client
//! can refuse locally never reaches the service (checked with a counting pass-through proxy and the
//! emulator's order count).

use insta::assert_yaml_snapshot;
use serde_json::{Value, json};
use store_api::model::ProductStatus;
use store_api::validate::ViolationKind;
use store_api::{
    AttemptResult, Client, Error, ListArtworksQuery, ListCatalogProductsQuery, ListOrdersQuery,
    ListProductsQuery, Submitted, new_external_order_id,
};
use store_api_fixtures::artwork::FakeResource;
use store_api_raw::types::ErrorMessage;
use store_api_rules::service_message;
use store_api_tests::proxy::{FaultPlan, FaultProxy};
use store_api_tests::{
    ALPHA, BETA, GAMMA, PNG_1X1, builder_at, client, emulator, key_of, order_from,
    shipping_address, tee_order,
};
use store_api_tests::{identified, tee_submission};

/// A client of `store_id` that reaches the emulator through a counting pass-through proxy.
async fn proxied(emu: &store_api_fixtures::Emulator, store_id: &str) -> (Client, FaultProxy) {
    let proxy = FaultProxy::start(emu.origin(), FaultPlan::none()).await;
    let client = builder_at(&proxy.base_url(), store_id, &key_of(emu, store_id))
        .build()
        .unwrap();
    (client, proxy)
}

#[tokio::test]
async fn unauthorized_is_typed_and_never_retried() {
    let emu = emulator().await;
    let proxy = FaultProxy::start(emu.origin(), FaultPlan::none()).await;
    let wrong_key = "csk_00000000000000000000000000000000";
    let cases = [
        (ALPHA, wrong_key.to_owned(), "Invalid API key"),
        (BETA, key_of(&emu, ALPHA), "Invalid API key"),
        (GAMMA, key_of(&emu, GAMMA), "The store is not active"),
    ];
    for (store, key, expected) in cases {
        let sent_before = proxy.exchanges().len();
        let client = builder_at(&proxy.base_url(), store, &key).build().unwrap();
        match client.status().await {
            Err(Error::Unauthorized { message }) => assert_eq!(message, expected, "{store}"),
            other => panic!("{store}: {other:?}"),
        }
        assert_eq!(
            proxy.exchanges().len(),
            sent_before + 1,
            "a 401 is not retried ({store})"
        );
    }

    // Rotation: the old key is refused at once, the new one works.
    let old = client(&emu, ALPHA);
    let new_key = emu.rotate_key(ALPHA).unwrap();
    assert!(matches!(
        old.status().await,
        Err(Error::Unauthorized { .. })
    ));
    let renewed = builder_at(&emu.base_url(), ALPHA, &new_key)
        .build()
        .unwrap();
    assert_eq!(
        renewed.status().await.unwrap().status.as_deref(),
        Some("ok")
    );
}

#[tokio::test]
async fn unknown_ids_and_other_stores_resources_are_not_found() {
    let emu = emulator().await;
    let url = "https://art.example.com/logo.png";
    emu.fake_hosts()
        .insert(url, FakeResource::image(PNG_1X1))
        .unwrap();
    let alpha = client(&emu, ALPHA);
    let beta = client(&emu, BETA);
    let artwork = alpha.artworks().create("Logo", url).await.unwrap();
    let order = alpha
        .orders()
        .create(&tee_order(Some(&new_external_order_id())))
        .await
        .unwrap();

    let cases: Vec<(&str, Result<(), Error>, &str)> = vec![
        (
            "unknown order",
            alpha.orders().get("ord_nope").await.map(drop),
            "Order not found",
        ),
        (
            "another store's order",
            beta.orders().get(&order.id).await.map(drop),
            "Order not found",
        ),
        (
            "unknown product",
            alpha.products().get("prod_nope").await.map(drop),
            "Product not found",
        ),
        (
            "another store's product",
            beta.products().get("prod_alpha_sunset_tee").await.map(drop),
            "Product not found",
        ),
        (
            "unknown artwork",
            alpha.artworks().get("art_nope").await.map(drop),
            "Artwork not found",
        ),
        (
            "another store's artwork",
            beta.artworks().get(&artwork.id).await.map(drop),
            "Artwork not found",
        ),
        (
            "unknown blank",
            alpha.catalog().get("cp_nope").await.map(drop),
            "Catalog product not found",
        ),
        (
            "private blank",
            beta.catalog().get("cp_cc1717").await.map(drop),
            "Catalog product not found",
        ),
    ];
    for (case, result, expected) in cases {
        match result {
            Err(Error::NotFound { message }) => assert_eq!(message, expected, "{case}"),
            other => panic!("{case}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn bad_requests_carry_the_services_messages() {
    let emu = emulator().await;
    let alpha = client(&emu, ALPHA);

    // Body validation: every failing field, as a message array (`create` skips pre-flight).
    let mut invalid = json!({
        "externalOrderId": new_external_order_id(),
        "lineItems": [{
            "isCustom": true, "catalogProductVariantId": "cv_3001_blk_m", "quantity": 1,
            "decorations": [{ "decorationLocation": "front", "decorationMethod": "direct_to_garment",
                "artworkId": "art_x", "physicalWidth": -1, "physicalHeight": 4,
                "horizontalOffsetFromCenter": 0, "verticalOffsetFromTop": -2 }]
        }],
        "shippingAddress": shipping_address(),
    });
    invalid["shippingAddress"]["address"]["stateOrProvince"] = json!("XX");
    let field_errors = match alpha.orders().create(&order_from(invalid)).await {
        Err(Error::BadRequest { messages }) => messages,
        other => panic!("{other:?}"),
    };
    assert_eq!(field_errors.len(), 3, "{field_errors:?}");

    // An ordering rule: one message.
    let draft = order_from(json!({
        "externalOrderId": new_external_order_id(),
        "lineItems": [{ "sku": "AA-TOTE-WAVE-NAT-OS", "quantity": 1 }],
        "shippingAddress": shipping_address(),
    }));
    let rule = match alpha.orders().create(&draft).await {
        Err(Error::BadRequest { messages }) => messages,
        other => panic!("{other:?}"),
    };
    assert_eq!(rule.len(), 1);
    assert!(
        rule[0].starts_with("Products that are not active or unlisted cannot be ordered"),
        "{rule:?}"
    );
    assert_eq!(emu.order_count(ALPHA), 0, "nothing was created");

    // An artwork whose download fails.
    let gone = "https://art.example.com/gone.png";
    emu.fake_hosts()
        .insert(gone, FakeResource::status(404))
        .unwrap();
    let download = match alpha.artworks().create("Gone", gone).await {
        Err(Error::BadRequest { messages }) => messages,
        other => panic!("{other:?}"),
    };

    assert_yaml_snapshot!(json!({ "fields": field_errors, "rule": rule, "artwork": download }));
}

/// A create-order request of store_alpha with these line items.
fn with_items(items: Value) -> Value {
    json!({
        "externalOrderId": new_external_order_id(),
        "lineItems": items,
        "shippingAddress": shipping_address()
    })
}

fn decoration(artwork_id: &str, location: &str, method: &str, width: f64, height: f64) -> Value {
    json!({
        "decorationLocation": location, "decorationMethod": method, "artworkId": artwork_id,
        "physicalWidth": width, "physicalHeight": height,
        "horizontalOffsetFromCenter": 0, "verticalOffsetFromTop": 0
    })
}

#[tokio::test]
async fn invalid_orders_are_refused_locally_and_the_service_agrees() {
    use ViolationKind as K;
    let emu = emulator().await;
    let (through_proxy, proxy) = proxied(&emu, ALPHA).await;
    let direct = client(&emu, ALPHA);
    // Pre-flight leaves the artwork rule to the service (it does not copy the artworks), so the cases use
    // a real artwork and the service reaches the same rule.
    let url = "https://art.example.com/logo.png";
    emu.fake_hosts()
        .insert(url, FakeResource::image(PNG_1X1))
        .unwrap();
    let artwork = direct.artworks().create("Logo", url).await.unwrap().id;
    let decoration = |location: &str, method: &str, width: f64, height: f64| {
        decoration(&artwork, location, method, width, height)
    };
    let tee = |qty: u64| json!({ "sku": "AA-TEE-SUN-BLK-M", "quantity": qty });
    let custom = |decorations: Value| {
        json!({
            "isCustom": true, "catalogProductVariantId": "cv_3001_blk_m", "quantity": 1,
            "decorations": decorations
        })
    };
    let mut bad_country = with_items(json!([tee(1)]));
    bad_country["shippingAddress"]["address"]["country"] = json!("ZZ");
    let mut bad_state = with_items(json!([tee(1)]));
    bad_state["shippingAddress"]["address"]["stateOrProvince"] = json!("XX");

    // (case, request, the rule pre-flight finds, where: the element or field the path starts with)
    let cases: Vec<(&str, Value, K, &str)> = vec![
        (
            "country",
            bad_country,
            K::InvalidCountry,
            "shippingAddress.address.country",
        ),
        (
            "US state",
            bad_state,
            K::UnknownUsState,
            "shippingAddress.address.stateOrProvince",
        ),
        (
            "no line items",
            with_items(json!([])),
            K::EmptyLineItems,
            "lineItems",
        ),
        (
            "draft product",
            with_items(json!([{ "sku": "AA-TOTE-WAVE-NAT-OS", "quantity": 1 }])),
            K::ProductNotOrderable,
            "lineItems.0",
        ),
        (
            "discontinued variant",
            with_items(json!([{ "productVariantId": "pv_aa_sun_hnv_2xl", "quantity": 1 }])),
            K::VariantUnavailable,
            "lineItems.0",
        ),
        (
            "unknown sku",
            with_items(json!([{ "sku": "NOPE", "quantity": 1 }])),
            K::ProductNotFound,
            "lineItems.0",
        ),
        (
            "duplicate variant",
            with_items(json!([tee(1), tee(2)])),
            K::DuplicateVariant,
            "lineItems.1",
        ),
        (
            "method not at the location",
            with_items(json!([custom(json!([decoration(
                "front",
                "embroidery",
                4.0,
                4.0
            )]))])),
            K::MethodNotAvailableForLocation,
            "lineItems.0.decorations.0",
        ),
        (
            "design larger than the area",
            with_items(json!([custom(json!([decoration(
                "front",
                "direct_to_garment",
                13.0,
                4.0
            )]))])),
            K::DesignLargerThanPrintArea,
            "lineItems.0.decorations.0",
        ),
        (
            "mixed methods",
            with_items(json!([custom(json!([
                decoration("front", "direct_to_garment", 4.0, 4.0),
                decoration("back", "direct_to_film", 4.0, 4.0)
            ]))])),
            K::MixedDecorationMethods,
            "lineItems.0",
        ),
    ];
    for (case, body, kind, path) in cases {
        let order = order_from(body);
        let violations = match through_proxy
            .orders()
            .submit(&identified(order.clone()))
            .await
        {
            Err(Error::Invalid { violations }) => violations,
            other => panic!("{case}: {other:?}"),
        };
        let found: Vec<(K, &str)> = violations
            .iter()
            .map(|v| (v.kind, v.path.as_str()))
            .collect();
        // The path names the offending field inside the expected element.
        assert!(
            found.iter().any(|(k, p)| *k == kind && p.starts_with(path)),
            "{case}: {kind:?} at {path} not in {found:?}"
        );
        // The same request, sent without pre-flight: the service refuses it with the same message.
        let served = match direct.orders().create(&order).await {
            Err(Error::BadRequest { messages }) => messages,
            other => panic!("{case}: the service accepted what pre-flight refused: {other:?}"),
        };
        let local = match service_message(&violations) {
            Some(ErrorMessage::Array(list)) => list,
            Some(ErrorMessage::String(text)) => vec![text],
            None => Vec::new(),
        };
        assert_eq!(local, served, "{case}: pre-flight and the service disagree");
    }
    assert_eq!(emu.order_count(ALPHA), 0);
    let posts: Vec<_> = proxy
        .exchanges()
        .into_iter()
        .filter(|e| e.is_order_post())
        .collect();
    assert!(posts.is_empty(), "submit sent refused orders: {posts:?}");

    // A valid order still goes through the same client.
    through_proxy
        .orders()
        .submit(&tee_submission(&new_external_order_id()))
        .await
        .unwrap();
    assert_eq!(emu.order_count(ALPHA), 1);
}

#[tokio::test]
async fn out_of_range_arguments_are_refused_before_sending() {
    let emu = emulator().await;
    let (alpha, proxy) = proxied(&emu, ALPHA).await;
    let results = [
        (
            "orders limit 101",
            alpha
                .orders()
                .list(&ListOrdersQuery::new().limit(101))
                .await
                .map(drop),
        ),
        (
            "orders page 0",
            alpha
                .orders()
                .list(&ListOrdersQuery::new().page(0))
                .await
                .map(drop),
        ),
        (
            "catalog limit 101",
            alpha
                .catalog()
                .list(&ListCatalogProductsQuery::new().limit(101))
                .await
                .map(drop),
        ),
        (
            "products limit 0",
            alpha
                .products()
                .list(&ListProductsQuery::new().limit(0))
                .await
                .map(drop),
        ),
        (
            "artworks limit 101",
            alpha
                .artworks()
                .list(&ListArtworksQuery::new().limit(101))
                .await
                .map(drop),
        ),
        (
            "comma in an external id filter",
            alpha
                .orders()
                .list(&ListOrdersQuery::new().external_order_id(["a,b"]))
                .await
                .map(drop),
        ),
        (
            "plain http artwork",
            alpha
                .artworks()
                .create("Logo", "http://art.example.com/a.png")
                .await
                .map(drop),
        ),
        (
            "artwork with credentials",
            alpha
                .artworks()
                .create("Logo", "https://u:p@art.example.com/a.png")
                .await
                .map(drop),
        ),
    ];
    for (case, result) in results {
        assert!(
            matches!(result, Err(Error::InvalidArgument { .. })),
            "{case}: {result:?}"
        );
    }
    assert_eq!(proxy.exchanges(), [], "nothing was sent");
    // A submission without an external id does not compile; one read without it is refused by the
    // conversion, naming the field.
    let missing = store_api::IdentifiedOrder::try_from(tee_order(None)).expect_err("refused");
    assert_eq!(missing.field(), "externalOrderId");

    let full = alpha
        .products()
        .list(
            &ListProductsQuery::new()
                .limit(100)
                .status([ProductStatus::Active]),
        )
        .await
        .unwrap();
    assert_eq!(full.total_items, 5);
    assert_eq!(proxy.exchanges().len(), 1);
}

#[tokio::test]
async fn a_reused_external_id_conflicts_and_submit_returns_the_existing_order() {
    let emu = emulator().await;
    let alpha = client(&emu, ALPHA);
    let external_id = new_external_order_id();
    let order = tee_order(Some(&external_id));

    let first = alpha.orders().create(&order).await.unwrap();
    match alpha.orders().create(&order).await {
        Err(Error::Conflict { message }) => {
            assert!(
                message.starts_with("An order already exists with this external order ID"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(emu.order_count(ALPHA), 1);

    let submission = alpha
        .orders()
        .submit(&identified(order.clone()))
        .await
        .unwrap();
    assert_eq!(submission.attempts.len(), 1);
    assert_eq!(submission.attempts[0].result, AttemptResult::AlreadyExists);
    assert!(matches!(&submission.submitted, Submitted::AlreadyExisted(o) if *o == first));
    assert_eq!(emu.order_count(ALPHA), 1);

    // Without an external id every create is a new order: why `submit` insists on one.
    alpha.orders().create(&tee_order(None)).await.unwrap();
    alpha.orders().create(&tee_order(None)).await.unwrap();
    assert_eq!(emu.order_count(ALPHA), 3);
}

// Issue 10: a transport error does not carry the URL (ids and filter values are customer data).
#[tokio::test]
async fn transport_errors_do_not_carry_the_url() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let client = builder_at(&base, ALPHA, "csk_0123456789abcdef0123456789abcdef")
        .retry_policy(store_api::RetryPolicy::never())
        .build()
        .unwrap();
    let secret = "customer-4711-private";
    let error = client
        .orders()
        .find_by_external_id(secret)
        .await
        .expect_err("nothing listens");
    assert!(!error.to_string().contains(secret), "{error}");
    assert!(!format!("{error:?}").contains(secret), "{error:?}");
}
