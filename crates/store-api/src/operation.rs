//! The typed operations' requests: built by the generated code, sent through the transport.
//!
//! The generated client is the one source of every operation's route, method, query encoding and
//! body. A client made with `Hooks::capturing` sends nothing: each generated call builds its request
//! and hands it over, and [`send`] takes it through the transport's one path
//! ([`ClientTransport::send`](crate::transport::ClientTransport::send)), whose failures are this crate's
//! own errors (not a `reqwest::Error`, the only error a generated call could have carried them in).

use serde::de::DeserializeOwned;
use store_api_raw::hooks::CAPTURED;
use store_api_raw::{Capture, Hooks, types};

use crate::error::{self, Error, Result};
use crate::handle::Client;
use crate::transport::{Answer, KeyChoice, Retries};

/// The request of a generated call: `operation!(client, method(args…))` builds it with the generated
/// method of that name and evaluates to `Result<reqwest::Request>`.
macro_rules! operation {
    ($client:expr, $method:ident($($arg:expr),* $(,)?)) => {{
        let capture = store_api_raw::Capture::new();
        let generated = $crate::operation::generated($client, &capture);
        let result = generated.$method($($arg),*).await;
        $crate::operation::built(result, &capture)
    }};
}
pub(crate) use operation;

/// A generated client that builds requests into `capture` instead of sending them.
pub(crate) fn generated(client: &Client, capture: &Capture) -> store_api_raw::Client {
    let inner = &client.inner;
    store_api_raw::Client::new_with_client(
        &inner.base_url,
        inner.http.clone(),
        Hooks::capturing(capture.clone()),
    )
}

/// The request a generated call put in `capture`, or why it could not build one.
pub(crate) fn built<T>(
    result: std::result::Result<T, progenitor_client::Error<types::Error>>,
    capture: &Capture,
) -> Result<reqwest::Request> {
    if let Some(request) = capture.take() {
        return Ok(request);
    }
    Err(match result {
        Err(progenitor_client::Error::InvalidRequest(message)) => Error::invalid_argument(message),
        Err(progenitor_client::Error::CommunicationError(e)) => {
            let e = e.without_url();
            Error::invalid_argument_from(format!("cannot build the request: {e}"), e)
        }
        Err(progenitor_client::Error::Custom(message)) if message != CAPTURED => {
            Error::invalid_argument(message)
        }
        // The capturing hooks end every call that built its request, so nothing else can come back.
        _ => Error::invalid_argument("the request could not be built"),
    })
}

/// Sends a typed operation's request with the client's retries for reads and decodes its answer.
pub(crate) async fn send<T: DeserializeOwned>(
    client: &Client,
    request: reqwest::Request,
) -> Result<T> {
    let answer = client
        .inner
        .transport
        .send(request, &KeyChoice::Current, Retries::Reads)
        .await?;
    decode(answer)
}

/// The value of a typed operation's answer: its body decoded as `T` for a 2xx, the error its status
/// and body say otherwise.
fn decode<T: DeserializeOwned>(answer: Answer) -> Result<T> {
    let Answer {
        status,
        headers,
        body,
    } = answer;
    if (200..300).contains(&status) {
        serde_json::from_slice(&body).map_err(|e| Error::decode_from(e.to_string(), e))
    } else {
        Err(error::from_answer(status, &headers, Some(&body)))
    }
}
