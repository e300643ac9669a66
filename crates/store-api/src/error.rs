//! The one error type of the client.

use std::time::Duration;

use store_api_raw::types;

use crate::difference::Difference;
use crate::model::Order;
use crate::network::{BoxError, Failure};
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
    /// The service holds an order under this externalOrderId whose line items or shipping address
    /// differ from the request (the order was edited in the app, say, or the id was given to another
    /// order). That order is the one billed for this id, and this call placed nothing new. Sending the
    /// request again under a *new* id places a new order, billed in addition: do that only if a second
    /// order is what you want.
    #[error(
        "the order held under this externalOrderId ({}) differs from the request: {}; no new order was placed for this request (a new externalOrderId would place a new, billed order)",
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
        /// The service's message (empty when it sent none): not shown by `Display`, whose text is the
        /// client's; the emulator puts there why a wait cannot pass (its frozen clock).
        message: String,
    },
    /// A redirect (3xx), which is never followed: the Store API never redirects, so a proxy, a load
    /// balancer or a base URL that is not the service's answered, and following it would carry the API
    /// key (and an order's body) to the host it names. The request went no further than that answer.
    #[error("the answer was a redirect ({status}) to {}, which was not followed: the Store API never redirects (check the base URL, or a proxy on the way); the API key was not sent there", location.as_deref().unwrap_or("no Location"))]
    Redirect {
        /// The HTTP status (301, 302, 303, 307, 308…).
        status: u16,
        /// The `Location` it named, if any.
        location: Option<String>,
    },
    /// An answer the Store API itself never gives: a client-error status it does not send (403, 405,
    /// 408…), or one without its error envelope (a firewall's or a gateway's page). Something on the
    /// way answered, so whether the request reached the service is unknown: it may have been processed.
    #[error("status {status} came from something on the way (a proxy, a firewall, a gateway), not from the Store API{}", content_type.as_deref().map(|t| format!(" ({t})")).unwrap_or_default())]
    Intermediary {
        /// The HTTP status.
        status: u16,
        /// The answer's `Content-Type`, if any.
        content_type: Option<String>,
    },
    /// The answer's body was larger than the client reads
    /// ([`ClientBuilder::max_response_bytes`](crate::ClientBuilder::max_response_bytes)).
    #[error("the answer is larger than {limit} bytes and was not read further")]
    ResponseTooLarge {
        /// The limit, in bytes.
        limit: usize,
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
    /// The connection failed or was reset (or, never sent, the request was for another origin than
    /// the base URL's).
    #[error("connection failed{}: {source}", if *may_have_been_processed { " (the request may have been processed)" } else { "" })]
    Transport {
        /// Whether the service may have processed the request.
        may_have_been_processed: bool,
        /// The cause: reqwest's error, or the network's.
        #[source]
        source: BoxError,
    },
    /// The client's [`Network`](crate::network::Network) refused the request and always will
    /// ([`NetworkError::Refused`](crate::network::NetworkError::Refused)): a replay of recorded
    /// traffic that holds no answer for it, say. Nothing was sent and the request is never retried;
    /// downcast `source` to the network's own error for the details.
    #[error("the network refused the request (not sent): {source}")]
    Refused {
        /// The network's own error.
        #[source]
        source: BoxError,
    },
    /// An answer came but could not be read or decoded (so the request was processed, or may have been).
    #[error("could not decode the response: {message}")]
    Decode {
        /// What could not be decoded, and why.
        message: String,
        /// The decoder's own error, when there is one.
        #[source]
        source: Option<crate::network::BoxError>,
    },
    /// An argument was out of range (a page size outside 1..=100, a missing externalOrderId).
    #[error("invalid argument: {message}")]
    InvalidArgument {
        /// The argument (its field name first) and what is wrong with it.
        message: String,
        /// The parser's or builder's own error, when there is one.
        #[source]
        source: Option<crate::network::BoxError>,
    },
    /// The base URL is `http://` to a host that is not loopback: every request would carry the API key
    /// (and an order's names and addresses) across the network in clear text. Refused by
    /// [`ClientBuilder::build`](crate::ClientBuilder::build) unless
    /// [`ClientBuilder::allow_insecure_http`](crate::ClientBuilder::allow_insecure_http) says so;
    /// nothing was sent.
    #[error(
        "base_url: http:// to {host}, which is not a loopback address, would send the API key in clear text; use https (or, on a network you trust, allow_insecure_http(true))"
    )]
    InsecureBaseUrl {
        /// The base URL's host.
        host: String,
    },
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
            Error::Server { status, .. }
            | Error::Status { status, .. }
            | Error::Redirect { status, .. }
            | Error::Intermediary { status, .. } => Some(*status),
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
            Error::RateLimited { retry_after, .. } => Some(Outcome::Status(429, *retry_after)),
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
            Error::Server { .. }
            | Error::Decode { .. }
            | Error::Conflict { .. }
            | Error::Redirect { .. }
            | Error::Intermediary { .. }
            | Error::ResponseTooLarge { .. } => true,
            Error::Status { status, .. } => !(400..500).contains(status),
            _ => false,
        }
    }
}

