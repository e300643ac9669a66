//! `RedisLimiter` and `RedisDedupe` on a private Redis Cluster (three primaries, three replicas, node
//! timeout 1 s), found by detection from one node or given as seed nodes, and through the failover of
//! the primary that holds their keys. Each test starts its own cluster (about 2 s). The quick tier runs
//! the first test (the cluster's smoke test, about 3 s); the failovers and the standalone client's
//! refusals (about 20 s: a MOVED counts as transient, so each refused key is retried for the 1 s
//! command timeout) are the slow tier (`RUN_SLOW_TESTS=1`, which CI sets).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::skip_slow_tests;
use store_api::Limiter;
use store_api_redis::testing::RedisCluster;
use store_api_redis::{OnRedisError, RedisConfig, RedisDedupe, RedisLimiter, Topology};
use store_api_webhooks::dedupe::{Claim, Dedupe};

fn cluster() -> Option<RedisCluster> {
    RedisCluster::start().expect("cannot start the Redis Cluster")
}

/// One URL of a cluster node is enough: the cluster is detected, the limiter's two keys share a slot
/// (hash tag), and two replicas' callers get consecutive slots. The dedupe, given the seed nodes,
/// spreads its events over every primary and still processes each once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limiter_and_the_dedupe_work_over_a_cluster() {
    let Some(cluster) = cluster() else { return };
    let one_node = cluster.urls()[3].clone();
    let make = || {
        RedisLimiter::builder(one_node.as_str(), "http://h", "fair")
            .rate(1, Duration::from_millis(100))
            .build()
            .unwrap()
    };
    let (a, b) = (make(), make());
    common::take_turns(&a, &b).await;
    assert!(!a.in_outage() && !b.in_outage(), "served by the cluster");

    let seeds = RedisConfig::cluster(cluster.urls());
    let replicas: Vec<Arc<RedisDedupe>> = (0..3)
        .map(|_| {
            Arc::new(
                RedisDedupe::builder(seeds.clone(), "store_c")
                    .build()
                    .unwrap(),
            )
        })
        .collect();
    let processed = common::deliver_each_event_thrice(&replicas, 60).await;
    assert_eq!(processed.len(), 60);
    assert!(processed.values().all(|&n| n == 1), "{processed:?}");
    let primaries: HashSet<usize> = (0..60)
        .map(|event| {
            cluster
                .primary_of(&replicas[0].key(&format!("evt_{event}")))
                .unwrap()
        })
        .collect();
    assert_eq!(primaries.len(), 3, "events spread over every primary");
}

/// Told it is one server, a client of a cluster node meets MOVED for the slots it does not serve.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_told_it_is_one_server_is_refused_the_other_primaries_keys() {
    if skip_slow_tests() {
        return;
    }
    let Some(cluster) = cluster() else { return };
    let one_node = cluster.urls()[3].clone();
    let standalone = RedisDedupe::builder(
        RedisConfig::new(one_node.as_str()).topology(Topology::Standalone),
        "store_c",
    )
    .build()
    .unwrap();
    let mut refused = 0;
    for event in 0..20 {
        if standalone.begin(&format!("evt_s{event}")).await.is_err() {
            refused += 1;
        }
    }
    assert!(refused > 0, "some keys live on other primaries");
}

