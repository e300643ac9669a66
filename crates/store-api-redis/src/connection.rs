//! One lazily created, reconnecting connection per component.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::OnceCell;

use crate::error::RedisError;

/// Default bound on one command: a local Redis answers in well under a millisecond, so a second means
/// it is gone, and the caller should fall back rather than hang.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(1);

/// A `redis::Client` plus a connection manager created on first use.
///
/// Created lazily because `ConnectionManager` needs a tokio runtime, and a builder may run outside
/// one; `new_lazy_with_config` never fails for an unreachable server, so a replica starts (and falls
/// back) while Redis is down.
pub(crate) struct Connection {
    client: redis::Client,
    manager: OnceCell<ConnectionManager>,
    pub timeout: Duration,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The connection info may hold a password: show only where it goes.
        f.debug_struct("Connection")
            .field(
                "addr",
                &self.client.get_connection_info().addr().to_string(),
            )
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Connection {
    pub fn open(url: &str, timeout: Duration) -> Result<Connection, RedisError> {
        let client = redis::Client::open(url).map_err(RedisError::InvalidUrl)?;
        Ok(Connection {
            client,
            manager: OnceCell::new(),
            timeout,
        })
    }

    /// The manager (cheap clone of a multiplexed connection that reconnects by itself).
    pub async fn get(&self) -> Result<ConnectionManager, RedisError> {
        let timeout = self.timeout;
        let manager = self
            .manager
            .get_or_try_init(|| async {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(timeout))
                    .set_response_timeout(Some(timeout))
                    // Reconnection is retried on the next command anyway; do not block this one.
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(200));
                ConnectionManager::new_lazy_with_config(self.client.clone(), config)
            })
            .await?;
        Ok(manager.clone())
    }

    /// Runs `script` with a bound on the whole exchange.
    pub async fn invoke<T: redis::FromRedisValue>(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T, RedisError> {
        let mut manager = self.get().await?;
        match tokio::time::timeout(self.timeout, invocation.invoke_async(&mut manager)).await {
            Ok(result) => Ok(result?),
            Err(_) => Err(RedisError::Timeout(self.timeout)),
        }
    }
}
