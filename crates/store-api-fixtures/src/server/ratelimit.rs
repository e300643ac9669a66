//! The per-store rate limit of the spec (`x-rate-limit`): a burst, then a steady refill (governor's GCRA).

use std::num::NonZeroU32;

use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use store_api_raw::contract;

/// Requests a store may make at once.
pub const BURST: u32 = contract::RATE_LIMIT_BURST;
/// Tokens added per second.
pub const PER_SECOND: u32 = contract::RATE_LIMIT_PER_SECOND;

/// What the limiter decided for one request, with the values of the rate-limit headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Allowed; `remaining` tokens are left and the bucket is full again in `reset_secs` seconds.
    Allowed { remaining: u32, reset_secs: u64 },
    /// Refused; retry after `retry_after_secs` seconds (the bucket is empty).
    Limited {
        retry_after_secs: u64,
        reset_secs: u64,
    },
}

/// Per-store buckets, keyed by store id (so a key rotation keeps the store's bucket).
#[derive(Debug)]
pub(crate) struct StoreLimiter {
    limiter: RateLimiter<
        String,
        DefaultKeyedStateStore<String>,
        DefaultClock,
        StateInformationMiddleware,
    >,
    clock: DefaultClock,
}

impl StoreLimiter {
    pub fn new() -> StoreLimiter {
        let quota = Quota::per_second(NonZeroU32::new(PER_SECOND).unwrap_or(NonZeroU32::MIN))
            .allow_burst(NonZeroU32::new(BURST).unwrap_or(NonZeroU32::MIN));
        let clock = DefaultClock::default();
        StoreLimiter {
            limiter: RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
            clock,
        }
    }

    /// Takes one token for `store_id`, or says how long to wait.
    pub fn check(&self, store_id: &str) -> Decision {
        match self.limiter.check_key(&store_id.to_owned()) {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                Decision::Allowed {
                    remaining,
                    reset_secs: seconds_until_full(remaining),
                }
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                let retry_after_secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                Decision::Limited {
                    retry_after_secs: retry_after_secs.max(1),
                    reset_secs: seconds_until_full(0),
                }
            }
        }
    }
}

/// Whole seconds (rounded up) until a bucket with `remaining` tokens is full again: the meaning this
/// project assumes for `X-RateLimit-Reset`, which the seed does not show.
fn seconds_until_full(remaining: u32) -> u64 {
    let missing = u64::from(BURST.saturating_sub(remaining));
    missing.div_ceil(u64::from(PER_SECOND))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_ten_then_refusal_with_retry_after() {
        let limiter = StoreLimiter::new();
        for expected_remaining in (0..BURST).rev() {
            match limiter.check("store_a") {
                Decision::Allowed { remaining, .. } => assert_eq!(remaining, expected_remaining),
                other => panic!("expected allowed, got {other:?}"),
            }
        }
        match limiter.check("store_a") {
            Decision::Limited {
                retry_after_secs,
                reset_secs,
            } => {
                assert_eq!(retry_after_secs, 1);
                assert_eq!(reset_secs, 5);
            }
            other => panic!("expected limited, got {other:?}"),
        }
        assert!(matches!(
            limiter.check("store_b"),
            Decision::Allowed { remaining: 9, .. }
        ));
    }

    #[test]
    fn reset_is_the_time_to_refill_the_bucket() {
        assert_eq!(seconds_until_full(10), 0);
        assert_eq!(seconds_until_full(9), 1);
        assert_eq!(seconds_until_full(8), 1);
        assert_eq!(seconds_until_full(0), 5);
    }
}
