//! The client-side rate limiter: the service's own limit (a burst of ten per store, then two per second)
//! enforced before sending, so a well-behaved program never sees a 429.
//!
//! One limiter serves every clone of a [`Client`](crate::Client), its paginators, and by default every
//! client of the same store and base URL in the process. Besides its own bucket (governor's GCRA), it
//! follows the service: `X-RateLimit-Remaining: 0` and a 429's `Retry-After` pause the whole store, not
//! only the request that got them.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter as Gcra};
use store_api_raw::contract;
use tokio::time::Instant;

/// The service's burst.
pub(crate) const BURST: u32 = contract::RATE_LIMIT_BURST;
/// What the interval between tokens on our side adds to the service's.
const JITTER_MARGIN: Duration = Duration::from_millis(5);
/// Interval between tokens on our side: the service's plus a little, so that requests which leave
/// evenly spaced but arrive with network jitter never reach the service faster than it refills.
pub(crate) const TOKEN_INTERVAL: Duration =
    match contract::RATE_LIMIT_REFILL_INTERVAL.checked_add(JITTER_MARGIN) {
        Some(interval) => interval,
        None => contract::RATE_LIMIT_REFILL_INTERVAL,
    };

/// The longest a limiter's whole burst may take to refill (see [`RateLimiter::with_rate`]).
const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// Announces a wait for the store's rate limit before it starts: an event of target
/// `store_api::rate_limit` with the field `store_api.rate_limit.wait_s` (docs/telemetry.md), which the
/// request's operation span holds and the command line shows as "waiting 4.5 s for the store's rate
/// limit". The client calls it before a 429's `Retry-After` and [`RateLimiter`] before its own waits; a
/// [`Limiter`](crate::Limiter) of your own calls it before a wait it knows, as `store-api-redis`'s does. A zero wait
/// announces nothing.
///
/// ```
/// store_api::announce_rate_limit_wait(std::time::Duration::from_millis(1500));
/// ```
pub fn announce_rate_limit_wait(wait: Duration) {
    if !wait.is_zero() {
        tracing::event!(
            target: "store_api::rate_limit",
            tracing::Level::INFO,
            { store_api.rate_limit.wait_s = wait.as_secs_f64() },
            "waiting for the store's rate limit"
        );
    }
}

/// The bucket's clock: monotonic nanoseconds since the limiter was made. Ours, not governor's
/// `DefaultClock`, which needs governor's `std` feature: parking_lot and futures-timer, build time for
/// waiting helpers this limiter does not use (it sleeps on tokio's timer).
#[derive(Clone, Debug)]
struct Monotonic {
    origin: std::time::Instant,
}

impl Default for Monotonic {
    fn default() -> Self {
        Monotonic {
            origin: std::time::Instant::now(),
        }
    }
}

impl Clock for Monotonic {
    type Instant = Nanos;

    fn now(&self) -> Nanos {
        Nanos::from(self.origin.elapsed())
    }
}

/// A shareable per-store rate limiter. Cloning shares the bucket.
#[derive(Clone)]
pub struct RateLimiter {
    inner: Arc<Inner>,
}

struct Inner {
    bucket: Gcra<NotKeyed, InMemoryState, Monotonic, NoOpMiddleware<Nanos>>,
    clock: Monotonic,
    /// Nothing may be sent before this instant (a 429's Retry-After, or an empty server bucket).
    paused_until: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter")
            .field("burst", &BURST)
            .field("interval", &TOKEN_INTERVAL)
            .finish()
    }
}

impl Default for RateLimiter {
    fn default() -> Self {
        Self::new()
    }
}

impl RateLimiter {
    /// The interval between tokens of [`RateLimiter::new`]: the service's refill interval
    /// (`store_api_raw::contract::RATE_LIMIT_REFILL_INTERVAL`, 500 ms) plus 5 ms, so that requests
    /// which leave evenly spaced but arrive with network jitter never reach the service faster than it
    /// refills. Its burst is the service's, `store_api_raw::contract::RATE_LIMIT_BURST`.
    pub const DEFAULT_INTERVAL: Duration = TOKEN_INTERVAL;

    /// A limiter with the service's limit, shared by nobody yet.
    pub fn new() -> RateLimiter {
        RateLimiter::with_rate(BURST, TOKEN_INTERVAL)
    }