/// The crate's error for a failure of a request handed to the transport.
pub(crate) fn from_failure(failure: Failure) -> Error {
    match failure {
        Failure::Redirected { status, location } => Error::Redirect { status, location },
        Failure::TooLarge { limit } => Error::ResponseTooLarge { limit },
        Failure::Deadline { .. } => Error::Timeout {
            may_have_been_processed: true,
        },
        failure @ (Failure::NotConnected(_) | Failure::Broken(_) | Failure::OffBase { .. }) => {
            Error::Transport {
                may_have_been_processed: matches!(failure, Failure::Broken(_)),
                source: chain(&failure).into(),
            }
        }
    }
}

/// The error of a failed exchange reported by reqwest (the default network's, or reading a body).
pub(crate) fn from_reqwest(source: reqwest::Error) -> Error {
    // The URL carries ids and filter values (customer data): errors never show it.
    let source = source.without_url();
    // A connection that could not be made carried nothing; anything later may have reached the service.
    let may_have_been_processed = !source.is_connect();
    if source.is_timeout() {
        Error::Timeout {
            may_have_been_processed,
        }
    } else if source.is_decode() {
        Error::decode_from(chain(&source), source)
    } else {
        Error::Transport {
            may_have_been_processed,
            source: Box::new(source),
        }
    }
}

/// `error` and every cause under it, `: `-separated (a reqwest body error says only "error decoding
/// response body"; what broke is in its sources).
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

impl Error {
    /// An [`Error::InvalidArgument`] with no underlying error.
    pub(crate) fn invalid_argument(message: impl Into<String>) -> Error {
        Error::InvalidArgument {
            message: message.into(),
            source: None,
        }
    }

