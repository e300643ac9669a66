//! The one error type of the client.

use std::time::Duration;

use store_api_raw::types;

use crate::difference::Difference;
use crate::model::Order;
use crate::retry::{self, Outcome};
use crate::validate::Violation;

/// Everything a call can fail with. Branch on the variant (the service's `statusCode`), never on message
/// text: the seed says message text is not part of the contract.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// 400: malformed, failed validation, or cannot be ordered. An unchanged retry fails again.
    #[error("bad request: {}", messages.join("; "))]
    BadRequest {
        /// The service's messages (one for a rule, several naming field paths for validation).
        messages: Vec<String>,
    },
    /// The request was refused locally by the pre-flight validator; nothing was sent.
    #[error("invalid request (not sent): {}", violations.iter().map(Violation::message).collect::<Vec<_>>().join("; "))]
    Invalid {
        /// Every rule the request breaks, with its field path and the service's message.
        violations: Vec<Violation>,
    },
    /// 401: the key is missing or wrong for the store, or the store is inactive. Never retried.
    #[error("unauthorized: {message}")]
    Unauthorized {
        /// The service's message.
        message: String,
    },
    /// 404: no such route, or no such resource in this store.
    #[error("not found: {message}")]
    NotFound {
        /// The service's message.
        message: String,
    },
    /// 409: an order already exists with this externalOrderId (from [`Orders::submit`](crate::Orders::submit):
    /// it exists, but the lookup by external id did not show it yet; submit again later).
    #[error("conflict: {message}")]
    Conflict {
        /// The service's message.
        message: String,
    },
    /// The externalOrderId is already used by another order: the service holds an order with this id
    /// whose line items or shipping address differ from the request. Nothing new was created or billed;
    /// the existing order is the one billed for this id. Use a new external id for a new order.
    #[error(
        "externalOrderId already used by order {} with different contents (nothing new was created): {}",
        existing.id,
        differences.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    ExternalIdReused {
        /// The order that holds the external id.
        existing: Box<Order>,
        /// What differs between the request and that order.
        differences: Vec<Difference>,
    },
    /// 429 after every allowed retry: the store's rate limit.
    #[error("rate limited{}", retry_after.map(|d| format!(" (retry after {} s)", d.as_secs())).unwrap_or_default())]
    RateLimited {
        /// The service's Retry-After.
        retry_after: Option<Duration>,
    },
    /// 5xx after every allowed retry.
    #[error("server error {status}: {message}")]
    Server {
        /// The HTTP status.
        status: u16,
        /// The service's message, if any.
        message: String,
    },
    /// Any other status the service answered with (for example 413).
    #[error("unexpected status {status}: {message}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The service's message, if any.
        message: String,
    },
    /// The request timed out.
    #[error("timed out{}", if *may_have_been_processed { " (the request may have been processed)" } else { "" })]
    Timeout {
        /// Whether the service may have processed the request (it was sent).
        may_have_been_processed: bool,
    },
    /// The connection failed or was reset.
    #[error("connection failed{}: {source}", if *may_have_been_processed { " (the request may have been processed)" } else { "" })]
    Transport {
        /// Whether the service may have processed the request.
        may_have_been_processed: bool,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// An answer came but could not be read or decoded (so the request was processed, or may have been).
    #[error("could not decode the response: {0}")]
    Decode(String),
    /// An argument was out of range (a page size outside 1..=100, a missing externalOrderId).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The environment does not configure a client ([`Client::from_env`](crate::Client::from_env)):
    /// names the variable, never shows the key.
    #[error("configuration: {0}")]
    Config(#[from] crate::config::ConfigError),
}

impl Error {
    /// The HTTP status the service answered with, if it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::BadRequest { .. } => Some(400),
            Error::Unauthorized { .. } => Some(401),
            Error::NotFound { .. } => Some(404),
            Error::Conflict { .. } | Error::ExternalIdReused { .. } => Some(409),
            Error::RateLimited { .. } => Some(429),
            Error::Server { status, .. } | Error::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether the same request may succeed later (429, 5xx, timeouts, connection failures). Whether it is
    /// *safe* to retry depends on the call: a create is only safe with an externalOrderId (see
    /// [`Orders::submit`](crate::Orders::submit)).
    pub fn is_retryable(&self) -> bool {
        self.outcome()
            .is_some_and(|outcome| retry::is_retryable(outcome, true))
    }

    /// What the failed attempt ended with, in the retry rule's terms; `None` when no attempt was
    /// answered or failed on the wire (a local refusal, an answer that could not be read).
    fn outcome(&self) -> Option<Outcome> {
        match self {
            Error::RateLimited { retry_after } => Some(Outcome::Status(429, *retry_after)),
            Error::Timeout {
                may_have_been_processed,
            }
            | Error::Transport {
                may_have_been_processed,
                ..
            } => Some(if *may_have_been_processed {
                Outcome::NoAnswer
            } else {
                Outcome::ConnectFailed
            }),
            other => other.status().map(|status| Outcome::Status(status, None)),
        }
    }

    /// Whether the request may have been processed although the call failed: it was sent and no
    /// definite refusal came back (a timeout or reset after sending, a 5xx, an answer that could not be
    /// read, a 409, an unexpected status). For an order, submit again with the same external id to learn
    /// the outcome; `false` means the service did not act on it (a 4xx refusal, a 429, a local check).
    pub fn may_have_been_processed(&self) -> bool {
        match self {
            Error::Timeout {
                may_have_been_processed,
            }
            | Error::Transport {
                may_have_been_processed,
                ..
            } => *may_have_been_processed,
            Error::Server { .. } | Error::Decode(_) | Error::Conflict { .. } => true,
            Error::Status { status, .. } => !(400..500).contains(status),
            _ => false,
        }
    }

    pub(crate) fn from_raw(error: progenitor_client::Error<types::Error>, sent: bool) -> Error {
        use progenitor_client::Error as Raw;
        match error {
            Raw::ErrorResponse(response) => {
                let status = response.status().as_u16();
                let retry_after = retry_after(response.headers());
                from_status(status, Some(response.into_inner().message), retry_after)
            }
            Raw::UnexpectedResponse(response) => {
                let status = response.status().as_u16();
                let retry_after = retry_after(response.headers());
                from_status(status, None, retry_after)
            }
            Raw::CommunicationError(source)
            | Raw::ResponseBodyError(source)
            | Raw::InvalidUpgrade(source) => from_transport(source, sent),
            Raw::InvalidResponsePayload(_, e) => Error::Decode(e.to_string()),
            Raw::InvalidRequest(message) | Raw::Custom(message) => Error::InvalidArgument(message),
        }
    }
}

pub(crate) fn from_transport(source: reqwest::Error, sent: bool) -> Error {
    // The URL carries ids and filter values (customer data): errors never show it.
    let source = source.without_url();
    // A connection that could not be made carried nothing; anything later may have reached the service.
    let may_have_been_processed = sent && !source.is_connect();
    if source.is_timeout() {
        Error::Timeout {
            may_have_been_processed,
        }
    } else if source.is_decode() {
        Error::Decode(source.to_string())
    } else {
        Error::Transport {
            may_have_been_processed,
            source,
        }
    }
}

/// The `Retry-After` of an answer, in seconds as the seed says; anything else (a date, a negative or
/// fractional number, a number beyond `u64`) is ignored. Never panics: any `u64` of seconds is a valid
/// `Duration`, and every use of it is capped or compared, never added to an instant unchecked.
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// The error of an answer with `status` and this body, whatever the body is (the service's envelope,
/// a proxy's HTML page, nothing): the status decides, the envelope's message is added when there is one.
pub(crate) fn from_answer(
    status: u16,
    body: Option<&[u8]>,
    retry_after: Option<Duration>,
) -> Error {
    let message = body
        .and_then(|bytes| serde_json::from_slice::<types::Error>(bytes).ok())
        .map(|envelope| envelope.message);
    from_status(status, message, retry_after)
}

fn from_status(
    status: u16,
    message: Option<types::ErrorMessage>,
    retry_after: Option<Duration>,
) -> Error {
    let messages = match message {
        Some(types::ErrorMessage::String(text)) => vec![text],
        Some(types::ErrorMessage::Array(list)) => list,
        None => Vec::new(),
    };
    let message = messages.join("; ");
    match status {
        400 => Error::BadRequest { messages },
        401 => Error::Unauthorized { message },
        404 => Error::NotFound { message },
        409 => Error::Conflict { message },
        429 => Error::RateLimited { retry_after },
        500..=599 => Error::Server { status, message },
        _ => Error::Status { status, message },
    }
}

/// The result of every client call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use proptest::prelude::*;
    use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

    use super::*;
    use crate::ratelimit::RateLimiter;
    use crate::retry::{Outcome, RetryPolicy, decide};

    proptest! {
        // Issue 10: `Retry-After: 18446744073709551615` panicked ("overflow when adding duration to
        // instant"). No header value may.
        #[test]
        fn no_retry_after_value_panics(value in ".{0,40}", seconds in any::<u64>()) {
            let limiter = RateLimiter::new();
            for text in [value.clone(), seconds.to_string()] {
                let mut headers = HeaderMap::new();
                if let Ok(header) = HeaderValue::from_str(&text) {
                    headers.insert(RETRY_AFTER, header);
                }
                let parsed = retry_after(&headers);
                limiter.pause_for(parsed.unwrap_or_default());
                let _ = from_answer(429, Some(text.as_bytes()), parsed).to_string();
                let outcome = Outcome::Status(429, parsed);
                let _ = decide(&RetryPolicy::default(), true, outcome, 1, Duration::ZERO);
            }
        }
    }

    #[test]
    fn an_answer_that_cannot_be_read_may_have_been_processed() {
        assert!(Error::Decode("truncated".into()).may_have_been_processed());
        assert!(from_answer(409, Some(b"<html>"), None).may_have_been_processed());
        assert!(matches!(
            from_answer(409, Some(b"<html>"), None),
            Error::Conflict { .. }
        ));
        assert!(!from_answer(400, None, None).may_have_been_processed());
        assert!(from_answer(302, None, None).may_have_been_processed());
    }
}