    /// A limiter with another limit: `burst` requests at once, then one per `interval` (for a service
    /// configured differently, or a local emulator whose limit is off).
    ///
    /// An interval longer than [`MAX_DURATION_SETTING`](crate::MAX_DURATION_SETTING) (365 days;
    /// `Duration::MAX` for "never again") counts as that, and a burst whose refill would take more than
    /// a century is cut to one that takes a century at most (the bucket counts in nanoseconds, in 64
    /// bits: a longer one panicked).
    pub fn with_rate(burst: u32, interval: Duration) -> RateLimiter {
        let interval = interval.clamp(Duration::from_nanos(1), crate::MAX_DURATION_SETTING);
        let most = CENTURY.as_nanos() / interval.as_nanos();
        let burst = u32::try_from(most).map_or(burst, |most| burst.min(most));
        let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(interval)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst);
        let clock = Monotonic::default();
        RateLimiter {
            inner: Arc::new(Inner {
                bucket: Gcra::direct_with_clock(quota, clock.clone()),
                clock,
                paused_until: Mutex::new(None),
            }),
        }
    }

    /// The process-wide limiter of one store at one base URL: clients built for the same store share it.
    pub fn for_store(base_url: &str, store_id: &str) -> RateLimiter {
        static REGISTRY: OnceLock<Mutex<HashMap<(String, String), RateLimiter>>> = OnceLock::new();
        let registry = REGISTRY.get_or_init(Default::default);
        let mut map = registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.entry((base_url.to_owned(), store_id.to_owned()))
            .or_default()
            .clone()
    }

    /// Waits until a request may be sent, then takes its token.
    pub async fn acquire(&self) {
        loop {
            // The pause is checked and the token taken under the pause's lock: a pause that starts in
            // between cannot make us take a token and then not send (burning it for everyone).
            let wait = {
                let paused = self
                    .inner
                    .paused_until
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                match paused.and_then(|until| until.checked_duration_since(Instant::now())) {
                    Some(pause) => pause,
                    None => match self.inner.bucket.check() {
                        Ok(()) => return,
                        Err(not_until) => not_until.wait_time_from(self.inner.clock.now()),
                    },
                }
            };
            announce_rate_limit_wait(wait);
            tokio::time::sleep(wait).await;
        }
    }

    /// Pauses the whole store for `duration` (a 429's Retry-After). Any duration is accepted: one too
    /// large to add to the clock pauses for [`MAX_DURATION_SETTING`](crate::MAX_DURATION_SETTING) (a year), and callers cap what a service may ask for.
    pub fn pause_for(&self, duration: Duration) {
        let now = Instant::now();
        let until = now
            .checked_add(duration)
            .or_else(|| now.checked_add(crate::MAX_DURATION_SETTING))
            .unwrap_or(now);
        let mut paused = self
            .inner
            .paused_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if paused.is_none_or(|current| current < until) {
            *paused = Some(until);
        }
    }

    /// Follows the service's `X-RateLimit-Remaining`: when the service's bucket is empty (another process
    /// shares the store), wait for its next token before sending again.
    pub fn observe_remaining(&self, remaining: u64) {
        if remaining == 0 {
            self.pause_for(TOKEN_INTERVAL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_burst_of_ten_then_one_token_per_interval() {
        let limiter = RateLimiter::new();
        let start = Instant::now();
        for _ in 0..BURST {
            limiter.acquire().await;
        }
        assert!(
            start.elapsed() < Duration::from_millis(100),
            "the burst is immediate"
        );
        limiter.acquire().await;
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(400),
            "the eleventh waits for a token: {waited:?}"
        );
    }

    #[tokio::test]
    async fn a_pause_holds_every_caller() {
        let limiter = RateLimiter::new();
        limiter.pause_for(Duration::from_millis(300));
        let start = Instant::now();
        limiter.clone().acquire().await;
        assert!(start.elapsed() >= Duration::from_millis(290));
    }

    #[tokio::test]
    async fn a_pause_of_any_length_does_not_panic() {
        let limiter = RateLimiter::new();
        limiter.pause_for(Duration::from_secs(u64::MAX));
        limiter.pause_for(Duration::MAX);
    }

    #[tokio::test]
    async fn a_rate_of_any_interval_does_not_panic() {
        for interval in [Duration::ZERO, Duration::from_secs(u64::MAX), Duration::MAX] {
            for burst in [0, 1, 10, u32::MAX] {
                let limiter = RateLimiter::with_rate(burst, interval);
                tokio::time::timeout(Duration::from_millis(20), limiter.acquire())
                    .await
                    .ok();
                tokio::time::timeout(Duration::from_millis(20), limiter.acquire())
                    .await
                    .ok();
            }
        }
    }

    #[tokio::test]
    async fn a_pause_takes_no_token() {
        // One token, refilled every ten seconds: if waiting out the pause took it, acquire would wait 10 s.
        let limiter = RateLimiter::with_rate(1, Duration::from_secs(10));
        limiter.pause_for(Duration::from_millis(50));
        let start = Instant::now();
        limiter.acquire().await;
        assert!(start.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn clients_of_one_store_share_a_limiter() {
        let a = RateLimiter::for_store("http://x", "s1");
        let b = RateLimiter::for_store("http://x", "s1");
        let c = RateLimiter::for_store("http://x", "s2");
        assert!(Arc::ptr_eq(&a.inner, &b.inner));
        assert!(!Arc::ptr_eq(&a.inner, &c.inner));
    }
}
