//! The receiver side as a model, explored (issue 29): two receivers share one dedupe store (the real
//! `MemoryDedupe`, or `RedisDedupe` transcribed onto a simulated Redis), the service delivers each
//! event up to five times, handlers are short or longer than the lease, receivers die before or after
//! their effect or are cut off from the store, and the store loses replies, fails over and restarts.
//! Every schedule of the small worlds is explored, then seeded random ones; a violation prints its
//! run and the command that replays it.
//!
//! A run may also return right before its first renewal and have its `complete` answered only 9 ticks
//! later, past what was left of its claim (issue 35, defect 13), with a redelivery in between.
//!
//! Quick tier (always): the first schedules of each small world, 1,800 random ones, a replay. Slow
//! tier (`RUN_SLOW_TESTS`, set by CI): the whole exhaustive set of the small worlds and 12,000 random
//! schedules.

use store_api_tests::receivers::{self, Replay, Report, Scenario};

/// Random schedules of each scenario in the quick tier.
const RANDOM_QUICK: u64 = 300;
/// Random schedules of each scenario in the slow tier: 12,000 in all.
const RANDOM_SLOW: u64 = 2_000;
/// The default seed of the random schedules; `STORE_API_RECEIVER_SEED` sets another.
const SEED: u64 = 0x5EED_0029;

fn seed() -> u64 {
    store_api_tests::seed_from_env("STORE_API_RECEIVER_SEED", SEED)
}

fn assert_clean(report: &Report) {
    eprintln!("{}", report.summary());
    assert_eq!(report.violation_count(), 0, "{}", report.summary());
    assert!(report.schedules > 0);
}

#[test]
fn the_first_schedules_of_each_small_world_keep_every_invariant() {
    for scenario in Scenario::EXHAUSTIVE {
        assert_clean(&receivers::exhaustive(scenario, scenario.quick_limits(), 2));
    }
}

/// Every schedule of 2 receivers, 1 event, up to 5 deliveries: each delivery to either receiver,
/// answered, its answer lost or refused; the first run short, long, failing, dying before or after
/// its effect, restarting the process, cut off from the store, or returning right before its first
/// renewal with its `complete` answered late; the first exchange with Redis
/// answered, its reply lost, timed out, or after a failover or a restart.
#[test]
fn every_schedule_of_the_small_worlds_keeps_every_invariant() {
    if store_api_tests::skip_slow_tests() {
        return;
    }
    for scenario in Scenario::EXHAUSTIVE {
        assert_clean(&receivers::exhaustive(
            scenario,
            scenario.exhaustive_limits(),
            2,
        ));
    }
}

#[test]
fn random_schedules_keep_every_invariant() {
    let per = match std::env::var("STORE_API_RECEIVER_RANDOM") {
        Ok(count) => count.parse().unwrap(),
        Err(_) if store_api_tests::skip_slow_tests() => RANDOM_QUICK,
        Err(_) => RANDOM_SLOW,
    };
    for scenario in Scenario::ALL {
        assert_clean(&receivers::random(scenario, seed(), per, 2));
    }
}

/// A run is a function of its schedule: the same random schedules twice give the same choices and the
/// same verdicts (what makes a printed replay worth anything).
#[test]
fn a_schedule_replays_the_same_run() {
    for scenario in Scenario::ALL {
        let first = receivers::random(scenario, seed(), 200, 1);
        let second = receivers::random(scenario, seed(), 200, 1);
        assert_eq!(first.effects, second.effects, "{}", scenario.name());
        assert_eq!(first.prices, second.prices, "{}", scenario.name());
        assert_eq!(first.invariants, second.invariants, "{}", scenario.name());
    }
}

/// Replays the schedule in `STORE_API_RECEIVER_REPLAY` (what a violation prints); without it, issue
/// 29's fourth defect: the claim's reply is lost, the claim is sent again and must find its own token.
#[test]
fn replay_a_schedule() {
    let replay = match std::env::var("STORE_API_RECEIVER_REPLAY") {
        Ok(text) => Replay::parse(&text).unwrap(),
        Err(_) => Replay::parse("redis: d:a0 o:lost-reply").unwrap(),
    };
    let report = receivers::replay(&replay);
    assert_eq!(report.schedules, 1);
    assert_clean(&report);
}

