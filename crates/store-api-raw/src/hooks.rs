//! The hand-written hooks of the generated client: the only behaviour in this crate that is not generated.
//!
//! progenitor ignores `securitySchemes` and adds an `api-version` header of its own, and its query encoding
//! percent-encodes the brackets and commas of `filter[field]=a,b`. [`Hooks`] is the generated client's
//! inner value; every generated call runs [`ClientHooks::pre`] (API key, header clean-up, query form) and
//! then [`ClientHooks::exec`], which sends the request with `reqwest`. The `impl ClientHooks` has to live
//! in this crate (the orphan rule), so its behaviour is configured through [`Hooks`].
//!
//! A client made with [`Hooks::capturing`] sends nothing: each generated call builds its request (path,
//! method, query, body, from the spec) and hands it to a [`Capture`]. That is how the ergonomic
//! `store-api` crate uses the generated code: as the one builder of its requests, which it then sends
//! through its own transport (rate limiting, retries, deadlines, the key), whose errors are its own
//! typed errors rather than a `reqwest::Error`.

use std::borrow::Borrow;
use std::sync::{Arc, Mutex, PoisonError};

use progenitor_client::{ClientHooks, ClientInfo, Error, OperationInfo};
use reqwest::header::{HeaderName, HeaderValue};

use crate::Client;
use crate::key::{ApiKey, KeyHandle};

/// Name of the header that carries the API key.
pub const API_KEY_HEADER: &str = "x-api-key";

/// The message of the [`Error::Custom`] a generated call of a [`Hooks::capturing`] client ends with,
/// once its request is in the [`Capture`].
pub const CAPTURED: &str = "the request was captured, not sent";

/// The generated client's inner value: the API key (behind a [`KeyHandle`], read at every request), or
/// a [`Capture`] that takes the requests instead of sending them.
#[derive(Clone, Debug)]
pub struct Hooks {
    key: KeyHandle,
    capture: Option<Capture>,
}

/// Where a [`Hooks::capturing`] client puts the request a generated call built. One capture per call:
/// it holds the last request only.
#[derive(Clone, Debug, Default)]
pub struct Capture(Arc<Mutex<Option<reqwest::Request>>>);

impl Capture {
    /// An empty capture.
    pub fn new() -> Capture {
        Capture::default()
    }

    /// The request captured, if a generated call got as far as building it.
    pub fn take(&self) -> Option<reqwest::Request> {
        // A poisoned lock still holds a whole request (it is only ever replaced).
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    fn put(&self, request: reqwest::Request) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(request);
    }
}

impl Hooks {
    /// Hooks that send `api_key` and execute requests directly with `reqwest`.
    pub fn new(api_key: ApiKey) -> Self {
        Self::with_key_handle(KeyHandle::from(api_key))
    }

    /// Hooks that send whatever key `key` holds when each request is prepared, so that
    /// [`KeyHandle::rotate`] takes effect from the next request on.
    pub fn with_key_handle(key: KeyHandle) -> Self {
        // The generated `Client::new` builds a reqwest client right after this, which panics under
        // `rustls` when no crypto provider is installed.
        crate::tls::install_crypto_provider();
        Self { key, capture: None }
    }

    /// Hooks that send nothing: every generated call prepares its request (without a key: whoever
    /// sends it adds one), puts it in `capture` and ends with [`Error::Custom`]`(`[`CAPTURED`]`)`.
    pub fn capturing(capture: Capture) -> Self {
        crate::tls::install_crypto_provider();
        Self {
            key: KeyHandle::new(""),
            capture: Some(capture),
        }
    }

    /// The API key the hooks send now.
    pub fn api_key(&self) -> ApiKey {
        self.key.current()
    }

    /// The handle the key is read from.
    pub fn key_handle(&self) -> &KeyHandle {
        &self.key
    }
}

impl ClientHooks<Hooks> for Client {
    async fn pre<E>(
        &self,
        request: &mut reqwest::Request,
        _info: &OperationInfo,
    ) -> Result<(), Error<E>> {
        let hooks = self.inner();
        if let Some(capture) = &hooks.capture {
            tidy(request);
            let placeholder =
                reqwest::Request::new(request.method().clone(), request.url().clone());
            capture.put(std::mem::replace(request, placeholder));
            return Err(Error::Custom(CAPTURED.to_owned()));
        }
        prepare(request, hooks.api_key())
            .map_err(|message| Error::InvalidRequest(message.to_owned()))
    }

    async fn exec(
        &self,
        request: reqwest::Request,
        _info: &OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        self.client().execute(request).await
    }
}

