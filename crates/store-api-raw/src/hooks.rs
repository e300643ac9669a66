//! The hand-written hooks of the generated client: the only behaviour in this crate that is not generated.
//!
//! progenitor ignores `securitySchemes` and adds an `api-version` header of its own, and its query encoding
//! percent-encodes the brackets and commas of `filter[field]=a,b`. [`Hooks`] is the generated client's
//! inner value; every generated call runs [`ClientHooks::pre`] (API key, header clean-up, query form) and
//! then [`ClientHooks::exec`], which hands the request to a [`Transport`] when one is plugged in. That is
//! where the ergonomic `store-api` crate adds rate limiting and retries. The `impl ClientHooks` has to live
//! in this crate (the orphan rule), so its behaviour is configured through [`Hooks`].

use std::borrow::Borrow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use progenitor_client::{ClientHooks, ClientInfo, Error, OperationInfo};
use reqwest::header::{HeaderName, HeaderValue};

use crate::Client;
use crate::key::{ApiKey, KeyHandle};

/// Name of the header that carries the API key.
pub const API_KEY_HEADER: &str = "x-api-key";

/// A boxed future returned by [`Transport::execute`].
pub type TransportFuture<'a> =
    Pin<Box<dyn Future<Output = reqwest::Result<reqwest::Response>> + Send + 'a>>;

/// Executes the requests of the generated client. Implemented by the ergonomic crate (rate limiting,
/// retries, tracing); without one, requests go straight to `reqwest`.
pub trait Transport: Send + Sync + fmt::Debug {
    /// Sends `request` with `client`. `operation_id` is the snake_case operation id (`list_orders`).
    fn execute<'a>(
        &'a self,
        client: &'a reqwest::Client,
        request: reqwest::Request,
        operation_id: &'static str,
    ) -> TransportFuture<'a>;
}

/// The generated client's inner value: the API key (behind a [`KeyHandle`], read at every request) and
/// an optional [`Transport`].
#[derive(Clone, Debug)]
pub struct Hooks {
    key: KeyHandle,
    transport: Option<Arc<dyn Transport>>,
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
        Self {
            key,
            transport: None,
        }
    }

    /// Routes every request through `transport`.
    pub fn with_transport(mut self, transport: Arc<dyn Transport>) -> Self {
        self.transport = Some(transport);
        self
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
        prepare(request, self.inner().api_key())
            .map_err(|message| Error::InvalidRequest(message.to_owned()))
    }

    async fn exec(
        &self,
        request: reqwest::Request,
        info: &OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        match &self.inner().transport {
            Some(transport) => {
                transport
                    .execute(self.client(), request, info.operation_id)
                    .await
            }
            None => self.client().execute(request).await,
        }
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
    let headers = request.headers_mut();
    headers.remove("api-version");
    set_api_key(headers, api_key.borrow())?;
    let url = request.url_mut();
    if let Some(query) = url.query() {
        let literal = literal_query(query);
        if literal != query {
            url.set_query(Some(&literal));
        }
    }
    Ok(())
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

    #[test]
    fn debug_never_shows_the_key() {
        let hooks = Hooks::new(ApiKey::new("sk_live_0123456789abcdef0123456789ab"));
        assert!(!format!("{hooks:?}").contains("0123456789"));
    }
}
