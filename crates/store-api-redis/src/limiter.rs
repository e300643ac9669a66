//! The store's rate limit shared by every process, on Redis.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::Script;
use store_api::{Limiter, LimiterFuture, RateLimiter};

use crate::connection::{Connection, DEFAULT_COMMAND_TIMEOUT};
use crate::error::RedisError;

/// GCRA with reservations, run atomically by Redis on its own clock.
///
/// KEYS: 1 the bucket's TAT (theoretical arrival time, µs of the server's clock), 2 the pause (µs until
/// which nothing may be sent). ARGV: 1 interval µs, 2 burst, 3 the caller's floor for the TAT, 4 its
/// floor for the pause, 5 how many slots other replicas may hold past the caller's floor. The floors are what this caller last saw: after a Redis restart (keys lost) the
/// first callers put the state back instead of granting a fresh burst the service does not have; the
/// first of them also skips the slots other replicas may have reserved after the last answer it saw
/// (estimated as `replicas − 1` times its own waiting callers, plus a burst).
///
/// Every call takes the next slot (`TAT` advances by one interval) and answers how long to wait for
/// it, so callers are served in the order they arrived, whichever replica they are in: no polling, no
/// starvation. A pause means the service's bucket is empty when it ends, so the TAT is pushed to
/// `pause + (burst − 1) × interval`, the TAT of an empty bucket at that instant.
///
/// Numbers are formatted with `%.0f`: Lua's default `%.14g` would round µs timestamps.
const ACQUIRE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local stored = tonumber(redis.call('GET', KEYS[1]))
local floor = tonumber(ARGV[3])
local tat
if stored == nil and floor > now then
  -- Gone although this caller saw slots reserved past now (the key outlives its TAT): Redis lost its
  -- data. Other replicas may hold slots past what this caller saw (ARGV[5], the caller's estimate);
  -- skip them rather than hand them out twice.
  tat = floor + tonumber(ARGV[5]) * interval
else
  tat = math.max(stored or 0, floor)
end
local pause = math.max(tonumber(redis.call('GET', KEYS[2])) or 0, tonumber(ARGV[4]))
tat = math.max(tat, now, pause + (burst - 1) * interval)
local new_tat = tat + interval
local send_at = math.max(now, new_tat - burst * interval, pause)
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1000)
return {string.format('%.0f', send_at - now), string.format('%.0f', new_tat), string.format('%.0f', pause), string.format('%.0f', now)}
";

/// Extends the shared pause to `now + ARGV[1]` µs (never shortens it); answers the pause and `now`.
const PAUSE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local pause = now + tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1])) or 0
if pause > current then
  redis.call('SET', KEYS[1], string.format('%.0f', pause), 'PX', math.ceil(tonumber(ARGV[1]) / 1000) + 1000)
else
  pause = current
end
return {string.format('%.0f', pause), string.format('%.0f', now)}
";

/// What a [`RedisLimiter`] does while Redis cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnRedisError {
    /// Fall back to an in-process limiter holding `1 / replicas` of the limit (see
    /// [`RedisLimiterBuilder::replicas`]), after the slots already reserved in Redis have passed.
    /// Logged once per outage (`warn`), and once when Redis answers again (`info`). The default.
    #[default]
    FallBack,
    /// Fail closed: never send without a shared token. Requests wait, retrying Redis every 200 ms,
    /// until it answers; bound them with your own timeout.
    Wait,
}

/// The rate limit of one store shared by every process that uses the same Redis, base URL and store.
///
/// Cheap to clone (clones share everything). Use it with
/// [`ClientBuilder::limiter`](store_api::ClientBuilder::limiter).
///
/// ```no_run
/// use std::sync::Arc;
/// # fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let limiter = store_api_redis::RedisLimiter::builder(
///     "redis://127.0.0.1:6379/",
///     "https://api.example.com",
///     "store_alpha",
/// )
/// .build()?;
/// let client = store_api::Client::builder()
///     .base_url("https://api.example.com")
///     .store_id("store_alpha")
///     .api_key("csk_ce4d6676e735329b21b3d864ca427df5")
///     .limiter(Arc::new(limiter))
///     .build()?;
/// # let _ = client;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisLimiter {
    inner: Arc<Inner>,
}

