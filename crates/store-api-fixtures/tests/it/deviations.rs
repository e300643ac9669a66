//! The switches that make the emulator differ from the spec on request bodies: each changes the
//! answers to exactly the requests its assumption is about, and nothing else of a session.

use serde_json::{Value, json};
use store_api_fixtures::Deviation;

use crate::common::*;

/// Every request of the scenario: (what it shows, body), all `POST /orders` of the alpha store.
fn scenario() -> Vec<(&'static str, Value)> {
    let mut null_id = simple_order(None);
    null_id["externalOrderId"] = Value::Null;
    let mut invalid_reused = simple_order(Some("dev-reused"));
    invalid_reused["lineItems"][0]["quantity"] = json!(0);
    let mut invalid_fresh = simple_order(Some("dev-fresh"));
    invalid_fresh["lineItems"][0]["quantity"] = json!(0);
    vec![
        ("a valid order", simple_order(Some("dev-reused"))),
        ("a declared field sent as null", null_id),
        (
            "a null in an unrecognized field",
            json!({"lineItems": [{"productVariantId": "pv_aa_sun_blk_m", "quantity": 1}],
                "shippingAddress": address(), "note": null}),
        ),
        (
            "an invalid body whose externalOrderId is reused",
            invalid_reused,
        ),
        (
            "an invalid body with a fresh externalOrderId",
            invalid_fresh,
        ),
        (
            "a valid body whose externalOrderId is reused",
            simple_order(Some("dev-reused")),
        ),
        (
            "an empty productVariantId beside a valid sku",
            order_with(
                Some("dev-empty-id"),
                json!([{ "productVariantId": "", "sku": "AA-TEE-SUN-BLK-S", "quantity": 1 }]),
            ),
        ),
        (
            "an empty sku and catalogProductVariantId beside a valid productVariantId",
            order_with(
                Some("dev-empty-sku"),
                json!([{ "productVariantId": "pv_aa_cap_blk_os", "sku": "",
                    "catalogProductVariantId": "", "quantity": 1 }]),
            ),
        ),
        (
            "an empty externalOrderId (not one of the ids)",
            simple_order(Some("")),
        ),
    ]
}

/// The scenario's answers (status and body, ids left out) from an emulator with `deviation`.
async fn answers(deviation: Option<Deviation>) -> Vec<(u16, Value)> {
    let mut builder = builder().deterministic(31);
    if let Some(deviation) = deviation {
        builder = builder.deviate(deviation);
    }
    let emu = builder.start().await.unwrap();
    let api = Api::new(&emu);
    let mut out = Vec::new();
    for (_, body) in scenario() {
        let answer = api.post(ALPHA, "/orders", &body).await;
        let mut json = answer.json.clone();
        if answer.status == 201 {
            // The order itself is not what the switches change; its status is.
            json = json!({"externalOrderId": json["externalOrderId"]});
        }
        out.push((answer.status, json));
    }
    out
}

/// Runs the scenario with and without `deviation` and returns, for each request that was answered
/// differently, its description and the two answers.
async fn differences(deviation: Deviation) -> Vec<(&'static str, (u16, Value), (u16, Value))> {
    let clean = answers(None).await;
    let deviant = answers(Some(deviation)).await;
    scenario()
        .into_iter()
        .zip(clean.into_iter().zip(deviant))
        .filter(|(_, (clean, deviant))| clean != deviant)
        .map(|((what, _), (clean, deviant))| (what, clean, deviant))
        .collect()
}

fn messages(value: &Value) -> Value {
    value["message"].clone()
}

#[tokio::test]
async fn null_fields_reads_a_declared_null_as_absent_and_changes_nothing_else() {
    let found = differences(Deviation::NullFieldsAsAbsent).await;
    assert_eq!(found.len(), 1, "{found:#?}");
    let (what, clean, deviant) = &found[0];
    assert_eq!(*what, "a declared field sent as null");
    assert_eq!(clean.0, 400);
    assert_eq!(
        messages(&clean.1),
        json!(["externalOrderId must not be null"])
    );
    assert_eq!(deviant.0, 201, "{deviant:?}");
    assert_eq!(Deviation::NullFieldsAsAbsent.assumption(), "null-fields");
}

#[tokio::test]
async fn create_order_check_order_answers_409_before_validating_the_body_and_changes_nothing_else()
{
    let found = differences(Deviation::ConflictBeforeValidation).await;
    assert_eq!(found.len(), 1, "{found:#?}");
    let (what, clean, deviant) = &found[0];
    assert_eq!(*what, "an invalid body whose externalOrderId is reused");
    assert_eq!(clean.0, 400);
    assert_eq!(
        messages(&clean.1),
        json!(["lineItems.0.quantity must not be less than 1"])
    );
    assert_eq!(deviant.0, 409, "{deviant:?}");
    assert!(
        messages(&deviant.1)
            .as_str()
            .is_some_and(|m| m.ends_with("dev-reused")),
        "{deviant:?}"
    );
    assert_eq!(
        Deviation::ConflictBeforeValidation.assumption(),
        "create-order-check-order"
    );
}

#[tokio::test]
async fn empty_ids_refuses_an_empty_id_as_a_validation_failure_and_changes_nothing_else() {
    let found = differences(Deviation::EmptyIdsRefused).await;
    assert_eq!(found.len(), 2, "{found:#?}");
    assert_eq!(found[0].0, "an empty productVariantId beside a valid sku");
    assert_eq!(found[0].1.0, 201);
    assert_eq!(found[0].2.0, 400);
    assert_eq!(
        messages(&found[0].2.1),
        json!(["lineItems.0.productVariantId should not be empty"])
    );
    assert_eq!(found[1].1.0, 201);
    assert_eq!(
        messages(&found[1].2.1),
        json!([
            "lineItems.0.sku should not be empty",
            "lineItems.0.catalogProductVariantId should not be empty"
        ])
    );
    assert_eq!(Deviation::EmptyIdsRefused.assumption(), "empty-ids");
}

#[tokio::test]
async fn the_switches_of_request_bodies_leave_reads_alone() {
    for deviation in [
        Deviation::NullFieldsAsAbsent,
        Deviation::ConflictBeforeValidation,
        Deviation::EmptyIdsRefused,
    ] {
        let emu = builder()
            .deterministic(31)
            .deviate(deviation)
            .start()
            .await
            .unwrap();
        let clean = builder().deterministic(31).start().await.unwrap();
        for path in [
            "/products?limit=3",
            "/orders?limit=0",
            "/catalog-products?page=99",
        ] {
            let (a, b) = (Api::new(&emu), Api::new(&clean));
            let (a, b) = (a.get(ALPHA, path).await, b.get(ALPHA, path).await);
            assert_eq!(
                (a.status, &a.json),
                (b.status, &b.json),
                "{deviation:?} {path}"
            );
        }
    }
}
