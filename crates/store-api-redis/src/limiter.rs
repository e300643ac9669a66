//! The store's rate limit shared by every process, on Redis.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use redis::Script;
use store_api::{Limiter, LimiterFuture, RateLimiter};
use tokio::time::Instant;

use crate::connection::{Connection, DEFAULT_COMMAND_TIMEOUT, RedisConfig, Retries};
use crate::error::RedisError;
use crate::keys;

/// What both scripts start with: the server's clock, and reading a value capped at a limit.
///
/// No caller is ever handed a wait longer than the horizon (the limiter's maximum pause), so no TAT or
/// pause a caller wrote lies further ahead of the clock than the limits the scripts pass to `capped`. A
/// value beyond was written under a clock that has since stepped back (an NTP step, a restored VM, a
/// failover to a node whose clock lags) or by hand: it is capped, written back capped, and how far it
/// lay beyond is answered so that the caller logs it.
///
/// Numbers are formatted with `%.0f`: Lua's default `%.14g` would round µs timestamps.
macro_rules! lua_prelude {
    () => {
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ahead = 0
local function store(key, value)
  redis.call('SET', key, string.format('%.0f', value), 'PX', math.ceil((value - now) / 1000) + 1000)
end
local function capped(key, limit)
  local value = tonumber(redis.call('GET', key))
  if value and value > limit then
    ahead = math.max(ahead, value - limit)
    store(key, limit)
    return limit
  end
  return value
end
local function us(value)
  return string.format('%.0f', value)
end
"
    };
}

/// GCRA with reservations, run atomically by Redis on its own clock.
///
/// KEYS: 1 the bucket's TAT (theoretical arrival time, µs of the server's clock), 2 the pause (µs until
/// which nothing may be sent). ARGV: 1 interval µs, 2 burst, 3 the horizon µs (the longest wait handed
/// out), 4 the caller's floor for the TAT and 5 for the pause (µs from now, 0 for none), 6 how many
/// slots other replicas may hold past the caller's floor.
///
/// Every call takes the next slot (`TAT` advances by one interval) and answers how long to wait for
/// it, so callers are served in the order they arrived, whichever replica they are in: no polling, no
/// starvation. A slot further away than the horizon is not taken: the answer says when to ask again
/// (at most one interval later), so no wait exceeds the horizon whatever the clock says. A pause means
/// the service's bucket is empty when it ends, so the TAT is pushed to `pause + (burst − 1) × interval`,
/// the TAT of an empty bucket at that instant.
///
/// The floors are what this caller last saw, relative to now (each process counts them down on its own
/// monotonic clock, so they expire and no step of any clock moves them): after Redis lost its data (a
/// restart without persistence, deleted keys) the first callers put the state back instead of granting
/// a fresh burst the service does not have; the first of them also skips the slots other replicas may
/// have reserved after the last answer it saw (estimated as `replicas − 1` times its own waiting
/// callers, plus a burst). Both are capped at the horizon like everything else.
///
/// Answers `{slot taken (1/0), wait µs (or when to ask again), TAT − now, pause − now, how far a stored
/// value lay beyond its cap}`.
const ACQUIRE: &str = concat!(
    lua_prelude!(),
    r"
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local horizon = tonumber(ARGV[3])
local tat_limit = now + horizon + burst * interval
local stored = capped(KEYS[1], tat_limit)
local pause = capped(KEYS[2], now + horizon) or 0
if tonumber(ARGV[5]) > 0 then
  pause = math.max(pause, now + math.min(tonumber(ARGV[5]), horizon))
end
local floor = math.min(tonumber(ARGV[4]), horizon + burst * interval)
local tat
if stored == nil and floor > 0 then
  -- Gone although this caller saw slots reserved past now (the key outlives its TAT): Redis lost its
  -- data. Skip the slots other replicas may hold past what this caller saw (ARGV[6], its estimate).
  tat = now + floor + tonumber(ARGV[6]) * interval
else
  tat = math.max(stored or 0, now + floor)
end
tat = math.min(math.max(tat, now, pause + (burst - 1) * interval), tat_limit)
local new_tat = tat + interval
local send_at = math.max(now, new_tat - burst * interval, pause)
if send_at > now + horizon then
  if tat ~= stored then
    store(KEYS[1], tat)
  end
  return {0, us(send_at - now - horizon), us(tat - now), us(pause - now), us(ahead)}
end
store(KEYS[1], new_tat)
return {1, us(send_at - now), us(new_tat - now), us(pause - now), us(ahead)}
"
);