struct Inner {
    connection: Connection,
    tat_key: String,
    pause_key: String,
    burst: u32,
    interval: Duration,
    replicas: u32,
    on_error: OnRedisError,
    fallback: RateLimiter,
    acquire: Script,
    pause: Script,
    known: Mutex<Known>,
    outage: AtomicBool,
    fallback_tokens: AtomicU64,
    /// Callers of this process holding a reservation and sleeping until its slot.
    waiting: AtomicU64,
}

/// What this process last learnt of the shared state, in µs of the server's clock.
#[derive(Debug, Default, Clone, Copy)]
struct Known {
    tat: i64,
    pause: i64,
    /// Server clock minus local clock, µs (to carry the floors through an outage).
    offset: i64,
    /// During an outage, when the fallback may start sending (server µs).
    gate: i64,
}

impl fmt::Debug for RedisLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisLimiter")
            .field("key", &self.inner.tat_key)
            .field("burst", &self.inner.burst)
            .field("interval", &self.inner.interval)
            .field("replicas", &self.inner.replicas)
            .field("on_error", &self.inner.on_error)
            .field("connection", &self.inner.connection)
            .finish()
    }
}

/// Settings of a [`RedisLimiter`].
#[derive(Debug)]
#[must_use]
pub struct RedisLimiterBuilder {
    redis_url: String,
    base_url: String,
    store_id: String,
    burst: u32,
    interval: Duration,
    replicas: u32,
    on_error: OnRedisError,
    timeout: Duration,
    prefix: String,
}

impl RedisLimiter {
    /// Settings for the limiter of `store_id` at `base_url` (normalised like the client's: a trailing
    /// `/` and the version path do not change the key), with the service's limit.
    pub fn builder(
        redis_url: impl Into<String>,
        base_url: impl Into<String>,
        store_id: impl Into<String>,
    ) -> RedisLimiterBuilder {
        RedisLimiterBuilder {
            redis_url: redis_url.into(),
            base_url: base_url.into(),
            store_id: store_id.into(),
            burst: store_api::ratelimit::BURST,
            // The in-process limiter's interval: the service's 500 ms plus a margin for jitter.
            interval: store_api::ratelimit::TOKEN_INTERVAL,
            replicas: 1,
            on_error: OnRedisError::FallBack,
            timeout: DEFAULT_COMMAND_TIMEOUT,
            prefix: "store-api:ratelimit".to_owned(),
        }
    }

    /// The Redis key of the bucket (the pause key is the same with `:pause`).
    pub fn key(&self) -> &str {
        &self.inner.tat_key
    }

    /// How many tokens the in-process fallback granted so far (requests sent during outages).
    pub fn fallback_tokens(&self) -> u64 {
        self.inner.fallback_tokens.load(Ordering::Relaxed)
    }

    /// Whether the last Redis exchange failed (the limiter is falling back or waiting).
    pub fn in_outage(&self) -> bool {
        self.inner.outage.load(Ordering::Relaxed)
    }

    async fn acquire_shared(&self) {
        loop {
            match self.reserve().await {
                Ok(wait) => {
                    self.recovered();
                    if !wait.is_zero() {
                        let _waiting = Waiting::new(&self.inner.waiting);
                        tokio::time::sleep(wait).await;
                    }
                    return;
                }
                Err(error) => {
                    self.failed(&error);
                    match self.inner.on_error {
                        OnRedisError::Wait => tokio::time::sleep(Duration::from_millis(200)).await,
                        OnRedisError::FallBack => return self.acquire_fallback().await,
                    }
                }
            }
        }
    }

    /// One round trip: reserves the next slot and answers how long to wait for it.
    async fn reserve(&self) -> Result<Duration, RedisError> {
        let known = self.known();
        let interval = micros(self.inner.interval);
        let answer: Vec<i64> = self
            .inner
            .connection
            .invoke(
                self.inner
                    .acquire
                    .key(&self.inner.tat_key)
                    .key(&self.inner.pause_key)
                    .arg(interval)
                    .arg(self.inner.burst)
                    .arg(known.tat)
                    .arg(known.pause)
                    .arg(self.unseen_slots()),
            )
            .await?;
        let [wait, tat, pause, now] = answer[..] else {
            return Err(RedisError::Unexpected(format!("{answer:?}")));
        };
        self.learn(|k| {
            k.tat = k.tat.max(tat);
            k.pause = k.pause.max(pause);
            k.offset = now - local_micros();
        });
        Ok(Duration::from_micros(u64::try_from(wait).unwrap_or(0)))
    }