/// Issue 35, defect 13, in the model: a run returns right before its first renewal and the store
/// answers its `complete` 9 ticks later, while a redelivery arrives once what was left of its claim
/// ran out. Before the fix, renewal stopped with the handler and the redelivery ran it again.
#[test]
fn a_complete_answered_late_keeps_the_claim() {
    for schedule in [
        "memory: d:a0 r:late-complete d:a0 r:short",
        "memory: d:t0 r:late-complete d:a1 r:short",
        "redis: d:a0 o:ok r:late-complete d:a0 r:short",
        "redis-acks: d:t0 o:ok r:late-complete d:a1 r:short",
    ] {
        let report = receivers::replay(&Replay::parse(schedule).unwrap());
        assert_eq!(report.schedules, 1);
        assert_eq!(
            report.late_complete_redelivered, 1,
            "{schedule}: a delivery claimed the event while the late complete was outstanding"
        );
        assert_clean(&report);
        assert_eq!(
            report.effects, 1,
            "{schedule}: the handler's effect ran once"
        );
    }
}

/// Issue 35, defect 13, on a real `RedisDedupe` and `redis-server`: while the first run's `complete`
/// is outstanding past the lease its claim had when the handler returned, a redelivery to another
/// receiver is `InProgress`, not a second run.
mod late_complete {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use store_api_redis::RedisDedupe;
    use store_api_redis::testing::RedisServer;
    use store_api_webhooks::dedupe::{
        Claim, ClaimToken, Dedupe, DedupeFuture, Processed, process_once,
    };
    use tokio::sync::Notify;
    use tokio::time::Instant;

    /// A `RedisDedupe` whose first `complete` reaches Redis only once released: a store that takes
    /// its time to mark the event done (as `RedisDedupe` does itself while it tries again).
    struct HeldComplete {
        inner: RedisDedupe,
        hold: AtomicBool,
        completing: Notify,
        release: Notify,
    }

    impl Dedupe for HeldComplete {
        fn lease(&self) -> Duration {
            self.inner.lease()
        }

        fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
            self.inner.begin(event_id)
        }

        fn renew<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
            self.inner.renew(event_id, token)
        }

        fn complete<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
            Box::pin(async move {
                if self.hold.swap(false, Ordering::SeqCst) {
                    self.completing.notify_one();
                    self.release.notified().await;
                }
                self.inner.complete(event_id, token).await
            })
        }

        fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()> {
            self.inner.abandon(event_id, token)
        }
    }

    #[tokio::test]
    async fn a_redelivery_while_complete_is_outstanding_is_in_progress() {
        let Some(server) = RedisServer::start().expect("redis-server starts") else {
            eprintln!(
                "skipping: redis-server is not installed (STORE_API_REQUIRE_REDIS=1 fails instead)"
            );
            return;
        };
        let lease = Duration::from_millis(600);
        let receiver = |url: String| {
            RedisDedupe::builder(url, "store_alpha")
                .lease(lease)
                .build()
                .unwrap()
        };
        let first_store = Arc::new(HeldComplete {
            inner: receiver(server.url()),
            hold: AtomicBool::new(true),
            completing: Notify::new(),
            release: Notify::new(),
        });
        let second_store = receiver(server.url());
        let runs = Arc::new(AtomicUsize::new(0));
        let event = "evt_late_complete";
        let start = Instant::now();
        let first = {
            let (store, runs) = (first_store.clone(), runs.clone());
            tokio::spawn(async move {
                process_once(&*store, event, |_lease| async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, String>(())
                })
                .await
            })
        };
        first_store.completing.notified().await;
        // Half a lease past the claim's expiry as it stood when the handler returned.
        tokio::time::sleep_until(start + lease + lease / 2).await;
        let again = process_once(&second_store, event, |_lease| async {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(())
        })
        .await;
        assert_eq!(
            again.ok(),
            Some(Processed::InProgress),
            "the first run's claim is kept while its complete is outstanding"
        );
        first_store.release.notify_one();
        assert_eq!(
            first.await.unwrap().ok(),
            Some(Processed::Done(())),
            "the first run marked the event done"
        );
        let after = process_once(&second_store, event, |_lease| async {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(())
        })
        .await;
        assert_eq!(after.ok(), Some(Processed::Duplicate));
        assert_eq!(runs.load(Ordering::SeqCst), 1, "the handler ran once");
    }
}