/// Extends the shared pause to `now + ARGV[1]` µs (never shortens it); ARGV[2] is the horizon, which
/// caps both. Answers `{pause − now, how far the stored pause lay beyond its cap}`.
const PAUSE: &str = concat!(
    lua_prelude!(),
    r"
local horizon = tonumber(ARGV[2])
local current = capped(KEYS[1], now + horizon) or 0
local pause = now + math.min(tonumber(ARGV[1]), horizon)
if pause > current then
  store(KEYS[1], pause)
else
  pause = current
end
return {us(pause - now), us(ahead)}
"
);

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
/// No wait it hands out exceeds its maximum pause ([`RedisLimiterBuilder::max_pause`], by default the
/// client's [`DEFAULT_MAX_RATE_LIMIT_PAUSE`](store_api::DEFAULT_MAX_RATE_LIMIT_PAUSE)), whatever
/// Redis's clock says: a caller whose slot would lie further ahead asks again when one comes within
/// it, and state found beyond it (Redis's clock stepped back) is capped and logged (`warn`).
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
    /// The longest wait handed out, and the longest pause.
    horizon: Duration,
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
    /// Callers whose slot lies beyond the horizon take turns: one per process asks Redis again.
    beyond: tokio::sync::Mutex<()>,
}

/// What this process last learnt of the shared state, as instants of its own monotonic clock: they
/// pass by themselves (the floors expire), and no step of Redis's clock or the wall clock moves them.
#[derive(Debug, Default, Clone, Copy)]
struct Known {
    /// The last TAT seen (or pushed by the fallback's sends).
    tat: Option<Instant>,
    /// The end of the last pause seen.
    pause: Option<Instant>,
    /// During an outage, when the fallback may start sending.
    gate: Option<Instant>,
}

/// Redis's answer to a reservation.
enum Answer {
    /// A slot: wait this long, then send.
    Slot(Duration),
    /// The next slot lies beyond the horizon: ask again after this long.
    Beyond(Duration),
}

impl fmt::Debug for RedisLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisLimiter")
            .field("key", &self.inner.tat_key)
            .field("burst", &self.inner.burst)
            .field("interval", &self.inner.interval)
            .field("max_pause", &self.inner.horizon)
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
    redis: RedisConfig,
    base_url: String,
    store_id: String,
    burst: u32,
    interval: Duration,
    max_pause: Duration,
    replicas: u32,
    on_error: OnRedisError,
    timeout: Duration,
    prefix: String,
}

