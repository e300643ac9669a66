//! The service's error answers: the envelope `{message, error, statusCode}` (429 without `error`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use store_api_raw::types;

/// An error answer of the emulated service.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ApiError {
    /// 400 with one message (a business rule, malformed JSON).
    BadRequest(String),
    /// 400 with a message array naming field paths (validation).
    Invalid(Vec<String>),
    /// 401 with one of the two messages of the seed.
    Unauthorized(&'static str),
    /// 403: a control request for a host that is not loopback, or from another site's web page.
    Forbidden(String),
    /// 404 with the resource's own message, or `Cannot GET <path>`.
    NotFound(String),
    /// 409 (an order with this external id exists).
    Conflict(String),
    /// 413: the body is larger than the documented limit.
    PayloadTooLarge,
    /// 415: a control request's body is not declared as JSON.
    UnsupportedMediaType(String),
    /// 429: nothing was processed; retry after this many seconds. `frozen`: the emulator's clock moves
    /// only when advanced (deterministic mode), so the wait never passes on its own, and the message
    /// says so and how to advance it.
    TooManyRequests { retry_after_secs: u64, frozen: bool },
}

pub(crate) const INVALID_API_KEY: &str = "Invalid API key";
pub(crate) const STORE_NOT_ACTIVE: &str = "The store is not active";
/// The service's 429 message.
const TOO_MANY_REQUESTS: &str = "Too many requests; retry after the time given in Retry-After";

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) | Self::Invalid(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    /// The envelope, built from the spec's generated `Error` type so it cannot drift from the spec.
    pub fn body(&self) -> types::Error {
        let status = self.status();
        let message = match self {
            Self::BadRequest(text)
            | Self::Forbidden(text)
            | Self::NotFound(text)
            | Self::Conflict(text)
            | Self::UnsupportedMediaType(text) => types::ErrorMessage::String(text.clone()),
            Self::Invalid(list) => types::ErrorMessage::Array(list.clone()),
            Self::Unauthorized(text) => types::ErrorMessage::String((*text).to_owned()),
            Self::PayloadTooLarge => types::ErrorMessage::String(format!(
                "Request body is larger than the limit of {} bytes",
                store_api_raw::contract::MAX_BODY_BYTES
            )),
            Self::TooManyRequests {
                retry_after_secs,
                frozen,
            } => types::ErrorMessage::String(if *frozen {
                format!(
                    "{TOO_MANY_REQUESTS} (emulator: its clock is frozen in deterministic mode and moves only when advanced, so this wait never passes on its own; advance it with POST /_emulator/clock/advance {{\"ms\": {}}})",
                    retry_after_secs.max(&1).saturating_mul(1000)
                )
            } else {
                TOO_MANY_REQUESTS.into()
            }),
        };
        let error = match self {
            Self::TooManyRequests { .. } => None,
            _ => status.canonical_reason().map(str::to_owned),
        };
        let mut body = types::Error::new(message, i64::from(status.as_u16()));
        body.error = error;
        body
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&self.body()).unwrap_or_default();
        let mut response = (
            self.status(),
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        if let Self::TooManyRequests {
            retry_after_secs, ..
        } = self
        {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
        }
        response
    }
}
