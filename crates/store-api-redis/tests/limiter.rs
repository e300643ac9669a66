//! `RedisLimiter` against a private `redis-server` and the emulator with the service's limit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Counting, redis};
use store_api::{Client, Limiter};
use store_api_fixtures::Emulator;
use store_api_redis::testing::RedisServer;
use store_api_redis::{OnRedisError, RedisLimiter};

fn limiter(url: &str, base_url: &str, store: &str) -> RedisLimiter {
    RedisLimiter::builder(url, base_url, store)
        .build()
        .expect("valid settings")
}

/// Three clients, each with its own limiter and connection manager (as three replicas would have),
/// share the store's limit: the emulator never answers 429, and the whole run takes as long as the
/// limit says, not a third of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_with_separate_limiters_share_the_store_limit() {
    let Some(server) = redis() else { return };
    let emulator = Emulator::builder()
        .rate_limit(true)
        .network_downloads(false)
        .start()
        .await
        .unwrap();
    let store = emulator.active_store().unwrap();
    let replicas: Vec<_> = (0..3)
        .map(|_| {
            let counting = Counting::new(limiter(&server.url(), &emulator.base_url(), &store.id));
            let client = Client::builder()
                .base_url(emulator.base_url())
                .store_id(&store.id)
                .api_key(&store.api_key)
                .limiter(counting.clone())
                .build()
                .unwrap();
            (counting, client)
        })
        .collect();
    let started = Instant::now();
    let mut calls = Vec::new();
    for (_, client) in &replicas {
        for _ in 0..2 {
            let client = client.clone();
            calls.push(tokio::spawn(async move {
                for _ in 0..3 {
                    client.status().await.unwrap();
                }
            }));
        }
    }
    for call in calls {
        call.await.unwrap();
    }
    let wall = started.elapsed();
    let requests: u64 = replicas.iter().map(|(c, _)| c.requests()).sum();
    let refused: u64 = replicas.iter().map(|(c, _)| c.status_429()).sum();
    assert_eq!(requests, 18);
    assert_eq!(refused, 0, "no 429 with a shared limit");
    // 18 requests: the burst of 10, then 8 at one per 505 ms.
    assert!(wall >= Duration::from_millis(3_900), "limited: {wall:?}");
    emulator.shutdown().await;
}

/// A 429's pause, reported to one replica's limiter, holds every replica.
#[tokio::test]
async fn a_pause_seen_by_one_replica_pauses_the_others() {
    let Some(server) = redis() else { return };
    let make = || {
        RedisLimiter::builder(server.url(), "http://h", "s1")
            .rate(100, Duration::from_millis(1))
            .build()
            .unwrap()
    };
    let (a, b) = (make(), make());
    b.acquire().await; // connected, no pause yet
    a.pause_for(Duration::from_millis(600)).await;
    let started = Instant::now();
    b.acquire().await;
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(550), "b waited {waited:?}");
    // Another store is not paused.
    let other = RedisLimiter::builder(server.url(), "http://h", "s2")
        .rate(100, Duration::from_millis(1))
        .build()
        .unwrap();
    let started = Instant::now();
    other.acquire().await;
    assert!(started.elapsed() < Duration::from_millis(300));
}

/// Callers are served in the order they asked, across replicas: each reservation waits one interval
/// more than the previous, whoever made it.
#[tokio::test]
async fn waiting_is_fair_across_replicas() {
    let Some(server) = redis() else { return };
    let make = || {
        RedisLimiter::builder(server.url(), "http://h", "fair")
            .rate(1, Duration::from_millis(100))
            .build()
            .unwrap()
    };
    common::take_turns(&make(), &make()).await;
}

/// Redis killed mid-run: the limiter falls back (no panic, no error), and when Redis is back (empty)
/// the state this process knew is put back instead of a fresh burst.
#[tokio::test]
async fn a_redis_restart_falls_back_then_restores_the_bucket() {
    let Some(mut server) = redis() else { return };
    let limiter = RedisLimiter::builder(server.url(), "http://h", "restart")
        .rate(2, Duration::from_millis(400))
        .command_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    limiter.acquire().await;
    limiter.acquire().await;
    assert!(!limiter.in_outage());

    server.stop();
    let started = Instant::now();
    // Falls back: waits for the slot Redis had handed out, then the in-process limiter.
    tokio::time::timeout(Duration::from_secs(5), limiter.acquire())
        .await
        .expect("the fallback answers");
    assert!(limiter.in_outage());
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the known slots were honoured"
    );

    server.restart().unwrap();
    // The connection manager notices the dead connection on the first command and reconnects.
    for _ in 0..20 {
        limiter.acquire().await;
        if !limiter.in_outage() {
            break;
        }
    }
    assert!(!limiter.in_outage(), "back on Redis");
    // The restarted Redis is empty, yet no new burst: what this process knew was carried over, so
    // the next two tokens still come one interval apart.
    let started = Instant::now();
    limiter.acquire().await;
    limiter.acquire().await;
    assert!(
        started.elapsed() >= Duration::from_millis(700),
        "no fresh burst after the restart: {:?}",
        started.elapsed()
    );
}

/// Failing closed: nothing is sent while Redis is gone; requests go on when it is back.
#[tokio::test]
async fn fail_closed_waits_for_redis() {
    let Some(mut server) = redis() else { return };
    let limiter = Arc::new(
        RedisLimiter::builder(server.url(), "http://h", "closed")
            .rate(100, Duration::from_millis(1))
            .on_redis_error(OnRedisError::Wait)
            .command_timeout(Duration::from_millis(200))
            .build()
            .unwrap(),
    );
    limiter.acquire().await;
    server.stop();
    let waiting = tokio::spawn({
        let limiter = limiter.clone();
        async move { limiter.acquire().await }
    });
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(!waiting.is_finished(), "no token without Redis");
    server.restart().unwrap();
    tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("served once Redis is back")
        .unwrap();
}