/// The transcription against the real thing: `RedisDedupe` on a private `redis-server` and
/// [`SimRedis`] on the model's server answer every sequence of store operations alike, operation by
/// operation (skipped with a message when `redis-server` is missing, unless `STORE_API_REQUIRE_REDIS`
/// is set).
mod differential {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use store_api_redis::RedisDedupe;
    use store_api_redis::testing::RedisServer;
    use store_api_tests::receivers::redis::{Faults, OpFate, Server, SimRedis};
    use store_api_webhooks::dedupe::{Claim, ClaimToken, Dedupe};
    use tokio::time::Instant;

    /// A store operation of two claimants, A (0) and B (1), on one event.
    #[derive(Debug, Clone, Copy)]
    enum Op {
        Begin(usize),
        Renew(usize),
        Complete(usize),
        Abandon(usize),
        /// The lease of the event's claim passes.
        LeasePasses,
    }

    const OPS: [Op; 9] = [
        Op::Begin(0),
        Op::Begin(1),
        Op::Renew(0),
        Op::Renew(1),
        Op::Complete(0),
        Op::Complete(1),
        Op::Abandon(0),
        Op::Abandon(1),
        Op::LeasePasses,
    ];

    struct NoFaults;

    impl Faults for NoFaults {
        fn fate(&self, _: usize) -> OpFate {
            OpFate::Answered
        }
    }

    /// One side: a store, the token each claimant holds, and how to make a lease pass.
    struct Side {
        store: Box<dyn Dedupe>,
        tokens: [Option<ClaimToken>; 2],
        sim: Option<Arc<Mutex<Server>>>,
        redis: Option<redis::aio::MultiplexedConnection>,
    }

    impl Side {
        /// A token never granted, for a claimant that holds none (the same on both sides).
        fn token(&self, who: usize) -> ClaimToken {
            self.tokens[who].unwrap_or(ClaimToken::new(0xdead_0000 + who as u64))
        }

        async fn apply(&mut self, event: &str, op: Op) -> String {
            match op {
                Op::Begin(who) => match self.store.begin(event).await {
                    Ok(Claim::Fresh(token)) => {
                        self.tokens[who] = Some(token);
                        "fresh".to_owned()
                    }
                    Ok(other) => format!("{other:?}"),
                    Err(error) => format!("error: {error}"),
                },
                Op::Renew(who) => format!("{:?}", self.store.renew(event, self.token(who)).await),
                Op::Complete(who) => {
                    format!("{:?}", self.store.complete(event, self.token(who)).await)
                }
                Op::Abandon(who) => {
                    format!("{:?}", self.store.abandon(event, self.token(who)).await)
                }
                Op::LeasePasses => {
                    let key = SimRedis::key(event);
                    if let Some(server) = &self.sim {
                        server.lock().unwrap().lease_passes(Instant::now(), &key);
                    }
                    if let Some(connection) = &mut self.redis {
                        // What a lease that passes does to a claim (a done marker stays).
                        let held: Option<String> = redis::cmd("GET")
                            .arg(&key)
                            .query_async(connection)
                            .await
                            .unwrap();
                        if held.is_some_and(|value| value.starts_with("claim:")) {
                            let _: i64 = redis::cmd("DEL")
                                .arg(&key)
                                .query_async(connection)
                                .await
                                .unwrap();
                        }
                    }
                    "-".to_owned()
                }
            }
        }
    }

    fn sim_side(lease: Duration) -> Side {
        let server = Arc::new(Mutex::new(Server::new()));
        let store = SimRedis::new(
            server.clone(),
            Arc::new(NoFaults),
            0,
            lease,
            Duration::from_secs(15 * 24 * 3600),
            0,
        );
        Side {
            store: Box::new(store),
            tokens: [None; 2],
            sim: Some(server),
            redis: None,
        }
    }

