//! The one answer type: an answer of the service, read whole.

use bytes::Bytes;
use reqwest::header::HeaderMap;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// An answer of the service, read whole (under the client's size cap and deadline): what
/// [`Client::request`](crate::Client::request) returns, and what every typed call decodes.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApiResponse {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl ApiResponse {
    pub(crate) fn new(status: u16, headers: HeaderMap, body: Bytes) -> ApiResponse {
        ApiResponse {
            status,
            headers,
            body,
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Whether the status is a success (2xx).
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The answer's headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body, as it came.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// The body, owned.
    pub fn into_body(self) -> Bytes {
        self.body
    }

    /// The body decoded from JSON as `T` ([`Error::Decode`] when it is not).
    pub fn json<T: DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_slice(&self.body).map_err(|e| Error::decode_from(e.to_string(), e))
    }
}
