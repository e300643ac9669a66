//! Creating orders: the 201 and its fields, the price model, body validation as message arrays, unknown
//! fields, the 409 on a reused externalOrderId, and the orders_create event.

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::*;

/// 3 custom tees (front and back DTG), 1 cap by id, 2 mugs by SKU (an unlisted product).
async fn mixed_order(api: &Api) -> Value {
    let artwork = api.create_artwork(ALPHA, "logo").await;
    let art = artwork["id"].as_str().unwrap();
    order_with(
        Some("mixed-1"),
        json!([
            {
                "isCustom": true,
                "catalogProductVariantId": "cv_3001_blk_m",
                "quantity": 3,
                "decorations": [
                    decoration(art, "front", "direct_to_garment", 10.0, 12.0),
                    decoration(art, "back", "direct_to_garment", 12.0, 16.0)
                ]
            },
            { "productVariantId": "pv_aa_cap_blk_os", "quantity": 1 },
            { "sku": "AA-MUG-FUEL-WHT-11OZ", "quantity": 2 },
            {
                "isCustom": true,
                "catalogProductVariantId": "cv_6089m_nvy_os",
                "quantity": 1,
                "decorations": [decoration(art, "cap_front", "embroidery", 4.5, 2.25)]
            }
        ]),
    )
}

#[tokio::test]
async fn a_valid_order_is_201_pending_due_with_exact_costs() {
    let (emu, api) = start().await;
    let body = mixed_order(&api).await;
    let answer = api.post(ALPHA, "/orders", &body).await;
    let order = answer.ok(201).clone();
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert!(order["id"].as_str().is_some_and(|id| !id.is_empty()));
    assert!(order["name"].as_str().is_some_and(|n| !n.is_empty()));
    assert_eq!(order["externalOrderId"], "mixed-1");
    assert_eq!(order["status"], "pending");
    assert_eq!(order["fulfillmentStatus"], "pending");
    assert_eq!(order["paymentStatus"], "due");
    assert_eq!(order["isTest"], false);
    assert_eq!(order["totalQuantity"], 7);
    for field in ["orderedAt", "createdAt", "updatedAt"] {
        assert_timestamp(&order[field], field);
    }
    for absent in ["trackingInfo", "fulfilledAt", "canceledAt"] {
        assert!(
            order.get(absent).is_none(),
            "{absent} is set on a new order"
        );
    }
    assert_eq!(order["shippingAddress"], address());

    let lines = order["lineItems"].as_array().unwrap();
    // (isCustom, productId, unit cost in cents, quantity)
    let expected: [(bool, Option<&str>, i64, i64); 4] = [
        // 8.25 blank + 2 × 3.25 DTG
        (true, None, 1475, 3),
        (false, Some("prod_alpha_logo_cap"), 1625, 1),
        (false, Some("prod_alpha_fuel_mug"), 835, 2),
        // 9.75 blank + 6.50 embroidery
        (true, None, 1625, 1),
    ];
    assert_eq!(lines.len(), expected.len());
    let mut subtotal = 0;
    for (i, (line, (custom, product, unit, quantity))) in lines.iter().zip(expected).enumerate() {
        assert_eq!(line["isCustom"], custom, "line {i}");
        assert_eq!(line["productId"].as_str(), product, "line {i}");
        assert_eq!(cents(&line["unitCost"]), unit, "line {i}");
        assert_eq!(line["quantity"], quantity, "line {i}");
        assert_eq!(cents(&line["totalCost"]), unit * quantity, "line {i}");
        assert_eq!(line["position"], i + 1, "line {i}");
        assert!(line["id"].as_str().is_some_and(|id| !id.is_empty()));
        subtotal += unit * quantity;
    }
    assert_eq!(lines[1]["productVariantId"], "pv_aa_cap_blk_os");
    assert_eq!(lines[1]["sku"], "AA-CAP-LOGO-BLK-OS");
    assert_eq!(lines[2]["productVariantId"], "pv_aa_mug_wht_11oz");
    assert_eq!(lines[2]["sku"], "AA-MUG-FUEL-WHT-11OZ");
    assert_eq!(
        (lines[0]["color"].as_str(), lines[0]["size"].as_str()),
        (Some("Black"), Some("M"))
    );
    // 44.25 + 16.25 + 16.70 + 16.25
    assert_eq!(subtotal, 9345);
    assert_eq!(cents(&order["subtotalCost"]), subtotal);
    // 4.99 + 1.50 × 6
    assert_eq!(cents(&order["shippingCost"]), 1399);
    assert_eq!(cents(&order["totalCost"]), subtotal + 1399);

    // Stored as returned.
    let id = order["id"].as_str().unwrap();
    assert_eq!(
        api.get(ALPHA, &format!("/orders/{id}")).await.ok(200),
        &order
    );
    assert_eq!(emu.order_count(ALPHA), 1);
}