/// Unreachable from the start: the client still works (fallback), nothing panics.
#[tokio::test]
async fn an_unreachable_redis_falls_back_from_the_first_request() {
    let limiter = RedisLimiter::builder("redis://127.0.0.1:1/", "http://h", "s")
        .command_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    tokio::time::timeout(Duration::from_secs(3), limiter.acquire())
        .await
        .expect("falls back");
    assert!(limiter.in_outage());
}

/// Sets `key` to Redis's clock plus `ahead`, as a step back of that clock leaves the keys written
/// before it.
async fn set_ahead(server: &RedisServer, key: &str, ahead: Duration) {
    let client = redis::Client::open(server.url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let (seconds, micros): (u64, u64) = redis::cmd("TIME")
        .query_async(&mut connection)
        .await
        .unwrap();
    let at = seconds * 1_000_000 + micros + ahead.as_micros() as u64;
    let _: () = redis::cmd("SET")
        .arg(key)
        .arg(at)
        .query_async(&mut connection)
        .await
        .unwrap();
}

async fn delete(server: &RedisServer, keys: &[&str]) {
    let client = redis::Client::open(server.url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("DEL")
        .arg(keys)
        .query_async(&mut connection)
        .await
        .unwrap();
}

/// Redis's clock steps back an hour (an NTP step, a restored VM, a failover to a lagging node): the
/// bucket's keys now lie an hour ahead of that clock. Before the fix the next `acquire` waited the
/// hour. Now no wait exceeds the maximum pause, the capping is logged with its reason, and once the
/// keys are deleted (or the clock is back) the floors this process kept do not hold it back: they
/// count down on its own clock and are gone within the maximum pause.
#[tokio::test]
async fn a_key_set_an_hour_ahead_never_stretches_a_wait() {
    let Some(server) = redis() else { return };
    let max_pause = Duration::from_millis(500);
    let limiter = RedisLimiter::builder(server.url(), "http://h", "clock")
        .rate(1, Duration::from_millis(100))
        .max_pause(max_pause)
        .build()
        .unwrap();
    let pause_key = format!("{}:pause", limiter.key());
    limiter.acquire().await;
    let (logs, _guard) = common::capture::capture_traces();
    for key in [limiter.key(), pause_key.as_str()] {
        set_ahead(&server, key, Duration::from_secs(3600)).await;
        let started = Instant::now();
        tokio::time::timeout(max_pause * 10, limiter.acquire())
            .await
            .expect("no wait beyond the maximum pause");
        let waited = started.elapsed();
        assert!(
            waited <= max_pause + Duration::from_millis(500),
            "{key}: waited {waited:?}"
        );
    }
    let logged = logs.text();
    assert!(
        logged.contains("beyond the maximum pause") && logged.contains("clock stepped back"),
        "the capping is logged with its reason: {logged}"
    );
    assert!(!limiter.in_outage());

    delete(&server, &[limiter.key(), &pause_key]).await;
    tokio::time::sleep(max_pause + Duration::from_millis(150)).await;
    let started = Instant::now();
    limiter.acquire().await;
    assert!(
        started.elapsed() < Duration::from_millis(400),
        "a fresh bucket once the floors expired: {:?}",
        started.elapsed()
    );
}

/// A pause asked beyond the maximum (a 429's Retry-After) is capped, logged, and holds every replica
/// for the maximum only.
#[tokio::test]
async fn a_pause_longer_than_the_maximum_is_capped() {
    let Some(server) = redis() else { return };
    let make = || {
        RedisLimiter::builder(server.url(), "http://h", "long-pause")
            .rate(100, Duration::from_millis(1))
            .max_pause(Duration::from_millis(400))
            .build()
            .unwrap()
    };
    let (a, b) = (make(), make());
    b.acquire().await;
    let (logs, _guard) = common::capture::capture_traces();
    a.pause_for(Duration::from_secs(86_400)).await;
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(2), b.acquire())
        .await
        .expect("the pause is capped");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_millis(1_500),
        "paused for the maximum: {waited:?}"
    );
    assert!(logs.text().contains("capped"), "{}", logs.text());
}

/// More callers than fit within the maximum pause: those whose slot lies further ahead ask again when
/// one comes within it. Every caller is served, never faster than the rate (the n-th send, counted
/// from 0, comes n intervals after the first at the earliest: a late wake-up only delays it), and the
/// run takes about as long as the rate says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_longer_than_the_maximum_pause_keeps_its_spacing() {
    let Some(server) = redis() else { return };
    let interval = Duration::from_millis(50);
    let limiters: Vec<Arc<RedisLimiter>> = (0..3)
        .map(|_| {
            Arc::new(
                RedisLimiter::builder(server.url(), "http://h", "queue")
                    .rate(1, interval)
                    .max_pause(interval * 4)
                    .build()
                    .unwrap(),
            )
        })
        .collect();
    let started = Instant::now();
    let callers: Vec<_> = (0..15)
        .map(|i| {
            let limiter = limiters[i % 3].clone();
            tokio::spawn(async move {
                limiter.acquire().await;
                started.elapsed()
            })
        })
        .collect();
    let mut sent = Vec::new();
    for caller in callers {
        sent.push(caller.await.unwrap());
    }
    sent.sort();
    for (n, at) in sent.iter().enumerate() {
        assert!(
            *at + Duration::from_millis(5) >= sent[0] + interval * n as u32,
            "send {n} came before its slot: {sent:?}"
        );
    }
    let last = sent[sent.len() - 1];
    assert!(last < interval * 14 + Duration::from_secs(1), "{sent:?}");
}