    async fn redis_side(server: &RedisServer, lease: Duration) -> Side {
        let store = RedisDedupe::builder(server.url(), "store_alpha")
            .lease(lease)
            .build()
            .unwrap();
        let client = redis::Client::open(server.url()).unwrap();
        let connection = client.get_multiplexed_async_connection().await.unwrap();
        Side {
            store: Box::new(store),
            tokens: [None; 2],
            sim: None,
            redis: Some(connection),
        }
    }

    /// Runs every sequence of `length` operations on both sides, each on an event of its own;
    /// returns how many operations were compared.
    async fn compare_all(server: &RedisServer, length: u32) -> usize {
        let lease = Duration::from_secs(10);
        let mut sim = sim_side(lease);
        let mut real = redis_side(server, lease).await;
        let mut compared = 0;
        for index in 0..OPS.len().pow(length) {
            let event = format!("evt_diff_{length}_{index}");
            sim.tokens = [None; 2];
            real.tokens = [None; 2];
            let mut code = index;
            let mut trail = Vec::new();
            for _ in 0..length {
                let op = OPS[code % OPS.len()];
                code /= OPS.len();
                let expected = real.apply(&event, op).await;
                let transcribed = sim.apply(&event, op).await;
                trail.push(format!("{op:?} -> {expected}"));
                assert_eq!(
                    transcribed, expected,
                    "the transcription and RedisDedupe differ after {trail:?}"
                );
                compared += 1;
            }
        }
        compared
    }

    fn redis() -> Option<RedisServer> {
        let server = RedisServer::start().expect("redis-server starts");
        if server.is_none() {
            eprintln!(
                "skipping: redis-server is not installed (STORE_API_REQUIRE_REDIS=1 fails instead)"
            );
        }
        server
    }

    /// Every sequence of three operations (every four under `RUN_SLOW_TESTS`) of two claimants:
    /// claim, renew, complete, abandon, and the lease passing.
    #[tokio::test]
    async fn the_transcribed_scripts_answer_as_redis_dedupe_does() {
        let Some(server) = redis() else { return };
        let length = if store_api_tests::skip_slow_tests() {
            3
        } else {
            4
        };
        let compared = compare_all(&server, length).await;
        eprintln!("{compared} operations compared, all alike");
        assert_eq!(compared, OPS.len().pow(length) * length as usize);
    }

    /// The lease itself, on real time: a claim not renewed expires alike on both sides.
    #[tokio::test]
    async fn a_lease_expires_alike() {
        let Some(server) = redis() else { return };
        let lease = Duration::from_millis(300);
        let mut sim = sim_side(lease);
        let mut real = redis_side(&server, lease).await;
        let event = "evt_lease";
        let steps: [(Op, Duration); 8] = [
            (Op::Begin(0), Duration::ZERO),
            (Op::Renew(0), Duration::from_millis(150)),
            (Op::Begin(1), Duration::from_millis(200)),
            (Op::Begin(1), Duration::from_millis(250)),
            (Op::Renew(0), Duration::ZERO),
            (Op::Complete(0), Duration::ZERO),
            (Op::Complete(1), Duration::ZERO),
            (Op::Begin(0), Duration::ZERO),
        ];
        let mut trail = Vec::new();
        for (op, after) in steps {
            tokio::time::sleep(after).await;
            let expected = real.apply(event, op).await;
            let transcribed = sim.apply(event, op).await;
            trail.push(format!("{op:?} -> {expected}"));
            assert_eq!(transcribed, expected, "after {trail:?}");
        }
        // Renewed at 150 ms, the claim held at 350 ms and was gone at 600 ms.
        assert_eq!(
            trail,
            [
                "Begin(0) -> fresh",
                "Renew(0) -> Ok(true)",
                "Begin(1) -> InProgress",
                "Begin(1) -> fresh",
                "Renew(0) -> Ok(false)",
                "Complete(0) -> Ok(false)",
                "Complete(1) -> Ok(true)",
                "Begin(0) -> Duplicate",
            ]
        );
    }
}
