//! A simulated Redis and `RedisDedupe`'s scripts and client transcribed onto it.
//!
//! [`Server`] holds a primary's keys (values with an absolute expiry on tokio's clock), the log of its
//! writes, and its replica. Replication is the link's, not `WAIT`'s: while the link is up, writes
//! reach the replica [`REPLICA_LAG`] after they were made (a `WAIT` finds them there within its
//! timeout, and answers 1); while the link is down (the replica behind, [`Server::cut_replica`]) none
//! does, and a `WAIT` answers 0 whether or not anyone asked for it. A failover promotes the replica
//! (what it had not received is lost) and leaves the new primary without a replica for
//! [`REPLICA_BACK`]; the [`OpFate::ReplicaBehind`] fault cuts the link and fails the primary over
//! [`BEHIND_FOR`] later, before the replica caught up, so what counted on a write the replica never
//! acknowledged loses it. A restart without persistence loses everything. Both break every
//! connection: the next exchange on each fails once.
//!
//! The scripts ([`Server::begin`], [`Server::renew`], [`Server::complete`], [`Server::abandon`]) are
//! the Lua scripts of `store_api_redis::RedisDedupe`, line by line; the differential test
//! (`tests/it/receivers.rs`) runs both on the same operations and compares every answer.
//! [`SimRedis`] transcribes the client around them: a token per claim, the claim sent again after a
//! dropped connection, each script in one pipeline with the `WAIT` behind it (a write short of
//! replicas is not confirmed: the claim fails closed, the renewal is an error, `complete` tries
//! again), `complete` retried within the lease. Not transcribed: `RedisDedupe`'s one probe write at a
//! time to a primary short of replicas (it refuses the others at once rather than after the `WAIT`
//! timeout: when a write is refused, not whether), and the redis library's own connection handling.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use store_api_webhooks::dedupe::{Claim, ClaimToken, Dedupe, DedupeError, DedupeFuture};
use tokio::time::Instant;

/// How long after a write its replica has it while the link is up (asynchronous replication).
pub const REPLICA_LAG: Duration = Duration::from_millis(500);
/// How long the replica stays behind (its link down) before the primary fails over, in the
/// [`OpFate::ReplicaBehind`] fault.
pub const BEHIND_FOR: Duration = Duration::from_secs(2);
/// How long a promoted primary has no replica (the old primary restarts and syncs as one).
pub const REPLICA_BACK: Duration = Duration::from_secs(5);
/// The client's bound on one exchange (`RedisDedupe`'s default command timeout).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(1);
/// The pause between two sends of a claim (`RedisDedupe`'s `CLAIM_RETRY`).
pub const CLAIM_RETRY: Duration = Duration::from_millis(20);
/// The pause between two sends of a done marker (`RedisDedupe`'s `COMPLETE_RETRY`).
pub const COMPLETE_RETRY: Duration = Duration::from_millis(100);
/// How long a `WAIT` short of replicas waits before it answers (`RedisDedupe`'s default replica
/// acknowledgement timeout).
pub const REPLICA_ACK_TIMEOUT: Duration = Duration::from_millis(250);
/// The done marker's value.
pub const DONE: &str = "done";

/// What the store holds for an event's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// Nothing (never claimed, released, or expired).
    Nobody,
    /// A claim with this token.
    Claim(u64),
    /// The done marker.
    Done,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Value {
    text: String,
    expires: Instant,
}

#[derive(Debug, Clone)]
enum Write {
    Set(String, Value),
    Del(String),
}

/// What a failover or a restart did to the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// A restart without persistence: every key lost.
    Restart,
    /// A failover; `lost` says whether the promoted replica lacked a write of the primary.
    Failover {
        /// Whether anything was lost.
        lost: bool,
    },
}

