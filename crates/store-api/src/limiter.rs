//! The rate-limiter abstraction the client's transport goes through.
//!
//! [`RateLimiter`] (in-process GCRA) is the default. Implement [`Limiter`] to share the store's limit
//! with other processes: `store-api-redis` does it on Redis, so every replica of a service draws from one
//! bucket and a 429 seen by one pauses all. The trait is object safe; the client holds an
//! `Arc<dyn Limiter>` (see [`ClientBuilder::limiter`](crate::ClientBuilder::limiter)).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::ratelimit::RateLimiter;

/// The future returned by [`Limiter`] methods.
pub type LimiterFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Decides when a request may be sent, and learns from the service's answers.
///
/// Infallible on purpose: a limiter whose backing store fails either falls back to a local limit or
/// keeps the request waiting; it never lets the transport send without a decision.
///
/// ```
/// use std::sync::Arc;
/// use store_api::{Limiter, RateLimiter};
///
/// let shared: Arc<dyn Limiter> = Arc::new(RateLimiter::new());
/// let client = store_api::Client::builder()
///     .base_url("http://127.0.0.1:8080")
///     .store_id("store_alpha")
///     .api_key("csk_ce4d6676e735329b21b3d864ca427df5")
///     .limiter(shared)
///     .build();
/// assert!(client.is_ok());
/// ```
pub trait Limiter: Send + Sync + fmt::Debug {
    /// Waits until one request may be sent, and takes its token.
    fn acquire(&self) -> LimiterFuture<'_>;
    /// Pauses the whole store for `duration` (a 429's `Retry-After`).
    fn pause_for(&self, duration: Duration) -> LimiterFuture<'_>;
    /// Follows the service's `X-RateLimit-Remaining` (0 means its bucket is empty).
    fn observe_remaining(&self, remaining: u64) -> LimiterFuture<'_>;
}

impl Limiter for RateLimiter {
    fn acquire(&self) -> LimiterFuture<'_> {
        Box::pin(RateLimiter::acquire(self))
    }

    fn pause_for(&self, duration: Duration) -> LimiterFuture<'_> {
        RateLimiter::pause_for(self, duration);
        Box::pin(std::future::ready(()))
    }

    fn observe_remaining(&self, remaining: u64) -> LimiterFuture<'_> {
        RateLimiter::observe_remaining(self, remaining);
        Box::pin(std::future::ready(()))
    }
}

impl<T: Limiter + ?Sized> Limiter for Arc<T> {
    fn acquire(&self) -> LimiterFuture<'_> {
        (**self).acquire()
    }

    fn pause_for(&self, duration: Duration) -> LimiterFuture<'_> {
        (**self).pause_for(duration)
    }

    fn observe_remaining(&self, remaining: u64) -> LimiterFuture<'_> {
        (**self).observe_remaining(remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_in_process_limiter_is_a_limiter() {
        let limiter: Arc<dyn Limiter> =
            Arc::new(RateLimiter::with_rate(2, Duration::from_secs(60)));
        limiter.acquire().await;
        limiter.acquire().await;
        limiter.observe_remaining(5).await;
        let third = tokio::time::timeout(Duration::from_millis(50), limiter.acquire()).await;
        assert!(third.is_err(), "the burst of two is spent");
    }
}
