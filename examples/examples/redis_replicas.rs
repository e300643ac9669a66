//! Many replicas of one service on one store, their shared state on Redis with `store-api-redis`:
//! [`RedisLimiter`] keeps the store's one rate limit across every replica's client, and
//! [`RedisDedupe`] makes a webhook event run its handler once whichever replica each delivery reaches.
//!
//! `cargo run -p store-api-examples --example redis_replicas` is one replica: it starts nothing itself,
//! and uses the Redis at `REDIS_URL` (default `redis://127.0.0.1:6379/`) and the store named by
//! `STORE_API_KEY`, `STORE_API_STORE_ID` and `STORE_API_BASE_URL` ([`Client::from_env`]); it reads the
//! store's status once, then receives webhooks on `WEBHOOK_LISTEN` (default `127.0.0.1:3000`, path
//! `/webhooks`). Run it twice, on two ports, behind one URL: both share the limit and the dedupe.
//!
//! `cargo test -p store-api-examples --example redis_replicas` starts a private `redis-server` on a
//! free loopback port (`store_api_redis::testing`) and an emulator with the service's rate limit, runs
//! two clients through two limiters (no 429) and delivers one event to two receivers (handled once).
//! Without `redis-server` installed the tests skip, saying so on stderr (with
//! `STORE_API_REQUIRE_REDIS=1`, as CI sets, they fail instead).

use std::error::Error;
use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use store_api::Client;
use store_api_redis::{RedisDedupe, RedisLimiter};
use store_api_webhooks::axum::VerifiedEvent;
use store_api_webhooks::dedupe::{process_once, response_status};
use store_api_webhooks::{Event, Verifier};
use tokio::sync::mpsc;

/// One replica's client of the store: the limiter's bucket lives on Redis, keyed by the base URL and
/// the store, so every replica's client takes its tokens from the same one. `replicas` sizes the
/// in-process fallback (a share of the limit each) for when Redis is unreachable.
fn replica_client(
    redis_url: &str,
    builder: store_api::ClientBuilder,
    base_url: &str,
    store_id: &str,
    replicas: u32,
) -> Result<Client, Box<dyn Error>> {
    let limiter = RedisLimiter::builder(redis_url, base_url, store_id)
        .replicas(replicas)
        .build()?;
    Ok(builder.limiter(Arc::new(limiter)).build()?)
}

/// One replica's webhook receiver: verified with the client's key, each event claimed on Redis.
#[derive(Clone)]
struct Receiver {
    verifier: Verifier,
    dedupe: Arc<RedisDedupe>,
    /// Where handled events go (your application's work; here a channel).
    handled: mpsc::UnboundedSender<Event>,
}

impl FromRef<Receiver> for Verifier {
    fn from_ref(state: &Receiver) -> Self {
        state.verifier.clone()
    }
}

/// The router: `POST /webhooks`.
fn receiver(
    client: &Client,
    redis_url: &str,
    handled: mpsc::UnboundedSender<Event>,
) -> Result<Router, Box<dyn Error>> {
    let dedupe = RedisDedupe::builder(redis_url, client.store_id()).build()?;
    let state = Receiver {
        verifier: Verifier::for_client(client),
        dedupe: Arc::new(dedupe),
        handled,
    };
    Ok(Router::new()
        .route("/webhooks", post(webhook))
        .with_state(state))
}