/// Puts a generated request into the form the service expects: the key in `X-API-Key` (marked
/// sensitive so HTTP debug output hides it), no `api-version` header (the version is in the path), and
/// literal brackets and commas in the query string.
/// `api_key` is an [`ApiKey`] or a reference to one.
pub fn prepare(
    request: &mut reqwest::Request,
    api_key: impl Borrow<ApiKey>,
) -> Result<(), &'static str> {
    tidy(request);
    set_api_key(request.headers_mut(), api_key.borrow())
}

/// [`prepare`] without the key: no `api-version` header, literal brackets and commas in the query.
pub fn tidy(request: &mut reqwest::Request) {
    request.headers_mut().remove("api-version");
    let url = request.url_mut();
    if let Some(query) = url.query() {
        let literal = literal_query(query);
        if literal != query {
            url.set_query(Some(&literal));
        }
    }
}

/// Puts `api_key` in the `X-API-Key` header of `headers` (replacing any), marked sensitive so HTTP
/// debug output hides it.
pub fn set_api_key(
    headers: &mut reqwest::header::HeaderMap,
    api_key: &ApiKey,
) -> Result<(), &'static str> {
    let mut key = HeaderValue::from_str(api_key.expose_secret())
        .map_err(|_| "the API key contains characters that cannot be sent in an HTTP header")?;
    key.set_sensitive(true);
    headers.insert(HeaderName::from_static(API_KEY_HEADER), key);
    Ok(())
}

/// Turns `filter%5Bstatus%5D=a%2Cb` back into `filter[status]=a,b`. Only these three escapes are undone:
/// brackets and commas are the syntax of the API's filters and sorts, and a value that itself contains
/// a `%` is sent as `%25`, so no other escape can be mistaken for one of these.
pub fn literal_query(query: &str) -> String {
    let mut out = String::with_capacity(query.len());
    let mut rest = query;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at..at + 3).unwrap_or(&rest[at..]);
        match escape.to_ascii_uppercase().as_str() {
            "%5B" => out.push('['),
            "%5D" => out.push(']'),
            "%2C" => out.push(','),
            _ => {
                out.push('%');
                rest = &rest[at + 1..];
                continue;
            }
        }
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bracket_and_comma_escapes_are_undone() {
        let cases = [
            (
                "filter%5Bstatus%5D=pending%2Con_hold",
                "filter[status]=pending,on_hold",
            ),
            ("sort%5bname%5d=asc", "sort[name]=asc"),
            (
                "filter%5BexternalOrderId%5D=a%25b%2520",
                "filter[externalOrderId]=a%25b%2520",
            ),
            ("page=2&limit=100", "page=2&limit=100"),
            ("odd=%", "odd=%"),
            ("odd=%5", "odd=%5"),
            ("", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(literal_query(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn every_request_is_prepared_with_the_key_the_handle_holds_then() {
        let handle = KeyHandle::new("csk_old");
        let hooks = Hooks::with_key_handle(handle.clone());
        let prepared = |hooks: &Hooks| {
            let url = "http://h/store-api/2026-08/stores/s/status";
            let mut request = reqwest::Request::new(reqwest::Method::GET, url.parse().unwrap());
            prepare(&mut request, hooks.api_key()).unwrap();
            request.headers()[API_KEY_HEADER].clone()
        };
        assert_eq!(prepared(&hooks), "csk_old");
        handle.rotate("csk_new");
        assert_eq!(prepared(&hooks.clone()), "csk_new");
        assert!(prepared(&hooks).is_sensitive());
    }

    #[tokio::test]
    async fn a_capturing_client_builds_the_request_and_sends_nothing() {
        let capture = Capture::new();
        // Port 9 (discard): were anything sent, the call would fail with a connection error instead.
        let client = Client::new(
            "http://127.0.0.1:9/store-api/2026-08",
            Hooks::capturing(capture.clone()),
        );
        let result = client
            .list_orders(
                "s 1",
                None,
                None,
                None,
                Some("pending,on_hold"),
                None,
                None,
                None,
                None,
            )
            .await;
        assert!(
            matches!(&result, Err(Error::Custom(message)) if message == CAPTURED),
            "{result:?}"
        );
        let request = capture.take().expect("the request was captured");
        assert_eq!(request.method(), reqwest::Method::GET);
        assert_eq!(
            request.url().as_str(),
            "http://127.0.0.1:9/store-api/2026-08/stores/s%201/orders?filter[status]=pending,on_hold"
        );
        assert!(request.headers().get("api-version").is_none());
        assert!(request.headers().get(API_KEY_HEADER).is_none());
        assert!(capture.take().is_none());
    }

    #[test]
    fn debug_never_shows_the_key() {
        let hooks = Hooks::new(ApiKey::new("sk_live_0123456789abcdef0123456789ab"));
        assert!(!format!("{hooks:?}").contains("0123456789"));
    }
}
