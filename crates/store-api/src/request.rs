//! The escape hatch: any request to the service, sent the way the client sends its own.

use reqwest::Method;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use store_api_raw::ApiKey;
use store_api_raw::contract::{OPERATIONS, VERSION_PREFIX};

use crate::error::{Error, Result};
use crate::handle::Client;
use crate::response::ApiResponse;
use crate::transport::{KeyChoice, Outgoing, Retries};

impl Client {
    /// Any request to the service, for what the typed methods do not cover (an endpoint newer than
    /// this crate, a query the typed queries cannot express). It takes the same path as every typed
    /// call: the current key from the [`key_handle`](Client::key_handle), the rate limiter, the
    /// [hooks](crate::hook::RequestHook) (under the operation of the spec the method and path reach,
    /// or `api`), the [timeout](crate::ClientBuilder::timeout) covering the body, the
    /// [size cap](crate::ClientBuilder::max_response_bytes), no request for another origin than the
    /// base URL's, no redirect followed, and the client's [retry policy](crate::RetryPolicy) (a `GET`
    /// is replayed after a 5xx or a timeout; any method after a 429 or a connection that could not be
    /// made, when nothing was processed).
    ///
    /// `path` is relative to the store (`/orders?limit=5` is
    /// `{base_url}/stores/{storeId}/orders?limit=5`), or absolute under the version prefix
    /// (`/store-api/2026-08/stores/{storeId}/status`), or a whole URL, which must have the base URL's
    /// origin (another is refused unsent: [`Error::Transport`], not processed). The query string is
    /// sent as written (`filter[status]=pending,on_hold`).
    ///
    /// Every answer the service gives comes back as an [`ApiResponse`], whatever its status; an error
    /// is a failure of the exchange itself (a timeout, a redirect, an answer over the size cap).
    ///
    /// ```no_run
    /// # async fn run(client: store_api::Client) -> Result<(), store_api::Error> {
    /// use store_api::hook::Method;
    ///
    /// let response = client
    ///     .request(Method::GET, "/orders?filter[status]=pending,on_hold&limit=5")
    ///     .send()
    ///     .await?;
    /// println!("{}", response.status());
    /// let page: serde_json::Value = response.json()?;
    ///
    /// let response = client
    ///     .request(Method::POST, "/artworks")
    ///     .json_body(r#"{"name":"Sun","image":{"url":"https://example.com/sun.png"}}"#)
    ///     .send()
    ///     .await?;
    /// assert!(response.is_success() || response.status() == 400);
    /// # Ok(())
    /// # }
    /// ```
    pub fn request(&self, method: Method, path: &str) -> ApiRequest<'_> {
        ApiRequest {
            client: self,
            method,
            path: path.to_owned(),
            body: None,
            headers: HeaderMap::new(),
            key: KeyChoice::Current,
            retries: Retries::ClientPolicy,
        }
    }
}

/// A request made with [`Client::request`]; [`send`](Self::send) sends it.
#[derive(Debug)]
#[must_use = "a request does nothing until it is sent"]
pub struct ApiRequest<'c> {
    client: &'c Client,
    method: Method,
    path: String,
    body: Option<Vec<u8>>,
    headers: HeaderMap,
    key: KeyChoice,
    retries: Retries,
}

impl ApiRequest<'_> {
    /// Sends `body` as the request's body, with `Content-Type: application/json` (the only type the
    /// API reads). It is sent as given: it is not checked to be JSON.
    pub fn json_body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Adds a header to the request (a second value of one name is added, not replaced); it replaces
    /// the header of that name the request would carry otherwise (`Accept`, `Content-Type`). The
    /// hooks see it. `X-API-Key` is never taken from here: the transport removes it and sets the
    /// key itself ([`api_key`](Self::api_key) chooses another).
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Sends the request once, whatever the client's [retry policy](crate::RetryPolicy): a 429, a
    /// 5xx or a timeout is what [`send`](Self::send) returns, never replayed. Everything else of the
    /// one request path still applies (the limiter, the hooks, the timeout, the size cap, the origin
    /// guard, the redirect refusal). For a check that must see the service's first answer
    /// (`store_api_conformance::probe`), or a request that must not be sent twice.
    pub fn single_attempt(mut self) -> Self {
        self.retries = Retries::SingleAttempt;
        self
    }

    /// Sends the request with `key` instead of the key the client's
    /// [`key_handle`](Client::key_handle) holds: to see how the service answers another store's key,
    /// or a key it cannot accept (`store_api_conformance::probe` asks for its 401 so). The key is
    /// handled as the client's own: set in `X-API-Key` after the hooks, which never see it, and never
    /// logged. The client's key handle is not changed.
    pub fn api_key(mut self, key: ApiKey) -> Self {
        self.key = KeyChoice::Given(key);
        self
    }

    /// Sends the request and reads the answer whole.
    pub async fn send(self) -> Result<ApiResponse> {
        let url = request_url(self.client.base_url(), self.client.store_id(), &self.path)?;
        let mut request = reqwest::Request::new(self.method, url);
        request.headers_mut().insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        );
        if let Some(body) = self.body {
            request
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            *request.body_mut() = Some(body.into());
        }
        for name in self.headers.keys() {
            request.headers_mut().remove(name);
        }
        for (name, value) in &self.headers {
            request.headers_mut().append(name, value.clone());
        }
        self.client
            .inner
            .transport
            .send(Outgoing::matched(request), &self.key, self.retries)
            .await
    }
}

