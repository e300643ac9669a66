//! The emulator's time and randomness. Normally the real clock and random ids; in deterministic mode a
//! clock that only [`Emulator::advance`](crate::Emulator::advance) moves, starting at
//! [`DETERMINISTIC_START`], and ids and keys drawn from a sequence seeded by the caller, so two runs of
//! one scenario answer byte for byte alike. Everything that reads the time (timestamps, the rate limit,
//! webhook backoff, auto-advance, log retention) reads it here.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, SubsecRound, Utc};
use governor::nanos::Nanos;
use tokio::sync::watch;

/// Where the clock of a deterministic emulator starts: 2026-08-01T00:00:00Z.
pub const DETERMINISTIC_START: DateTime<Utc> = match DateTime::from_timestamp(1_785_542_400, 0) {
    Some(start) => start,
    None => DateTime::UNIX_EPOCH,
};

/// The emulator's clock and id source; clones share one source.
#[derive(Debug, Clone)]
pub(crate) struct Clock(Arc<Source>);

#[derive(Debug)]
enum Source {
    Real {
        started: Instant,
    },
    Deterministic {
        seed: u64,
        /// Values drawn so far: the position in the seeded sequence.
        draws: AtomicU64,
        /// Emulator time since [`DETERMINISTIC_START`]; waiters subscribe to its changes.
        elapsed: watch::Sender<Duration>,
    },
}

impl Default for Clock {
    fn default() -> Self {
        Clock::real()
    }
}

impl Clock {
    /// The real clock and random ids.
    pub fn real() -> Clock {
        Clock(Arc::new(Source::Real {
            started: Instant::now(),
        }))
    }

    /// A clock standing at [`DETERMINISTIC_START`] until advanced, and ids drawn from `seed`.
    pub fn deterministic(seed: u64) -> Clock {
        Clock(Arc::new(Source::Deterministic {
            seed,
            draws: AtomicU64::new(0),
            elapsed: watch::Sender::new(Duration::ZERO),
        }))
    }

    pub fn is_deterministic(&self) -> bool {
        matches!(*self.0, Source::Deterministic { .. })
    }

    /// The current time, truncated to milliseconds like the service's timestamps.
    pub fn now(&self) -> DateTime<Utc> {
        match &*self.0 {
            Source::Real { .. } => Utc::now().trunc_subsecs(3),
            Source::Deterministic { elapsed, .. } => {
                let elapsed = chrono::TimeDelta::from_std(*elapsed.borrow())
                    .unwrap_or(chrono::TimeDelta::MAX);
                DETERMINISTIC_START
                    .checked_add_signed(elapsed)
                    .unwrap_or(DateTime::<Utc>::MAX_UTC)
                    .trunc_subsecs(3)
            }
        }
    }

    /// The `updatedAt` of a change to a resource last stamped `previous`: the current time, or one
    /// millisecond past `previous` when the clock has not moved beyond it (a deterministic clock standing
    /// still, two changes within one millisecond). Every change thus moves `updatedAt` forward and never
    /// behind the clock. Every change of a product or catalog product is stamped here.
    pub fn change_stamp(&self, previous: Option<DateTime<Utc>>) -> DateTime<Utc> {
        let now = self.now();
        // Truncating keeps the stamp on a millisecond and still past `previous`.
        match previous.and_then(|p| p.checked_add_signed(chrono::TimeDelta::milliseconds(1))) {
            Some(next) if next.trunc_subsecs(3) > now => next.trunc_subsecs(3),
            _ => now,
        }
    }

    /// Monotonic time since the clock started (what the rate limit measures).
    pub fn elapsed(&self) -> Duration {
        match &*self.0 {
            Source::Real { started } => started.elapsed(),
            Source::Deterministic { elapsed, .. } => *elapsed.borrow(),
        }
    }

