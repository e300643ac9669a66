//! The retry decision: a pure function of what happened and which attempt it was, separate from the
//! network loop, so it can be read and tested as a table. The backoff's randomness comes from the
//! policy's [`Jitter`], so a test that injects a fixed one gets the same decision every time.
//!
//! Which failures are worth another attempt is decided here and only here ([`is_retryable`]);
//! [`Error::is_retryable`](crate::Error::is_retryable) asks this module.

use std::time::Duration;

use crate::settings::MAX_DURATION_SETTING;

/// Where the backoff's jitter comes from: a fraction of the backoff ceiling in `[0, 1]` (values outside
/// are clamped, NaN counts as 0). [`Jitter::Random`], the default, is uniform randomness; a test
/// injects [`Jitter::Fixed`] or its own [`Jitter::Source`] and gets the same decision every time.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub enum Jitter {
    /// Uniform random fractions.
    #[default]
    Random,
    /// Always this fraction.
    Fixed(f64),
    /// Fractions from this function.
    Source(fn() -> f64),
}

impl Jitter {
    /// One fraction in `[0, 1]`.
    pub fn fraction(&self) -> f64 {
        let fraction = match self {
            Jitter::Random => fastrand::f64(),
            Jitter::Fixed(fraction) => *fraction,
            Jitter::Source(source) => source(),
        };
        if fraction.is_nan() {
            0.0
        } else {
            fraction.clamp(0.0, 1.0)
        }
    }
}

/// Two sources are equal when they are the same kind with the same fraction or the same function.
impl PartialEq for Jitter {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Jitter::Random, Jitter::Random) => true,
            (Jitter::Fixed(a), Jitter::Fixed(b)) => a == b,
            (Jitter::Source(a), Jitter::Source(b)) => std::ptr::fn_addr_eq(*a, *b),
            _ => false,
        }
    }
}

/// How often and how long to retry.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Attempts in all, the first included (default 4).
    pub max_attempts: u32,
    /// No retry starts after this much time since the first attempt (default 60 s).
    pub max_elapsed: Duration,
    /// First backoff step (default 250 ms); doubles per attempt, with full jitter.
    pub base_delay: Duration,
    /// Largest backoff step (default 10 s).
    pub max_delay: Duration,
    /// Source of the backoff's jitter (default [`Jitter::Random`]).
    pub jitter: Jitter,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            max_elapsed: Duration::from_secs(60),
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(10),
            jitter: Jitter::Random,
        }
    }
}

impl RetryPolicy {
    /// Whether the one retry rule retries a request the service answered with `status` (a 429, or a
    /// 5xx of a request that is safe to send twice), limits aside: for a program that sends through
    /// [`Client::request`](crate::Client::request) (the escape hatch, sent once) and wants the same judgement.
    pub fn retries_status(status: u16) -> bool {
        is_retryable(Outcome::Status(status, None), true)
    }

    /// A policy that never retries.
    pub fn never() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The default policy of [`Orders::submit`](crate::Orders::submit): 10 attempts within 5 minutes,
    /// 250 ms doubling to 10 s. An order is worth more patience than a read.
    pub fn submit() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 10,
            max_elapsed: Duration::from_secs(300),
            ..RetryPolicy::default()
        }
    }

    /// Sets the source of the backoff's jitter.
    pub fn with_jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// Sets the number of attempts (at least 1).
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// Sets the time after which no retry starts. A client counts a longer one than
    /// [`MAX_DURATION_SETTING`] (365 days; `Duration::MAX` for "no limit")
    /// as that.
    pub fn with_max_elapsed(mut self, elapsed: Duration) -> Self {
        self.max_elapsed = elapsed;
        self
    }

    /// Sets the first backoff step. A client counts a longer one than
    /// [`MAX_DURATION_SETTING`] (365 days) as that.
    pub fn with_base_delay(mut self, delay: Duration) -> Self {
        self.base_delay = delay;
        self
    }

    /// Full jitter: a wait between zero and `min(max_delay, base × 2^(attempt − 1))`, the policy's
    /// [`Jitter`] choosing where.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exponent = attempt.saturating_sub(1).min(16);
        let ceiling = self
            .base_delay
            .saturating_mul(1 << exponent)
            .min(self.max_delay);
        // Not `mul_f64`, which panics when the product rounds past `Duration::MAX` (a ceiling of
        // `Duration::MAX` times a fraction of 1.0 does).
        Duration::try_from_secs_f64(ceiling.as_secs_f64() * self.jitter.fraction())
            .map_or(ceiling, |wait| wait.min(ceiling))
    }

    /// This policy with its durations at most [`MAX_DURATION_SETTING`]: what a client keeps, so that
    /// no deadline computed from it overflows the clock.
    pub(crate) fn clamped(self) -> RetryPolicy {
        RetryPolicy {
            max_elapsed: self.max_elapsed.min(MAX_DURATION_SETTING),
            base_delay: self.base_delay.min(MAX_DURATION_SETTING),
            max_delay: self.max_delay.min(MAX_DURATION_SETTING),
            ..self
        }
    }
}

