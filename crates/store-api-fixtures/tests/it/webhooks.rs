//! Webhook delivery to a local receiver: registration per topic, the payload and its signature, retries
//! with backoff, the five-attempt limit, product events from the app, and key rotation.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use store_api_webhooks::sign;

use crate::common::*;

const TOPICS: [&str; 5] = [
    "products_create",
    "products_update",
    "products_delete",
    "orders_create",
    "orders_update",
];

/// Registers every topic at `/<topic>` of the receiver.
async fn register_all(api: &Api, store: &str, receiver: &Receiver) {
    let urls: serde_json::Map<String, Value> = TOPICS
        .iter()
        .map(|t| (t.to_string(), json!(receiver.url(&format!("/{t}")))))
        .collect();
    api.webhooks(store, &Value::Object(urls)).await;
}

/// Asserts the payload fields and the signature with `key`.
#[track_caller]
fn assert_event(event: &Received, store: &str, topic: &str, data_id: &str, key: &str) {
    let body = &event.json;
    assert_eq!(event.path, format!("/{topic}"));
    assert_eq!(event.content_type.as_deref(), Some("application/json"));
    assert!(
        body["id"].as_str().is_some_and(|id| !id.is_empty()),
        "{body}"
    );
    assert_eq!(body["storeId"], store);
    assert_eq!(body["topic"], topic);
    assert_eq!(body["data"], json!({ "id": data_id }));
    assert_eq!(body["isTest"], false);
    assert_timestamp(&body["createdAt"], "createdAt");
    assert_no_nulls(body, "$");
    let keys: HashSet<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        HashSet::from(["id", "storeId", "topic", "data", "isTest", "createdAt"])
    );
    assert_eq!(
        event.signature.as_deref(),
        Some(sign(key, &event.body).as_str()),
        "signature with the store key"
    );
}

#[tokio::test]
async fn events_carry_the_payload_and_the_signature() {
    let (_emu, api) = start().await;
    let receiver = Receiver::start().await;
    register_all(&api, ALPHA, &receiver).await;
    let order = api.create_order(ALPHA, &simple_order(Some("wh-1"))).await;
    let id = order["id"].as_str().unwrap();
    api.advance(ALPHA, id).await.ok(200);
    let received = receiver.wait_for(2).await;
    let mut by_topic: Vec<&Received> = received.iter().collect();
    by_topic.sort_by_key(|e| e.path.clone());
    assert_event(by_topic[0], ALPHA, "orders_create", id, ALPHA_KEY);
    assert_event(by_topic[1], ALPHA, "orders_update", id, ALPHA_KEY);
    assert_ne!(by_topic[0].json["id"], by_topic[1].json["id"]);

    let deliveries = api.deliveries_until(ALPHA, |d| d.len() == 2).await;
    for delivery in &deliveries {
        assert_eq!(delivery["attempt"], 1);
        assert_eq!(delivery["status"], 200);
        assert_eq!(delivery["delivered"], true);
        assert_timestamp(&delivery["at"], "at");
    }
    let event_ids: HashSet<&Value> = deliveries.iter().map(|d| &d["eventId"]).collect();
    let received_ids: HashSet<&Value> = received.iter().map(|e| &e.json["id"]).collect();
    assert_eq!(event_ids, received_ids);
}

#[tokio::test]
async fn a_topic_without_a_url_is_never_queued() {
    let (_emu, api) = start().await;
    let receiver = Receiver::start().await;
    // Alpha: only orders_update. Beta: nothing at all.
    api.webhooks(
        ALPHA,
        &json!({ "orders_update": receiver.url("/orders_update") }),
    )
    .await;
    let order = api.create_order(ALPHA, &simple_order(Some("nq-1"))).await;
    api.create_order(BETA, &beta_order(Some("nq-1"))).await;
    api.control(
        Method::POST,
        "/stores/store_beta/products",
        Some(&json!({ "name": "New" })),
    )
    .await
    .ok(201);
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(receiver.received().is_empty());
    assert!(api.deliveries(ALPHA).await.is_empty());
    assert!(api.deliveries(BETA).await.is_empty());
    // The registered topic is delivered.
    api.advance(ALPHA, order["id"].as_str().unwrap())
        .await
        .ok(200);
    assert_eq!(receiver.wait_for(1).await[0].json["topic"], "orders_update");
    // Replacing the registrations drops the old ones.
    api.webhooks(ALPHA, &json!({})).await;
    api.advance(ALPHA, order["id"].as_str().unwrap())
        .await
        .ok(200);
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(receiver.received().len(), 1);
    assert_eq!(api.deliveries(ALPHA).await.len(), 1);
}