    /// A random value, or the next of the seeded sequence (splitmix64: every value of the sequence
    /// differs, so ids do not repeat).
    pub fn random_u64(&self) -> u64 {
        match &*self.0 {
            Source::Real { .. } => rand::random(),
            Source::Deterministic { seed, draws, .. } => {
                let n = draws.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
                splitmix64(seed.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
            }
        }
    }

    /// A new opaque id: `prefix_` and 16 hex digits.
    pub fn new_id(&self, prefix: &str) -> String {
        format!("{prefix}_{:016x}", self.random_u64())
    }

    /// Moves a deterministic clock forward, releasing what waits for that time; `false` on the real
    /// clock, which nobody moves.
    pub fn advance(&self, by: Duration) -> bool {
        match &*self.0 {
            Source::Real { .. } => false,
            Source::Deterministic { elapsed, .. } => {
                elapsed.send_modify(|elapsed| *elapsed = elapsed.saturating_add(by));
                true
            }
        }
    }

    /// Waits until [`elapsed`](Self::elapsed) reaches `target`.
    pub async fn sleep_until(&self, target: Duration) {
        match &*self.0 {
            Source::Real { started } => {
                let deadline = started.checked_add(target).unwrap_or_else(Instant::now);
                tokio::time::sleep_until(deadline.into()).await;
            }
            Source::Deterministic { elapsed, .. } => {
                let mut changes = elapsed.subscribe();
                // The sender lives as long as this clock, which `self` holds: the wait cannot fail.
                let _ = changes.wait_for(|now| *now >= target).await;
            }
        }
    }
}

/// The rate limit measures time on the emulator's clock, so a deterministic emulator's bucket refills
/// only when the test advances it.
impl governor::clock::Clock for Clock {
    type Instant = Nanos;

    fn now(&self) -> Nanos {
        Nanos::from(self.elapsed())
    }
}

/// One step of splitmix64 (a bijection on u64: distinct inputs give distinct outputs).
fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deterministic_clock_moves_only_when_advanced() {
        let clock = Clock::deterministic(7);
        assert_eq!(clock.now().to_rfc3339(), "2026-08-01T00:00:00+00:00");
        assert!(clock.advance(Duration::from_millis(1500)));
        assert_eq!(clock.now().to_rfc3339(), "2026-08-01T00:00:01.500+00:00");
        assert!(!Clock::real().advance(Duration::from_secs(1)));
    }

    #[test]
    fn a_change_stamp_moves_past_the_previous_one_and_never_behind_the_clock() {
        let clock = Clock::deterministic(7);
        let start = clock.now();
        let ms = chrono::TimeDelta::milliseconds;
        assert_eq!(clock.change_stamp(None), start);
        assert_eq!(clock.change_stamp(Some(start - ms(5))), start);
        // The clock stands still: each change moves one millisecond past the last.
        assert_eq!(clock.change_stamp(Some(start)), start + ms(1));
        assert_eq!(clock.change_stamp(Some(start + ms(1))), start + ms(2));
        // Sub-millisecond leftovers are truncated, still past the previous stamp.
        let odd = start + chrono::TimeDelta::microseconds(1500);
        assert_eq!(clock.change_stamp(Some(odd)), start + ms(2));
        // Once the clock has moved on, the clock wins.
        clock.advance(Duration::from_secs(1));
        assert_eq!(clock.change_stamp(Some(start + ms(2))), clock.now());
    }

    #[test]
    fn a_seed_gives_one_sequence_of_ids() {
        let ids = |seed| {
            let clock = Clock::deterministic(seed);
            (0..3).map(|_| clock.new_id("ord")).collect::<Vec<_>>()
        };
        assert_eq!(ids(1), ids(1));
        assert_ne!(ids(1), ids(2));
        assert_eq!(ids(1)[0].len(), "ord_".len() + 16);
    }

    #[tokio::test]
    async fn a_sleep_ends_when_the_clock_is_advanced_past_it() {
        let clock = Clock::deterministic(0);
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move { clock.sleep_until(Duration::from_secs(2)).await }
        });
        clock.advance(Duration::from_secs(1));
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.advance(Duration::from_secs(1));
        assert!(sleeper.await.is_ok());
    }
}
