//! An axum webhook receiver: every delivery verified against the client's key, each event processed
//! once however often it is delivered, and followed up by fetching the order or product it is about.
//!
//! `cargo run -p store-api-examples --example webhook_receiver` listens on `WEBHOOK_LISTEN` (default
//! `127.0.0.1:3000`, path `/webhooks`) for the store named by `STORE_API_KEY`, `STORE_API_STORE_ID` and
//! `STORE_API_BASE_URL` ([`Client::from_env`]); register that URL for the store's topics in the app.
//! `cargo test -p store-api-examples --example webhook_receiver` serves the same router on loopback
//! for an in-process emulator, places an order and checks the follow-up, delivers the event again
//! (handled once), deletes a product (routed as a deletion, nothing fetched) and forges a signature.
//!
//! The verifier reads the client's [`KeyHandle`](store_api::KeyHandle) (`Verifier::for_client`), so
//! `client.key_handle().rotate(new_key)` switches outbound calls and verification at once.

use std::error::Error;
use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use store_api::Client;
use store_api_webhooks::axum::VerifiedEvent;
use store_api_webhooks::dedupe::{MemoryDedupe, process_once, response_status};
use store_api_webhooks::{FollowUp, Verifier, follow_up};
use tokio::sync::mpsc;

/// The receiver's state: the client for follow-ups, its verifier, the dedupe store, and where the
/// follow-ups go (your application's queue; here a channel).
#[derive(Clone)]
struct Receiver {
    client: Client,
    verifier: Verifier,
    dedupe: Arc<MemoryDedupe>,
    followed: mpsc::UnboundedSender<FollowUp>,
}

impl FromRef<Receiver> for Verifier {
    fn from_ref(state: &Receiver) -> Self {
        state.verifier.clone()
    }
}

/// The router: `POST /webhooks`.
fn router(client: Client, followed: mpsc::UnboundedSender<FollowUp>) -> Router {
    let state = Receiver {
        verifier: Verifier::for_client(&client),
        client,
        dedupe: Arc::new(MemoryDedupe::new(10_000)),
        followed,
    };
    Router::new()
        .route("/webhooks", post(webhook))
        .with_state(state)
}

