//! The client handle and the state its clones share. Every module that makes calls needs it, and
//! `client` (its methods, its builder) needs those modules: keeping the type here, below both, is what
//! spares the crate an import cycle.

use std::sync::Arc;

use crate::limiter::Limiter;
use crate::ratelimit::RateLimiter;
use crate::retry::RetryPolicy;
use crate::store_cache::keeper::Keeper;
use crate::transport::ClientTransport;

/// A Store API client for one store. Cheap to clone; clones share the connection pool, the rate limiter
/// and the caches. `Send + Sync`. Its `Debug` never shows the key.
///
/// ```no_run
/// # async fn run() -> Result<(), store_api::Error> {
/// let client = store_api::Client::builder()
///     .base_url("http://127.0.0.1:8080")
///     .store_id("store_alpha")
///     .api_key("csk_ce4d6676e735329b21b3d864ca427df5")
///     .build()?;
/// let status = client.status().await?;
/// assert_eq!(status.version.as_deref(), Some("2026-08"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub store_id: String,
    pub base_url: String,
    pub submit_policy: RetryPolicy,
    pub cache: Keeper,
    pub limiter: RateLimiter,
    pub transport: Arc<ClientTransport>,
    /// What the transport asks before each request: `limiter` unless the builder was given another.
    pub shared_limiter: Arc<dyn Limiter>,
}
