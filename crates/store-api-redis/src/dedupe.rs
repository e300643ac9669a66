//! Webhook events processed once across replicas, on Redis.

use std::fmt;
use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::Script;
use store_api_webhooks::dedupe::{Claim, ClaimToken, Dedupe, DedupeError, DedupeFuture};

use crate::connection::{Connection, DEFAULT_COMMAND_TIMEOUT, RedisConfig, Retries};
use crate::error::RedisError;
use crate::keys;

/// How long a claim lasts without renewal: 10 seconds, like `MemoryDedupe`.
/// [`process_once`](store_api_webhooks::dedupe::process_once) renews it every third of that while the
/// handler runs; a receiver that dies mid-handler blocks its event for at most this long, less than the
/// service's delivery schedule (attempts at 0, 1, 3, 7 and 15 s on the emulator).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// How long a done marker is kept: 15 days. The service keeps its delivery log, and so retries an event
/// at the latest, within 14 days; one more day covers clock and queue slack.
pub const DEFAULT_DONE_TTL: Duration = Duration::from_secs(15 * 24 * 3600);

/// How long `complete` waits between attempts while Redis cannot answer or replicate (a cluster
/// failing over).
const COMPLETE_RETRY: Duration = Duration::from_millis(100);

/// How long a claim waits between attempts while slots move (a redirection, a refused connection).
const CLAIM_RETRY: Duration = Duration::from_millis(20);

/// How long a claim, a renewal or a done marker waits for its replicas' acknowledgement (`WAIT`):
/// 250 ms. On a healthy primary they answer within a millisecond; a primary that has no replica
/// left (its own was just promoted away from it, or is down) answers after this long, short.
pub const DEFAULT_REPLICA_ACK_TIMEOUT: Duration = Duration::from_millis(250);

/// At most one `warn` about unacknowledged writes this often (a primary without a replica refuses
/// every claim until one is back).
const WARN_EVERY: Duration = Duration::from_secs(5);

/// The value of a done marker. Claims hold `claim:<owner token>`, which can never equal it.
const DONE: &str = "done";

/// Claims the event with `SET NX PX` (owner token, lease); if it is taken, says by whom.
/// 0 = fresh: claimed now, or already claimed by this very token (the claim was sent again after its
/// reply was lost: the lease starts again, a write the `WAIT` behind it confirms); 1 = done; 2 =
/// claimed by someone else.
const BEGIN: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 0
end
if held == ARGV[3] then
  return 1
end
return 2
";

/// Extends the claim by the lease if this owner still holds it. 1 = extended, 0 = not ours any more.
const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
";

/// Replaces the claim with the done marker if this owner still holds it, or nobody does (it expired
/// and no one claimed the event again). 1 = done (now or before), 0 = another claim holds it: nothing
/// written. A marker found already there is written again (its TTL starts again): a `complete` sent
/// again after a lost reply, maybe on a new connection, must write for the `WAIT` behind it to
/// confirm that a replica holds the marker.
const COMPLETE: &str = r"
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] or held == false or held == ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
";