#[tokio::test]
async fn shipping_grows_by_one_fifty_per_additional_item_and_costs_round_to_cents() {
    let (_emu, api) = start().await;
    // (line items, subtotal cents, shipping cents)
    let cases: Vec<(Value, i64, i64)> = vec![
        (
            json!([{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 1 }]),
            1150,
            499,
        ),
        (
            json!([{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 2 }]),
            2300,
            649,
        ),
        (
            json!([{ "sku": "AA-MUG-FUEL-WHT-11OZ", "quantity": 7 }]),
            5845,
            1399,
        ),
        (
            json!([
                { "productVariantId": "pv_aa_mem_pep_s", "quantity": 3 },
                { "productVariantId": "pv_aa_pst_bwh_12x18", "quantity": 10 }
            ]),
            5235 + 10750,
            499 + 150 * 12,
        ),
    ];
    for (lines, subtotal, shipping) in cases {
        let order = api
            .create_order(ALPHA, &order_with(None, lines.clone()))
            .await;
        assert_eq!(cents(&order["subtotalCost"]), subtotal, "{lines}");
        assert_eq!(cents(&order["shippingCost"]), shipping, "{lines}");
        assert_eq!(cents(&order["totalCost"]), subtotal + shipping, "{lines}");
        let sum: i64 = order["lineItems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| cents(&l["totalCost"]))
            .sum();
        assert_eq!(sum, subtotal);
    }
}

#[tokio::test]
async fn custom_line_items_are_custom_without_a_product_id() {
    let (_emu, api) = start().await;
    let art = api.create_artwork(ALPHA, "a").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // (catalog variant, location, method, width, height, unit cost cents): blank baseCost + decoration.
    let cases: &[(&str, &str, &str, f64, f64, i64)] = &[
        (
            "cv_3001_blk_m",
            "left_chest",
            "embroidery",
            4.0,
            4.0,
            825 + 650,
        ),
        (
            "cv_1717_pep_m",
            "front",
            "screen_printing",
            12.0,
            16.0,
            1095 + 210,
        ),
        (
            "cv_18500_blk_l",
            "left_chest",
            "sewn_on_patch",
            3.0,
            3.0,
            1750 + 550,
        ),
        (
            "cv_mug11_wht_11oz",
            "wrap",
            "uv_printing",
            8.5,
            3.5,
            540 + 295,
        ),
        (
            "cv_tum20_sst_20oz",
            "front",
            "engraving",
            2.75,
            4.0,
            1230 + 420,
        ),
        ("cv_ip15_clr_ip15", "back", "liquid_3d", 2.0, 5.0, 920 + 525),
        (
            "cv_poster_bwh_18x24",
            "front",
            "uv_printing",
            18.0,
            24.0,
            780 + 295,
        ),
        (
            "cv_8502_nat_os",
            "front",
            "heat_transfer_vinyl",
            10.0,
            10.0,
            610 + 300,
        ),
        (
            "cv_6089m_blk_os",
            "cap_side",
            "direct_to_film",
            2.5,
            1.75,
            975 + 275,
        ),
    ];
    for (variant, location, method, width, height, unit) in cases {
        let lines = json!([{
            "isCustom": true,
            "catalogProductVariantId": variant,
            "quantity": 2,
            "decorations": [decoration(&art, location, method, *width, *height)]
        }]);
        let order = api.create_order(ALPHA, &order_with(None, lines)).await;
        let line = &order["lineItems"][0];
        assert_eq!(line["isCustom"], true, "{variant}");
        assert!(line.get("productId").is_none(), "{variant}: {line}");
        assert_eq!(cents(&line["unitCost"]), *unit, "{variant}");
        assert_eq!(cents(&line["totalCost"]), unit * 2, "{variant}");
        assert_eq!(cents(&order["shippingCost"]), 649);
    }
}

#[tokio::test]
async fn unknown_request_fields_are_ignored_and_not_stored() {
    let (_emu, api) = start().await;
    let mut body = simple_order(Some("unknown-1"));
    body["giftMessage"] = json!("hello");
    body["lineItems"][0]["engraveText"] = json!("xyz");
    body["shippingAddress"]["middleName"] = json!("Q");
    body["shippingAddress"]["address"]["county"] = json!("Sangamon");
    let order = api.create_order(ALPHA, &body).await;
    let fetched = api
        .get(ALPHA, &format!("/orders/{}", order["id"].as_str().unwrap()))
        .await;
    let listed = api.get(ALPHA, "/orders").await;
    for value in [&order, &fetched.json, &listed.json] {
        for key in ["giftMessage", "engraveText", "middleName", "county"] {
            assert!(!has_key(value, key), "{key} was stored: {value}");
        }
    }
    assert!(!String::from_utf8_lossy(&fetched.bytes).contains("Sangamon"));
}

#[tokio::test]
async fn optional_address_fields_may_be_left_out_and_ordered_at_is_kept() {
    let (_emu, api) = start().await;
    let mut body = simple_order(None);
    body["orderedAt"] = json!("2026-08-01T12:34:56.789Z");
    body["shippingAddress"] = json!({
        "firstName": "Lin",
        "lastName": "Ng",
        "address": {
            "streetAddress": "5 Rue X",
            "cityOrTown": "Paris",
            "stateOrProvince": "",
            "zipOrPostalCode": "75001",
            "country": "FR"
        }
    });
    let order = api.create_order(ALPHA, &body).await;
    assert_eq!(order["orderedAt"], "2026-08-01T12:34:56.789Z");
    let shipping = &order["shippingAddress"];
    assert_eq!(shipping["address"]["country"], "FR");
    for absent in ["email", "phone"] {
        assert!(shipping.get(absent).is_none(), "{absent}");
    }
    assert!(shipping["address"].get("apartmentOrSuite").is_none());
    assert!(order.get("externalOrderId").is_none());
    // Full state names count as US states, in any case.
    let mut body = simple_order(None);
    body["shippingAddress"]["address"]["stateOrProvince"] = json!("new york");
    api.create_order(ALPHA, &body).await;
}

#[tokio::test]
async fn body_validation_failures_are_message_arrays_naming_the_field() {
    let (emu, api) = start().await;
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut body = simple_order(Some("v-1"));
        edit(&mut body);
        body
    };
    // (body, messages)
    let cases: Vec<(Value, &[&str])> = vec![
        (
            with(&|b| b["lineItems"][0]["quantity"] = json!(0)),
            &["lineItems.0.quantity must not be less than 1"],
        ),
        (
            order_with(
                None,
                json!([{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 1 }, { "sku": "AA-TEE-SUN-BLK-M", "quantity": 0 }]),
            ),
            &["lineItems.1.quantity must not be less than 1"],
        ),
        (
            with(&|b| b["lineItems"][0]["quantity"] = json!(-2)),
            &["lineItems.0.quantity must not be less than 1"],
        ),
        (
            with(&|b| b["lineItems"][0]["quantity"] = json!("two")),
            &["lineItems.0.quantity must be an integer number"],
        ),
        (
            with(&|b| b["shippingAddress"]["lastName"] = json!("")),
            &["shippingAddress.lastName should not be empty"],
        ),
        (
            with(&|b| {
                b["shippingAddress"]
                    .as_object_mut()
                    .unwrap()
                    .remove("lastName");
            }),
            &["shippingAddress.lastName should not be null or undefined"],
        ),
        (
            with(&|b| {
                b["shippingAddress"]
                    .as_object_mut()
                    .unwrap()
                    .remove("address");
            }),
            &["shippingAddress.address should not be null or undefined"],
        ),
        (
            with(&|b| {
                b.as_object_mut().unwrap().remove("shippingAddress");
            }),
            &["shippingAddress should not be null or undefined"],
        ),
        (
            with(&|b| b["shippingAddress"]["address"]["streetAddress"] = json!("")),
            &["shippingAddress.address.streetAddress should not be empty"],
        ),
        (
            with(&|b| b["shippingAddress"]["address"]["cityOrTown"] = json!("")),
            &["shippingAddress.address.cityOrTown should not be empty"],
        ),
        (
            with(&|b| b["shippingAddress"]["address"]["country"] = json!("XX")),
            &["shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code"],
        ),
        (
            with(&|b| b["shippingAddress"]["address"]["country"] = json!("us")),
            &["shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code"],
        ),
        (
            with(&|b| b["shippingAddress"]["address"]["country"] = json!("USA")),
            &["shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code"],
        ),
        (
            with(&|b| b["shippingAddress"]["address"]["country"] = json!("")),
            &["shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code"],
        ),
        (
            with(&|b| b["shippingAddress"]["address"]["stateOrProvince"] = json!("ZZ")),
            &["shippingAddress.address.stateOrProvince must be an existing US state"],
        ),
        (
            with(&|b| b["shippingAddress"]["address"]["stateOrProvince"] = json!("")),
            &["shippingAddress.address.stateOrProvince must be an existing US state"],
        ),
        (
            with(&|b| b["lineItems"] = json!([])),
            &["lineItems must contain at least 1 elements"],
        ),
        (
            with(&|b| {
                b.as_object_mut().unwrap().remove("lineItems");
            }),
            &["lineItems should not be null or undefined"],
        ),
        (
            with(&|b| b["externalOrderId"] = json!("")),
            &["externalOrderId should not be empty"],
        ),
        // No request field is nullable, although serde would read `null` as an absent optional field.
        (
            with(&|b| b["shippingAddress"]["email"] = Value::Null),
            &["shippingAddress.email must not be null"],
        ),
        // Several body failures are reported together.
        (
            with(&|b| {
                b["lineItems"] = json!([]);
                b["shippingAddress"]["address"]["country"] = json!("us");
            }),
            &[
                "lineItems must contain at least 1 elements",
                "shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code",
            ],
        ),
        // Body validation comes before the ordering rules.
        (
            {
                let mut body = order_with(
                    Some("v-2"),
                    json!([{ "productVariantId": "pv_nope", "quantity": 1 }]),
                );
                body["shippingAddress"]["address"]["stateOrProvince"] = json!("Atlantis");
                body
            },
            &["shippingAddress.address.stateOrProvince must be an existing US state"],
        ),
        (
            order_with(
                None,
                json!([{
                    "isCustom": true,
                    "catalogProductVariantId": "cv_3001_blk_m",
                    "quantity": 1,
                    "decorations": [decoration("art_x", "front", "direct_to_garment", 0.0, 4.0)]
                }]),
            ),
            &["lineItems.0.decorations.0.physicalWidth must be a positive number"],
        ),
        (
            order_with(
                None,
                json!([{
                    "isCustom": true,
                    "catalogProductVariantId": "cv_3001_blk_m",
                    "quantity": 1,
                    "decorations": [{
                        "artworkId": "art_x", "decorationLocation": "front", "decorationMethod": "direct_to_garment",
                        "physicalWidth": 4, "physicalHeight": 4, "horizontalOffsetFromCenter": 0, "verticalOffsetFromTop": -1
                    }]
                }]),
            ),
            &["lineItems.0.decorations.0.verticalOffsetFromTop must not be less than 0"],
        ),
    ];
    for (body, messages) in &cases {
        let answer = api.post(ALPHA, "/orders", body).await;
        answer.error(400, Msg::List(messages));
    }
    assert_eq!(emu.order_count(ALPHA), 0);
}

