//! Shared by the Redis test binaries.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use store_api::{Limiter, LimiterFuture};
use store_api_redis::testing::RedisServer;
use store_api_redis::{RedisDedupe, RedisLimiter};
use store_api_webhooks::dedupe::process_once;

pub mod capture;

/// Whether a slow test should skip itself: true unless `RUN_SLOW_TESTS` is set (to anything but empty
/// or `0`; `.ci/run` sets it). A copy of `store_api_tests::skip_slow_tests`, which this crate cannot
/// use: `store-api-tests` dev-depends on this crate, and a dependency back would be a cycle.
pub fn skip_slow_tests() -> bool {
    use std::io::Write as _;
    if std::env::var("RUN_SLOW_TESTS").is_ok_and(|value| !value.is_empty() && value != "0") {
        return false;
    }
    // Past the harness's capture, so a skipped test is not mistaken for a passed one.
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("(unnamed)");
    let _ = writeln!(
        std::io::stderr().lock(),
        "skipping slow test {name}: set RUN_SLOW_TESTS=1"
    );
    true
}

/// A private Redis, or `None` (after a loud message) when it is not installed and CI did not require it.
pub fn redis() -> Option<RedisServer> {
    RedisServer::start().expect("cannot start redis-server")
}

/// A private Redis that persists every write (for restarts that must keep the data).
pub fn persistent_redis() -> Option<RedisServer> {
    RedisServer::start_persistent().expect("cannot start redis-server")
}

/// Counts what the transport tells a limiter: acquires are requests, `pause_for` calls are 429s.
#[derive(Debug)]
pub struct Counting<L> {
    pub inner: L,
    pub acquired: AtomicU64,
    pub refused: AtomicU64,
}

impl<L: Limiter> Counting<L> {
    pub fn new(inner: L) -> Arc<Counting<L>> {
        Arc::new(Counting {
            inner,
            acquired: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        })
    }

    pub fn requests(&self) -> u64 {
        self.acquired.load(Ordering::SeqCst)
    }

    pub fn status_429(&self) -> u64 {
        self.refused.load(Ordering::SeqCst)
    }
}

impl<L: Limiter> Limiter for Counting<L> {
    fn acquire(&self) -> LimiterFuture<'_> {
        self.acquired.fetch_add(1, Ordering::SeqCst);
        self.inner.acquire()
    }

    fn pause_for(&self, duration: Duration) -> LimiterFuture<'_> {
        // The transport calls this for a 429 and for nothing else.
        self.refused.fetch_add(1, Ordering::SeqCst);
        self.inner.pause_for(duration)
    }

    fn observe_remaining(&self, remaining: u64) -> LimiterFuture<'_> {
        self.inner.observe_remaining(remaining)
    }
}

/// Delivers events `evt_0`… `evt_{events − 1}` three times each, all at once, each delivery to another
/// replica, retrying a delivery that finds the event in progress (as the service retries a 503); answers
/// how many times each event's handler ran.
pub async fn deliver_each_event_thrice(
    replicas: &[Arc<RedisDedupe>],
    events: usize,
) -> HashMap<String, u32> {
    let processed: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let mut deliveries = Vec::new();
    for event in 0..events {
        for round in 0..3 {
            let replica = replicas[(event + round) % replicas.len()].clone();
            let processed = processed.clone();
            deliveries.push(tokio::spawn(async move {
                let id = format!("evt_{event}");
                loop {
                    let outcome = process_once(&*replica, &id, |_lease| async {
                        *processed.lock().unwrap().entry(id.clone()).or_default() += 1;
                        Ok::<_, std::io::Error>(())
                    })
                    .await
                    .unwrap();
                    if !outcome.retry_later() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }));
        }
    }
    for delivery in deliveries {
        delivery.await.unwrap();
    }
    std::mem::take(&mut *processed.lock().unwrap())
}

/// Two replicas' limiters of one store with a burst of 1 and 100 ms between tokens: `a` takes the
/// burst, then `b`, `a`, `b` reserve in turn and get consecutive slots, whoever asked.
pub async fn take_turns(a: &RedisLimiter, b: &RedisLimiter) {
    let started = Instant::now();
    a.acquire().await;
    for (i, limiter) in [b, a, b].into_iter().enumerate() {
        limiter.acquire().await;
        let at = started.elapsed();
        let slot = Duration::from_millis(100 * (i as u64 + 1));
        assert!(at + Duration::from_millis(30) >= slot, "slot {i} at {at:?}");
        assert!(at < slot + Duration::from_millis(150), "slot {i} at {at:?}");
    }
}
