//! The ceiling of the client's duration settings and the deadlines computed from them: a leaf module
//! that the builder, the retry policy, the rate limiter and the transport all read.

use std::time::Duration;

/// The longest any duration setting of the client counts as: 365 days. A longer one (`Duration::MAX`,
/// a "no limit") is clamped to it by [`ClientBuilder::build`](crate::ClientBuilder::build): the timeout
/// ([`ClientBuilder::timeout`](crate::ClientBuilder::timeout)), the longest rate-limit pause
/// ([`ClientBuilder::max_rate_limit_pause`](crate::ClientBuilder::max_rate_limit_pause)) and the retry policies' `max_elapsed`, `base_delay` and
/// `max_delay` ([`RetryPolicy`](crate::RetryPolicy)). Deadlines are instants computed from these settings, and an instant
/// `Duration::MAX` away cannot be represented: unclamped, it panicked on every request.
pub const MAX_DURATION_SETTING: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// The instant `by` after `start`; one that the clock cannot represent is [`MAX_DURATION_SETTING`]
/// after `start` instead (settings are clamped to that already; this keeps a sum of them from
/// panicking too).
pub(crate) fn later(start: tokio::time::Instant, by: Duration) -> tokio::time::Instant {
    start
        .checked_add(by)
        .or_else(|| start.checked_add(MAX_DURATION_SETTING))
        .unwrap_or(start)
}

/// The instant `by` from now, as [`later`] computes it.
pub(crate) fn deadline_after(by: Duration) -> tokio::time::Instant {
    later(tokio::time::Instant::now(), by)
}
