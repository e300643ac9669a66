//! `orders schema` and `webhooks schema`: the schemas accept the spec's examples and refuse malformed
//! documents, checked with a JSON Schema validator.

use serde_json::{Value, json};
use store_api_raw::contract::CREATE_ORDER;
use store_api_raw::open::WebhookTopic;

use crate::common::{Run, bare};
use crate::snap;

fn schema(group: &str) -> Value {
    let run = Run::from(bare().args([group, "schema"]).output().unwrap()).code(0);
    run.json()
}

/// The schema `group schema` prints, snapshotted, and a validator of it.
fn snapshotted_validator(group: &str) -> jsonschema::Validator {
    let schema = schema(group);
    snap!(
        format!("{group}_schema"),
        serde_json::to_string_pretty(&schema).unwrap()
    );
    validator(&schema)
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(schema).unwrap()
}

/// The `examples` of the createOrder request body, read from the spec at test time.
fn spec_order_examples() -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../spec/store-api.yaml"
    ))
    .unwrap();
    let spec: Value = serde_norway::from_str(&text).unwrap();
    let examples = &spec["paths"][CREATE_ORDER.path][CREATE_ORDER.method.as_str().to_lowercase()]["requestBody"]
        ["content"]["application/json"]["examples"];
    let examples = examples.as_object().expect("createOrder has examples");
    examples
        .iter()
        .map(|(name, example)| (name.clone(), example["value"].clone()))
        .collect()
}

/// A copy of `value` without the field at `path`.
fn without(value: &Value, path: &[&str]) -> Value {
    let mut value = value.clone();
    let (last, parents) = path.split_last().unwrap();
    let parent = parents.iter().fold(&mut value, |v, key| &mut v[*key]);
    parent.as_object_mut().unwrap().remove(*last);
    value
}

/// A copy of `value` changed by `edit`.
fn edited(value: &Value, edit: &dyn Fn(&mut Value)) -> Value {
    let mut value = value.clone();
    edit(&mut value);
    value
}

#[test]
fn the_order_schema_accepts_every_example_request_of_the_spec() {
    let validator = snapshotted_validator("orders");
    let examples = spec_order_examples();
    assert!(examples.len() >= 2, "{examples:?}");
    for (name, example) in &examples {
        let errors: Vec<String> = validator
            .iter_errors(example)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "example {name}: {errors:?}");
        // And the SDK's own type reads it: the schema and the type agree.
        serde_json::from_value::<store_api::NewOrder>(example.clone()).unwrap();
    }
}

#[test]
fn the_order_schema_refuses_malformed_requests() {
    let validator = validator(&schema("orders"));
    let (_, example) = spec_order_examples()
        .into_iter()
        .find(|(name, _)| name == "custom")
        .unwrap();
    let broken = |edit: &dyn Fn(&mut Value)| edited(&example, edit);
    let cases: Vec<(&str, Value)> = vec![
        ("no lineItems", without(&example, &["lineItems"])),
        (
            "no shippingAddress",
            without(&example, &["shippingAddress"]),
        ),
        (
            "lineItems not an array",
            broken(&|v| v["lineItems"] = json!({})),
        ),
        (
            "quantity a string",
            broken(&|v| v["lineItems"][0]["quantity"] = json!("1")),
        ),
        (
            "quantity 0",
            broken(&|v| v["lineItems"][0]["quantity"] = json!(0)),
        ),
        (
            "isCustom a string",
            broken(&|v| v["lineItems"][0]["isCustom"] = json!("yes")),
        ),
        (
            "physicalWidth a string",
            broken(&|v| v["lineItems"][0]["decorations"][0]["physicalWidth"] = json!("10in")),
        ),
        (
            "decorationMethod not a string",
            broken(&|v| v["lineItems"][0]["decorations"][0]["decorationMethod"] = json!(7)),
        ),
        (
            "no lastName",
            without(&example, &["shippingAddress", "lastName"]),
        ),
        (
            "no country",
            without(&example, &["shippingAddress", "address", "country"]),
        ),
        (
            "externalOrderId a number",
            broken(&|v| v["externalOrderId"] = json!(1002)),
        ),
    ];
    for (name, document) in cases {
        assert!(!validator.is_valid(&document), "accepted: {name}");
        // The type refuses the same documents.
        assert!(
            serde_json::from_value::<store_api::NewOrder>(document).is_err(),
            "the type accepts: {name}"
        );
    }
    // An open enum takes values added within the version.
    let newer = broken(&|v| {
        v["lineItems"][0]["decorations"][0]["decorationMethod"] = json!("laser_engraving")
    });
    assert!(validator.is_valid(&newer));
}

#[test]
fn the_event_schema_accepts_every_topic_and_refuses_malformed_events() {
    let validator = snapshotted_validator("webhooks");
    // The spec has no example payloads: one event per topic it lists, with the fields of the seed's
    // webhook event table, plus a topic added later (receivers must accept it).
    let topics = WebhookTopic::KNOWN
        .iter()
        .map(WebhookTopic::as_str)
        .chain(["orders_delete"]);
    for (n, topic) in topics.enumerate() {
        let event = json!({
            "id": format!("evt_{n:016x}"),
            "storeId": "store_alpha",
            "topic": topic,
            "data": {"id": "ord_0000000000000001"},
            "isTest": n % 2 == 0,
            "createdAt": "2026-08-01T12:00:00Z",
        });
        assert!(validator.is_valid(&event), "{event}");
        serde_json::from_value::<store_api_webhooks::Event>(event).unwrap();
    }
    let minimal =
        json!({"id": "evt_1", "storeId": "s", "topic": "orders_update", "data": {"id": "o"}});
    assert!(validator.is_valid(&minimal));
    let broken = |edit: &dyn Fn(&mut Value)| edited(&minimal, edit);
    for (name, document) in [
        ("no topic", without(&minimal, &["topic"])),
        ("no data", without(&minimal, &["data"])),
        ("data without id", broken(&|v| v["data"] = json!({}))),
        ("topic a number", broken(&|v| v["topic"] = json!(3))),
        ("isTest a string", broken(&|v| v["isTest"] = json!("true"))),
    ] {
        assert!(!validator.is_valid(&document), "accepted: {name}");
        assert!(
            serde_json::from_value::<store_api_webhooks::Event>(document).is_err(),
            "the type accepts: {name}"
        );
    }
}