    /// An [`Error::InvalidArgument`] caused by `source` (a URL or certificate that did not parse).
    pub(crate) fn invalid_argument_from(
        message: impl Into<String>,
        source: impl Into<crate::network::BoxError>,
    ) -> Error {
        Error::InvalidArgument {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// An [`Error::Decode`] with no underlying error.
    pub(crate) fn decode(message: impl Into<String>) -> Error {
        Error::Decode {
            message: message.into(),
            source: None,
        }
    }

    /// An [`Error::Decode`] caused by `source` (the decoder's error).
    pub(crate) fn decode_from(
        message: impl Into<String>,
        source: impl Into<crate::network::BoxError>,
    ) -> Error {
        Error::Decode {
            message: message.into(),
            source: Some(source.into()),
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

/// The error of an answer with `status`, these headers and this body, whatever the body is (the
/// service's envelope, a proxy's HTML page, nothing). 409, 429 and 5xx are decided by the status alone;
/// another client error is the service's refusal only with the service's envelope (its `statusCode` the
/// answer's status), and an answer from something on the way ([`Error::Intermediary`]) otherwise.
pub(crate) fn from_answer(
    status: u16,
    headers: &reqwest::header::HeaderMap,
    body: Option<&[u8]>,
) -> Error {
    let envelope = body
        .and_then(|bytes| serde_json::from_slice::<types::Error>(bytes).ok())
        .filter(|envelope| envelope.status_code == i64::from(status));
    match (status, envelope) {
        (409 | 429 | 500..=599, envelope) => from_status(
            status,
            envelope.map(|envelope| envelope.message),
            retry_after(headers),
        ),
        (400..=499, None) => Error::Intermediary {
            status,
            content_type: content_type(headers),
        },
        (_, envelope) => from_status(status, envelope.map(|envelope| envelope.message), None),
    }
}

/// Whether an answer is the service's own definite refusal: a client error it sends, with its envelope.
/// Nothing was processed; an order may still exist from an earlier attempt.
pub(crate) fn is_service_refusal(error: &Error) -> bool {
    matches!(
        error,
        Error::BadRequest { .. } | Error::Unauthorized { .. } | Error::NotFound { .. }
    ) || matches!(error, Error::Status { status, .. } if (400..500).contains(status))
}

fn content_type(headers: &reqwest::header::HeaderMap) -> Option<String> {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
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
        429 => Error::RateLimited {
            retry_after,
            message,
        },
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
                let _ = from_answer(429, &headers, Some(text.as_bytes())).to_string();
                let outcome = Outcome::Status(429, parsed);
                let _ = decide(&RetryPolicy::default(), true, outcome, 1, Duration::ZERO);
            }
        }
    }

    #[test]
    fn an_answer_that_cannot_be_read_may_have_been_processed() {
        let none = HeaderMap::new();
        assert!(Error::decode("truncated").may_have_been_processed());
        assert!(from_answer(409, &none, Some(b"<html>")).may_have_been_processed());
        assert!(matches!(
            from_answer(409, &none, Some(b"<html>")),
            Error::Conflict { .. }
        ));
        let refusal = br#"{"message":["lineItems.0.quantity must not be less than 1"],"error":"Bad Request","statusCode":400}"#;
        assert!(!from_answer(400, &none, Some(refusal)).may_have_been_processed());
        assert!(is_service_refusal(&from_answer(400, &none, Some(refusal))));
    }

    // Issue 22, defect 6: the advice to use a new externalOrderId places the order a second time.
    #[test]
    fn a_reused_external_id_says_what_is_held_and_what_a_new_id_would_do() {
        let existing = Order::new("ord_0042".into());
        let error = Error::ExternalIdReused {
            existing: Box::new(existing),
            differences: Vec::new(),
        };
        let text = error.to_string();
        assert!(text.contains("ord_0042"), "{text}");
        assert!(
            text.contains("a new externalOrderId would place a new, billed order"),
            "{text}"
        );
        assert!(!text.to_lowercase().contains("use a new"), "{text}");
        assert!(!error.may_have_been_processed());
    }

    #[test]
    fn a_client_error_without_the_services_envelope_came_from_something_on_the_way() {
        let mut html = HeaderMap::new();
        html.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("text/html"),
        );
        let page = b"<html><body>Request blocked</body></html>";
        for status in [400, 403, 404, 408, 413] {
            let error = from_answer(status, &html, Some(page));
            assert!(
                matches!(error, Error::Intermediary { status: s, .. } if s == status),
                "{status}: {error:?}"
            );
            assert!(error.may_have_been_processed(), "{status}");
            assert!(!is_service_refusal(&error), "{status}");
            assert!(error.to_string().contains("text/html"), "{error}");
        }
        // The envelope of another status is not this answer's.
        let other = br#"{"message":"Order not found","error":"Not Found","statusCode":404}"#;
        assert!(matches!(
            from_answer(403, &html, Some(other)),
            Error::Intermediary { .. }
        ));
        assert!(matches!(
            from_answer(404, &html, Some(other)),
            Error::NotFound { .. }
        ));
    }
}