/// Deletes the claim only if this owner still holds it (its lease may have passed to another replica).
/// 1 = deleted, 0 = not ours.
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
/// claim and a lease, which [`Dedupe::renew`] extends while this owner holds it; a claim sent again
/// after its reply was lost finds its own token and is fresh. [`Dedupe::abandon`] deletes it only
/// while this owner holds it; [`Dedupe::complete`] replaces it with a done marker kept
/// [`DEFAULT_DONE_TTL`], only while this owner (or nobody) holds it. Once the handler has run,
/// `complete` keeps trying for up to the lease while Redis cannot answer (a cluster electing a new
/// primary takes seconds): [`process_once`](store_api_webhooks::dedupe::process_once) keeps renewing
/// the claim until `complete` answers, so the claim holds other deliveries off meanwhile and the event
/// is still processed once (unless the renewals fail too for what is left of the claim: a partition).
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
///   processed again, and a run in progress learns at its next renewal that its claim is gone (its
///   [`Lease`](store_api_webhooks::dedupe::Lease) is lost).
/// - A primary killed and its replica promoted: replication is asynchronous, so each claim, each
///   renewal and each done marker counts only once replicas acknowledged it (`WAIT`, see
///   [`RedisDedupeBuilder::replica_acks`]; on by default on a Redis Cluster). The `WAIT` travels
///   right behind the write, in one pipeline on the connection to the key's own primary: it never
///   confirms a write another connection carried (one opened after a reconnect or a failover), and
///   one primary short of replicas decides nothing for the others. Fewer acknowledgements than asked
///   for, none included, is not a confirmation: the claim is an error (the handler does not run, the
///   receiver answers 503, the service delivers again; the claim is released, best effort: a
///   failover that loses the release brings the refused claim back, and deliveries of that event
///   are answered in progress until its lease passes), a renewal does not
///   extend the run's [`Lease`](store_api_webhooks::dedupe::Lease), and `complete` tries again for up
///   to the lease, then fails. So everything a handler relied on is on the replica that takes over.
///   The price: while a primary has no replica answering (the one just promoted, until a replica
///   rejoins it), events whose keys it holds wait (logged at `warn`; one write at a time probes it,
///   the others are refused at once rather than each holding its connection for a `WAIT`); run two replicas per primary,
///   or bring the failed node back as a replica, to keep them flowing. With `replica_acks(0)` (the
///   default on one server), a claim or a done marker written in the last moments before a crash
///   can be lost: a lost done marker lets a later delivery of that event run again; a lost claim
///   lets another delivery run while the first still does.
/// - A slot moving between primaries (resharding): each key moves atomically (`MIGRATE`), so all
///   guarantees hold. The dedupe's connection does not let the redis library resend commands (it
///   retries whole pipelines itself): a claim on a key of a slot in mid-migration is refused (5xx,
///   retried by the service) until that slot's migration ends.
///
/// ```no_run
/// use store_api_webhooks::dedupe::{Processed, process_once};
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let dedupe = store_api_redis::RedisDedupe::builder("redis://127.0.0.1:6379/", "store_alpha").build()?;
/// let outcome = process_once(&dedupe, "evt_1", |_lease| async { Ok::<_, std::io::Error>(()) }).await;
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
    abandon: Script,
    /// Replicas that must acknowledge a write; `None`: one on a cluster, none on one server.
    replica_acks: Option<u32>,
    replica_ack_timeout: Duration,
    /// When writes short of acknowledgements were last logged at `warn`.
    warned: Mutex<Option<Instant>>,
}

impl fmt::Debug for RedisDedupe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisDedupe")
            .field("prefix", &self.prefix)
            .field("lease", &self.lease)
            .field("done_ttl", &self.done_ttl)
            .field("replica_acks", &self.replica_acks)
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
    replica_acks: Option<u32>,
    replica_ack_timeout: Duration,
}

