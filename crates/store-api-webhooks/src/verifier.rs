//! Checks deliveries against a store's key (or the keys of a rotation window, or the live key of a
//! `KeyHandle`) and reads the event.

use std::fmt;
use std::sync::Arc;

use hmac::Mac;
use http::HeaderMap;

use crate::error::{PayloadError, WebhookError};
use crate::event::Event;
use crate::signature::{HmacSha256, SIGNATURE_HEADER, Signature, keyed_mac};
use crate::telemetry;
use store_api_raw::KeyHandle;

/// Largest body a [`Verifier`] accepts unless told otherwise: 1 MiB, far above a ~300-byte event.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// Verifies the `X-Service-Signature` of deliveries and parses their events.
///
/// Holds one key, or several during a key rotation: the service switches to the new key at once, but a
/// delivery already being retried may still carry a signature made with the old one. Keep both with
/// [`Verifier::with_keys`] (or [`Verifier::rotated`]) until those retries are over, then drop the old one.
///
/// Or it follows a [`KeyHandle`] ([`Verifier::from_key_handle`]): every delivery is checked with the
/// key the handle holds at that moment, the same handle a `store_api::Client` sends, so one
/// [`KeyHandle::rotate`] switches both, with no overlap (the seed: rotation is effective at once).
///
/// Cheap to clone (the keys are shared). `Debug` shows how many keys it holds, never the keys.
#[derive(Clone)]
pub struct Verifier {
    keys: Arc<[SigningKey]>,
    /// When set, the only key, read at each delivery (`keys` is then empty).
    live: Option<KeyHandle>,
    max_body_bytes: usize,
}

/// A key, kept as an HMAC already keyed with it, so verifying does not rehash the key.
#[derive(Clone)]
struct SigningKey {
    mac: HmacSha256,
    key: store_api_raw::ApiKey,
}

impl Verifier {
    /// A verifier for the store API key `key`.
    ///
    /// An empty key (an unset environment variable) is refused: such a verifier answers every delivery
    /// with [`WebhookError::EmptyKey`], never with an event. Use [`Verifier::try_new`] to learn it at
    /// start-up.
    pub fn new(key: impl Into<String>) -> Self {
        Self::with_keys([key])
    }

    /// Like [`Verifier::new`], but an empty key is an error now rather than at each delivery.
    ///
    /// ```
    /// use store_api_webhooks::{Verifier, WebhookError};
    /// assert!(matches!(Verifier::try_new(""), Err(WebhookError::EmptyKey)));
    /// assert!(Verifier::try_new("key").is_ok());
    /// ```
    pub fn try_new(key: impl Into<String>) -> Result<Self, WebhookError> {
        let verifier = Self::new(key);
        if verifier.keys.is_empty() {
            Err(WebhookError::EmptyKey)
        } else {
            Ok(verifier)
        }
    }

