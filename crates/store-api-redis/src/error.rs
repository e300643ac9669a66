//! Errors of this crate.

/// Why a Redis-backed component could not be built or could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisError {
    /// The Redis URL is not valid (`redis://host:port/db`, `rediss://…`, `redis+unix:///path`).
    #[error("invalid Redis URL: {0}")]
    InvalidUrl(#[source] redis::RedisError),
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