/// 204 once the event is handled, here or on another replica; 503 while another replica handles it or
/// Redis cannot take the claim (the service delivers again later); 500 when the handler failed.
async fn webhook(State(state): State<Receiver>, VerifiedEvent(event): VerifiedEvent) -> StatusCode {
    let (state, event) = (&state, &event);
    let outcome = process_once(&*state.dedupe, &event.id, |lease| async move {
        // Right before the effect: is the claim still ours? (Make the effect idempotent on the event
        // id too: a replica killed after it and before the done marker runs it again.)
        if !lease.is_held() {
            return Err("the claim on the event was lost");
        }
        state
            .handled
            .send(event.clone())
            .map_err(|_| "the application is shutting down")
    })
    .await;
    StatusCode::from_u16(response_status(&outcome)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let redis_url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let listen = std::env::var("WEBHOOK_LISTEN").unwrap_or_else(|_| "127.0.0.1:3000".into());
    let settings = store_api::ClientBuilder::from_env()?;
    // The same three variables `ClientBuilder::from_env` read, for the limiter's key.
    let base_url = std::env::var("STORE_API_BASE_URL")?;
    let store_id = std::env::var("STORE_API_STORE_ID")?;
    let client = replica_client(&redis_url, settings, &base_url, &store_id, 2)?;
    println!("store status: {:?}", client.status().await?);

    let (handled, mut events) = mpsc::unbounded_channel::<Event>();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            println!("handled {} ({:?})", event.id, event.topic);
        }
    });
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    println!("listening on http://{}/webhooks", listener.local_addr()?);
    axum::serve(listener, receiver(&client, &redis_url, handled)?).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::time::{Duration, Instant};

    use store_api_fixtures::Emulator;
    use store_api_redis::testing::RedisServer;
    use store_api_webhooks::{SIGNATURE_HEADER, sign};

    use super::*;

    /// A private `redis-server` on a free port of 127.0.0.1 and its URL, stopped on drop; `None`
    /// (after a message on stderr) when `redis-server` is not installed.
    fn redis() -> Option<(RedisServer, String)> {
        let Some(server) = RedisServer::start_tcp().expect("cannot start redis-server") else {
            // Past the harness's capture (which holds `eprintln!`), so a skip is not mistaken for a pass.
            let thread = std::thread::current();
            let _ = writeln!(
                std::io::stderr().lock(),
                "skipping {}: redis-server is not installed (apt-get install redis-server)",
                thread.name().unwrap_or("a Redis test"),
            );
            return None;
        };
        let url = format!("redis://127.0.0.1:{}/", server.port()?);
        Some((server, url))
    }

    /// A client of `store_alpha` on `emu` for one of two replicas, its limit on the Redis at `url`.
    fn client_of(emu: &Emulator, url: &str) -> Client {
        let store = emu.store("store_alpha").unwrap();
        let builder = Client::builder()
            .base_url(emu.base_url())
            .store_id(&store.id)
            .api_key(store.api_key);
        replica_client(url, builder, &emu.base_url(), &store.id, 2).unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_clients_share_the_store_limit() {
        let Some((_server, url)) = redis() else {
            return;
        };
        // The service's limit: a burst of 10, then two requests a second, 429 beyond it.
        let emu = Emulator::builder()
            .rate_limit(true)
            .network_downloads(false)
            .start()
            .await
            .unwrap();
        let replicas = [client_of(&emu, &url), client_of(&emu, &url)];

        // 14 requests at once, 7 from each replica: each alone would think it had a burst of 10.
        let started = Instant::now();
        let mut calls = Vec::new();
        for client in &replicas {
            for _ in 0..7 {
                let client = client.clone();
                calls.push(tokio::spawn(async move { client.status().await }));
            }
        }
        for call in calls {
            call.await.unwrap().unwrap();
        }
        let wall = started.elapsed();

        let statuses: Vec<u16> = emu
            .requests("store_alpha")
            .unwrap()
            .iter()
            .map(|request| request.status)
            .collect();
        assert_eq!(statuses, [200; 14], "no 429: one limit for both");
        // The burst of 10, then 4 more at one per ~505 ms.
        assert!(wall >= Duration::from_millis(1_900), "limited: {wall:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_event_delivered_to_two_receivers_is_handled_once() {
        let Some((_server, url)) = redis() else {
            return;
        };
        let emu = Emulator::builder()
            .rate_limit(false)
            .network_downloads(false)
            .start()
            .await
            .unwrap();
        let (handled, mut events) = mpsc::unbounded_channel();
        let mut urls = Vec::new();
        for _ in 0..2 {
            let app = receiver(&client_of(&emu, &url), &url, handled.clone()).unwrap();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            urls.push(format!(
                "http://{}/webhooks",
                listener.local_addr().unwrap()
            ));
            tokio::spawn(async move { axum::serve(listener, app).await });
        }

        // One event, delivered to both replicas at once and then again (a lost 2xx, a retry).
        let key = emu.store("store_alpha").unwrap().api_key;
        let body = br#"{"id":"evt_redis_1","storeId":"store_alpha","topic":"orders_update","data":{"id":"ord_1"}}"#;
        let deliver = |url: String| {
            let signature = sign(&key, body);
            async move {
                loop {
                    let answer = reqwest::Client::new()
                        .post(&url)
                        .header(SIGNATURE_HEADER, &signature)
                        .header("content-type", "application/json")
                        .body(body.as_slice())
                        .send()
                        .await
                        .unwrap();
                    // 503: the other replica holds the event; the service would deliver again later.
                    if answer.status().as_u16() != 503 {
                        return answer.status().as_u16();
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        };
        let (a, b) = tokio::join!(deliver(urls[0].clone()), deliver(urls[1].clone()));
        assert_eq!((a, b), (204, 204));
        assert_eq!(deliver(urls[1].clone()).await, 204);

        let event = events.recv().await.unwrap();
        assert_eq!(event.id, "evt_redis_1");
        assert!(events.try_recv().is_err(), "handled twice");

        // A forged delivery is refused before any claim.
        let forged = reqwest::Client::new()
            .post(&urls[0])
            .header(SIGNATURE_HEADER, sign("not the key", body))
            .body(body.as_slice())
            .send()
            .await
            .unwrap();
        assert_eq!(forged.status().as_u16(), 401);
    }
}