/// The primary holding the limiter's keys and some events is killed; its replica takes over within
/// seconds. Meanwhile the fail-closed limiter hands out nothing, the default one falls back, the
/// dedupe refuses new claims (the receiver answers 5xx), and a `complete` begun during the outage
/// lands once the replica serves and has a replica of its own (the killed node, back). Afterwards both limiters are back on Redis and everything written
/// before the crash (and replicated) holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failover_keeps_the_limiter_contract_and_the_dedupe_guarantees() {
    if skip_slow_tests() {
        return;
    }
    let Some(mut cluster) = cluster() else { return };
    let seeds = RedisConfig::cluster(cluster.urls());
    let make = |on_error| {
        RedisLimiter::builder(seeds.clone(), "http://h", "failover")
            .rate(100, Duration::from_millis(1))
            .on_redis_error(on_error)
            .command_timeout(Duration::from_millis(300))
            .build()
            .unwrap()
    };
    let closed = Arc::new(make(OnRedisError::Wait));
    let open = make(OnRedisError::FallBack);
    closed.acquire().await;
    open.acquire().await;
    let dedupe = Arc::new(
        RedisDedupe::builder(seeds.clone(), "store_f")
            .lease(Duration::from_secs(15))
            .command_timeout(Duration::from_millis(300))
            .build()
            .unwrap(),
    );
    // Events whose keys live on the primary about to die.
    let doomed = cluster.primary_of(closed.key()).unwrap();
    let ids: Vec<String> = (0..)
        .map(|n| format!("evt_{n}"))
        .filter(|id| cluster.primary_of(&dedupe.key(id)).unwrap() == doomed)
        .take(3)
        .collect();
    let [done, open_claim, fresh] = &ids[..] else {
        unreachable!()
    };
    let Claim::Fresh(token) = dedupe.begin(done).await.unwrap() else {
        panic!("a fresh claim")
    };
    assert!(dedupe.complete(done, token).await.unwrap());
    let Claim::Fresh(open_token) = dedupe.begin(open_claim).await.unwrap() else {
        panic!("a fresh claim")
    };
    cluster
        .wait_for_replication(Duration::from_secs(5))
        .unwrap();

    let key = closed.key().to_owned();
    let killed = cluster.kill_primary_of(&key).unwrap();
    assert_eq!(killed, doomed);
    let killed_at = Instant::now();

    let waiting = tokio::spawn({
        let closed = closed.clone();
        async move { closed.acquire().await }
    });
    let completing = tokio::spawn({
        let dedupe = dedupe.clone();
        let id = open_claim.clone();
        async move { dedupe.complete(&id, open_token).await }
    });
    tokio::time::timeout(Duration::from_secs(5), open.acquire())
        .await
        .expect("the default limiter falls back");
    assert!(open.in_outage());
    assert!(
        dedupe.begin(fresh).await.is_err(),
        "no claim without the primary: the receiver answers 5xx"
    );
    let outage = killed_at.elapsed();
    assert!(
        outage < Duration::from_millis(900) && !waiting.is_finished(),
        "the fail-closed limiter hands out nothing while the slot has no primary ({outage:?})"
    );

    let promoted = tokio::task::spawn_blocking(move || {
        let mut cluster = cluster;
        let promoted = cluster.wait_for_failover(&key, Duration::from_secs(20));
        // The promoted primary has no replica: the dedupe confirms nothing on it (fail closed) until
        // the killed node is back as its replica, as an operator or an orchestrator brings it back.
        let rejoined = cluster.rejoin(killed, Duration::from_secs(20));
        (cluster, promoted.and_then(|node| rejoined.map(|()| node)))
    });
    tokio::time::timeout(Duration::from_secs(20), waiting)
        .await
        .expect("served once a replica took over")
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), completing)
        .await
        .expect("complete returns")
        .unwrap()
        .expect("complete landed on the promoted replica");
    let (cluster, promoted) = promoted.await.unwrap();
    promoted.unwrap();
    for _ in 0..50 {
        open.acquire().await;
        if !open.in_outage() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!open.in_outage(), "back on the cluster");
    assert_eq!(dedupe.begin(done).await.unwrap(), Claim::Duplicate);
    assert_eq!(dedupe.begin(open_claim).await.unwrap(), Claim::Duplicate);
    // The rejoined replica may still be catching up on a loaded machine: a refused claim is what the
    // service retries (503), never a wrong answer.
    assert!(matches!(
        claim_within(&dedupe, fresh, Duration::from_secs(5)).await,
        Claim::Fresh(_)
    ));
    drop(cluster);
}