#[tokio::test]
async fn registrations_are_validated() {
    let (_emu, api) = start().await;
    let cases: &[(Value, &[&str])] = &[
        (
            json!({ "orders_cancel": "http://127.0.0.1:9/x" }),
            &["orders_cancel is not a webhook topic"],
        ),
        (
            json!({ "orders_create": "not a url" }),
            &["orders_create must be an absolute http or https URL"],
        ),
    ];
    for (body, messages) in cases {
        api.control(Method::PUT, "/stores/store_alpha/webhooks", Some(body))
            .await
            .error(400, Msg::List(messages));
    }
    api.control(Method::PUT, "/stores/store_nope/webhooks", Some(&json!({})))
        .await
        .error(404, Msg::Exact("Store not found"));
}

/// What `store-api webhooks listen` reads before it registers itself, to put it back afterwards.
#[tokio::test]
async fn registrations_read_back_as_written() {
    let (_emu, api) = start().await;
    let path = "/stores/store_alpha/webhooks";
    assert_eq!(
        api.control(Method::GET, path, None).await.ok(200),
        &json!({})
    );
    let registrations = json!({ "orders_create": "http://127.0.0.1:9/a" });
    api.control(Method::PUT, path, Some(&registrations))
        .await
        .ok(204);
    assert_eq!(
        api.control(Method::GET, path, None).await.ok(200),
        &registrations
    );
    api.control(Method::GET, "/stores/store_nope/webhooks", None)
        .await
        .error(404, Msg::Exact("Store not found"));
}