/// What an attempt ended with, as far as retrying is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The service answered with this status (and Retry-After, if it sent one).
    Status(u16, Option<Duration>),
    /// No connection could be made: nothing was sent.
    ConnectFailed,
    /// The request was sent (or may have been) and no answer came: a timeout or a reset connection.
    NoAnswer,
    /// The network refused the request for good ([`NetworkError::Refused`](crate::network::NetworkError::Refused)):
    /// nothing was sent, and another attempt would be refused alike.
    Refused,
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Send again after this wait.
    RetryAfter(Duration),
    /// Stop and report the outcome.
    Stop,
}

/// Whether `outcome` is worth another attempt at all, limits aside: the one retry rule.
/// `replayable` says whether sending the request twice is harmless.
///
/// - 2xx and 4xx other than 429: no (an unchanged retry fails again; 401 is never retried).
/// - 429: yes, for any request (the seed says nothing was processed).
/// - no connection made: yes, for any request (nothing was sent).
/// - 5xx, timeout, reset: only for replayable requests.
pub(crate) fn is_retryable(outcome: Outcome, replayable: bool) -> bool {
    match outcome {
        Outcome::Status(429, _) | Outcome::ConnectFailed => true,
        Outcome::Status(status, _) => status >= 500 && replayable,
        Outcome::NoAnswer => replayable,
        Outcome::Refused => false,
    }
}