/// A simulated Redis primary with one replica.
#[derive(Debug)]
pub struct Server {
    data: HashMap<String, Value>,
    /// Writes since the last failover or restart, with when they were made.
    log: Vec<(Instant, Write)>,
    /// How much of `log` the replica holds.
    replicated: usize,
    replica: HashMap<String, Value>,
    /// When the replica is back after a failover.
    replica_back: Option<Instant>,
    /// Until when the replica's link is down: it receives nothing, and a `WAIT` answers 0.
    link_down: Option<Instant>,
    /// When the primary fails over (the [`OpFate::ReplicaBehind`] fault), applied by the first
    /// exchange at or after it.
    failover_at: Option<Instant>,
    /// Bumped by every failover and restart: connections of an older epoch are broken.
    pub epoch: u64,
    /// Every failover and restart, with when.
    pub losses: Vec<(Instant, Loss)>,
}

impl Default for Server {
    fn default() -> Self {
        Server::new()
    }
}

impl Server {
    /// An empty server with its replica.
    pub fn new() -> Server {
        Server {
            data: HashMap::new(),
            log: Vec::new(),
            replicated: 0,
            replica: HashMap::new(),
            replica_back: None,
            link_down: None,
            failover_at: None,
            epoch: 0,
            losses: Vec::new(),
        }
    }

    fn replica_up(&mut self, now: Instant) -> bool {
        match self.replica_back {
            Some(back) if now < back => false,
            Some(_) => {
                // Back: a full sync.
                self.replica_back = None;
                self.replica = self.data.clone();
                self.replicated = self.log.len();
                true
            }
            None => true,
        }
    }

    /// Whether the replica's link is down at `now`.
    fn link_down(&self, now: Instant) -> bool {
        self.link_down.is_some_and(|until| now < until)
    }

    /// What has happened by `now`: a failover that was due, then the writes the link has shipped.
    /// Every exchange starts with it (before it finds its connection broken or not).
    pub fn advance(&mut self, now: Instant) {
        if let Some(at) = self.failover_at.filter(|at| *at <= now) {
            // The primary dies at `at` with its replica still behind: what it had not received is
            // lost (the link never came back before the promotion).
            self.promote(at);
        }
        self.replicate(now, 0);
    }

    /// The replica's link goes down from `now` until `until`: the replica receives no write
    /// meanwhile (it catches up once the link is back), and a `WAIT` answers 0.
    pub fn cut_replica(&mut self, now: Instant, until: Instant) {
        self.advance(now);
        self.link_down = Some(until);
    }

    /// The [`OpFate::ReplicaBehind`] fault: the replica's link goes down from `now`, and the primary
    /// fails over [`BEHIND_FOR`] later, before the replica caught up.
    pub fn replica_behind(&mut self, now: Instant) {
        let at = now + BEHIND_FOR;
        self.cut_replica(now, at + BEHIND_FOR);
        self.failover_at = Some(at);
    }

    /// Ships the log to the replica: up to `upto`, and whatever is older than the lag; nothing while
    /// the link is down.
    fn replicate(&mut self, now: Instant, upto: usize) {
        if !self.replica_up(now) || self.link_down(now) {
            return;
        }
        let aged = self
            .log
            .iter()
            .take_while(|(at, _)| *at + REPLICA_LAG <= now)
            .count();
        let target = upto.max(aged).min(self.log.len());
        for (_, write) in &self.log[self.replicated.min(target)..target] {
            match write {
                Write::Set(key, value) => {
                    self.replica.insert(key.clone(), value.clone());
                }
                Write::Del(key) => {
                    self.replica.remove(key);
                }
            }
        }
        self.replicated = self.replicated.max(target);
    }

    fn get(&mut self, now: Instant, key: &str) -> Option<String> {
        match self.data.get(key) {
            Some(value) if value.expires > now => Some(value.text.clone()),
            Some(_) => {
                self.data.remove(key);
                None
            }
            None => None,
        }
    }

    fn set(&mut self, now: Instant, key: &str, text: &str, ttl: Duration) {
        let value = Value {
            text: text.to_owned(),
            expires: now + ttl,
        };
        self.data.insert(key.to_owned(), value.clone());
        self.log.push((now, Write::Set(key.to_owned(), value)));
    }