impl RedisLimiter {
    /// Settings for the limiter of `store_id` at `base_url` on the Redis at `redis` (a URL or a
    /// [`RedisConfig`]), with the service's limit.
    ///
    /// The base URL is normalised before it names the key, so every way of writing one service shares
    /// one bucket: scheme and host lowercased (an international host in its ASCII form), the scheme's
    /// default port dropped (`:443` for https, `:80` for http), credentials, query and fragment
    /// dropped, and trailing `/` and the version path (`/store-api/2026-08`) removed.
    pub fn builder(
        redis: impl Into<RedisConfig>,
        base_url: impl Into<String>,
        store_id: impl Into<String>,
    ) -> RedisLimiterBuilder {
        RedisLimiterBuilder {
            redis: redis.into(),
            base_url: base_url.into(),
            store_id: store_id.into(),
            burst: store_api_raw::contract::RATE_LIMIT_BURST,
            // The in-process limiter's interval: the service's 500 ms plus a margin for jitter.
            interval: store_api::RateLimiter::DEFAULT_INTERVAL,
            max_pause: store_api::DEFAULT_MAX_RATE_LIMIT_PAUSE,
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
        // Held while this caller's slot lies beyond the horizon: one such caller per process asks.
        let mut turn = None;
        loop {
            match self.reserve().await {
                Ok(Answer::Slot(wait)) => {
                    self.recovered();
                    drop(turn);
                    if !wait.is_zero() {
                        store_api::announce_rate_limit_wait(wait);
                        let _waiting = Waiting::new(&self.inner.waiting);
                        tokio::time::sleep(wait).await;
                    }
                    return;
                }
                Ok(Answer::Beyond(again)) => {
                    self.recovered();
                    if turn.is_none() {
                        // Others of this process may have asked meanwhile: ask once it is our turn.
                        turn = Some(self.inner.beyond.lock().await);
                        continue;
                    }
                    store_api::announce_rate_limit_wait(again);
                    tokio::time::sleep(again).await;
                }
                Err(error) => {
                    self.failed(&error);
                    turn = None;
                    match self.inner.on_error {
                        OnRedisError::Wait => tokio::time::sleep(Duration::from_millis(200)).await,
                        OnRedisError::FallBack => {
                            // Wait for the slots already handed out, asking Redis again meanwhile:
                            // if it is back, the shared schedule serves this caller.
                            let gate = self.known().gate.unwrap_or_else(Instant::now);
                            let now = Instant::now();
                            if gate <= now {
                                return self.acquire_fallback().await;
                            }
                            tokio::time::sleep((gate - now).min(Duration::from_millis(250))).await;
                        }
                    }
                }
            }
        }
    }

    /// One round trip: reserves the next slot and answers how long to wait for it, or when to ask
    /// again if it lies beyond the horizon.
    async fn reserve(&self) -> Result<Answer, RedisError> {
        let known = self.known();
        let asked = Instant::now();
        let answer: Vec<i64> = self
            .inner
            .connection
            .invoke(
                self.inner
                    .acquire
                    .key(&self.inner.tat_key)
                    .key(&self.inner.pause_key)
                    .arg(micros(self.inner.interval))
                    .arg(self.inner.burst)
                    .arg(micros(self.inner.horizon))
                    .arg(remaining(known.tat, asked))
                    .arg(remaining(known.pause, asked))
                    .arg(self.unseen_slots()),
            )
            .await?;
        let [slot, wait, tat, pause, ahead] = answer[..] else {
            return Err(RedisError::Unexpected(format!("{answer:?}")));
        };
        self.capped(ahead);
        // The server's `now` lies between asking and the answer: counting from the asking keeps the
        // floors from creeping later by a round trip on every call.
        self.learn(|k| {
            k.tat = latest(k.tat, after(asked, tat));
            k.pause = latest(k.pause, after(asked, pause));
        });
        // Never longer than the horizon, whatever was answered.
        let wait = from_micros(wait).min(self.inner.horizon);
        Ok(if slot == 1 {
            Answer::Slot(wait)
        } else {
            Answer::Beyond(wait)
        })
    }

    /// The in-process fallback, once the slots already handed out by Redis have passed (the gate):
    /// sends at `1 / replicas` of the rate. Each token sent pushes the floor this process will give
    /// Redis when it is back: the service's bucket may be empty by then.
    async fn acquire_fallback(&self) {
        self.inner.fallback.acquire().await;
        self.inner.fallback_tokens.fetch_add(1, Ordering::Relaxed);
        let empty_at = Instant::now() + self.inner.interval.saturating_mul(self.inner.burst);
        self.learn(|k| k.tat = latest(k.tat, Some(empty_at)));
    }

    async fn pause_shared(&self, duration: Duration) {
        if duration > self.inner.horizon {
            tracing::warn!(
                key = %self.inner.tat_key,
                asked = ?duration,
                max_pause = ?self.inner.horizon,
                "a pause longer than the shared limiter's maximum pause was asked (a 429's Retry-After): capped"
            );
        }
        let duration = duration.min(self.inner.horizon);
        let asked = Instant::now();
        let result: Result<Vec<i64>, RedisError> = self
            .inner
            .connection
            .invoke(
                self.inner
                    .pause
                    .key(&self.inner.pause_key)
                    .arg(micros(duration))
                    .arg(micros(self.inner.horizon)),
            )
            .await;
        match result.and_then(|answer| match answer[..] {
            [pause, ahead] => Ok((pause, ahead)),
            _ => Err(RedisError::Unexpected(format!("{answer:?}"))),
        }) {
            Ok((pause, ahead)) => {
                self.recovered();
                self.capped(ahead);
                self.learn(|k| k.pause = latest(k.pause, after(asked, pause)));
            }
            Err(error) => {
                self.failed(&error);
                // Remember it for Redis's return, and hold this process meanwhile.
                self.learn(|k| k.pause = latest(k.pause, Some(asked + duration)));
                self.inner.fallback.pause_for(duration);
            }
        }
    }

    /// Logs state Redis found beyond what any caller can have written (`ahead` µs past its cap).
    fn capped(&self, ahead: i64) {
        if ahead > 0 {
            tracing::warn!(
                key = %self.inner.tat_key,
                ahead = ?from_micros(ahead),
                max_pause = ?self.inner.horizon,
                "the shared rate limit's state in Redis lay beyond the maximum pause (Redis's clock stepped back, or the key was set by hand): capped, so no wait exceeds the maximum pause"
            );
        }
    }

    /// How many slots other replicas may hold past the last TAT this one saw: as many callers as this
    /// replica has waiting, in each other replica (replicas share a store's load alike), plus a burst
    /// for the estimate's error. Only used after Redis lost its data, or for the fallback's start.
    fn unseen_slots(&self) -> u64 {
        // One more than are waiting: the caller asking now has just been served too.
        let waiting = self.inner.waiting.load(Ordering::Relaxed).saturating_add(1);
        let others = u64::from(self.inner.replicas.saturating_sub(1));
        others
            .saturating_mul(waiting)
            .saturating_add(u64::from(self.inner.burst))
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
            let unseen = self
                .inner
                .interval
                .saturating_mul(u32::try_from(self.unseen_slots()).unwrap_or(u32::MAX));
            self.learn(|k| k.gate = latest(k.tat, k.pause).map(|seen| seen + unseen));
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

    /// The longest wait this limiter hands out and the longest it pauses the store (default
    /// [`DEFAULT_MAX_RATE_LIMIT_PAUSE`](store_api::DEFAULT_MAX_RATE_LIMIT_PAUSE), 10 s, the client's
    /// default for [`max_rate_limit_pause`](store_api::ClientBuilder::max_rate_limit_pause): set both
    /// alike). At least one interval. A caller whose slot lies further ahead asks Redis again when one
    /// comes within it, so a queue longer than this is served fairly still, one interval at a time.
    pub fn max_pause(mut self, max_pause: Duration) -> Self {
        self.max_pause = max_pause;
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
    /// Fails on an invalid Redis URL or settings, or a base URL that is not http(s).
    pub fn build(self) -> Result<RedisLimiter, RedisError> {
        let connection = Connection::open(self.redis, self.timeout, Retries::ByTheLibrary)?;
        let base = normalize_base_url(&self.base_url)?;
        // The hash tag keeps both keys in one Redis Cluster slot (a script may only touch one slot).
        let tat_key = format!(
            "{}:{{{}|{}}}",
            self.prefix,
            base,
            keys::part(&self.store_id)
        );
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
                horizon: self.max_pause.max(self.interval),
                replicas,
                on_error: self.on_error,
                fallback: RateLimiter::with_rate(fallback_burst, fallback_interval),
                acquire: Script::new(ACQUIRE),
                pause: Script::new(PAUSE),
                known: Mutex::new(Known::default()),
                outage: AtomicBool::new(false),
                fallback_tokens: AtomicU64::new(0),
                waiting: AtomicU64::new(0),
                beyond: tokio::sync::Mutex::new(()),
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

/// The key's base URL (see [`RedisLimiter::builder`]).
fn normalize_base_url(url: &str) -> Result<String, RedisError> {
    let mut parsed = url::Url::parse(url.trim())
        .map_err(|e| RedisError::Config(format!("invalid base URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(RedisError::Config(
            "the base URL must be http or https".into(),
        ));
    }
    // The url crate lowercases the scheme and the host (IDNA to ASCII) and drops a default port.
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    parsed.set_query(None);
    parsed.set_fragment(None);
    let text = parsed.as_str().trim_end_matches('/');
    let text = text
        .strip_suffix(store_api_raw::contract::VERSION_PREFIX)
        .unwrap_or(text);
    Ok(text.trim_end_matches('/').to_owned())
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX / 4)
}

/// µs as a duration; a negative count (an instant already passed) is zero.
fn from_micros(us: i64) -> Duration {
    Duration::from_micros(u64::try_from(us).unwrap_or(0))
}

/// The instant `us` µs after `start`, or none when that is not after it.
fn after(start: Instant, us: i64) -> Option<Instant> {
    (us > 0).then(|| start + from_micros(us))
}

/// The later of two instants, either possibly unknown.
fn latest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    a.max(b)
}

/// µs from `now` until `until` (0 when unknown or passed): a floor as the scripts take it.
fn remaining(until: Option<Instant>, now: Instant) -> u64 {
    until.map_or(0, |until| micros(until.saturating_duration_since(now)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(base_url: &str, store: &str) -> Option<String> {
        RedisLimiter::builder("redis://127.0.0.1:1/", base_url, store)
            .build()
            .map(|l| l.key().to_owned())
            .ok()
    }

    #[test]
    fn keys_do_not_depend_on_how_the_base_url_is_written() {
        let canonical = key("https://api.example.com", "s1");
        assert_eq!(
            canonical.as_deref(),
            Some("store-api:ratelimit:{https://api.example.com|s1}"),
            "the usual spelling keeps the key of earlier versions"
        );
        for spelling in [
            "https://api.example.com/",
            "HTTPS://API.Example.COM",
            "https://api.example.com:443",
            "https://api.example.com:443/store-api/2026-08/",
            " https://api.example.com/store-api/2026-08 ",
            "https://user:secret@api.example.com/?q=1#f",
        ] {
            assert_eq!(key(spelling, "s1"), canonical, "{spelling}");
        }
        assert_ne!(key("http://api.example.com", "s1"), canonical);
        assert_ne!(key("https://api.example.com:8443", "s1"), canonical);
        assert_ne!(key("https://api.example.com", "s2"), canonical);
        assert_eq!(key("http://h:80", "s"), key("http://h", "s"));
    }

    #[test]
    fn store_ids_cannot_forge_another_stores_key() {
        assert_ne!(key("http://h/a|b", "c"), key("http://h/a", "b|c"));
        let braces = key("http://h", "x}y").unwrap_or_default();
        assert_eq!(braces.matches('}').count(), 1, "one hash tag: {braces}");
    }

    #[test]
    fn a_base_url_that_is_not_http_is_refused() {
        for bad in ["ftp://h", "not a url", ""] {
            assert!(
                matches!(
                    RedisLimiter::builder("redis://127.0.0.1:1/", bad, "s").build(),
                    Err(RedisError::Config(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_limiter_is_send_sync_and_object_safe() {
        fn check<T: Send + Sync + Clone + 'static>() {}
        check::<RedisLimiter>();
        let limiter = RedisLimiter::builder("redis://127.0.0.1:1/", "http://h", "s").build();
        let _: Option<Arc<dyn Limiter>> = limiter.ok().map(|l| Arc::new(l) as Arc<dyn Limiter>);
    }
}
