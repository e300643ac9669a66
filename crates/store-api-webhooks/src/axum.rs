//! An axum extractor that reads, verifies and parses a delivery (feature `axum`).
//!
//! [`VerifiedEvent`] takes the [`Verifier`] from the router's state through [`FromRef`]: the state can be
//! the `Verifier` itself, or your own state type with `impl FromRef<AppState> for Verifier` (or
//! `#[derive(FromRef)]` with axum's `macros` feature). It then
//!
//! 1. reads `X-Service-Signature`, answering 401 when it is missing or malformed, before reading the body;
//! 2. reads the raw body up to [`Verifier::max_body_bytes`] (1 MiB by default), answering 413 beyond;
//! 3. checks the signature over the exact bytes (401), and only then parses the event (400).
//!
//! Rejections are plain JSON `{"message": "..."}` and never echo the key, the signature or the body.
//! Any non-2xx answer makes the service deliver again; pair the extractor with
//! [`process_once`](crate::dedupe::process_once) so a retried event is processed once.
//!
//! ```
//! use std::sync::Arc;
//!
//! use axum::extract::{FromRef, State};
//! use axum::http::StatusCode;
//! use axum::routing::post;
//! use axum::Router;
//! use store_api_webhooks::axum::VerifiedEvent;
//! use store_api_webhooks::dedupe::{MemoryDedupe, process_once, response_status};
//! use store_api_webhooks::{Resource, Verifier};
//!
//! #[derive(Clone)]
//! struct AppState {
//!     verifier: Verifier,
//!     dedupe: Arc<MemoryDedupe>,
//! }
//!
//! impl FromRef<AppState> for Verifier {
//!     fn from_ref(state: &AppState) -> Self {
//!         state.verifier.clone()
//!     }
//! }
//!
//! async fn webhook(State(state): State<AppState>, VerifiedEvent(event): VerifiedEvent) -> StatusCode {
//!     let event = &event; // borrowed by the handler's future, which takes the lease
//!     let outcome = process_once(&*state.dedupe, &event.id, |lease| async move {
//!         // Right before an effect outside the dedupe store: is the claim still ours? (A run is told
//!         // when its claim was lost, not cancelled; make the effect idempotent on the event id too.)
//!         if !lease.is_held() {
//!             return Err(std::io::Error::other("claim lost; the next delivery decides"));
//!         }
//!         match event.resource() {
//!             Resource::Order(id) => println!("fetch GET /orders/{id}"),
//!             Resource::Product(id) => println!("fetch GET /products/{id}"),
//!             _ => {} // unknown topics are ignored
//!         }
//!         Ok(())
//!     })
//!     .await;
//!     // 204 once processed (now or before); 503 while another delivery holds the event or the store
//!     // is full or failing; 500 when the handler failed. Never 2xx for an event not processed.
//!     StatusCode::from_u16(response_status(&outcome)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
//! }
//!
//! let state = AppState {
//!     verifier: Verifier::new("<the store's API key>"),
//!     dedupe: Arc::new(MemoryDedupe::new(10_000)),
//! };
//! let app: Router = Router::new().route("/webhooks", post(webhook)).with_state(state);
//! # drop(app);
//! ```

use ::axum::body::{Body, Bytes};
use ::axum::extract::{FromRef, FromRequest, Request};
use ::axum::http::{StatusCode, header};
use ::axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use tracing::Instrument as _;

use crate::error::WebhookError;
use crate::event::Event;
use crate::telemetry;
use crate::verifier::{Verifier, parse, signature_from_headers};

/// A delivery whose signature checked out, parsed into its [`Event`].
///
/// Rejects with [`WebhookError`]: 401 for a missing or wrong signature, 413 for a body over the limit,
/// 400 for a body that is not an event.
///
/// Opens the delivery span `store_api.webhooks.delivery` with its `store_api.webhooks.verify` step; a
/// refused delivery closes it with its verdict, and [`process_once`](crate::dedupe::process_once)
/// called with the event's id in the route's handler goes on with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedEvent(pub Event);

impl<S> FromRequest<S> for VerifiedEvent
where
    Verifier: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = WebhookError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let verifier = Verifier::from_ref(state);
        // The delivery span; `process_once` in the route's handler (the same task) goes on with it.
        let delivery = telemetry::delivery_span();
        let result = async {
            let (parts, body) = request.into_parts();
            let signature = signature_from_headers(&parts.headers)?;
            if let Some(length) = content_length(&parts.headers) {
                verifier.check_body_size(length)?;
            }
            let raw_body = read_limited(body, &verifier).await?;
            verifier.check(&signature, &raw_body)?;
            parse(&raw_body)
        }
        .instrument(telemetry::verify_span(&delivery))
        .await;
        telemetry::verified(delivery, result).map(VerifiedEvent)
    }
}

/// The announced `Content-Length`, if readable (saturating, so a huge value is still too large).
fn content_length(headers: &::axum::http::HeaderMap) -> Option<usize> {
    let value = headers.get(header::CONTENT_LENGTH)?.to_str().ok()?;
    let length: u64 = value.trim().parse().ok()?;
    Some(usize::try_from(length).unwrap_or(usize::MAX))
}

/// Reads the body, stopping as soon as it passes the verifier's limit.
async fn read_limited(body: Body, verifier: &Verifier) -> Result<Bytes, WebhookError> {
    let mut stream = body.into_data_stream();
    let mut collected = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| WebhookError::BodyUnreadable)?;
        verifier.check_body_size(collected.len().saturating_add(chunk.len()))?;
        collected.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(collected))
}

impl IntoResponse for WebhookError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status_code()).unwrap_or(StatusCode::BAD_REQUEST);
        let body = serde_json::json!({ "message": self.to_string() }).to_string();
        (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}