    fn pexpire(&mut self, now: Instant, key: &str, ttl: Duration) {
        if let Some(text) = self.get(now, key) {
            self.set(now, key, &text, ttl);
        }
    }

    fn del(&mut self, now: Instant, key: &str) {
        if self.data.remove(key).is_some() {
            self.log.push((now, Write::Del(key.to_owned())));
        }
    }

    /// What `key` holds now.
    pub fn holder(&mut self, now: Instant, key: &str) -> Holder {
        self.advance(now);
        match self.get(now, key) {
            None => Holder::Nobody,
            Some(text) if text == DONE => Holder::Done,
            Some(text) => text
                .strip_prefix("claim:")
                .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                .map_or(Holder::Nobody, Holder::Claim),
        }
    }

    /// BEGIN(key; claim, lease, done): `SET NX PX` → 0; our own claim (a resent claim) → `PEXPIRE`,
    /// 0; done → 1; another claim → 2.
    pub fn begin(&mut self, now: Instant, key: &str, claim: &str, lease: Duration) -> i64 {
        self.advance(now);
        match self.get(now, key) {
            None => {
                self.set(now, key, claim, lease);
                0
            }
            Some(value) if value == claim => {
                self.pexpire(now, key, lease);
                0
            }
            Some(value) if value == DONE => 1,
            Some(_) => 2,
        }
    }

    /// RENEW(key; claim, lease): our claim → `PEXPIRE`, 1; else 0.
    pub fn renew(&mut self, now: Instant, key: &str, claim: &str, lease: Duration) -> i64 {
        self.advance(now);
        if self.get(now, key).as_deref() == Some(claim) {
            self.pexpire(now, key, lease);
            1
        } else {
            0
        }
    }

    /// COMPLETE(key; claim, done, ttl): our claim, nothing or the done marker → `SET done PX ttl`
    /// (a marker found is written again, for the `WAIT` behind it to confirm), 1; another claim → 0.
    pub fn complete(&mut self, now: Instant, key: &str, claim: &str, ttl: Duration) -> i64 {
        self.advance(now);
        match self.get(now, key) {
            None => {
                self.set(now, key, DONE, ttl);
                1
            }
            Some(value) if value == claim || value == DONE => {
                self.set(now, key, DONE, ttl);
                1
            }
            Some(_) => 0,
        }
    }

    /// ABANDON(key; claim): our claim → `DEL`, 1; else 0.
    pub fn abandon(&mut self, now: Instant, key: &str, claim: &str) -> i64 {
        self.advance(now);
        if self.get(now, key).as_deref() == Some(claim) {
            self.del(now, key);
            1
        } else {
            0
        }
    }

    /// The lease of every claim on `key` passes (a done marker stays): what a real Redis does when a
    /// claim is neither renewed nor released for its lease, without waiting for it.
    pub fn lease_passes(&mut self, now: Instant, key: &str) {
        if matches!(self.holder(now, key), Holder::Claim(_)) {
            self.del(now, key);
        }
    }

    /// `WAIT numreplicas timeout`: how many replicas hold every write made so far (0 or 1). While
    /// the link is up the replica receives them within the timeout (a lag of milliseconds, not
    /// [`REPLICA_LAG`], which is how long a write nobody waits for may take); while it is down, or no
    /// replica is there, none does. The `WAIT` itself replicates nothing the link would not.
    pub fn wait(&mut self, now: Instant) -> u32 {
        self.advance(now);
        if !self.replica_up(now) || self.link_down(now) {
            return 0;
        }
        let all = self.log.len();
        self.replicate(now, all);
        u32::from(self.replicated >= all)
    }

    /// The primary dies; its replica, with what it received, takes over (without a replica of its
    /// own for [`REPLICA_BACK`]). Without a replica, a restart.
    pub fn failover(&mut self, now: Instant) {
        self.advance(now);
        self.promote(now);
    }

