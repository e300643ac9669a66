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
}

impl RedisError {
    /// Whether trying again may succeed: a timeout, a dropped connection, a cluster moving a slot or
    /// electing a primary. A refused setting or a script's answer will not change.
    #[cfg(feature = "dedupe")]
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            RedisError::Timeout(_) => true,
            RedisError::Redis(error) => {
                !matches!(error.retry_method(), redis::RetryMethod::NoRetry)
            }
            RedisError::InvalidUrl(_) | RedisError::Config(_) | RedisError::Unexpected(_) => false,
        }
    }
}