impl RedisDedupeBuilder {
    /// How long a claim lasts without renewal (default [`DEFAULT_LEASE`]): how long the event of a
    /// receiver that died mid-handler waits, and how long `complete` keeps trying while Redis cannot
    /// answer. Longer than a failover of your Redis takes; `process_once` renews every third of it.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(1));
        self
    }

    /// How long done markers are kept (default [`DEFAULT_DONE_TTL`]; keep it at least 14 days).
    pub fn done_ttl(mut self, ttl: Duration) -> Self {
        self.done_ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// How many replicas of the key's primary must hold a claim before the handler runs, a renewal
    /// before it counts, and a done marker before `complete` returns (Redis's `WAIT`), so that a
    /// failover to a replica loses none. Default: 1 on a Redis Cluster, 0 on one server; set 1 for
    /// one server with replicas and automatic failover (Sentinel, a managed primary with a standby),
    /// 0 for a cluster without replicas. Fewer acknowledgements than this is a failure (fail closed).
    pub fn replica_acks(mut self, replicas: u32) -> Self {
        self.replica_acks = Some(replicas);
        self
    }

    /// How long a write waits for its replicas (default [`DEFAULT_REPLICA_ACK_TIMEOUT`]; at most half
    /// the [command timeout](Self::command_timeout)).
    pub fn replica_ack_timeout(mut self, timeout: Duration) -> Self {
        self.replica_ack_timeout = timeout.max(Duration::from_millis(1));
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
            connection: Connection::open(self.redis, self.timeout, Retries::ByTheCaller)?,
            prefix: format!("{}:{}:", self.prefix, keys::part(&self.store_id)),
            lease: self.lease,
            done_ttl: self.done_ttl,
            abandon: Script::new(ABANDON),
            replica_acks: self.replica_acks,
            replica_ack_timeout: self.replica_ack_timeout,
            warned: Mutex::new(None),
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
            replica_acks: None,
            replica_ack_timeout: DEFAULT_REPLICA_ACK_TIMEOUT,
        }
    }

    /// The Redis key of `event_id`.
    pub fn key(&self, event_id: &str) -> String {
        format!("{}{event_id}", self.prefix)
    }

    /// How many replicas must acknowledge a write.
    async fn wanted(&self) -> Result<u32, RedisError> {
        Ok(match self.replica_acks {
            Some(wanted) => wanted,
            None => u32::from(self.connection.is_cluster().await?),
        })
    }

    /// Runs `script` on `event_id`'s key with `args`, the `WAIT` for its replicas right behind it on the
    /// same connection ([`Connection::write_then_wait`]); answers the script's answer and whether
    /// enough replicas acknowledged it. `EVAL` rather than `EVALSHA`: a pipeline cannot load a script
    /// a restarted server or a promoted replica lacks, and Redis caches an `EVAL`ed script anyway.
    async fn run(
        &self,
        script: &str,
        event_id: &str,
        args: &[&str],
    ) -> Result<(i64, Acknowledged), RedisError> {
        let wanted = self.wanted().await?;
        let key = self.key(event_id);
        let mut eval = redis::cmd("EVAL");
        eval.arg(script).arg(1).arg(&key);
        for arg in args {
            eval.arg(*arg);
        }
        let (answer, acknowledged): (i64, u32) = self
            .connection
            .write_then_wait(&key, &eval, wanted, self.replica_ack_timeout)
            .await?;
        let acknowledged = Acknowledged {
            acknowledged,
            wanted,
        };
        if !acknowledged.confirmed() {
            self.warn_unreplicated(acknowledged);
        }
        Ok((answer, acknowledged))
    }

    fn warn_unreplicated(&self, acknowledged: Acknowledged) {
        let mut warned = self
            .warned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if warned.is_some_and(|at| at.elapsed() < WARN_EVERY) {
            return;
        }
        *warned = Some(Instant::now());
        tracing::warn!(
            prefix = %self.prefix,
            acknowledged = acknowledged.acknowledged,
            wanted = acknowledged.wanted,
            timeout = ?self.replica_ack_timeout,
            "webhook dedupe: a primary's replicas did not acknowledge a write in time; its claims are refused (503) and its done markers retried until they do (set replica_acks(0) if this Redis has no replicas)"
        );
    }

    async fn begin_claim(&self, event_id: &str) -> Result<Claim, RedisError> {
        // The low half of a UUID v7 is random: two claims of one event never share a token.
        let token = ClaimToken::new(uuid::Uuid::now_v7().as_u64_pair().1);
        let claim = claim_value(token);
        let lease = millis(self.lease).to_string();
        let args = [claim.as_str(), lease.as_str(), DONE];
        // The connection does not retry (see `Retries::ByTheCaller`); a redirection or a refused
        // connection while slots move is retried here, within the command timeout, with the same
        // token: a second run of the script finds this token's claim and answers 0, fresh (issue 29).
        let (answer, acknowledged) = retrying(
            "claiming a webhook event",
            event_id,
            self.connection.timeout,
            CLAIM_RETRY,
            || self.run(BEGIN, event_id, &args),
        )
        .await?;
        match answer {
            0 if acknowledged.confirmed() => Ok(Claim::Fresh(token)),
            0 => {
                // The claim may not survive a failover: the handler must not run on it. Free it
                // once Redis answers again (a replica promoted), so the next delivery need not
                // wait out the lease; past the lease it is gone anyway.
                let _ = retrying(
                    "releasing an unreplicated claim",
                    event_id,
                    self.lease,
                    COMPLETE_RETRY,
                    || self.release(event_id, token),
                )
                .await;
                Err(acknowledged.error())
            }
            1 => Ok(Claim::Duplicate),
            2 => Ok(Claim::InProgress),
            other => Err(RedisError::Unexpected(other.to_string())),
        }
    }

    /// Extends the claim `token` by the lease if it still holds the event. An extension replicas did
    /// not acknowledge is an error: the run's lease keeps counting from the last confirmed one.
    async fn extend(&self, event_id: &str, token: ClaimToken) -> Result<bool, RedisError> {
        let claim = claim_value(token);
        let lease = millis(self.lease).to_string();
        let (renewed, acknowledged) = self.run(RENEW, event_id, &[&claim, &lease]).await?;
        match renewed {
            1 if acknowledged.confirmed() => Ok(true),
            1 => Err(acknowledged.error()),
            0 => Ok(false),
            other => Err(RedisError::Unexpected(other.to_string())),
        }
    }

    /// Replaces the claim `token` with the done marker (fenced: see [`COMPLETE`]), trying again while
    /// Redis cannot answer or replicate it, for up to the lease: the handler has run, and answering
    /// 5xx now would have the service deliver the event again once the claim expires. `process_once`
    /// renews the claim meanwhile (its renewals may run between these attempts).
    async fn mark_done(&self, event_id: &str, token: ClaimToken) -> Result<bool, RedisError> {
        let claim = claim_value(token);
        let ttl = millis(self.done_ttl).to_string();
        let args = [claim.as_str(), DONE, ttl.as_str()];
        retrying(
            "marking a webhook event done",
            event_id,
            self.lease,
            COMPLETE_RETRY,
            || async {
                match self.run(COMPLETE, event_id, &args).await? {
                    (1, acknowledged) if acknowledged.confirmed() => Ok(true),
                    (1, acknowledged) => Err(acknowledged.error()),
                    (0, _) => Ok(false),
                    (other, _) => Err(RedisError::Unexpected(other.to_string())),
                }
            },
        )
        .await
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

/// How many replicas acknowledged a write, of how many wanted.
#[derive(Debug, Clone, Copy)]
struct Acknowledged {
    acknowledged: u32,
    wanted: u32,
}

impl Acknowledged {
    /// Only as many as wanted confirm a write: fewer, none included, is not a confirmation.
    fn confirmed(self) -> bool {
        self.acknowledged >= self.wanted
    }

    fn error(self) -> RedisError {
        RedisError::NotReplicated {
            acknowledged: self.acknowledged,
            wanted: self.wanted,
        }
    }
}

impl Dedupe for RedisDedupe {
    fn lease(&self) -> Duration {
        self.lease
    }

    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
        Box::pin(async move { self.begin_claim(event_id).await.map_err(DedupeError::new) })
    }

    fn renew<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        Box::pin(async move { self.extend(event_id, token).await.map_err(DedupeError::new) })
    }

    fn complete<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        Box::pin(async move {
            self.mark_done(event_id, token)
                .await
                .map_err(DedupeError::new)
        })
    }

    fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()> {
        Box::pin(async move {
            self.release(event_id, token)
                .await
                .map_err(DedupeError::new)
        })
    }
}

/// Runs `attempt` until it succeeds, fails for good, or `within` has passed, pausing `pause` between
/// attempts: for Redis failing over or moving slots, which take seconds.
async fn retrying<T, F, Fut>(
    what: &str,
    event_id: &str,
    within: Duration,
    pause: Duration,
    mut attempt: F,
) -> Result<T, RedisError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, RedisError>>,
{
    let deadline = Instant::now() + within;
    loop {
        match attempt().await {
            Err(error) if error.is_transient() && Instant::now() + pause < deadline => {
                tracing::debug!(event_id, %error, "{what}: trying again");
                tokio::time::sleep(pause).await;
            }
            outcome => return outcome,
        }
    }
}

/// What a claim holds in Redis: never equal to the done marker.
fn claim_value(token: ClaimToken) -> String {
    format!("claim:{:016x}", token.get())
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
