//! The API key and its shared, swappable handle. Kept apart from the client so that a webhook receiver can sign and verify with it
//! without building an HTTP client (the crate's `client` feature off).

use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};

/// The length of the service's keys: "a fixed brand prefix, 36 characters in total" (the seed's
/// Authentication section). Clients treat a key as opaque and never check it; this is what redaction
/// looks for (`store-api-cassette`) and what the emulator makes.
pub const KEY_LENGTH: usize = 36;

/// The brand prefix the emulator's keys carry (`csk_`), which the seed does not name: what redaction
/// looks for before it has seen a key of the service's own brand.
pub const KEY_BRAND_PREFIX: &str = "csk_";

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

/// A shared, swappable API key: the one place a key rotation is made.
///
/// Cheap to clone; clones share the key. A `store_api::Client` (and its clones) reads it before every
/// request and a `store_api_webhooks::Verifier` built on it checks every delivery with it, so
/// [`KeyHandle::rotate`] switches outbound calls and webhook verification together, at once, with no
/// overlap (as the service does). `Debug` shows `KeyHandle(<redacted>)`.
///
/// ```
/// use store_api_raw::{ApiKey, KeyHandle};
///
/// let handle = KeyHandle::new("csk_old");
/// let shared = handle.clone();
/// handle.rotate("csk_new");
/// assert_eq!(shared.current(), ApiKey::new("csk_new"));
/// assert_eq!(format!("{shared:?}"), "KeyHandle(<redacted>)");
/// ```
#[derive(Clone)]
pub struct KeyHandle(Arc<RwLock<ApiKey>>);

impl KeyHandle {
    /// A handle holding `key`, exactly as the app shows it.
    pub fn new(key: impl Into<String>) -> Self {
        Self::from(ApiKey::new(key))
    }

    /// The key now (a cheap clone: the text itself is shared).
    pub fn current(&self) -> ApiKey {
        // A writer cannot panic half-way through replacing an `Arc`, so a poisoned lock still holds a
        // whole key.
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the key for every holder of this handle: requests sent and deliveries checked after
    /// this call use `new_key` only.
    pub fn rotate(&self, new_key: impl Into<String>) {
        let new_key = ApiKey::new(new_key);
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = new_key;
    }

    /// Whether `other` is a clone of this handle (shares its key), rather than a handle that happens to
    /// hold the same key.
    pub fn same_handle(&self, other: &KeyHandle) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl From<ApiKey> for KeyHandle {
    fn from(key: ApiKey) -> Self {
        Self(Arc::new(RwLock::new(key)))
    }
}

impl fmt::Debug for KeyHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyHandle(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_send_sync_and_never_show_the_key() {
        fn check<T: Send + Sync + Clone>() {}
        check::<KeyHandle>();
        let handle = KeyHandle::new("csk_0123456789abcdef");
        handle.rotate("csk_fedcba9876543210");
        assert!(!format!("{handle:?}").contains("543210"));
        assert!(handle.same_handle(&handle.clone()));
        assert!(!handle.same_handle(&KeyHandle::new("csk_fedcba9876543210")));
    }
}
