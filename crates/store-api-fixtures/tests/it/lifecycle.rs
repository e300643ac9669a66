//! The order lifecycle moved by the control endpoints (the provider's ladder, the app's actions), each
//! change visible through the Store API and emitting orders_update; and the auto-advance mode.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::*;

/// An emulator with every order topic registered to a receiver, and one new alpha order.
async fn setup() -> (store_api_fixtures::Emulator, Api, Receiver, String) {
    let (emu, api) = start().await;
    let receiver = Receiver::start().await;
    api.webhooks(ALPHA, &json!({ "orders_update": receiver.url("/update") }))
        .await;
    let order = api.create_order(ALPHA, &simple_order(Some("life-1"))).await;
    (emu, api, receiver, order["id"].as_str().unwrap().to_owned())
}

/// The order as the Store API serves it.
async fn fetch(api: &Api, id: &str) -> Value {
    api.get(ALPHA, &format!("/orders/{id}"))
        .await
        .ok(200)
        .clone()
}

/// Asserts (status, fulfillmentStatus, paymentStatus).
#[track_caller]
fn states(order: &Value, expected: [&str; 3]) {
    let actual = [
        &order["status"],
        &order["fulfillmentStatus"],
        &order["paymentStatus"],
    ]
    .map(Value::clone);
    assert_eq!(actual, expected.map(|s| json!(s)), "{order}");
}

/// Waits for `count` orders_update events about `id`.
async fn updates(receiver: &Receiver, id: &str, count: usize) {
    let received = receiver.wait_for(count).await;
    assert_eq!(received.len(), count);
    for event in received {
        assert_eq!(event.json["topic"], "orders_update");
        assert_eq!(event.json["data"]["id"], id);
    }
}

#[tokio::test]
async fn the_ladder_up_to_fulfilled_and_no_further() {
    let (_emu, api, receiver, id) = setup().await;
    let ladder = [
        "production_requested",
        "sent_to_production",
        "in_production",
        "fulfilled",
    ];
    let mut previous_update = fetch(&api, &id).await["updatedAt"]
        .as_str()
        .unwrap()
        .to_owned();
    for (step, rung) in ladder.iter().enumerate() {
        let moved = api.advance(ALPHA, &id).await;
        let order = fetch(&api, &id).await;
        assert_eq!(moved.ok(200), &order);
        states(&order, [rung, rung, "due"]);
        let updated = order["updatedAt"].as_str().unwrap().to_owned();
        assert!(updated >= previous_update);
        previous_update = updated;
        if *rung == "fulfilled" {
            let tracking = &order["trackingInfo"];
            for field in ["carrier", "trackingNumber", "trackingUrl"] {
                assert!(
                    tracking[field].as_str().is_some_and(|v| !v.is_empty()),
                    "{field}: {tracking}"
                );
            }
            assert_timestamp(&order["fulfilledAt"], "fulfilledAt");
        } else {
            assert!(
                order.get("trackingInfo").is_none() && order.get("fulfilledAt").is_none(),
                "step {step}"
            );
        }
        updates(&receiver, &id, step + 1).await;
    }
    api.advance(ALPHA, &id)
        .await
        .error(409, Msg::Exact("The order is fulfilled and cannot advance"));
    // A fulfilled order can no longer be held or canceled.
    api.app_action(ALPHA, &id, "hold")
        .await
        .error(409, Msg::AnyString);
    api.app_action(ALPHA, &id, "cancel")
        .await
        .error(409, Msg::AnyString);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(receiver.received().len(), 4, "refused moves emit nothing");
}

#[tokio::test]
async fn hold_keeps_the_stage_and_blocks_advance_until_release() {
    let (_emu, api, receiver, id) = setup().await;
    api.advance(ALPHA, &id).await.ok(200);
    let held = api.app_action(ALPHA, &id, "hold").await;
    states(held.ok(200), ["on_hold", "production_requested", "due"]);
    states(
        &fetch(&api, &id).await,
        ["on_hold", "production_requested", "due"],
    );
    api.advance(ALPHA, &id)
        .await
        .error(409, Msg::Exact("The order is on_hold and cannot advance"));
    api.app_action(ALPHA, &id, "hold")
        .await
        .error(409, Msg::AnyString);
    let released = api.app_action(ALPHA, &id, "release").await;
    states(
        released.ok(200),
        ["production_requested", "production_requested", "due"],
    );
    api.app_action(ALPHA, &id, "release")
        .await
        .error(409, Msg::AnyString);
    states(
        api.advance(ALPHA, &id).await.ok(200),
        ["sent_to_production", "sent_to_production", "due"],
    );
    updates(&receiver, &id, 4).await;
}

