//! Errors of this crate.

/// Why a Redis-backed component could not be built or could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisError {
    /// The Redis URL is not valid (`redis://host:port/db`, `rediss://…`, `redis+unix:///path`).
    #[error("invalid Redis URL: {0}")]
    InvalidUrl(#[source] redis::RedisError),
    /// The settings cannot work (several URLs without cluster mode, a certificate for a plain URL, a
    /// feature compiled out); the message says which.
    #[error("invalid Redis settings: {0}")]
    Config(String),
    /// Redis answered with an error or could not be reached.
    #[error("Redis failed: {0}")]
    Redis(#[from] redis::RedisError),
    /// Redis did not answer within the command timeout.
    #[error("Redis did not answer within {0:?}")]
    Timeout(std::time::Duration),
    /// Redis answered something this crate's scripts never return (another program uses the key?).
    #[error("unexpected answer from Redis: {0}")]
    Unexpected(String),
    /// Fewer replicas than asked for acknowledged a write in time (`WAIT`): a failover could lose it,
    /// so it does not count (the primary has no replica answering, or its replica lags).
    #[error("{acknowledged} of {wanted} replicas acknowledged the write in time")]
    NotReplicated {
        /// How many replicas acknowledged it.
        acknowledged: u32,
        /// How many were asked for.
        wanted: u32,
    },
}

impl RedisError {
    /// Whether trying again may succeed: a timeout, a dropped connection, a cluster moving a slot or
    /// electing a primary. A refused setting or a script's answer will not change.
    #[cfg(feature = "dedupe")]
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            RedisError::Timeout(_) | RedisError::NotReplicated { .. } => true,
            RedisError::Redis(error) => {
                !matches!(error.retry_method(), redis::RetryMethod::NoRetry)
            }
            RedisError::InvalidUrl(_) | RedisError::Config(_) | RedisError::Unexpected(_) => false,
        }
    }
}