#[tokio::test]
async fn malformed_bodies_are_400() {
    let (emu, api) = start().await;
    let url = api.url(ALPHA, "/orders");
    let send = |body: &'static str| {
        api.http
            .post(url.clone())
            .header("X-API-Key", ALPHA_KEY)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let answer = send("{not json").await.unwrap();
    assert_eq!(answer.status(), 400);
    let envelope: Value = answer.json().await.unwrap();
    assert_eq!(envelope["statusCode"], 400);
    assert_eq!(envelope["error"], "Bad Request");
    assert!(envelope["message"].is_string());
    let answer = send("[1, 2]").await.unwrap();
    assert_eq!(answer.status(), 400);
    let envelope: Value = answer.json().await.unwrap();
    assert!(envelope["message"].is_array());
    assert_eq!(emu.order_count(ALPHA), 0);
}

#[tokio::test]
async fn a_reused_external_order_id_is_409_even_with_a_different_body() {
    let (emu, api) = start().await;
    let first = api.create_order(ALPHA, &simple_order(Some("dup-1"))).await;
    let retries = [
        simple_order(Some("dup-1")),
        order_with(
            Some("dup-1"),
            json!([{ "sku": "AA-CAP-LOGO-BLK-OS", "quantity": 5 }]),
        ),
        // Even a retry that would now break an ordering rule answers 409: the first attempt succeeded.
        order_with(
            Some("dup-1"),
            json!([{ "productVariantId": "pv_aa_tote_nat_os", "quantity": 1 }]),
        ),
    ];
    for body in &retries {
        api.post(ALPHA, "/orders", body).await.error(
            409,
            Msg::Prefix("An order already exists with this external order ID"),
        );
    }
    assert_eq!(emu.order_count(ALPHA), 1);
    let found = api
        .get(ALPHA, "/orders?filter[externalOrderId]=dup-1")
        .await;
    assert_eq!(found.json["items"], json!([first]));
    // Another store may use the same number; without one, each request is a new order.
    api.create_order(BETA, &beta_order(Some("dup-1"))).await;
    let a = api.create_order(ALPHA, &simple_order(None)).await;
    let b = api.create_order(ALPHA, &simple_order(None)).await;
    assert_ne!(a["id"], b["id"]);
    assert_ne!(a["name"], b["name"]);
    assert_eq!(emu.order_count(ALPHA), 3);
}