/// 204 once the event is handled (now or by an earlier delivery); 503 while another delivery handles
/// it, 500 when the follow-up failed: the service then delivers again and the handler runs again.
async fn webhook(State(state): State<Receiver>, VerifiedEvent(event): VerifiedEvent) -> StatusCode {
    // Borrowed by the handler's future (`async move` takes the lease and these references).
    let (state, event) = (&state, &event);
    let outcome = process_once(&*state.dedupe, &event.id, |lease| async move {
        let current = follow_up(&state.client, event).await?;
        // The effect outside the dedupe store: only while the claim is ours (a slow follow-up may
        // outlive it; another delivery then runs). Make what consumes the queue idempotent on the
        // event id as well: a receiver killed after this line runs the event again.
        if !lease.is_held() {
            return Err(store_api::Error::InvalidArgument {
                message: "the claim on the event was lost".into(),
                source: None,
            });
        }
        // A closed queue means the application is shutting down: fail, so the event comes again.
        state
            .followed
            .send(current)
            .map_err(|error| store_api::Error::InvalidArgument {
                message: "the follow-up queue is closed".into(),
                source: Some(error.into()),
            })
    })
    .await;
    StatusCode::from_u16(response_status(&outcome)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let client = Client::from_env()?;
    let listen = std::env::var("WEBHOOK_LISTEN").unwrap_or_else(|_| "127.0.0.1:3000".into());
    let (followed, mut follow_ups) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(current) = follow_ups.recv().await {
            match current {
                FollowUp::Order(order) => println!("order {} is {:?}", order.id, order.status),
                FollowUp::Product(product) => println!("product {} changed", product.id),
                FollowUp::ProductDeleted(id) => println!("product {id} was deleted"),
                _ => {} // a topic this SDK does not know: ignored
            }
        }
    });
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    println!("listening on http://{}/webhooks", listener.local_addr()?);
    axum::serve(listener, router(client, followed)).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use store_api::{AddressLines, OrderBuilder, RateLimiter, ShipTo, ShipToAddress};
    use store_api_fixtures::Emulator;
    use store_api_webhooks::sign;

    use super::*;

    /// A client of `store_alpha` on `emu`: all it takes is the emulator's base URL and the store's
    /// key. The emulator's rate limit is off, so the client's own limiter is relaxed too (it keeps the
    /// service's two requests a second otherwise).
    fn client_of(emu: &Emulator) -> Client {
        let store = emu.store("store_alpha").unwrap();
        Client::builder()
            .base_url(emu.base_url())
            .store_id(&store.id)
            .api_key(store.api_key)
            .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn follows_up_each_event_once() {
        let emu = Emulator::builder().rate_limit(false).start().await.unwrap();
        let client = client_of(&emu);
        let (followed, mut follow_ups) = mpsc::unbounded_channel();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/webhooks", listener.local_addr().unwrap());
        let app = router(client.clone(), followed);
        tokio::spawn(async move { axum::serve(listener, app).await });
        let topics = BTreeMap::from([
            ("orders_create".to_owned(), url.clone()),
            ("products_delete".to_owned(), url.clone()),
        ]);
        emu.set_webhooks("store_alpha", topics).unwrap();

        let address = ShipToAddress::new(AddressLines {
            street_address: "1 Main St",
            city_or_town: "Austin",
            state_or_province: "TX",
            postal_code: "78701",
            country: "US",
        })
        .unwrap();
        let ship_to = ShipTo::new("Ada", "Lovelace", address).unwrap();
        let order = OrderBuilder::new("hook-1", ship_to)
            .unwrap()
            .sku("AA-TEE-SUN-BLK-M", 1)
            .build()
            .unwrap();
        let placed = client.orders().submit(&order).await.unwrap();

        let current = tokio::time::timeout(Duration::from_secs(10), follow_ups.recv())
            .await
            .expect("a follow-up within 10 s")
            .expect("an open queue");
        let FollowUp::Order(fetched) = current else {
            panic!("not an order: {current:?}");
        };
        assert_eq!(fetched.id, placed.order().id);

        // The service delivers again (a lost 2xx, say): answered 204, handled once. The emulator logs
        // the delivery when the 204 arrives, just after the follow-up was queued.
        let mut delivery = None;
        for _ in 0..100 {
            delivery = emu
                .webhook_deliveries("store_alpha")
                .unwrap()
                .into_iter()
                .find(|d| d.delivered);
            if delivery.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let delivery = delivery.expect("a delivered event within 5 s");
        let body = serde_json::to_vec(&serde_json::json!({
            "id": delivery.event_id,
            "storeId": "store_alpha",
            "topic": "orders_create",
            "data": { "id": placed.order().id },
        }))
        .unwrap();
        let key = emu.store("store_alpha").unwrap().api_key;
        let again = reqwest::Client::new()
            .post(&url)
            .header("X-Service-Signature", sign(&key, &body))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status().as_u16(), 204);
        assert!(follow_ups.try_recv().is_err(), "handled twice");

        // Routed by topic: a deleted product is not fetched, it is reported as gone.
        emu.delete_product("store_alpha", "prod_alpha_sunset_tee")
            .unwrap();
        let current = tokio::time::timeout(Duration::from_secs(10), follow_ups.recv())
            .await
            .expect("a follow-up within 10 s")
            .expect("an open queue");
        assert!(
            matches!(&current, FollowUp::ProductDeleted(id) if id == "prod_alpha_sunset_tee"),
            "{current:?}"
        );

        // A forged delivery is refused before anything runs.
        let forged = reqwest::Client::new()
            .post(&url)
            .header("X-Service-Signature", sign("not the key", b"{}"))
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(forged.status().as_u16(), 401);
    }
}
