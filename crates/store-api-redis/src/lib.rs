//! Shared state for many replicas of one Store API service, on Redis.
//!
//! Inside one process the SDK keeps its guarantees alone: one [`store_api::RateLimiter`] per store and
//! an in-memory webhook [`Dedupe`](store_api_webhooks::dedupe::Dedupe). Run three replicas and both
//! break: each replica spends the store's whole limit, and a retried webhook lands on another replica.
//! This crate moves those two pieces of state into Redis:
//!
//! - [`RedisLimiter`] (feature `limiter`): the store's GCRA bucket as one Lua script run atomically on
//!   the server (its clock, one round trip per token), keyed by the normalised base URL and the store
//!   id. A 429's `Retry-After` or `X-RateLimit-Remaining: 0` seen by one replica pauses all of them.
//!   Callers reserve their slot in arrival order, so no replica starves; no wait exceeds the maximum
//!   pause ([`RedisLimiterBuilder::max_pause`], the client's 10 s by default), whatever Redis's clock
//!   says. If Redis is unreachable it falls back to an in-process limiter (the default, logged once per
//!   outage) or keeps requests waiting ([`OnRedisError`]).
//! - [`RedisDedupe`] (feature `dedupe`): one store's events, claimed with an owner token and a lease
//!   (`SET NX PX`), done markers kept 15 days (the service keeps retrying for at most the 14 days of
//!   its delivery log), abandon by the owner only (compare-and-delete), renewed while the handler runs
//!   and marked done only by its owner (compare-and-set), acknowledged by a replica of its primary
//!   before it counts on a cluster. Any Redis failure before the handler is an error, so the receiver
//!   answers 5xx and the service delivers again later: it never processes twice for want of Redis. What
//!   holds while a cluster primary fails over is listed there.
//! - [`RedisConfig`] (features `tls` and `cluster`, on by default): one server by URL (`redis://`,
//!   `redis+unix://`), TLS (`rediss://`, rustls with ring, a custom CA and a client certificate), or a
//!   Redis Cluster (detected behind one URL, or given its seed nodes).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use store_api_redis::{RedisDedupe, RedisLimiter};
//!
//! let limiter = RedisLimiter::builder("redis://127.0.0.1:6379/", "https://api.example.com", "store_alpha")
//!     .replicas(4)
//!     .build()?;
//! let client = store_api::Client::builder()
//!     .base_url("https://api.example.com")
//!     .store_id("store_alpha")
//!     .api_key("csk_ce4d6676e735329b21b3d864ca427df5")
//!     .limiter(Arc::new(limiter))
//!     .build()?;
//! let dedupe = RedisDedupe::builder("redis://127.0.0.1:6379/", "store_alpha").build()?;
//! # let _ = (client, dedupe);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Without either component nothing connects: the crate only names its settings then.
#[cfg_attr(not(any(feature = "limiter", feature = "dedupe")), allow(dead_code))]
mod connection;
#[cfg(feature = "dedupe")]
mod dedupe;
mod error;
#[cfg(any(feature = "limiter", feature = "dedupe"))]
mod keys;
#[cfg(feature = "limiter")]
mod limiter;
#[cfg(feature = "dedupe")]
mod primaries;
#[cfg(feature = "testing")]
pub mod testing;

pub use connection::{RedisConfig, Topology};
#[cfg(feature = "dedupe")]
pub use dedupe::{
    DEFAULT_DONE_TTL, DEFAULT_LEASE, DEFAULT_REPLICA_ACK_TIMEOUT, RedisDedupe, RedisDedupeBuilder,
};
pub use error::RedisError;
#[cfg(feature = "limiter")]
pub use limiter::{OnRedisError, RedisLimiter, RedisLimiterBuilder};