#[tokio::test]
async fn cancellation_request_then_cancel() {
    let (_emu, api, receiver, id) = setup().await;
    let requested = api.app_action(ALPHA, &id, "request_cancellation").await;
    states(
        requested.ok(200),
        ["cancellation_requested", "pending", "due"],
    );
    api.advance(ALPHA, &id).await.error(
        409,
        Msg::Exact("The order is cancellation_requested and cannot advance"),
    );
    let canceled = api.app_action(ALPHA, &id, "cancel").await;
    let order = canceled.ok(200).clone();
    states(&order, ["canceled", "pending", "canceled"]);
    assert_timestamp(&order["canceledAt"], "canceledAt");
    assert_eq!(fetch(&api, &id).await, order);
    api.advance(ALPHA, &id)
        .await
        .error(409, Msg::Exact("The order is canceled and cannot advance"));
    for action in ["hold", "release", "request_cancellation", "cancel"] {
        api.app_action(ALPHA, &id, action)
            .await
            .error(409, Msg::AnyString);
    }
    // The filter sees it.
    let listed = api
        .get(
            ALPHA,
            "/orders?filter[status]=canceled&filter[paymentStatus]=canceled",
        )
        .await;
    assert_eq!(listed.json["totalItems"], 1);
    updates(&receiver, &id, 2).await;
}

#[tokio::test]
async fn payment_moves_and_cancel_of_a_paid_order_refunds_it() {
    let (_emu, api, receiver, id) = setup().await;
    // (action, expected paymentStatus after, or None when refused)
    let steps: &[(&str, Option<&str>)] = &[
        ("refund", None),
        ("mark_payment_failed", Some("failed")),
        ("mark_payment_failed", None),
        ("mark_paid", Some("paid")),
        ("mark_paid", None),
        ("mark_payment_failed", None),
        ("cancel", Some("refunded")),
    ];
    let mut emitted = 0;
    for (action, expected) in steps {
        let answer = api.app_action(ALPHA, &id, action).await;
        match expected {
            Some(payment) => {
                assert_eq!(answer.ok(200)["paymentStatus"], *payment, "{action}");
                assert_eq!(
                    fetch(&api, &id).await["paymentStatus"],
                    *payment,
                    "{action}"
                );
                emitted += 1;
            }
            None => answer.error(409, Msg::AnyString),
        }
    }
    updates(&receiver, &id, emitted).await;

    // paid → refunded directly.
    let other = api.create_order(ALPHA, &simple_order(Some("life-2"))).await;
    let other = other["id"].as_str().unwrap();
    api.app_action(ALPHA, other, "mark_paid").await.ok(200);
    let refunded = api.app_action(ALPHA, other, "refund").await;
    states(refunded.ok(200), ["pending", "pending", "refunded"]);
}

#[tokio::test]
async fn control_errors_for_unknown_orders_stores_and_actions() {
    let (_emu, api, _receiver, id) = setup().await;
    api.advance(ALPHA, "ord_nope")
        .await
        .error(404, Msg::Exact("Order not found"));
    api.advance(BETA, &id)
        .await
        .error(404, Msg::Exact("Order not found"));
    api.advance("store_nope", &id)
        .await
        .error(404, Msg::Exact("Store not found"));
    api.app_action(ALPHA, "ord_nope", "hold")
        .await
        .error(404, Msg::Exact("Order not found"));
    let bad = api.app_action(ALPHA, &id, "explode").await;
    assert_eq!(bad.status, 400);
    let missing = api
        .control(
            Method::POST,
            &format!("/stores/store_alpha/orders/{id}/app-action"),
            Some(&json!({})),
        )
        .await;
    missing.error(400, Msg::List(&["action should not be null or undefined"]));
    states(&fetch(&api, &id).await, ["pending", "pending", "due"]);
}

#[tokio::test]
async fn auto_advance_moves_orders_without_calls() {
    let emu = builder()
        .auto_advance(Duration::from_millis(40))
        .start()
        .await
        .unwrap();
    let api = Api::new(&emu);
    let receiver = Receiver::start().await;
    api.webhooks(ALPHA, &json!({ "orders_update": receiver.url("/update") }))
        .await;
    let moving = api.create_order(ALPHA, &simple_order(Some("auto-1"))).await;
    let held = api.create_order(ALPHA, &simple_order(Some("auto-2"))).await;
    let moving = moving["id"].as_str().unwrap().to_owned();
    let held = held["id"].as_str().unwrap().to_owned();
    api.app_action(ALPHA, &held, "hold").await.ok(200);
    let fulfilled = eventually("the order to be fulfilled", || {
        let api = api.clone();
        let id = moving.clone();
        async move {
            let order = fetch(&api, &id).await;
            (order["status"] == "fulfilled").then_some(order)
        }
    })
    .await;
    states(&fulfilled, ["fulfilled", "fulfilled", "due"]);
    assert!(fulfilled.get("trackingInfo").is_some());
    // The held order stayed where it was.
    states(&fetch(&api, &held).await, ["on_hold", "pending", "due"]);
    // One event for the hold and four for the ladder.
    let received = receiver.wait_for(5).await;
    let about_moving = received
        .iter()
        .filter(|e| e.json["data"]["id"] == moving.as_str())
        .count();
    assert_eq!(about_moving, 4);
}
