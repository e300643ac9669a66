//! Webhook events processed once across replicas, on Redis.

use std::fmt;
use std::time::{Duration, Instant};

use redis::Script;
use store_api_webhooks::dedupe::{Claim, ClaimToken, Dedupe, DedupeError, DedupeFuture};

use crate::connection::{Connection, DEFAULT_COMMAND_TIMEOUT, RedisConfig};
use crate::error::RedisError;
use crate::keys;

/// How long a claim blocks other deliveries when its owner neither completes nor abandons it (it died):
/// 30 seconds, like `MemoryDedupe`. Longer than any handler should take, shorter than the service's
/// retry backoff grows.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// How long a done marker is kept: 15 days. The service keeps its delivery log, and so retries an event
/// at the latest, within 14 days; one more day covers clock and queue slack.
pub const DEFAULT_DONE_TTL: Duration = Duration::from_secs(15 * 24 * 3600);

/// How long `complete` waits between attempts while Redis cannot answer (a cluster failing over).
const COMPLETE_RETRY: Duration = Duration::from_millis(100);

/// The value of a done marker. Claims hold `claim:<owner token>`, which can never equal it.
const DONE: &str = "done";

/// Claims the event with `SET NX PX` (owner token, lease); if it is taken, says whether it is done.
/// 0 = fresh (claimed now), 1 = done, 2 = claimed by someone else.
const BEGIN: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
if redis.call('GET', KEYS[1]) == ARGV[3] then
  return 1
end
return 2
";

/// Deletes the claim only if this owner still holds it (its lease may have passed to another replica).
const ABANDON: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// A [`Dedupe`] of one store's events, shared by every replica that uses the same Redis, key prefix
/// and store id.
///
/// Fails closed: when Redis cannot answer, [`Dedupe::begin`] returns a [`DedupeError`], so
/// [`process_once`](store_api_webhooks::dedupe::process_once) does not run the handler and the receiver
/// answers 5xx; the service delivers again later. A claim is taken with an owner token unique to this
/// claim and a lease; [`Dedupe::abandon`] deletes it only while this owner holds it;
/// [`Dedupe::complete`] replaces it with a done marker kept [`DEFAULT_DONE_TTL`]. Once the handler has
/// run, `complete` keeps trying for up to the lease while Redis cannot answer (a cluster electing a
/// new primary takes seconds): the claim holds other deliveries off meanwhile, so the event is still
/// processed once.
///
/// Keys are `{prefix}:{store id}:{event id}`: two stores on one Redis never share a key (the store id
/// has `:`, `|`, `{`, `}` and `%` percent-encoded). On a Redis Cluster each event's key lives in the
/// slot of its own name, so events spread over the primaries.
///
/// What holds when Redis fails:
///
/// - Unreachable (or a primary failing over, until its replica is promoted): claims fail, the
///   receiver answers 5xx and the service delivers again; nothing is processed for want of Redis.
/// - Restarted: the markers survive only if Redis persists them (`appendonly yes`, and
///   `appendfsync always` to lose nothing); otherwise a delivery retried after the restart is
///   processed again.
/// - A primary killed and its replica promoted: replication is asynchronous, so a claim or a done
///   marker written in the last moments before the crash, and not yet copied, is gone on the replica.
///   A lost done marker lets a later delivery of that event run again; a lost claim lets another
///   delivery run while the first still does. Everything written before that instant holds.
/// - A slot moving between primaries (resharding): each key moves atomically (`MIGRATE`) and the
///   client follows `ASK`/`MOVED`, so a claim is taken on whichever primary holds the key: all
///   guarantees hold.
///
/// ```no_run
/// use store_api_webhooks::dedupe::{Processed, process_once};
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let dedupe = store_api_redis::RedisDedupe::builder("redis://127.0.0.1:6379/", "store_alpha").build()?;
/// let outcome = process_once(&dedupe, "evt_1", || async { Ok::<_, std::io::Error>(()) }).await;
/// assert!(matches!(outcome, Ok(Processed::Done(()))));
/// # Ok(())
/// # }
/// ```
pub struct RedisDedupe {
    connection: Connection,
    /// `{prefix}:{store id}:`, to which the event id is appended.
    prefix: String,
    lease: Duration,
    done_ttl: Duration,
    begin: Script,
    abandon: Script,
}

impl fmt::Debug for RedisDedupe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisDedupe")
            .field("prefix", &self.prefix)
            .field("lease", &self.lease)
            .field("done_ttl", &self.done_ttl)
            .field("connection", &self.connection)
            .finish_non_exhaustive()
    }
}

