//! The per-store rate limit of the spec (`x-rate-limit`): a burst, then a steady refill (governor's GCRA),
//! measured on the emulator's clock (a deterministic emulator's bucket refills as the test advances it).

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

use governor::clock::Clock as GovernorClock;
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use store_api_raw::contract;

use crate::clock::Clock;

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
    limiter: RateLimiter<String, DefaultKeyedStateStore<String>, Clock, StateInformationMiddleware>,
    clock: Clock,
    /// Each store's tokens after its last request, and when (clock time since its start): what
    /// [`StoreLimiter::peek`] refills.
    last_seen: Mutex<HashMap<String, (Duration, u32)>>,
}

impl StoreLimiter {
    pub fn new(clock: Clock) -> StoreLimiter {
        let quota = Quota::per_second(NonZeroU32::new(PER_SECOND).unwrap_or(NonZeroU32::MIN))
            .allow_burst(NonZeroU32::new(BURST).unwrap_or(NonZeroU32::MIN));
        StoreLimiter {
            limiter: RateLimiter::<_, _, _, StateInformationMiddleware>::new(
                quota,
                DefaultKeyedStateStore::default(),
                clock.clone(),
            ),
            clock,
            last_seen: Mutex::default(),
        }
    }

    /// The store's bucket without taking a token, for the headers of an answer that must not spend one
    /// (a 401 for a known store: a caller without the key must not drain the bucket). governor has no
    /// read-only check, so this refills the tokens seen after the store's last request by the time since.
    pub fn peek(&self, store_id: &str) -> Decision {
        let last = self.last_seen().get(store_id).copied();
        let remaining = last.map_or(BURST, |(at, tokens)| {
            let since = self.clock.elapsed().saturating_sub(at);
            let refilled = since.as_secs_f64() * f64::from(PER_SECOND);
            let refilled = u32::try_from(refilled as u64).unwrap_or(u32::MAX);
            tokens.saturating_add(refilled).min(BURST)
        });
        Decision::Allowed {
            remaining,
            reset_secs: seconds_until_full(remaining),
        }
    }

    fn last_seen(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Duration, u32)>> {
        self.last_seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes one token for `store_id`, or says how long to wait.
    pub fn check(&self, store_id: &str) -> Decision {
        let decision = self.take(store_id);
        let tokens = match decision {
            Decision::Allowed { remaining, .. } => remaining,
            Decision::Limited { .. } => 0,
        };
        let seen = (self.clock.elapsed(), tokens);
        let mut last_seen = self.last_seen();
        // Every request passes here: allocate the key only for a store seen the first time.
        match last_seen.get_mut(store_id) {
            Some(entry) => *entry = seen,
            None => {
                last_seen.insert(store_id.to_owned(), seen);
            }
        }
        decision
    }

    fn take(&self, store_id: &str) -> Decision {
        match self.limiter.check_key(&store_id.to_owned()) {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                Decision::Allowed {
                    remaining,
                    reset_secs: seconds_until_full(remaining),
                }
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(GovernorClock::now(&self.clock));
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
        let limiter = StoreLimiter::new(Clock::real());
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
    fn a_peek_takes_nothing() {
        let limiter = StoreLimiter::new(Clock::real());
        assert_eq!(
            limiter.peek("store_a"),
            Decision::Allowed {
                remaining: BURST,
                reset_secs: 0
            }
        );
        limiter.check("store_a");
        limiter.check("store_a");
        for _ in 0..5 {
            assert!(matches!(
                limiter.peek("store_a"),
                Decision::Allowed { remaining: 8, .. }
            ));
        }
        assert!(matches!(
            limiter.check("store_a"),
            Decision::Allowed { remaining: 7, .. }
        ));
    }

    #[test]
    fn a_deterministic_bucket_refills_only_when_the_clock_is_advanced() {
        let clock = Clock::deterministic(1);
        let limiter = StoreLimiter::new(clock.clone());
        for _ in 0..BURST {
            limiter.check("store_a");
        }
        assert!(matches!(
            limiter.check("store_a"),
            Decision::Limited {
                retry_after_secs: 1,
                ..
            }
        ));
        clock.advance(Duration::from_millis(500));
        assert!(matches!(
            limiter.peek("store_a"),
            Decision::Allowed { remaining: 1, .. }
        ));
        assert!(matches!(
            limiter.check("store_a"),
            Decision::Allowed { remaining: 0, .. }
        ));
        clock.advance(Duration::from_secs(5));
        assert!(matches!(
            limiter.check("store_a"),
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