/// Decides whether attempt `attempt` (1-based) is followed by another. `replayable` says whether sending
/// the request twice is harmless (GETs; not a create without an idempotency key).
///
/// Retries what [`is_retryable`] allows, while attempts and time are left. A 429 waits for its
/// Retry-After (at least the backoff), unless Retry-After is longer than what is left of `max_elapsed`:
/// then it stops at once rather than wait in vain. Deterministic for a given policy [`Jitter`].
pub(crate) fn decide(
    policy: &RetryPolicy,
    replayable: bool,
    outcome: Outcome,
    attempt: u32,
    elapsed: Duration,
) -> Decision {
    if attempt >= policy.max_attempts
        || elapsed >= policy.max_elapsed
        || !is_retryable(outcome, replayable)
    {
        return Decision::Stop;
    }
    match outcome {
        Outcome::Status(429, Some(wait)) if wait > policy.max_elapsed.saturating_sub(elapsed) => {
            Decision::Stop
        }
        Outcome::Status(429, retry_after) => {
            Decision::RetryAfter(retry_after.unwrap_or_default().max(policy.backoff(attempt)))
        }
        _ => Decision::RetryAfter(policy.backoff(attempt)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retry_table() {
        let policy = RetryPolicy::default();
        let second = Duration::from_secs(1);
        let cases = [
            // (replayable, outcome, retried?)
            (true, Outcome::Status(200, None), false),
            (true, Outcome::Status(400, None), false),
            (true, Outcome::Status(401, None), false),
            (true, Outcome::Status(404, None), false),
            (false, Outcome::Status(409, None), false),
            (true, Outcome::Status(429, Some(second)), true),
            (false, Outcome::Status(429, Some(second)), true),
            (true, Outcome::Status(500, None), true),
            (true, Outcome::Status(503, None), true),
            (false, Outcome::Status(500, None), false),
            (true, Outcome::NoAnswer, true),
            (false, Outcome::NoAnswer, false),
            (false, Outcome::ConnectFailed, true),
            (true, Outcome::Refused, false),
            (false, Outcome::Refused, false),
        ];
        for (replayable, outcome, retried) in cases {
            let decision = decide(&policy, replayable, outcome, 1, Duration::ZERO);
            assert_eq!(
                matches!(decision, Decision::RetryAfter(_)),
                retried,
                "{replayable} {outcome:?}"
            );
        }
    }

    #[test]
    fn retry_after_is_honoured_and_limits_stop_retries() {
        let policy = RetryPolicy::default();
        let wait = Duration::from_secs(3);
        assert!(matches!(
            decide(&policy, true, Outcome::Status(429, Some(wait)), 1, Duration::ZERO),
            Decision::RetryAfter(d) if d >= wait
        ));
        assert_eq!(
            decide(&policy, true, Outcome::NoAnswer, 4, Duration::ZERO),
            Decision::Stop
        );
        assert_eq!(
            decide(&policy, true, Outcome::NoAnswer, 1, Duration::from_secs(61)),
            Decision::Stop
        );
    }

    #[test]
    fn a_retry_after_beyond_the_budget_stops_at_once() {
        let policy = RetryPolicy::default();
        for wait in [61, 86_400, u64::MAX] {
            let outcome = Outcome::Status(429, Some(Duration::from_secs(wait)));
            assert_eq!(
                decide(&policy, true, outcome, 1, Duration::ZERO),
                Decision::Stop
            );
        }
        let outcome = Outcome::Status(429, Some(Duration::from_secs(30)));
        assert_eq!(
            decide(&policy, true, outcome, 1, Duration::from_secs(40)),
            Decision::Stop
        );
        assert!(matches!(
            decide(&policy, true, outcome, 1, Duration::from_secs(10)),
            Decision::RetryAfter(_)
        ));
    }

    #[test]
    fn the_decision_is_deterministic_with_an_injected_jitter() {
        let half = RetryPolicy::default().with_jitter(Jitter::Fixed(0.5));
        for _ in 0..3 {
            assert_eq!(
                decide(&half, true, Outcome::NoAnswer, 3, Duration::ZERO),
                Decision::RetryAfter(Duration::from_millis(500))
            );
        }
        let source = RetryPolicy::default().with_jitter(Jitter::Source(|| 7.0));
        assert_eq!(source.backoff(1), Duration::from_millis(250));
        let nan = RetryPolicy::default().with_jitter(Jitter::Fixed(f64::NAN));
        assert_eq!(nan.backoff(1), Duration::ZERO);
        assert_eq!(RetryPolicy::default().jitter, Jitter::Random);
    }

    // Issue 29, defect 8: a ceiling of `Duration::MAX` with a jitter of 1.0 panicked in `mul_f64`.
    #[test]
    fn no_duration_setting_makes_the_backoff_panic() {
        for jitter in [0.0, 0.5, 1.0] {
            let policy = RetryPolicy {
                base_delay: Duration::MAX,
                max_delay: Duration::MAX,
                max_elapsed: Duration::MAX,
                ..RetryPolicy::default()
            }
            .with_jitter(Jitter::Fixed(jitter));
            for attempt in [1, 2, 64, u32::MAX] {
                assert!(policy.backoff(attempt) <= Duration::MAX);
                let clamped = policy.clamped();
                assert!(clamped.backoff(attempt) <= MAX_DURATION_SETTING);
                assert_eq!(clamped.max_elapsed, MAX_DURATION_SETTING);
                let _ = decide(&policy, true, Outcome::NoAnswer, attempt, Duration::MAX);
            }
        }
    }

    #[test]
    fn backoff_has_full_jitter_under_a_doubling_ceiling() {
        let policy = RetryPolicy::default();
        for attempt in 1..=10 {
            let ceiling = policy
                .base_delay
                .saturating_mul(1 << (attempt - 1))
                .min(policy.max_delay);
            assert!(policy.backoff(attempt) <= ceiling);
        }
    }
}