/// A claim counts only once a replica holds it. The replica of the event's primary is stalled
/// (SIGSTOP), so it acknowledges nothing: `begin` waits for it instead of answering `Fresh` (the code
/// before answered at once, and the handler ran on a claim only the doomed primary held). The primary
/// dies meanwhile: `begin` fails, so the handler never ran, and after the replica took over the event
/// is processed exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_counts_only_once_a_replica_holds_it() {
    if skip_slow_tests() {
        return;
    }
    let Some(mut cluster) = cluster() else { return };
    let dedupe = Arc::new(
        RedisDedupe::builder(RedisConfig::cluster(cluster.urls()), "store_r")
            .lease(Duration::from_secs(2))
            .replica_ack_timeout(Duration::from_secs(3))
            .command_timeout(Duration::from_secs(4))
            .build()
            .unwrap(),
    );
    let id = "evt_replicated";
    let primary = cluster.primary_of(&dedupe.key(id)).unwrap();
    let replica = cluster.replica_of(primary).unwrap();
    // The connection and the slot map are made while every node answers.
    let warm = (0..)
        .map(|n| format!("evt_warm_{n}"))
        .find(|warm| cluster.primary_of(&dedupe.key(warm)).unwrap() == primary)
        .unwrap();
    assert!(matches!(
        dedupe.begin(&warm).await.unwrap(),
        Claim::Fresh(_)
    ));

    cluster.pause(replica).unwrap();
    let begun = tokio::spawn({
        let dedupe = dedupe.clone();
        async move { dedupe.begin(id).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !begun.is_finished(),
        "begin answered before any replica held the claim: {:?}",
        begun.await.unwrap()
    );
    cluster.kill(primary);
    let begun = tokio::time::timeout(Duration::from_secs(10), begun)
        .await
        .expect("begin returns once the primary is gone")
        .unwrap();
    assert!(
        begun.is_err(),
        "a claim no replica acknowledged must not be handed out: {begun:?}"
    );

    cluster.resume(replica).unwrap();
    let cluster = tokio::task::spawn_blocking({
        let key = dedupe.key(id);
        move || {
            cluster
                .wait_for_failover(&key, Duration::from_secs(20))
                .unwrap();
            // Fail closed: nothing counts on the promoted primary until it has a replica again.
            cluster.rejoin(primary, Duration::from_secs(20)).unwrap();
            cluster
        }
    })
    .await
    .unwrap();
    let runs = std::sync::atomic::AtomicUsize::new(0);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let outcome = store_api_webhooks::dedupe::process_once(&*dedupe, id, |_lease| async {
            runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok::<_, std::io::Error>(())
        })
        .await;
        if matches!(outcome, Ok(store_api_webhooks::dedupe::Processed::Done(()))) {
            break;
        }
        assert!(Instant::now() < deadline, "never processed: {outcome:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(runs.into_inner(), 1, "processed exactly once");
    assert_eq!(dedupe.begin(id).await.unwrap(), Claim::Duplicate);
    drop(cluster);
}

// Issue 29, defect 7: `WAIT` went to every primary and its answer was the fewest acknowledgements of
// any, so one primary without a replica made every write look unreplicated, and after that answer
// every write on every shard went on unconfirmed for 5 s (a 0 counted as confirmation). Now each write
// waits on its own primary: a shard without a replica refuses claims (fail closed), the others go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_primary_without_a_replica_decides_nothing_for_the_others() {
    let Some(mut cluster) = cluster() else { return };
    let dedupe = RedisDedupe::builder(RedisConfig::cluster(cluster.urls()), "store_p")
        .replica_ack_timeout(Duration::from_millis(400))
        .lease(Duration::from_secs(2))
        .build()
        .unwrap();
    // One event per primary, and the connection and slot map made while every node answers.
    let mut by_primary = std::collections::BTreeMap::new();
    for n in 0.. {
        let id = format!("evt_{n}");
        let primary = cluster.primary_of(&dedupe.key(&id)).unwrap();
        by_primary.entry(primary).or_insert(id);
        if by_primary.len() == 3 {
            break;
        }
    }
    for n in 0..30 {
        let _ = dedupe.begin(&format!("evt_warm_{n}")).await;
    }
    let primaries: Vec<usize> = by_primary.keys().copied().collect();
    let (lonely, stalled, healthy) = (primaries[0], primaries[1], primaries[2]);
    cluster.kill(cluster.replica_of(lonely).unwrap());

    let refused = dedupe.begin(&by_primary[&lonely]).await;
    assert!(
        refused.is_err(),
        "a claim on a primary without a replica was handed out: {refused:?}"
    );
    assert!(
        matches!(
            claim_within(&dedupe, &by_primary[&healthy], Duration::from_secs(5)).await,
            Claim::Fresh(_)
        ),
        "a shard whose replica answers goes on"
    );
    let stalled_replica = cluster.replica_of(stalled).unwrap();
    cluster.pause(stalled_replica).unwrap();
    let unconfirmed = dedupe.begin(&by_primary[&stalled]).await;
    cluster.resume(stalled_replica).unwrap();
    assert!(
        unconfirmed.is_err(),
        "a claim its replica did not acknowledge was handed out: {unconfirmed:?}"
    );
    // Both refused claims were released: with its replica back, the stalled shard's event is fresh.
    assert!(matches!(
        claim_within(&dedupe, &by_primary[&stalled], Duration::from_secs(5)).await,
        Claim::Fresh(_)
    ));
    drop(cluster);
}

/// `begin` until it answers (a refused claim is retried, as the service retries a 503), for at most
/// `within`.
async fn claim_within(dedupe: &RedisDedupe, id: &str, within: Duration) -> Claim {
    let deadline = Instant::now() + within;
    loop {
        match dedupe.begin(id).await {
            Ok(claim) => return claim,
            Err(error) if Instant::now() < deadline => {
                eprintln!("{id}: {error}; trying again");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => panic!("{id} never claimed: {error}"),
        }
    }
}