    /// The primary dies at `now` and its replica takes over with what it received (nothing shipped
    /// first).
    fn promote(&mut self, now: Instant) {
        self.failover_at = None;
        self.link_down = None;
        if !self.replica_up(now) {
            // No replica to promote (the last failover's has not come back): the primary restarts,
            // and without persistence that loses everything.
            self.restart(now);
            return;
        }
        let promoted: HashMap<String, Value> = self
            .replica
            .iter()
            .filter(|(_, v)| v.expires > now)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let current: HashMap<String, Value> = self
            .data
            .iter()
            .filter(|(_, v)| v.expires > now)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let lost = promoted != current;
        self.data = promoted;
        self.log.clear();
        self.replicated = 0;
        self.replica = self.data.clone();
        self.replica_back = Some(now + REPLICA_BACK);
        self.epoch += 1;
        self.losses.push((now, Loss::Failover { lost }));
    }

    /// A restart without persistence: every key is gone (and the replica resyncs from the empty
    /// primary).
    pub fn restart(&mut self, now: Instant) {
        self.failover_at = None;
        self.link_down = None;
        self.data.clear();
        self.log.clear();
        self.replicated = 0;
        self.replica.clear();
        self.epoch += 1;
        self.losses.push((now, Loss::Restart));
    }
}

/// What happens to one exchange of a receiver with the [`Server`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpFate {
    /// Sent and answered.
    Answered,
    /// Run by the server; the connection drops before the reply (an immediate error the client
    /// may retry).
    LostReply,
    /// Lost on the way (not run); the client gives up after its command timeout.
    TimedOut,
    /// The primary fails over just before it (the exchange fails, the connection is broken).
    Failover,
    /// The server restarts without persistence just before it (likewise).
    Restart,
    /// The replica falls behind just before it (its link down: it receives no write, a `WAIT`
    /// answers 0) and the primary fails over [`BEHIND_FOR`] later, before the replica caught up; the
    /// exchange itself is answered. What counted on a write no replica acknowledged loses it.
    ReplicaBehind,
}

impl OpFate {
    /// In the order of the `o:` alphabet.
    pub const ALL: [OpFate; 6] = [
        OpFate::Answered,
        OpFate::LostReply,
        OpFate::TimedOut,
        OpFate::Failover,
        OpFate::Restart,
        OpFate::ReplicaBehind,
    ];

    /// Its name in schedules.
    pub fn name(self) -> &'static str {
        match self {
            OpFate::Answered => "ok",
            OpFate::LostReply => "lost-reply",
            OpFate::TimedOut => "timeout",
            OpFate::Failover => "failover",
            OpFate::Restart => "restart",
            OpFate::ReplicaBehind => "replica-behind",
        }
    }
}

/// Who decides each exchange's fate: the model's schedule (and its cuts between a receiver and the
/// store).
pub trait Faults: Send + Sync {
    /// The fate of `receiver`'s next exchange.
    fn fate(&self, receiver: usize) -> OpFate;
}

/// Why an exchange failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The connection dropped (a reply lost, a failover, a restart): worth sending again at once.
    #[error("connection dropped")]
    Dropped,
    /// No answer within the command timeout.
    #[error("no answer within the command timeout")]
    Timeout,
    /// Fewer replicas than wanted acknowledged the write (`RedisError::NotReplicated`'s words).
    #[error("{acknowledged} of {wanted} replicas acknowledged the write in time")]
    Unreplicated {
        /// How many acknowledged it.
        acknowledged: u32,
        /// How many were wanted.
        wanted: u32,
    },
}

impl SimError {
    /// `RedisError::is_transient`: a timeout, a dropped connection and a write short of replicas
    /// are worth trying again.
    fn is_transient(self) -> bool {
        true
    }
}

