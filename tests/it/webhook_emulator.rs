//! End to end with the local emulator: a real axum receiver on 127.0.0.1 gets the emulator's signed
//! deliveries while an order is created, moved to fulfilled and the store's key is rotated mid-way.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store_api_tests::identified;
use store_api_tests::post_body;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use store_api::model::FulfillmentStatus;
use store_api::{Client, NewOrder, RateLimiter, new_external_order_id};
use store_api_fixtures::{AppAction, Emulator};
use store_api_webhooks::axum::VerifiedEvent;
use store_api_webhooks::dedupe::{MemoryDedupe, process_once, response_status};
use store_api_webhooks::{FollowUp, Topic, Verifier, follow_up, sign};

/// What the receiver saw of one processed event: topic, event id, the order's stage read back by the
/// follow-up, and whether it carried trackingInfo.
type Seen = (Topic, String, Option<FulfillmentStatus>, bool);

#[derive(Clone)]
struct Receiver {
    verifier: Arc<Mutex<Verifier>>,
    client: Arc<Mutex<Client>>,
    dedupe: Arc<MemoryDedupe>,
    /// (topic, event id, fulfillment status read back) of every processed event.
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Answer 500 to this many deliveries, then succeed.
    fail_next: Arc<AtomicUsize>,
    handler_runs: Arc<AtomicUsize>,
}

impl FromRef<Receiver> for Verifier {
    fn from_ref(state: &Receiver) -> Verifier {
        state.verifier.lock().unwrap().clone()
    }
}