#[tokio::test]
async fn a_receiver_failing_twice_gets_the_same_event_three_times() {
    let (_emu, api) = start().await;
    let receiver = Receiver::start().await;
    receiver.fail_next(&[500, 500]);
    register_all(&api, ALPHA, &receiver).await;
    let order = api
        .create_order(ALPHA, &simple_order(Some("retry-1")))
        .await;
    let received = receiver.wait_for(3).await;
    let deliveries = api.deliveries_until(ALPHA, |d| d.len() == 3).await;
    let summary: Vec<(Value, Value, Value)> = deliveries
        .iter()
        .map(|d| {
            (
                d["attempt"].clone(),
                d["status"].clone(),
                d["delivered"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (json!(1), json!(500), json!(false)),
            (json!(2), json!(500), json!(false)),
            (json!(3), json!(200), json!(true))
        ]
    );
    let event_id = &received[0].json["id"];
    assert!(
        received
            .iter()
            .all(|e| &e.json["id"] == event_id && e.body == received[0].body)
    );
    assert!(
        deliveries
            .iter()
            .all(|d| &d["eventId"] == event_id && d["topic"] == "orders_create")
    );
    for event in &received {
        assert_event(
            event,
            ALPHA,
            "orders_create",
            order["id"].as_str().unwrap(),
            ALPHA_KEY,
        );
    }
    // Delivered: no more attempts.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(receiver.received().len(), 3);
}

#[tokio::test]
async fn a_receiver_that_is_down_gets_five_attempts_then_nothing() {
    let (_emu, api) = start().await;
    // A port that was free a moment ago: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    drop(listener);
    api.webhooks(ALPHA, &json!({ "orders_create": url })).await;
    api.create_order(ALPHA, &simple_order(Some("down-1"))).await;
    let deliveries = api.deliveries_until(ALPHA, |d| d.len() >= 5).await;
    let attempts: Vec<&Value> = deliveries.iter().map(|d| &d["attempt"]).collect();
    assert_eq!(
        attempts,
        [1, 2, 3, 4, 5].map(|a| json!(a)).iter().collect::<Vec<_>>()
    );
    for delivery in &deliveries {
        assert_eq!(delivery["delivered"], false);
        assert!(delivery.get("status").is_none(), "{delivery}");
        assert!(
            delivery["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{delivery}"
        );
        assert_eq!(delivery["url"], url.as_str());
        assert_eq!(delivery["eventId"], deliveries[0]["eventId"]);
    }
    // Backoff doubles from 20 ms: the attempts span at least 20 + 40 + 80 + 160 ms.
    let at = |i: usize| {
        chrono::DateTime::parse_from_rfc3339(deliveries[i]["at"].as_str().unwrap()).unwrap()
    };
    assert!((at(4) - at(0)).num_milliseconds() >= 300, "{deliveries:#?}");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(api.deliveries(ALPHA).await.len(), 5);
}

#[tokio::test]
async fn product_events_from_the_app() {
    let (emu, api) = start().await;
    let receiver = Receiver::start().await;
    register_all(&api, ALPHA, &receiver).await;
    let product = json!({
        "name": "Night Sky Tee",
        "vendor": "Alpha Apparel",
        "productType": "t-shirt",
        "status": "active",
        "variants": [{ "id": "pv_night_blk_m", "sku": "AA-TEE-NIGHT-BLK-M", "name": "Black / M", "color": "Black", "size": "M", "price": 25.0, "cost": 12.0, "isDiscontinued": false, "position": 1 }]
    });
    let created = api
        .control(Method::POST, "/stores/store_alpha/products", Some(&product))
        .await;
    let created = created.ok(201).clone();
    let id = created["id"].as_str().unwrap().to_owned();
    let fetched = api.get(ALPHA, &format!("/products/{id}")).await;
    assert_eq!(fetched.ok(200), &created);
    assert_eq!(fetched.json["name"], "Night Sky Tee");
    // Orderable at once.
    let order = api
        .create_order(
            ALPHA,
            &order_with(
                None,
                json!([{ "sku": "AA-TEE-NIGHT-BLK-M", "quantity": 1 }]),
            ),
        )
        .await;
    assert_eq!(order["lineItems"][0]["productId"], id.as_str());

    let mut update = product.clone();
    update["status"] = json!("archived");
    let updated = api
        .control(
            Method::PUT,
            &format!("/stores/store_alpha/products/{id}"),
            Some(&update),
        )
        .await;
    assert_eq!(updated.ok(200)["status"], "archived");
    assert_eq!(updated.json["createdAt"], created["createdAt"]);
    assert_eq!(
        api.get(ALPHA, &format!("/products/{id}")).await.json["status"],
        "archived"
    );

    let deleted = api
        .control(
            Method::DELETE,
            &format!("/stores/store_alpha/products/{id}"),
            None,
        )
        .await;
    assert_eq!(deleted.status, 204);
    api.get(ALPHA, &format!("/products/{id}"))
        .await
        .error(404, Msg::Exact("Product not found"));
    api.control(
        Method::DELETE,
        &format!("/stores/store_alpha/products/{id}"),
        None,
    )
    .await
    .error(404, Msg::Exact("Product not found"));

    let received = receiver.wait_for(4).await;
    let mut topics: Vec<(String, Value)> = received
        .iter()
        .map(|e| {
            (
                e.json["topic"].as_str().unwrap().to_owned(),
                e.json["data"]["id"].clone(),
            )
        })
        .collect();
    topics.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        topics,
        [
            ("orders_create".to_owned(), order["id"].clone()),
            ("products_create".to_owned(), json!(id)),
            ("products_delete".to_owned(), json!(id)),
            ("products_update".to_owned(), json!(id)),
        ]
    );
    for event in &received {
        let topic = event.json["topic"].as_str().unwrap();
        let data_id = event.json["data"]["id"].as_str().unwrap();
        assert_event(event, ALPHA, topic, data_id, ALPHA_KEY);
    }
    assert_eq!(emu.order_count(ALPHA), 1);
}

#[tokio::test]
async fn key_rotation_changes_authentication_and_signatures_at_once() {
    let (emu, api) = start().await;
    let receiver = Receiver::start().await;
    register_all(&api, ALPHA, &receiver).await;
    let rotated = api
        .control(Method::POST, "/stores/store_alpha/rotate-key", None)
        .await;
    let new_key = rotated.str("/apiKey");
    assert_ne!(new_key, ALPHA_KEY);
    assert!(
        new_key.len() == 36 && new_key.starts_with("csk_"),
        "{new_key}"
    );

    api.call(Method::GET, ALPHA, Some(ALPHA_KEY), "/status", None)
        .await
        .error(401, Msg::Exact("Invalid API key"));
    api.call(Method::GET, ALPHA, Some(&new_key), "/status", None)
        .await
        .ok(200);
    assert_eq!(emu.store(ALPHA).unwrap().api_key, new_key);
    // Other stores keep their keys.
    api.get(BETA, "/status").await.ok(200);

    let order = api
        .call(
            Method::POST,
            ALPHA,
            Some(&new_key),
            "/orders",
            Some(&simple_order(Some("rot-1"))),
        )
        .await;
    let order_id = order.ok(201)["id"].as_str().unwrap().to_owned();
    let event = &receiver.wait_for(1).await[0];
    assert_event(event, ALPHA, "orders_create", &order_id, &new_key);
    assert_ne!(
        event.signature.as_deref(),
        Some(sign(ALPHA_KEY, &event.body).as_str())
    );

    // A second rotation: the first new key is dead too.
    let again = api
        .control(Method::POST, "/stores/store_alpha/rotate-key", None)
        .await
        .str("/apiKey");
    api.call(Method::GET, ALPHA, Some(&new_key), "/status", None)
        .await
        .error(401, Msg::Exact("Invalid API key"));
    api.call(Method::GET, ALPHA, Some(&again), "/status", None)
        .await
        .ok(200);
    api.control(Method::POST, "/stores/store_nope/rotate-key", None)
        .await
        .error(404, Msg::Exact("Store not found"));
}

#[tokio::test]
async fn a_retry_after_a_rotation_is_signed_with_the_new_key() {
    // The seed: rotation changes the signature too, at once. A delivery still being retried is signed
    // with the key in force at each attempt, so a receiver that switched keys verifies the retry.
    let emu = builder()
        .webhook_backoff(Duration::from_millis(400))
        .start()
        .await
        .unwrap();
    let api = Api::new(&emu);
    let receiver = Receiver::start().await;
    receiver.fail_next(&[500]);
    register_all(&api, ALPHA, &receiver).await;
    let order = api
        .create_order(ALPHA, &simple_order(Some("rot-retry")))
        .await;
    let order_id = order["id"].as_str().unwrap();
    let first = receiver.wait_for(1).await.remove(0);
    assert_event(&first, ALPHA, "orders_create", order_id, ALPHA_KEY);
    let new_key = api
        .control(Method::POST, "/stores/store_alpha/rotate-key", None)
        .await
        .str("/apiKey");
    let received = receiver.wait_for(2).await;
    assert_eq!(
        received[1].body, first.body,
        "the same event, byte for byte"
    );
    assert_event(&received[1], ALPHA, "orders_create", order_id, &new_key);
}

#[tokio::test]
async fn orders_created_and_edited_in_the_app_emit_their_events() {
    let (_emu, api) = start().await;
    let receiver = Receiver::start().await;
    register_all(&api, ALPHA, &receiver).await;
    let created = api
        .control(
            Method::POST,
            "/stores/store_alpha/orders",
            Some(&simple_order(None)),
        )
        .await;
    let order = created.ok(201).clone();
    let id = order["id"].as_str().unwrap().to_owned();
    assert_eq!(
        api.get(ALPHA, &format!("/orders/{id}")).await.ok(200),
        &order
    );

    let edited = api
        .control(
            Method::PUT,
            &format!("/stores/store_alpha/orders/{id}/line-items"),
            Some(
                &json!({ "lineItems": [{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 3 }] }),
            ),
        )
        .await;
    let edited = edited.ok(200).clone();
    assert_eq!(edited["totalQuantity"], 3);
    assert_eq!(edited["lineItems"][0]["quantity"], 3);
    assert_ne!(edited["totalCost"], order["totalCost"], "priced again");
    assert_eq!(edited["createdAt"], order["createdAt"]);
    assert_eq!(
        api.get(ALPHA, &format!("/orders/{id}")).await.ok(200),
        &edited
    );

    let received = receiver.wait_for(2).await;
    let mut topics: Vec<&str> = received
        .iter()
        .map(|e| e.json["topic"].as_str().unwrap())
        .collect();
    topics.sort_unstable();
    assert_eq!(topics, ["orders_create", "orders_update"]);
    for event in &received {
        let topic = event.json["topic"].as_str().unwrap();
        assert_event(event, ALPHA, topic, &id, ALPHA_KEY);
    }

    // The same rules as the API's, and no edit once production started.
    let refused = api
        .control(
            Method::PUT,
            &format!("/stores/store_alpha/orders/{id}/line-items"),
            Some(&json!({ "lineItems": [] })),
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.json);
    api.advance(ALPHA, &id).await.ok(200);
    api.control(
        Method::PUT,
        &format!("/stores/store_alpha/orders/{id}/line-items"),
        Some(&json!({ "lineItems": [{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 1 }] })),
    )
    .await
    .error(
        409,
        Msg::Exact("The order can no longer be edited: production has started or it is closed"),
    );
    api.control(
        Method::POST,
        "/stores/store_nope/orders",
        Some(&simple_order(None)),
    )
    .await
    .error(404, Msg::Exact("Store not found"));
}
