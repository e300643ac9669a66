//! The typed operations' requests: built by the generated request builders
//! ([`store_api_raw::requests`]), sent through the transport's one path
//! ([`ClientTransport::send`](crate::transport::ClientTransport::send)), whose failures are this
//! crate's own errors.

use serde::de::DeserializeOwned;
use store_api_raw::requests::{BuildError, Request};

use crate::error::{self, Error, Result};
use crate::handle::Client;
use crate::response::ApiResponse;
use crate::transport::{KeyChoice, Outgoing, Retries};

/// The request a generated builder made, as the transport sends it (its parts moved, nothing parsed
/// again), or the argument it refused (named; nothing was sent).
pub(crate) fn built(request: std::result::Result<Request, BuildError>) -> Result<Outgoing> {
    let request = request.map_err(|e| Error::invalid_argument_from(e.to_string(), e))?;
    let mut sent = reqwest::Request::new(request.method, request.url);
    *sent.headers_mut() = request.headers;
    if !request.body.is_empty() {
        *sent.body_mut() = Some(request.body.into());
    }
    Ok(Outgoing {
        request: sent,
        operation: Some(request.operation),
    })
}

/// Sends a typed operation's request with the client's retries for reads and decodes its answer.
pub(crate) async fn send<T: DeserializeOwned>(client: &Client, request: Outgoing) -> Result<T> {
    let answer = client
        .inner
        .transport
        .send(request, &KeyChoice::Current, Retries::ClientPolicy)
        .await?;
    decode(answer)
}

/// The value of a typed operation's answer: its body decoded as `T` for a 2xx, the error its status
/// and body say otherwise.
fn decode<T: DeserializeOwned>(answer: ApiResponse) -> Result<T> {
    if answer.is_success() {
        answer.json()
    } else {
        Err(error::from_answer(
            answer.status(),
            answer.headers(),
            Some(answer.body()),
        ))
    }
}