/// The URL of `path`: relative to the store, absolute when it starts with the version prefix, or a
/// whole URL (the transport refuses another origin than the base URL's).
fn request_url(base_url: &str, store_id: &str, path: &str) -> Result<url::Url> {
    let invalid = |reason: String| Error::invalid_argument(format!("path: {reason}"));
    if path.contains("://") {
        return url::Url::parse(path).map_err(|e| invalid(format!("{path} is not a URL: {e}")));
    }
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    let bad_base =
        |e: &dyn std::fmt::Display| Error::invalid_argument(format!("bad base URL: {e}"));
    let origin = base_url.strip_suffix(VERSION_PREFIX).unwrap_or(base_url);
    let under_prefix = path
        .strip_prefix(VERSION_PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '?']));
    let text = if under_prefix {
        format!("{origin}{path}")
    } else {
        let mut store = url::Url::parse(base_url).map_err(|e| bad_base(&e))?;
        store
            .path_segments_mut()
            .map_err(|()| bad_base(&"it cannot hold a path"))?
            .pop_if_empty()
            .extend(store_prefix(store_id));
        format!("{}{path}", store.as_str())
    };
    url::Url::parse(&text).map_err(|e| invalid(format!("{path} does not form a URL: {e}")))
}

/// The segments of the store's own part of every path (`stores/{storeId}` in the spec), with the
/// store id in place of its parameter.
fn store_prefix(store_id: &str) -> Vec<&str> {
    // Every operation's path starts with the store's part, up to its first parameter.
    let template = OPERATIONS.first().map_or("", |op| op.path);
    let end = template.find('}').map_or(0, |at| at + 1);
    template[..end]
        .split('/')
        .filter(|segment| !segment.is_empty())
        .map(|segment| {
            if segment.starts_with('{') {
                store_id
            } else {
                segment
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::operation_of;

    const BASE: &str = "http://127.0.0.1:9/store-api/2026-08";

    #[test]
    fn paths_are_relative_to_the_store_or_absolute_under_the_version_prefix() {
        let cases = [
            (
                "/orders?limit=5",
                "/store-api/2026-08/stores/s1/orders?limit=5",
            ),
            ("orders", "/store-api/2026-08/stores/s1/orders"),
            ("/", "/store-api/2026-08/stores/s1/"),
            (
                "/store-api/2026-08/stores/other/status",
                "/store-api/2026-08/stores/other/status",
            ),
            (
                "/orders?filter[status]=pending,on_hold",
                "/store-api/2026-08/stores/s1/orders?filter[status]=pending,on_hold",
            ),
        ];
        for (path, expected) in cases {
            let url = request_url(BASE, "s1", path).unwrap();
            assert_eq!(
                &url.as_str()["http://127.0.0.1:9".len()..],
                expected,
                "{path}"
            );
        }
        // A whole URL is kept as given: the transport's origin guard decides.
        let elsewhere = request_url(BASE, "s1", "https://elsewhere.example/x").unwrap();
        assert_eq!(elsewhere.as_str(), "https://elsewhere.example/x");
    }

    #[test]
    fn a_path_of_the_spec_is_named_by_its_operation() {
        let cases = [
            ("GET", "/orders?limit=5", Some("list_orders")),
            ("POST", "/orders", Some("create_order")),
            ("GET", "/orders/ord_1", Some("get_order")),
            ("DELETE", "/orders/ord_1", None),
            ("GET", "/nowhere", None),
        ];
        for (method, path, expected) in cases {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let url = request_url(BASE, "s1", path).unwrap();
            assert_eq!(
                operation_of(&method, &url).map(|op| op.method_name),
                expected,
                "{path}"
            );
        }
    }
}