/// Settings of a [`RedisDedupe`].
#[derive(Debug)]
#[must_use]
pub struct RedisDedupeBuilder {
    redis: RedisConfig,
    store_id: String,
    prefix: String,
    lease: Duration,
    done_ttl: Duration,
    timeout: Duration,
}

impl RedisDedupeBuilder {
    /// How long an unfinished claim blocks other deliveries (default [`DEFAULT_LEASE`]), and how long
    /// `complete` keeps trying while Redis cannot answer. Longer than your handler takes, and than a
    /// failover of your Redis takes.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(1));
        self
    }

    /// How long done markers are kept (default [`DEFAULT_DONE_TTL`]; keep it at least 14 days).
    pub fn done_ttl(mut self, ttl: Duration) -> Self {
        self.done_ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// Prefix of the Redis keys (default `store-api:webhooks`); the store id follows it.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Bound on one Redis exchange before it counts as a failure (default 1 s).
    pub fn command_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Builds the store. Does not connect: the first delivery does.
    pub fn build(self) -> Result<RedisDedupe, RedisError> {
        Ok(RedisDedupe {
            connection: Connection::open(self.redis, self.timeout)?,
            prefix: format!("{}:{}:", self.prefix, keys::part(&self.store_id)),
            lease: self.lease,
            done_ttl: self.done_ttl,
            begin: Script::new(BEGIN),
            abandon: Script::new(ABANDON),
        })
    }
}

impl RedisDedupe {
    /// Settings for the events of `store_id` (the `storeId` of every event its key signs) on the
    /// Redis at `redis` (a URL or a [`RedisConfig`]).
    pub fn builder(
        redis: impl Into<RedisConfig>,
        store_id: impl Into<String>,
    ) -> RedisDedupeBuilder {
        RedisDedupeBuilder {
            redis: redis.into(),
            store_id: store_id.into(),
            prefix: "store-api:webhooks".to_owned(),
            lease: DEFAULT_LEASE,
            done_ttl: DEFAULT_DONE_TTL,
            timeout: DEFAULT_COMMAND_TIMEOUT,
        }
    }

    /// The Redis key of `event_id`.
    pub fn key(&self, event_id: &str) -> String {
        format!("{}{event_id}", self.prefix)
    }

    async fn begin_claim(&self, event_id: &str) -> Result<Claim, RedisError> {
        // The low half of a UUID v7 is random: two claims of one event never share a token.
        let token = ClaimToken::new(uuid::Uuid::now_v7().as_u64_pair().1);
        let answer: i64 = self
            .connection
            .invoke(
                self.begin
                    .key(self.key(event_id))
                    .arg(claim_value(token))
                    .arg(millis(self.lease))
                    .arg(DONE),
            )
            .await?;
        match answer {
            0 => Ok(Claim::Fresh(token)),
            1 => Ok(Claim::Duplicate),
            2 => Ok(Claim::InProgress),
            other => Err(RedisError::Unexpected(other.to_string())),
        }
    }

    /// Replaces the claim with the done marker, trying again while Redis cannot answer, for up to the
    /// lease: the handler has run, and answering 5xx now would have the service deliver the event
    /// again once the claim expires.
    async fn mark_done(&self, event_id: &str) -> Result<(), RedisError> {
        let command = redis::cmd("SET")
            .arg(self.key(event_id))
            .arg(DONE)
            .arg("PX")
            .arg(millis(self.done_ttl))
            .to_owned();
        let deadline = Instant::now() + self.lease;
        loop {
            match self.connection.query::<()>(&command).await {
                Ok(()) => return Ok(()),
                Err(error)
                    if error.is_transient() && Instant::now() + COMPLETE_RETRY < deadline =>
                {
                    tracing::debug!(event_id, %error, "marking a webhook event done: trying again");
                    tokio::time::sleep(COMPLETE_RETRY).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    async fn release(&self, event_id: &str, token: ClaimToken) -> Result<(), RedisError> {
        // Deletes nothing when the claim is no longer this token's (expired and re-claimed, or done).
        let _deleted: i64 = self
            .connection
            .invoke(self.abandon.key(self.key(event_id)).arg(claim_value(token)))
            .await?;
        Ok(())
    }
}

impl Dedupe for RedisDedupe {
    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
        Box::pin(async move { self.begin_claim(event_id).await.map_err(DedupeError::new) })
    }

    fn complete<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, ()> {
        Box::pin(async move { self.mark_done(event_id).await.map_err(DedupeError::new) })
    }

    fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()> {
        Box::pin(async move {
            self.release(event_id, token)
                .await
                .map_err(DedupeError::new)
        })
    }
}

/// What a claim holds in Redis: never equal to the done marker.
fn claim_value(token: ClaimToken) -> String {
    format!("claim:{:016x}", token.get())
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