    /// A verifier that accepts a signature made with any of `keys`, the current one first. Empty keys
    /// are left out; with no key left, every delivery is refused with [`WebhookError::EmptyKey`].
    pub fn with_keys<K: Into<String>>(keys: impl IntoIterator<Item = K>) -> Self {
        let keys = keys
            .into_iter()
            .map(Into::into)
            .filter(|key: &String| !key.is_empty())
            .map(|key| SigningKey {
                mac: keyed_mac(&key),
                key: store_api_raw::ApiKey::new(key),
            })
            .collect();
        Self {
            keys,
            live: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }

    /// A verifier that checks each delivery with the key `handle` holds when the delivery arrives, and
    /// only that key. Share the handle with the client (`store_api::Client::key_handle`) so one
    /// [`KeyHandle::rotate`] switches outbound calls and verification together. An empty key refuses
    /// deliveries with [`WebhookError::EmptyKey`].
    ///
    /// ```
    /// use store_api_raw::KeyHandle; // also `store_api::KeyHandle`
    /// use store_api_webhooks::{Verifier, WebhookError, sign};
    ///
    /// let body = br#"{"id":"evt_1","storeId":"store_1","topic":"orders_create","data":{"id":"ord_1"}}"#;
    /// let handle = KeyHandle::new("old key");
    /// let verifier = Verifier::from_key_handle(handle.clone());
    /// assert!(verifier.verify(&sign("old key", body), body).is_ok());
    ///
    /// handle.rotate("new key");
    /// assert!(verifier.verify(&sign("new key", body), body).is_ok());
    /// let old = verifier.verify(&sign("old key", body), body);
    /// assert!(matches!(old, Err(WebhookError::SignatureMismatch)));
    /// ```
    pub fn from_key_handle(handle: KeyHandle) -> Self {
        Self {
            keys: Arc::from(Vec::new()),
            live: Some(handle),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }

    /// A verifier that follows `client`'s key: [`Verifier::from_key_handle`] with
    /// `client.key_handle()`, so rotating the client's key rotates this verifier's too.
    #[cfg(feature = "client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client")))]
    pub fn for_client(client: &store_api::Client) -> Self {
        Self::from_key_handle(client.key_handle().clone())
    }

    /// The handle this verifier reads its key from, if it was built with
    /// [`Verifier::from_key_handle`].
    pub fn key_handle(&self) -> Option<&KeyHandle> {
        self.live.as_ref()
    }

    /// This verifier after a rotation to `new_key`: accepts the new key and the current one (the first of
    /// this verifier, or its handle's key now), drops any older. The result holds fixed keys.
    pub fn rotated(&self, new_key: impl Into<String>) -> Self {
        let mut keys = vec![new_key.into()];
        match &self.live {
            Some(handle) => keys.push(handle.current().expose_secret().to_owned()),
            None => keys.extend(self.keys.first().map(|k| k.key.expose_secret().to_owned())),
        }
        Self::with_keys(keys).with_max_body_bytes(self.max_body_bytes)
    }

    /// Sets the largest body accepted, in bytes (default [`DEFAULT_MAX_BODY_BYTES`]).
    pub fn with_max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body_bytes = limit;
        self
    }

    /// The largest body accepted, in bytes.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// How many keys this verifier accepts (with a key handle: 1, or 0 while it holds an empty key).
    pub fn key_count(&self) -> usize {
        match &self.live {
            Some(handle) => usize::from(!handle.current().expose_secret().is_empty()),
            None => self.keys.len(),
        }
    }

    /// Checks `signature` (the `X-Service-Signature` value) against the exact `raw_body`, then parses the
    /// event. The body is not parsed unless the signature checks out.
    ///
    /// ```
    /// use store_api_webhooks::{Topic, Verifier, WebhookError, sign};
    ///
    /// let body = br#"{"id":"evt_1","storeId":"store_1","topic":"orders_create","data":{"id":"ord_1"}}"#;
    /// let verifier = Verifier::new("key");
    ///
    /// let event = verifier.verify(&sign("key", body), body)?;
    /// assert_eq!(event.topic, Topic::OrdersCreate);
    ///
    /// let forged = verifier.verify(&sign("another key", body), body);
    /// assert!(matches!(forged, Err(WebhookError::SignatureMismatch)));
    /// # Ok::<(), WebhookError>(())
    /// ```
    ///
    /// Opens the delivery span `store_api.webhooks.delivery` (with its `store_api.webhooks.verify` step);
    /// [`process_once`](crate::dedupe::process_once) called with the event's id in the same task goes
    /// on with it.
    pub fn verify(&self, signature: &str, raw_body: &[u8]) -> Result<Event, WebhookError> {
        let delivery = telemetry::delivery_span();
        let result = telemetry::verify_span(&delivery).in_scope(|| {
            self.verify_signature(signature, raw_body)?;
            parse(raw_body)
        });
        telemetry::verified(delivery, result)
    }

    /// Like [`Verifier::verify`], taking the signature from the request's headers (`HeaderMap` is the
    /// `http` crate's, the same type as `axum::http::HeaderMap`). Only the first `X-Service-Signature`
    /// value is read. The delivery span is opened as by [`Verifier::verify`].
    pub fn verify_headers(
        &self,
        headers: &HeaderMap,
        raw_body: &[u8],
    ) -> Result<Event, WebhookError> {
        let delivery = telemetry::delivery_span();
        let result = telemetry::verify_span(&delivery).in_scope(|| {
            let signature = signature_from_headers(headers)?;
            self.check_body_size(raw_body.len())?;
            self.check(&signature, raw_body)?;
            parse(raw_body)
        });
        telemetry::verified(delivery, result)
    }

    /// Checks `signature` against `raw_body` without parsing the body.
    ///
    /// The comparison is constant-time (`hmac`'s `verify_slice`). Accepted forms: 64 hex digits in either
    /// case, or the standard base64 of the 32 bytes, optionally after `sha256=`, with surrounding
    /// whitespace ignored.
    pub fn verify_signature(&self, signature: &str, raw_body: &[u8]) -> Result<(), WebhookError> {
        let signature = Signature::parse(signature)?;
        self.check_body_size(raw_body.len())?;
        self.check(&signature, raw_body)
    }

    /// Refuses a body (or an announced `Content-Length`) over the limit.
    pub(crate) fn check_body_size(&self, length: usize) -> Result<(), WebhookError> {
        if length > self.max_body_bytes {
            return Err(WebhookError::BodyTooLarge {
                limit: self.max_body_bytes,
            });
        }
        Ok(())
    }

    /// Whether any key signed `raw_body` with `signature`.
    pub(crate) fn check(&self, signature: &Signature, raw_body: &[u8]) -> Result<(), WebhookError> {
        if let Some(handle) = &self.live {
            // Keyed per delivery: two HMAC blocks, next to the body's own hashing.
            let key = handle.current();
            if key.expose_secret().is_empty() {
                return Err(WebhookError::EmptyKey);
            }
            return keyed_mac(key.expose_secret())
                .chain_update(raw_body)
                .verify_slice(signature.as_bytes())
                .map_err(|_| WebhookError::SignatureMismatch);
        }
        if self.keys.is_empty() {
            return Err(WebhookError::EmptyKey);
        }
        // Every key is tried even after a match would be found, so timing does not tell which key matched.
        let matched = self.keys.iter().fold(false, |matched, key| {
            let ok = key
                .mac
                .clone()
                .chain_update(raw_body)
                .verify_slice(signature.as_bytes())
                .is_ok();
            matched | ok
        });
        if matched {
            Ok(())
        } else {
            Err(WebhookError::SignatureMismatch)
        }
    }
}

/// The decoded `X-Service-Signature` of a request.
pub(crate) fn signature_from_headers(headers: &HeaderMap) -> Result<Signature, WebhookError> {
    let value = headers
        .get(SIGNATURE_HEADER)
        .ok_or(WebhookError::MissingSignature)?;
    let value = value
        .to_str()
        .map_err(|_| WebhookError::MalformedSignature)?;
    Signature::parse(value)
}

/// Reads a verified body as an event.
pub(crate) fn parse(raw_body: &[u8]) -> Result<Event, WebhookError> {
    serde_json::from_slice(raw_body)
        .map_err(|error| WebhookError::MalformedPayload(PayloadError::from(error)))
}

impl fmt::Debug for Verifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verifier")
            .field("keys", &self.key_count())
            .field("key_handle", &self.live.is_some())
            .field("max_body_bytes", &self.max_body_bytes)
            .finish()
    }
}
