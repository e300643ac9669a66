//! Live key rotation (issue 16): one `KeyHandle` shared by a client, its clones and a webhook
//! `Verifier`; the emulator rotates the store's key mid-traffic and one `rotate` call follows it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store_api_tests::post_body;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use store_api::hook::{RequestHook, TryInfo, TryOutcome};
use store_api::{Client, KeyHandle, new_external_order_id};
use store_api_tests::{ALPHA, builder_at, emulator, key_of, tee_order};
use store_api_webhooks::axum::VerifiedEvent;
use store_api_webhooks::{Verifier, WebhookError, sign};

/// Counts the 401 answers the client met (the requests that crossed the rotation in flight).
#[derive(Debug, Default)]
struct Unauthorized(AtomicUsize);

impl RequestHook for Unauthorized {
    fn after(&self, _: &TryInfo, outcome: &TryOutcome, _: Duration) {
        if *outcome == TryOutcome::Status(401) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[derive(Clone)]
struct Receiver {
    verifier: Verifier,
    events: Arc<Mutex<Vec<String>>>,
}

impl FromRef<Receiver> for Verifier {
    fn from_ref(state: &Receiver) -> Verifier {
        state.verifier.clone()
    }
}

async fn webhook(State(state): State<Receiver>, VerifiedEvent(event): VerifiedEvent) -> StatusCode {
    state.events.lock().unwrap().push(event.id);
    StatusCode::NO_CONTENT
}

/// Reads the store's products until `stop`; returns (requests, failures) started before and after
/// `swapped` was set.
async fn traffic(client: Client, swapped: Arc<AtomicBool>, stop: Arc<AtomicBool>) -> [usize; 4] {
    let mut counts = [0; 4];
    while !stop.load(Ordering::SeqCst) {
        let after = usize::from(swapped.load(Ordering::SeqCst)) * 2;
        counts[after] += 1;
        if client.status().await.is_err() {
            counts[after + 1] += 1;
        }
    }
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_rotate_call_switches_outbound_calls_and_webhook_verification_mid_traffic() {
    let emu = emulator().await;
    let old_key = key_of(&emu, ALPHA);
    let handle = KeyHandle::new(old_key.clone());
    let unauthorized = Arc::new(Unauthorized::default());
    let client = builder_at(&emu.base_url(), ALPHA, "replaced by the handle")
        .key_handle(handle.clone())
        .hook(unauthorized.clone())
        .build()
        .unwrap();

    // A receiver whose verifier reads the same handle.
    let receiver = Receiver {
        verifier: Verifier::for_client(&client),
        events: Arc::default(),
    };
    let app = Router::new()
        .route("/hooks", post(webhook))
        .with_state(receiver.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    emu.set_webhooks(
        ALPHA,
        BTreeMap::from([("orders_create".to_owned(), url.clone())]),
    )
    .unwrap();

    // Four tasks, each with its own clone of the client, call the service without pause.
    let swapped = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..4)
        .map(|_| tokio::spawn(traffic(client.clone(), swapped.clone(), stop.clone())))
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;

    // The app shows a new key (the old one stops working at once); one call follows it everywhere.
    let new_key = emu.rotate_key(ALPHA).unwrap();
    handle.rotate(new_key.clone());
    swapped.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::SeqCst);
    let mut counts = [0; 4];
    for task in tasks {
        for (total, count) in counts.iter_mut().zip(task.await.unwrap()) {
            *total += count;
        }
    }
    let [before, _, after, failed_after] = counts;
    assert!(before > 0 && after > 0, "traffic on both sides: {counts:?}");
    assert_eq!(
        failed_after, 0,
        "no request failed after the swap: {counts:?}"
    );
    // Every client shares the handle: status() confirms the new key, a fixed old key is refused.
    client.status().await.unwrap();
    assert_eq!(client.key_handle().current().expose_secret(), new_key);
    let stale = builder_at(&emu.base_url(), ALPHA, &old_key)
        .build()
        .unwrap();
    assert!(matches!(
        stale.status().await,
        Err(store_api::Error::Unauthorized { .. })
    ));
    eprintln!(
        "rotation: {counts:?} (before, failed before, after, failed after); {} 401s replayed or failed",
        unauthorized.0.load(Ordering::SeqCst)
    );

    // The emulator now signs with the new key: its delivery passes the handle's verifier.
    let placed = client
        .orders()
        .create(&tee_order(Some(&new_external_order_id())))
        .await
        .unwrap();
    for _ in 0..500 {
        if !receiver.events.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(receiver.events.lock().unwrap().len(), 1, "delivered once");
    let deliveries = emu.webhook_deliveries(ALPHA).unwrap();
    assert!(deliveries.iter().all(|d| d.delivered), "{deliveries:?}");

    // And the old key is refused right after the swap, no overlap.
    let body = serde_json::to_vec(&serde_json::json!({
        "id": "evt_old_key", "storeId": ALPHA, "topic": "orders_create", "data": {"id": placed.id}
    }))
    .unwrap();
    assert!(matches!(
        receiver.verifier.verify(&sign(&old_key, &body), &body),
        Err(WebhookError::SignatureMismatch)
    ));
    let forged = post_body(&url, Some(&sign(&old_key, &body)), body.clone().into())
        .await
        .0;
    assert_eq!(forged, 401);
    let genuine = post_body(&url, Some(&sign(&new_key, &body)), body.into())
        .await
        .0;
    assert!((200..300).contains(&genuine));
}

#[tokio::test]
async fn a_request_that_crossed_the_rotation_is_replayed_with_the_new_key() {
    let emu = emulator().await;
    let old_key = key_of(&emu, ALPHA);
    let client = builder_at(&emu.base_url(), ALPHA, &old_key)
        .build()
        .unwrap();
    let new_key = emu.rotate_key(ALPHA).unwrap();
    // Sent with the old key, answered 401: the handle holds the same old key, so it is a real refusal.
    assert!(matches!(
        client.status().await,
        Err(store_api::Error::Unauthorized { .. })
    ));
    // The handle is rotated while the first attempt is in flight (by a hook, once its 401 arrived): the
    // 401 is for a key the client no longer holds, so the request goes again at once with the new one.
    #[derive(Debug)]
    struct RotateInFlight {
        handle: KeyHandle,
        new_key: String,
        attempts: Mutex<Vec<(u32, TryOutcome)>>,
    }
    impl RequestHook for RotateInFlight {
        fn after(&self, attempt: &TryInfo, outcome: &TryOutcome, _: Duration) {
            let mut attempts = self.attempts.lock().unwrap();
            if attempts.is_empty() {
                self.handle.rotate(self.new_key.clone());
            }
            attempts.push((attempt.number, *outcome));
        }
    }
    let handle = KeyHandle::new(old_key);
    let hook = Arc::new(RotateInFlight {
        handle: handle.clone(),
        new_key,
        attempts: Mutex::default(),
    });
    let rotating = builder_at(&emu.base_url(), ALPHA, "unused")
        .key_handle(handle)
        .hook(hook.clone())
        .build()
        .unwrap();
    rotating.status().await.unwrap();
    assert_eq!(
        *hook.attempts.lock().unwrap(),
        [(1, TryOutcome::Status(401)), (2, TryOutcome::Status(200))]
    );
}
