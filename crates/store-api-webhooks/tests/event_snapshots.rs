//! How each topic's delivery parses (insta snapshots under tests/snapshots).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use store_api_webhooks::{Topic, Verifier, sign};

const KEY: &str = "sk_store_snapshot_key_00000000000000";

fn delivery(topic: &str, resource_id: &str) -> Vec<u8> {
    format!(
        r#"{{"id":"evt_{topic}","storeId":"store_1","topic":"{topic}","data":{{"id":"{resource_id}"}},"isTest":false,"createdAt":"2026-08-14T09:26:53.123Z","addedLater":{{"ignored":true}}}}"#
    )
    .into_bytes()
}

fn parsed(topic: &str, resource_id: &str) -> store_api_webhooks::Event {
    let body = delivery(topic, resource_id);
    Verifier::new(KEY).verify(&sign(KEY, &body), &body).unwrap()
}

#[test]
fn products_create() {
    let event = parsed("products_create", "prod_1");
    assert_eq!(event.topic, Topic::ProductsCreate);
    insta::assert_yaml_snapshot!(event);
}

#[test]
fn products_update() {
    let event = parsed("products_update", "prod_1");
    assert_eq!(event.topic, Topic::ProductsUpdate);
    insta::assert_yaml_snapshot!(event);
}

#[test]
fn products_delete() {
    let event = parsed("products_delete", "prod_1");
    assert_eq!(event.topic, Topic::ProductsDelete);
    insta::assert_yaml_snapshot!(event);
}

#[test]
fn orders_create() {
    let event = parsed("orders_create", "ord_1");
    assert_eq!(event.topic, Topic::OrdersCreate);
    insta::assert_yaml_snapshot!(event);
}

#[test]
fn orders_update() {
    let event = parsed("orders_update", "ord_1");
    assert_eq!(event.topic, Topic::OrdersUpdate);
    insta::assert_yaml_snapshot!(event);
}

#[test]
fn unknown_topic() {
    let event = parsed("returns_create", "ret_1");
    assert_eq!(event.topic, Topic::Unknown("returns_create".into()));
    assert_eq!(
        event.resource(),
        store_api_webhooks::Resource::Unknown {
            topic: "returns_create",
            id: "ret_1"
        }
    );
    insta::assert_yaml_snapshot!(event);
}
