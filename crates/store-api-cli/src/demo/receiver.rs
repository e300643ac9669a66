//! The demo's webhook receiver: a real axum server on 127.0.0.1 whose handler only ever sees
//! deliveries that `VerifiedEvent` checked against the store's key.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use store_api_webhooks::axum::VerifiedEvent;
use store_api_webhooks::{Event, Topic, Verifier};
use tokio::sync::{mpsc, oneshot};

use crate::error::CliError;

#[derive(Clone)]
struct ReceiverState {
    verifier: Verifier,
    events: mpsc::UnboundedSender<Event>,
}

impl FromRef<ReceiverState> for Verifier {
    fn from_ref(state: &ReceiverState) -> Verifier {
        state.verifier.clone()
    }
}

async fn receive(
    State(state): State<ReceiverState>,
    VerifiedEvent(event): VerifiedEvent,
) -> StatusCode {
    // The demo reads events in its own order; a closed channel only means it finished.
    let _ = state.events.send(event);
    StatusCode::NO_CONTENT
}

/// A running receiver. Dropping it stops the server.
pub struct Receiver {
    /// Where the emulator should deliver: `http://127.0.0.1:PORT/webhooks`.
    pub url: String,
    events: mpsc::UnboundedReceiver<Event>,
    /// Arrived but not asked for yet (deliveries run concurrently and may arrive in any order).
    waiting: VecDeque<Event>,
    /// Event ids already handed out: a redelivery of one of them is skipped.
    seen: HashSet<String>,
    _stop: oneshot::Sender<()>,
}

impl Receiver {
    /// Starts a receiver that verifies with `key`.
    pub async fn start(key: &str) -> Result<Receiver, CliError> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| CliError::Failed(format!("cannot start the webhook receiver: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| CliError::Failed(format!("cannot start the webhook receiver: {e}")))?;
        let (sender, events) = mpsc::unbounded_channel();
        let state = ReceiverState {
            verifier: Verifier::new(key),
            events: sender,
        };
        let app = Router::new()
            .route("/webhooks", post(receive))
            .with_state(state);
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Receiver {
            url: format!("http://{addr}/webhooks"),
            events,
            waiting: VecDeque::new(),
            seen: HashSet::new(),
            _stop: stop,
        })
    }

    /// The next verified event of `topic`, waiting at most `timeout`.
    pub async fn next(&mut self, topic: &Topic, timeout: Duration) -> Result<Event, CliError> {
        if let Some(index) = self.waiting.iter().position(|e| &e.topic == topic)
            && let Some(event) = self.waiting.remove(index)
        {
            return Ok(event);
        }
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let event = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .ok()
                .flatten()
                .ok_or_else(|| {
                    CliError::Failed(format!("no {topic} delivery arrived within {timeout:?}"))
                })?;
            if !self.seen.insert(event.id.clone()) {
                continue;
            }
            if &event.topic == topic {
                return Ok(event);
            }
            self.waiting.push_back(event);
        }
    }
}
