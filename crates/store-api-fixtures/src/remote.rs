//! The control plane of an emulator running in another process, over HTTP: what `store-api emulator
//! trigger` and `store-api orders watch --advance` use. In process, [`Emulator`](crate::Emulator)'s
//! methods do the same without HTTP.

use reqwest::Method;
use serde_json::Value;
use url::Url;

use crate::control::StoreCredentials;
use crate::emulator::ControlError;
use crate::server::API_PREFIX;

/// Why a control request to a remote emulator failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The base URL is not an http(s) URL.
    #[error("bad emulator URL {0}")]
    BadUrl(String),
    /// Nothing answered (connection refused, timeout).
    #[error("the emulator at {origin} did not answer: {reason}")]
    Unreachable {
        /// The emulator's origin.
        origin: String,
        /// What failed.
        reason: String,
    },
    /// The server answered, but with the error envelope.
    #[error(transparent)]
    Refused(#[from] ControlError),
}

/// A client of a remote emulator's `/_emulator` endpoints.
///
/// ```no_run
/// # async fn run() -> Result<(), store_api_fixtures::RemoteError> {
/// let emulator = store_api_fixtures::RemoteEmulator::new("http://127.0.0.1:8080")?;
/// let order = emulator.advance_order("store_alpha", "ord_0123456789abcdef").await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct RemoteEmulator {
    http: reqwest::Client,
    origin: Url,
}

impl RemoteEmulator {
    /// The emulator at `base_url`: its origin, or the Store API base URL (with the version prefix).
    pub fn new(base_url: &str) -> Result<RemoteEmulator, RemoteError> {
        let trimmed = base_url.trim_end_matches('/');
        let origin = trimmed.strip_suffix(API_PREFIX).unwrap_or(trimmed);
        let origin = Url::parse(origin)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https") && !url.cannot_be_a_base())
            .ok_or_else(|| RemoteError::BadUrl(base_url.to_owned()))?;
        // The control endpoints are the emulator's, on this machine: never through a proxy. reqwest
        // panics when it builds a client before a rustls provider is installed.
        store_api_raw::tls::install_crypto_provider();
        let http = reqwest::Client::builder().no_proxy().build().map_err(|e| {
            RemoteError::Unreachable {
                origin: origin.to_string(),
                reason: e.to_string(),
            }
        })?;
        Ok(RemoteEmulator { http, origin })
    }

    /// The emulator's origin (`http://127.0.0.1:8080`).
    pub fn origin(&self) -> String {
        self.origin.origin().ascii_serialization()
    }

    /// Every store with its current key and whether it is active (`GET /_emulator/stores`): what
    /// `store-api login --from-emulator` keeps in a profile.
    pub async fn stores(&self) -> Result<Vec<StoreCredentials>, RemoteError> {
        let answer = self.call(Method::GET, &["stores"], None).await?;
        serde_json::from_value(answer).map_err(|e| RemoteError::Unreachable {
            origin: self.origin(),
            reason: format!("GET /_emulator/stores answered an unexpected list: {e}"),
        })
    }

    /// Moves an order one rung up the fulfillment ladder (`orders_update`).
    pub async fn advance_order(
        &self,
        store_id: &str,
        order_id: &str,
    ) -> Result<Value, RemoteError> {
        let path = ["stores", store_id, "orders", order_id, "advance"];
        self.call(Method::POST, &path, None).await
    }

    /// Creates an order as the app does, from a create-order request (`orders_create`).
    pub async fn create_order_in_app(
        &self,
        store_id: &str,
        request: &Value,
    ) -> Result<Value, RemoteError> {
        let path = ["stores", store_id, "orders"];
        self.call(Method::POST, &path, Some(request)).await
    }

    /// Creates a product as the app does (`products_create`).
    pub async fn create_product(
        &self,
        store_id: &str,
        product: &Value,
    ) -> Result<Value, RemoteError> {
        let path = ["stores", store_id, "products"];
        self.call(Method::POST, &path, Some(product)).await
    }

    /// Replaces a product as the app does (`products_update`).
    pub async fn update_product(
        &self,
        store_id: &str,
        product_id: &str,
        product: &Value,
    ) -> Result<Value, RemoteError> {
        let path = ["stores", store_id, "products", product_id];
        self.call(Method::PUT, &path, Some(product)).await
    }

    /// Replaces a catalog product (a blank) as the provider does: id and createdAt kept, updatedAt
    /// moved, no webhook.
    pub async fn update_catalog_product(
        &self,
        catalog_product_id: &str,
        product: &Value,
    ) -> Result<Value, RemoteError> {
        let path = ["catalog-products", catalog_product_id];
        self.call(Method::PUT, &path, Some(product)).await
    }

    /// Deletes a product as the app does (`products_delete`).
    pub async fn delete_product(
        &self,
        store_id: &str,
        product_id: &str,
    ) -> Result<(), RemoteError> {
        let path = ["stores", store_id, "products", product_id];
        self.call(Method::DELETE, &path, None).await.map(drop)
    }

    /// One control request; the answer's JSON (`null` for an empty body).
    async fn call(
        &self,
        method: Method,
        segments: &[&str],
        body: Option<&Value>,
    ) -> Result<Value, RemoteError> {
        let mut url = self.origin.clone();
        url.path_segments_mut()
            .map_err(|()| RemoteError::BadUrl(self.origin.to_string()))?
            .pop_if_empty()
            .push("_emulator")
            .extend(segments);
        let mut request = self.http.request(method, url);
        if let Some(body) = body {
            request = request.json(body);
        }
        let unreachable = |e: reqwest::Error| RemoteError::Unreachable {
            origin: self.origin.to_string(),
            reason: e.without_url().to_string(),
        };
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.map_err(unreachable)?;
        let json: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if (200..300).contains(&status) {
            return Ok(json);
        }
        let message = match &json["message"] {
            Value::String(text) => text.clone(),
            Value::Array(list) => list
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("; "),
            _ => String::from_utf8_lossy(&bytes).into_owned(),
        };
        Err(ControlError { status, message }.into())
    }
}