    /// The in-process fallback. It first lets the slots already handed out by Redis pass (the service's
    /// bucket is full again at the last TAT this process saw, plus the slots other replicas may have
    /// reserved after it), then sends at `1 / replicas` of the rate. Each token sent pushes the floor
    /// this process will give Redis when it is back: the service's bucket may be empty by then.
    async fn acquire_fallback(&self) {
        let known = self.known();
        let interval = micros(self.inner.interval);
        // Wait for the gate, asking Redis again meanwhile: if it is back, the shared schedule serves
        // this caller, and nothing is sent beside it.
        loop {
            let now = local_micros() + known.offset;
            if known.gate <= now {
                break;
            }
            let remaining = Duration::from_micros((known.gate - now).unsigned_abs());
            tokio::time::sleep(remaining.min(Duration::from_millis(250))).await;
            if let Ok(wait) = self.reserve().await {
                self.recovered();
                let _waiting = Waiting::new(&self.inner.waiting);
                tokio::time::sleep(wait).await;
                return;
            }
        }
        self.inner.fallback.acquire().await;
        self.inner.fallback_tokens.fetch_add(1, Ordering::Relaxed);
        let sent = local_micros() + known.offset;
        let burst = i64::from(self.inner.burst);
        self.learn(|k| k.tat = k.tat.max(sent + burst * interval));
    }

    async fn pause_shared(&self, duration: Duration) {
        let result: Result<Vec<i64>, RedisError> = self
            .inner
            .connection
            .invoke(
                self.inner
                    .pause
                    .key(&self.inner.pause_key)
                    .arg(micros(duration)),
            )
            .await;
        match result.and_then(|answer| match answer[..] {
            [pause, now] => Ok((pause, now)),
            _ => Err(RedisError::Unexpected(format!("{answer:?}"))),
        }) {
            Ok((pause, now)) => {
                self.recovered();
                self.learn(|k| {
                    k.pause = k.pause.max(pause);
                    k.offset = now - local_micros();
                });
            }
            Err(error) => {
                self.failed(&error);
                // Remember it for Redis's return, and hold this process meanwhile.
                self.learn(|k| k.pause = k.pause.max(local_micros() + k.offset + micros(duration)));
                self.inner.fallback.pause_for(duration);
            }
        }
    }

    /// How many slots other replicas may hold past the last TAT this one saw: as many callers as this
    /// replica has waiting, in each other replica (replicas share a store's load alike), plus a burst
    /// for the estimate's error. Only used after Redis lost its data, or for the fallback's start.
    fn unseen_slots(&self) -> i64 {
        // One more than are waiting: the caller asking now has just been served too.
        let waiting = i64::try_from(self.inner.waiting.load(Ordering::Relaxed))
            .unwrap_or(i64::MAX)
            .saturating_add(1);
        let others = i64::from(self.inner.replicas.saturating_sub(1));
        others
            .saturating_mul(waiting)
            .saturating_add(i64::from(self.inner.burst))
    }

    fn known(&self) -> Known {
        *self
            .inner
            .known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn learn(&self, update: impl FnOnce(&mut Known)) {
        update(
            &mut self
                .inner
                .known
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
    }

    fn failed(&self, error: &RedisError) {
        if !self.inner.outage.swap(true, Ordering::Relaxed) {
            // Other replicas may have reserved slots after the last answer this one saw: skip them
            // before sending on the fallback.
            let interval = micros(self.inner.interval);
            let unseen = self.unseen_slots();
            self.learn(|k| k.gate = k.tat.max(k.pause) + unseen * interval);
            match self.inner.on_error {
                OnRedisError::FallBack => tracing::warn!(
                    key = %self.inner.tat_key,
                    %error,
                    replicas = self.inner.replicas,
                    "shared rate limiter unreachable: falling back to the in-process limiter (1/replicas of the limit) until Redis answers"
                ),
                OnRedisError::Wait => tracing::warn!(
                    key = %self.inner.tat_key,
                    %error,
                    "shared rate limiter unreachable: requests wait until Redis answers"
                ),
            }
        }
    }

    fn recovered(&self) {
        if self.inner.outage.swap(false, Ordering::Relaxed) {
            tracing::info!(key = %self.inner.tat_key, "shared rate limiter reachable again");
        }
    }
}

impl Limiter for RedisLimiter {
    fn acquire(&self) -> LimiterFuture<'_> {
        Box::pin(self.acquire_shared())
    }

    fn pause_for(&self, duration: Duration) -> LimiterFuture<'_> {
        Box::pin(self.pause_shared(duration))
    }