/// One receiver's `RedisDedupe` on the shared [`Server`]: its own connection and tokens.
pub struct SimRedis {
    server: Arc<Mutex<Server>>,
    faults: Arc<dyn Faults>,
    receiver: usize,
    /// The epoch of this receiver's connection.
    connection: Mutex<u64>,
    next_token: Mutex<u64>,
    lease: Duration,
    done_ttl: Duration,
    replica_acks: u32,
    replica_ack_timeout: Duration,
}

impl std::fmt::Debug for SimRedis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimRedis")
            .field("receiver", &self.receiver)
            .field("lease", &self.lease)
            .field("replica_acks", &self.replica_acks)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a claim holds in Redis (`RedisDedupe`'s `claim_value`).
pub fn claim_value(token: ClaimToken) -> String {
    format!("claim:{:016x}", token.get())
}

impl SimRedis {
    /// Receiver `receiver`'s client of `server`.
    pub fn new(
        server: Arc<Mutex<Server>>,
        faults: Arc<dyn Faults>,
        receiver: usize,
        lease: Duration,
        done_ttl: Duration,
        replica_acks: u32,
    ) -> SimRedis {
        let epoch = lock(&server).epoch;
        SimRedis {
            server,
            faults,
            receiver,
            connection: Mutex::new(epoch),
            next_token: Mutex::new(0),
            lease,
            done_ttl,
            replica_acks,
            replica_ack_timeout: REPLICA_ACK_TIMEOUT,
        }
    }

    /// How long a `WAIT` short of replicas waits before it answers (default
    /// [`REPLICA_ACK_TIMEOUT`], `RedisDedupeBuilder::replica_ack_timeout`'s).
    pub fn with_replica_ack_timeout(mut self, timeout: Duration) -> SimRedis {
        self.replica_ack_timeout = timeout;
        self
    }

    fn unreplicated(&self, acknowledged: u32) -> SimError {
        SimError::Unreplicated {
            acknowledged,
            wanted: self.replica_acks,
        }
    }

    /// One exchange: `op` runs on the server unless the schedule says otherwise. Returns the answer
    /// and the epoch of the connection that carried it.
    async fn exchange<T>(
        &self,
        op: impl FnOnce(&mut Server, Instant) -> T,
    ) -> Result<(T, u64), SimError> {
        let fate = self.faults.fate(self.receiver);
        if fate == OpFate::TimedOut {
            tokio::time::sleep(COMMAND_TIMEOUT).await;
            return Err(SimError::Timeout);
        }
        let now = Instant::now();
        let mut server = lock(&self.server);
        server.advance(now);
        let mut connection = lock(&self.connection);
        if *connection != server.epoch {
            // The server failed over or restarted since this connection's last exchange: this one
            // fails, the next goes over a new connection.
            *connection = server.epoch;
            return Err(SimError::Dropped);
        }
        match fate {
            OpFate::Answered => Ok((op(&mut server, now), *connection)),
            OpFate::ReplicaBehind => {
                server.replica_behind(now);
                Ok((op(&mut server, now), *connection))
            }
            OpFate::LostReply => {
                let _ = op(&mut server, now);
                Err(SimError::Dropped)
            }
            OpFate::Failover => {
                server.failover(now);
                *connection = server.epoch;
                Err(SimError::Dropped)
            }
            OpFate::Restart => {
                server.restart(now);
                *connection = server.epoch;
                Err(SimError::Dropped)
            }
            OpFate::TimedOut => Err(SimError::Timeout),
        }
    }

    /// One pipeline, the script and the `WAIT` for its replicas right behind it on the same
    /// connection (`RedisDedupe::run`): the script's answer and how many replicas acknowledged it. A
    /// `WAIT` short of replicas answers after its timeout.
    async fn run(
        &self,
        script: impl FnOnce(&mut Server, Instant) -> i64,
    ) -> Result<(i64, u32), SimError> {
        let wanted = self.replica_acks;
        let ((answer, acknowledged), _) = self
            .exchange(|server, now| {
                let answer = script(server, now);
                let acknowledged = if wanted > 0 { server.wait(now) } else { 0 };
                (answer, acknowledged)
            })
            .await?;
        if acknowledged < wanted {
            tokio::time::sleep(self.replica_ack_timeout).await;
        }
        Ok((answer, acknowledged))
    }

    /// The Redis key of `event_id` (`RedisDedupe`'s for store `store_alpha` and the default prefix).
    pub fn key(event_id: &str) -> String {
        format!("store-api:webhooks:store_alpha:{event_id}")
    }

    async fn begin_claim(&self, event_id: &str) -> Result<Claim, SimError> {
        let token = {
            let mut next = lock(&self.next_token);
            *next += 1;
            ClaimToken::new(((self.receiver as u64 + 1) << 48) | *next)
        };
        let key = Self::key(event_id);
        let claim = claim_value(token);
        let lease = self.lease;
        let (answer, acknowledged) = retrying(COMMAND_TIMEOUT, CLAIM_RETRY, || {
            self.run(|server, now| server.begin(now, &key, &claim, lease))
        })
        .await?;
        match answer {
            0 if acknowledged >= self.replica_acks => Ok(Claim::Fresh(token)),
            0 => {
                // The claim may not survive a failover: free it (best effort, within the lease).
                let _ = retrying(self.lease, COMPLETE_RETRY, || {
                    self.exchange(|server, now| server.abandon(now, &key, &claim))
                })
                .await;
                Err(self.unreplicated(acknowledged))
            }
            1 => Ok(Claim::Duplicate),
            _ => Ok(Claim::InProgress),
        }
    }

    async fn renew_claim(&self, event_id: &str, token: ClaimToken) -> Result<bool, SimError> {
        let key = Self::key(event_id);
        let claim = claim_value(token);
        let lease = self.lease;
        match self
            .run(|server, now| server.renew(now, &key, &claim, lease))
            .await?
        {
            (1, acknowledged) if acknowledged >= self.replica_acks => Ok(true),
            (1, acknowledged) => Err(self.unreplicated(acknowledged)),
            _ => Ok(false),
        }
    }

    async fn mark_done(&self, event_id: &str, token: ClaimToken) -> Result<bool, SimError> {
        let key = Self::key(event_id);
        let claim = claim_value(token);
        let ttl = self.done_ttl;
        retrying(self.lease, COMPLETE_RETRY, || async {
            match self
                .run(|server, now| server.complete(now, &key, &claim, ttl))
                .await?
            {
                (1, acknowledged) if acknowledged >= self.replica_acks => Ok(true),
                (1, acknowledged) => Err(self.unreplicated(acknowledged)),
                _ => Ok(false),
            }
        })
        .await
    }

    async fn release(&self, event_id: &str, token: ClaimToken) -> Result<(), SimError> {
        let key = Self::key(event_id);
        let claim = claim_value(token);
        self.exchange(|server, now| server.abandon(now, &key, &claim))
            .await?;
        Ok(())
    }
}

impl Dedupe for SimRedis {
    fn lease(&self) -> Duration {
        self.lease
    }

    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
        Box::pin(async move { self.begin_claim(event_id).await.map_err(DedupeError::new) })
    }

    fn renew<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        Box::pin(async move {
            self.renew_claim(event_id, token)
                .await
                .map_err(DedupeError::new)
        })
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

/// `RedisDedupe`'s `retrying`: again after `pause` while the error is transient and the next attempt
/// starts within `within` of the first.
async fn retrying<T, F, Fut>(
    within: Duration,
    pause: Duration,
    mut attempt: F,
) -> Result<T, SimError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, SimError>>,
{
    let deadline = Instant::now() + within;
    loop {
        match attempt().await {
            Err(error) if error.is_transient() && Instant::now() + pause < deadline => {
                tokio::time::sleep(pause).await;
            }
            outcome => return outcome,
        }
    }
}