async fn webhook(State(state): State<Receiver>, VerifiedEvent(event): VerifiedEvent) -> StatusCode {
    if state
        .fail_next
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
    {
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    let client = state.client.lock().unwrap().clone();
    let outcome = process_once(&*state.dedupe, &event.id, |_lease| async {
        state.handler_runs.fetch_add(1, Ordering::SeqCst);
        let followed = follow_up(&client, &event).await?;
        let (stage, tracked) = match followed {
            FollowUp::Order(order) => (
                order.fulfillment_status.clone(),
                order.tracking_info.is_some(),
            ),
            _ => (None, false),
        };
        state
            .seen
            .lock()
            .unwrap()
            .push((event.topic.clone(), event.id.clone(), stage, tracked));
        Ok::<_, store_api::Error>(())
    })
    .await;
    StatusCode::from_u16(response_status(&outcome)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn client(emu: &Emulator, store: &str, key: &str) -> Client {
    Client::builder()
        .base_url(emu.base_url())
        .store_id(store)
        .api_key(key)
        .in_process_limiter(RateLimiter::with_rate(100, Duration::from_millis(1)))
        .build()
        .unwrap()
}

fn order() -> NewOrder {
    let mut order: NewOrder = serde_json::from_value(serde_json::json!({
        "lineItems": [{ "sku": "AA-TEE-SUN-BLK-M", "quantity": 1 }],
        "shippingAddress": { "firstName": "Ada", "lastName": "Lovelace",
            "address": { "streetAddress": "1 Main St", "cityOrTown": "Austin", "stateOrProvince": "TX",
                         "zipOrPostalCode": "78701", "country": "US" } }
    }))
    .unwrap();
    order.external_order_id = Some(new_external_order_id().parse().unwrap());
    order
}

/// Waits until `done` holds, for at most 10 s.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..500 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_are_verified_routed_followed_up_and_survive_rotation_and_failures() {
    let emu = Emulator::builder()
        .rate_limit(false)
        .webhook_backoff(Duration::from_millis(20))
        .network_downloads(false)
        .start()
        .await
        .unwrap();
    let store = emu.store("store_alpha").unwrap();
    let old_key = store.api_key.clone();

    let receiver = Receiver {
        verifier: Arc::new(Mutex::new(Verifier::new(old_key.clone()))),
        client: Arc::new(Mutex::new(client(&emu, &store.id, &old_key))),
        dedupe: Arc::new(MemoryDedupe::new(1000)),
        seen: Arc::default(),
        fail_next: Arc::default(),
        handler_runs: Arc::default(),
    };
    let app = Router::new()
        .route("/hooks", post(webhook))
        .with_state(receiver.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let topics = ["orders_create", "orders_update"];
    emu.set_webhooks(
        &store.id,
        topics
            .iter()
            .map(|t| (t.to_string(), url.clone()))
            .collect::<BTreeMap<_, _>>(),
    )
    .unwrap();

    // Created, then two rungs up the ladder with the original key.
    let creator = receiver.client.lock().unwrap().clone();
    let submitted = creator.orders().submit(&identified(order())).await.unwrap();
    let order_id = submitted.order().id.clone();
    emu.advance_order(&store.id, &order_id).unwrap();
    emu.advance_order(&store.id, &order_id).unwrap();
    eventually("three events", || receiver.seen.lock().unwrap().len() == 3).await;

    // Rotation: the old key is refused at once. Every earlier delivery has landed, so the receiver can
    // trust the new key alone: the next deliveries pass only if the emulator signs with it.
    let new_key = emu.rotate_key(&store.id).unwrap();
    let stale = receiver.client.lock().unwrap().clone();
    assert!(matches!(
        stale.status().await,
        Err(store_api::Error::Unauthorized { .. })
    ));
    *receiver.client.lock().unwrap() = client(&emu, &store.id, &new_key);
    *receiver.verifier.lock().unwrap() = Verifier::new(new_key.clone());
    emu.advance_order(&store.id, &order_id).unwrap();
    emu.advance_order(&store.id, &order_id).unwrap();
    eventually("five events", || receiver.seen.lock().unwrap().len() == 5).await;

    // Deliveries are concurrent (as with the real service), so only the set of events is fixed.
    let seen = receiver.seen.lock().unwrap().clone();
    let creates = seen
        .iter()
        .filter(|(topic, ..)| *topic == Topic::OrdersCreate)
        .count();
    let updates = seen
        .iter()
        .filter(|(topic, ..)| *topic == Topic::OrdersUpdate)
        .count();
    assert_eq!((creates, updates), (1, 4));
    assert!(
        seen.iter()
            .any(|(_, _, stage, tracked)| *stage == Some(FulfillmentStatus::Fulfilled) && *tracked),
        "a follow-up after the last move reads the fulfilled order with its trackingInfo: {seen:?}"
    );

    // During a rotation window the keyring takes both keys; once the old one is dropped, a delivery
    // signed with it is refused.
    let body = serde_json::to_vec(&serde_json::json!({
        "id": "evt_forged", "storeId": store.id, "topic": "orders_update", "data": {"id": order_id}
    }))
    .unwrap();
    *receiver.verifier.lock().unwrap() = Verifier::with_keys([new_key.clone(), old_key.clone()]);
    let in_window = post_body(&url, Some(&sign(&old_key, &body)), body.clone().into())
        .await
        .0;
    assert!(
        (200..300).contains(&in_window),
        "the window accepts the old key"
    );
    *receiver.verifier.lock().unwrap() = Verifier::new(new_key.clone());
    let forged = post_body(&url, Some(&sign(&old_key, &body)), body.clone().into())
        .await
        .0;
    assert_eq!(forged, 401);
    let genuine = post_body(&url, Some(&sign(&new_key, &body)), body.into())
        .await
        .0;
    assert!((200..300).contains(&genuine));

    // A receiver that answers 500 twice gets the event on the third attempt and processes it once.
    let runs_before = receiver.handler_runs.load(Ordering::SeqCst);
    let deliveries_before = emu.webhook_deliveries(&store.id).unwrap().len();
    receiver.fail_next.store(2, Ordering::SeqCst);
    let creator = receiver.client.lock().unwrap().clone();
    let held = creator.orders().submit(&identified(order())).await.unwrap();
    eventually("the retried event", || {
        emu.webhook_deliveries(&store.id)
            .unwrap()
            .iter()
            .skip(deliveries_before)
            .any(|d| d.delivered)
    })
    .await;
    let attempts: Vec<_> = emu
        .webhook_deliveries(&store.id)
        .unwrap()
        .into_iter()
        .skip(deliveries_before)
        .collect();
    assert_eq!(
        attempts.iter().map(|d| d.attempt).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(
        attempts.iter().map(|d| d.status).collect::<Vec<_>>(),
        [Some(500), Some(500), Some(204)]
    );
    assert!(attempts.iter().all(|d| d.event_id == attempts[0].event_id));
    assert_eq!(
        receiver.handler_runs.load(Ordering::SeqCst),
        runs_before + 1,
        "processed once"
    );

    // A redelivery of an event already processed is recognised by Dedupe and not processed again.
    emu.app_action(&store.id, &held.order().id, AppAction::Hold)
        .unwrap();
    eventually("the hold event", || {
        receiver.handler_runs.load(Ordering::SeqCst) == runs_before + 2
    })
    .await;
    let processed_id = receiver.seen.lock().unwrap().last().unwrap().1.clone();
    let replay = serde_json::to_vec(&serde_json::json!({
        "id": processed_id, "storeId": store.id, "topic": "orders_update", "data": {"id": held.order().id}
    }))
    .unwrap();
    let again = post_body(&url, Some(&sign(&new_key, &replay)), replay.into())
        .await
        .0;
    assert!((200..300).contains(&again));
    assert_eq!(
        receiver.handler_runs.load(Ordering::SeqCst),
        runs_before + 2,
        "a duplicate is not processed"
    );
}

// Issue 10: a verified event of another store must not make the receiver act on this store's data.
#[tokio::test]
async fn follow_up_refuses_an_event_of_another_store() {
    let emu = Emulator::builder().rate_limit(false).start().await.unwrap();
    let alpha = emu.store("store_alpha").unwrap();
    let client = client(&emu, "store_alpha", &alpha.api_key);
    let placed = client.orders().create(&order()).await.unwrap();
    let foreign = store_api_webhooks::Event::new("store_beta", Topic::OrdersUpdate, &placed.id);
    let result = follow_up(&client, &foreign).await;
    assert!(
        matches!(result, Err(store_api::Error::InvalidArgument { .. })),
        "{result:?}"
    );
}
