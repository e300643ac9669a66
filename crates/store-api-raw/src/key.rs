//! The API key type. Kept apart from the client so that a webhook receiver can sign and verify with it
//! without building an HTTP client (the crate's `client` feature off).

use std::fmt;
use std::sync::Arc;

/// A store's API key. Opaque: never validated, parsed or printed (`Debug` shows `ApiKey(<redacted>)`).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(Arc<str>);

impl ApiKey {
    /// Wraps a key exactly as the app shows it.
    pub fn new(key: impl Into<String>) -> Self {
        Self(Arc::from(key.into()))
    }

    /// The key itself, for the one place that must send or sign with it.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}
