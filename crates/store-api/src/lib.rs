#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod client;
mod config;
mod difference;
mod error;
mod handle;
pub mod hook;
mod limiter;
pub mod model;
pub mod network;
mod new_order;
mod operation;
mod pages;
mod ratelimit;
mod request;
mod resources;
mod response;
mod retry;
mod settings;
pub mod store_cache;
mod submit;
mod telemetry;
mod transport;
pub mod validate;

pub use client::{
    Client, ClientBuilder, DEFAULT_CACHE_TTL, DEFAULT_MAX_RATE_LIMIT_PAUSE,
    DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT, DEFAULT_USER_AGENT,
};
pub use config::{ConfigError, ENV_API_KEY, ENV_BASE_URL, ENV_STORE_ID};
pub use difference::Difference;
pub use error::{Error, Result};
pub use limiter::{Limiter, LimiterFuture};
pub use new_order::{
    AddressLines, BuildError, CustomItem, Design, IdentifiedOrder, NewOrder, OrderBuilder, ShipTo,
    ShipToAddress,
};
pub use pages::{MAX_PAGE_SIZE, Page};
pub use ratelimit::{RateLimiter, announce_rate_limit_wait};
pub use request::ApiRequest;
pub use resources::{Artworks, Catalog, Collection, Listed, Orders, Products};
pub use response::ApiResponse;
pub use retry::{Jitter, RetryPolicy};
pub use settings::MAX_DURATION_SETTING;
pub use store_api_raw::requests::{
    ListArtworksQuery, ListCatalogProductsQuery, ListOrdersQuery, ListProductsQuery,
};
pub use store_api_raw::tls::install_crypto_provider;
pub use store_api_raw::{ApiKey, KeyHandle};
pub use submit::{
    Attempt, AttemptResult, Submission, SubmitOptions, Submitted, new_external_order_id,
};