    fn observe_remaining(&self, remaining: u64) -> LimiterFuture<'_> {
        // The service's bucket is empty: its next token comes one interval from now, for everyone.
        if remaining == 0 {
            Box::pin(self.pause_shared(self.inner.interval))
        } else {
            Box::pin(std::future::ready(()))
        }
    }
}

impl RedisLimiterBuilder {
    /// Another limit: `burst` requests at once, then one per `interval` (default: the service's burst of
    /// 10 and 505 ms, its 500 ms plus a margin for jitter).
    pub fn rate(mut self, burst: u32, interval: Duration) -> Self {
        self.burst = burst.max(1);
        self.interval = interval.max(Duration::from_micros(1));
        self
    }

    /// How many processes share the store (default 1): while Redis is unreachable each falls back to
    /// `1 / replicas` of the limit, so together they stay under it. With the default, N replicas in
    /// fallback may send up to N times the limit and meet 429s (which they then follow).
    pub fn replicas(mut self, replicas: u32) -> Self {
        self.replicas = replicas.max(1);
        self
    }

    /// What to do while Redis is unreachable (default [`OnRedisError::FallBack`]).
    pub fn on_redis_error(mut self, on_error: OnRedisError) -> Self {
        self.on_error = on_error;
        self
    }

    /// Bound on one Redis exchange before it counts as a failure (default 1 s).
    pub fn command_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Prefix of the Redis keys (default `store-api:ratelimit`).
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Builds the limiter. Does not connect: the first request does, and falls back if it cannot.
    pub fn build(self) -> Result<RedisLimiter, RedisError> {
        let connection = Connection::open(&self.redis_url, self.timeout)?;
        let base = normalize_base_url(&self.base_url);
        // The hash tag keeps both keys in one Redis Cluster slot (a script may only touch one slot).
        let tat_key = format!("{}:{{{}|{}}}", self.prefix, base, self.store_id);
        let pause_key = format!("{tat_key}:pause");
        let replicas = self.replicas;
        let fallback_interval = self.interval.saturating_mul(replicas);
        let fallback_burst = (self.burst / replicas).max(1);
        Ok(RedisLimiter {
            inner: Arc::new(Inner {
                connection,
                tat_key,
                pause_key,
                burst: self.burst,
                interval: self.interval,
                replicas,
                on_error: self.on_error,
                fallback: RateLimiter::with_rate(fallback_burst, fallback_interval),
                acquire: Script::new(ACQUIRE),
                pause: Script::new(PAUSE),
                known: Mutex::new(Known::default()),
                outage: AtomicBool::new(false),
                fallback_tokens: AtomicU64::new(0),
                waiting: AtomicU64::new(0),
            }),
        })
    }
}

/// Counts a caller waiting for its slot while it lives (dropped futures included).
struct Waiting<'a>(&'a AtomicU64);

impl<'a> Waiting<'a> {
    fn new(counter: &'a AtomicU64) -> Waiting<'a> {
        counter.fetch_add(1, Ordering::Relaxed);
        Waiting(counter)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The key's base URL: the client's normalisation (no trailing `/`, no version path).
fn normalize_base_url(url: &str) -> String {
    let trimmed = url.trim().trim_end_matches('/');
    trimmed
        .strip_suffix(store_api::VERSION_PATH)
        .unwrap_or(trimmed)
        .to_owned()
}

fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX / 4)
}

/// The local wall clock in µs; only used to carry an offset to the server's clock, never compared with
/// another process's clock.
fn local_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_do_not_depend_on_how_the_base_url_is_written() {
        let key = |url: &str| {
            RedisLimiter::builder("redis://127.0.0.1:1/", url, "s1")
                .build()
                .map(|l| l.key().to_owned())
                .ok()
        };
        assert_eq!(key("http://h:1"), key("http://h:1/store-api/2026-08/"));
        assert_ne!(key("http://h:1"), key("http://h:2"));
    }

    #[test]
    fn the_limiter_is_send_sync_and_object_safe() {
        fn check<T: Send + Sync + Clone + 'static>() {}
        check::<RedisLimiter>();
        let limiter = RedisLimiter::builder("redis://127.0.0.1:1/", "http://h", "s").build();
        let _: Option<Arc<dyn Limiter>> = limiter.ok().map(|l| Arc::new(l) as Arc<dyn Limiter>);
    }
}