/// Orders created at the same time, on several server threads: each is checked under the read lock
/// during its writer's turn and stored under the write lock, so the same externalOrderId still makes
/// exactly one order, and order numbers are never given twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn orders_created_at_once_get_one_order_per_external_id_and_distinct_numbers() {
    let (emu, api) = start().await;
    let body = simple_order(Some("race-1"));
    let same = futures::future::join_all((0..16).map(|_| api.post(ALPHA, "/orders", &body))).await;
    let created = same.iter().filter(|answer| answer.status == 201).count();
    let refused = same.iter().filter(|answer| answer.status == 409).count();
    assert_eq!((created, refused), (1, 15));
    let bodies: Vec<Value> = (0..24)
        .map(|n| simple_order(Some(&format!("race-n-{n}"))))
        .collect();
    let distinct =
        futures::future::join_all(bodies.iter().map(|body| api.post(ALPHA, "/orders", body))).await;
    let mut names: Vec<String> = distinct
        .iter()
        .map(|answer| answer.ok(201)["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 24, "an order number was given twice");
    assert_eq!(emu.order_count(ALPHA), 25);
}

#[tokio::test]
async fn creating_an_order_emits_orders_create() {
    let (_emu, api) = start().await;
    let receiver = Receiver::start().await;
    api.webhooks(ALPHA, &json!({ "orders_create": receiver.url("/created") }))
        .await;
    let order = api.create_order(ALPHA, &simple_order(Some("ev-1"))).await;
    let received = receiver.wait_for(1).await;
    assert_eq!(received[0].path, "/created");
    assert_eq!(received[0].json["topic"], "orders_create");
    assert_eq!(received[0].json["data"]["id"], order["id"]);
    // A refused order emits nothing.
    api.post(ALPHA, "/orders", &simple_order(Some("ev-1")))
        .await
        .error(409, Msg::AnyString);
    api.post(ALPHA, "/orders", &order_with(None, json!([])))
        .await
        .error(
            400,
            Msg::List(&["lineItems must contain at least 1 elements"]),
        );
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(receiver.received().len(), 1);
    let deliveries = api
        .control(Method::GET, "/stores/store_alpha/webhook-deliveries", None)
        .await;
    assert_eq!(deliveries.json.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn unknown_request_fields_are_ignored_even_when_null() {
    let (_emu, api) = start().await;
    let mut body = simple_order(Some("unknown-null"));
    body["giftNote"] = json!(null);
    body["lineItems"][0]["engraving"] = json!(null);
    body["shippingAddress"]["address"]["county"] = json!({ "name": null });
    let order = api.create_order(ALPHA, &body).await;
    for key in ["giftNote", "engraving", "county"] {
        assert!(!has_key(&order, key), "{key} was stored: {order}");
    }
    // A declared field sent as null is still refused, and the unrecognized ones are not reported.
    body["externalOrderId"] = json!(null);
    body["lineItems"][0]["sku"] = json!(null);
    api.post(ALPHA, "/orders", &body).await.error(
        400,
        Msg::List(&[
            "externalOrderId must not be null",
            "lineItems.0.sku must not be null",
        ]),
    );
}
