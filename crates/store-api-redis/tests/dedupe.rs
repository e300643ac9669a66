//! `RedisDedupe` against a private `redis-server`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{persistent_redis, redis};
use store_api_redis::RedisDedupe;
use store_api_webhooks::dedupe::{Claim, ClaimToken, Dedupe, process_once};

fn fresh(claim: Claim) -> ClaimToken {
    match claim {
        Claim::Fresh(token) => token,
        other => panic!("expected a fresh claim, got {other:?}"),
    }
}

fn dedupe(url: &str) -> RedisDedupe {
    RedisDedupe::builder(url, "store_test").build().unwrap()
}

#[tokio::test]
async fn claim_then_done() {
    let Some(server) = redis() else { return };
    let (a, b) = (dedupe(&server.url()), dedupe(&server.url()));
    let token = fresh(a.begin("evt_1").await.unwrap());
    assert_eq!(b.begin("evt_1").await.unwrap(), Claim::InProgress);
    assert!(a.complete("evt_1", token).await.unwrap());
    assert_eq!(b.begin("evt_1").await.unwrap(), Claim::Duplicate);
    assert_eq!(a.begin("evt_1").await.unwrap(), Claim::Duplicate);
}

#[tokio::test]
async fn done_markers_are_kept_at_least_fourteen_days() {
    let Some(server) = redis() else { return };
    let a = dedupe(&server.url());
    let token = fresh(a.begin("evt_ttl").await.unwrap());
    assert!(a.complete("evt_ttl", token).await.unwrap());
    let client = redis::Client::open(server.url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let ttl: i64 = redis::cmd("PTTL")
        .arg(a.key("evt_ttl"))
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(ttl >= 14 * 24 * 3600 * 1000, "ttl {ttl} ms");
}

#[tokio::test]
async fn only_the_owner_abandons() {
    let Some(server) = redis() else { return };
    let lease = Duration::from_millis(200);
    let a = RedisDedupe::builder(server.url(), "store_test")
        .lease(lease)
        .build()
        .unwrap();
    let b = RedisDedupe::builder(server.url(), "store_test")
        .lease(lease)
        .build()
        .unwrap();
    let Claim::Fresh(a_token) = a.begin("evt_2").await.unwrap() else {
        panic!("the first claim is fresh")
    };
    // A token that does not hold the claim changes nothing.
    b.abandon("evt_2", ClaimToken::new(a_token.get() ^ 1))
        .await
        .unwrap();
    assert_eq!(b.begin("evt_2").await.unwrap(), Claim::InProgress);
    // a's lease passes to b; a's late abandon must not release b's claim.
    tokio::time::sleep(lease + Duration::from_millis(100)).await;
    let Claim::Fresh(b_token) = b.begin("evt_2").await.unwrap() else {
        panic!("an expired lease can be claimed")
    };
    a.abandon("evt_2", a_token).await.unwrap();
    assert_eq!(a.begin("evt_2").await.unwrap(), Claim::InProgress);
    // The owner's abandon releases it.
    b.abandon("evt_2", b_token).await.unwrap();
    assert!(matches!(a.begin("evt_2").await.unwrap(), Claim::Fresh(_)));
}

#[tokio::test]
async fn an_expired_lease_lets_another_replica_process() {
    let Some(server) = redis() else { return };
    let lease = Duration::from_millis(150);
    let a = RedisDedupe::builder(server.url(), "store_test")
        .lease(lease)
        .build()
        .unwrap();
    let b = RedisDedupe::builder(server.url(), "store_test")
        .lease(lease)
        .build()
        .unwrap();
    assert!(matches!(a.begin("evt_3").await.unwrap(), Claim::Fresh(_)));
    // a dies without completing.
    drop(a);
    assert_eq!(b.begin("evt_3").await.unwrap(), Claim::InProgress);
    tokio::time::sleep(lease + Duration::from_millis(100)).await;
    assert!(matches!(b.begin("evt_3").await.unwrap(), Claim::Fresh(_)));
}

/// Fails closed: with Redis gone, `process_once` reports a store error and never runs the handler (the
/// receiver answers 5xx and the service retries).
#[tokio::test]
async fn fails_closed_when_redis_is_gone() {
    let Some(mut server) = redis() else { return };
    let a = RedisDedupe::builder(server.url(), "store_test")
        .command_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    assert!(matches!(
        a.begin("evt_warm").await.unwrap(),
        Claim::Fresh(_)
    ));
    server.stop();
    let ran = Arc::new(Mutex::new(false));
    let outcome = process_once(&a, "evt_4", |_lease| {
        let ran = ran.clone();
        async move {
            *ran.lock().unwrap() = true;
            Ok::<_, std::io::Error>(())
        }
    })
    .await;
    assert!(outcome.is_err());
    assert!(
        !*ran.lock().unwrap(),
        "the handler never runs without the store"
    );
}

/// With persistence on, a Redis restart keeps the done markers: a delivery retried after the restart is
/// still a duplicate.
#[tokio::test]
async fn a_persistent_redis_restart_keeps_done_markers() {
    let Some(mut server) = persistent_redis() else {
        return;
    };
    let a = dedupe(&server.url());
    let token = fresh(a.begin("evt_5").await.unwrap());
    assert!(a.complete("evt_5", token).await.unwrap());
    server.restart().unwrap();
    let b = dedupe(&server.url());
    assert_eq!(b.begin("evt_5").await.unwrap(), Claim::Duplicate);
    // a's connection manager reconnects by itself.
    let mut answer = a.begin("evt_5").await;
    for _ in 0..20 {
        if answer.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        answer = a.begin("evt_5").await;
    }
    assert_eq!(answer.unwrap(), Claim::Duplicate);
}

/// The same events delivered to three replicas at once, each with its own store instance: every event
/// is processed exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_process_each_event_once() {
    let Some(server) = redis() else { return };
    let replicas: Vec<Arc<RedisDedupe>> = (0..3).map(|_| Arc::new(dedupe(&server.url()))).collect();
    let processed = common::deliver_each_event_thrice(&replicas, 200).await;
    assert_eq!(processed.len(), 200);
    assert!(processed.values().all(|&n| n == 1), "{processed:?}");
}

/// Two stores on one Redis never share a key: the same event id is claimed and completed for each
/// store separately.
#[tokio::test]
async fn stores_do_not_share_event_keys() {
    let Some(server) = redis() else { return };
    let alpha = RedisDedupe::builder(server.url(), "store_alpha")
        .build()
        .unwrap();
    let beta = RedisDedupe::builder(server.url(), "store_beta")
        .build()
        .unwrap();
    assert_ne!(alpha.key("evt_1"), beta.key("evt_1"));
    let token = fresh(alpha.begin("evt_1").await.unwrap());
    assert!(alpha.complete("evt_1", token).await.unwrap());
    assert!(matches!(
        beta.begin("evt_1").await.unwrap(),
        Claim::Fresh(_)
    ));
    assert_eq!(alpha.begin("evt_1").await.unwrap(), Claim::Duplicate);
    // A store id holding the separator cannot reach another store's keys.
    let tricky = RedisDedupe::builder(server.url(), "store_alpha:evt")
        .build()
        .unwrap();
    assert_ne!(tricky.key("1"), alpha.key("evt:1"));
}
