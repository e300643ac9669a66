//! Issue 29: settings at their extremes and what `build` refuses, over real HTTP on 127.0.0.1 against
//! the emulator. `Duration::MAX` (a user's "no limit") panicked on every request or in `submit`; an
//! `http://` base URL to a host that is not loopback sent the key in clear text.

use std::time::Duration;

use store_api::{ClientBuilder, Error, MAX_DURATION_SETTING, RateLimiter, RetryPolicy, Submitted};
use store_api_conformance::{Evidence, ProbeOptions, probe};
use store_api_fixtures::{Emulator, Fault, FaultKind};
use store_api_tests::hostile::{Hostile, Seen};
use store_api_tests::{ALPHA, builder_at, emulator, fast_retry, key_of, submit_tee};

fn builder(emu: &Emulator) -> ClientBuilder {
    builder_at(&emu.base_url(), ALPHA, &key_of(emu, ALPHA))
}

fn on_create(kind: FaultKind) -> Fault {
    Fault::new(kind).operation("create_order").store(ALPHA)
}

/// A status read, then one order submitted (created on its `attempts`-th attempt): the store then
/// holds it once.
async fn reads_and_submits(emu: &Emulator, builder: ClientBuilder, attempts: usize) {
    let client = builder.build().unwrap();
    client.status().await.unwrap();
    let before = emu.order_count(ALPHA);
    let submission = submit_tee(&client).await;
    assert!(
        matches!(submission.submitted, Submitted::Created(_)),
        "{submission:?}"
    );
    assert_eq!(submission.attempts.len(), attempts, "{submission:?}");
    assert_eq!(emu.order_count(ALPHA), before + 1);
}

// Defect 8: `timeout(Duration::MAX)` panicked on every request ("overflow when adding duration to
// instant"), the doctor's included.
#[tokio::test]
async fn a_timeout_of_duration_max_means_no_limit_and_panics_nowhere() {
    let emu = emulator().await;
    reads_and_submits(&emu, builder(&emu).timeout(Duration::MAX), 1).await;
    // After an answer that may have billed the order, the retry and the lookup run under it too.
    emu.inject_fault(on_create(FaultKind::StatusAfterCommit { status: 500 }))
        .unwrap();
    let client = builder(&emu).timeout(Duration::MAX).build().unwrap();
    let submission = submit_tee(&client).await;
    assert!(
        matches!(submission.submitted, Submitted::AlreadyExisted(_)),
        "{submission:?}"
    );
    let report = probe(&client, &ProbeOptions::default().max_requests(3)).await;
    assert!(
        matches!(report.evidence, Evidence::Probe { requests: 3, .. }),
        "{report}"
    );
    assert_eq!(report.differing().count(), 0, "{report}");
}

// Defect 8: `max_rate_limit_pause(Duration::MAX)` panicked in `submit` (the time its lookups may take
// was a sum of settings, "overflow when adding durations").
#[tokio::test]
async fn a_rate_limit_pause_of_duration_max_panics_nowhere() {
    let emu = emulator().await;
    // A 429 on the way: the store pauses for its Retry-After (under the "no limit" cap), then retries.
    emu.inject_fault(on_create(FaultKind::RateLimited {
        retry_after: "1".into(),
    }))
    .unwrap();
    reads_and_submits(&emu, builder(&emu).max_rate_limit_pause(Duration::MAX), 2).await;
}

// Defect 8: a submit retry policy `with_max_elapsed(Duration::MAX)` panicked in `submit` (the end of
// its attempts was an instant that far away).
#[tokio::test]
async fn a_submit_retry_budget_of_duration_max_panics_nowhere() {
    let emu = emulator().await;
    emu.inject_fault(on_create(FaultKind::Status { status: 503 }))
        .unwrap();
    let no_limit = fast_retry().with_max_elapsed(Duration::MAX);
    let settings = builder(&emu)
        .submit_retry_policy(no_limit)
        .retry_policy(no_limit);
    reads_and_submits(&emu, settings, 2).await;
    // Every duration setting at once (a policy's through its public fields, and a limiter whose
    // tokens never come back, which panicked when built).
    let mut policy = RetryPolicy::submit().with_max_elapsed(Duration::MAX);
    policy.max_delay = Duration::MAX;
    let every = builder(&emu)
        .timeout(Duration::MAX)
        .max_rate_limit_pause(Duration::MAX)
        .cache_ttl(Duration::MAX)
        .in_process_limiter(RateLimiter::with_rate(1000, Duration::MAX))
        .submit_retry_policy(policy)
        .retry_policy(policy);
    reads_and_submits(&emu, every, 1).await;
    assert_eq!(MAX_DURATION_SETTING, Duration::from_secs(365 * 86_400));
}

// Defect 9: an `http://` base URL to a host that is not loopback sent the key in clear text. The
// name resolves to 127.0.0.1 here (reqwest's `resolve`), so the refusal, not the network, is tested.
#[tokio::test]
async fn http_to_a_host_that_is_not_loopback_is_refused_unless_allowed() {
    let emu = emulator().await;
    let front = Hostile::forwarding(emu.origin()).await;
    let port = front.origin().rsplit(':').next().unwrap().to_owned();
    let addr = format!("127.0.0.1:{port}").parse().unwrap();
    let name = "store-api.example.com";
    let at = |allow: bool| {
        builder_at(
            &format!("http://{name}:{port}"),
            ALPHA,
            &key_of(&emu, ALPHA),
        )
        .http_client_builder(reqwest::Client::builder().resolve(name, addr))
        .allow_insecure_http(allow)
        .build()
    };

    let refused = at(false).unwrap_err();
    assert!(
        matches!(&refused, Error::InsecureBaseUrl { host } if host == name),
        "{refused:?}"
    );
    let text = refused.to_string();
    assert!(
        text.contains("base_url") && text.contains("clear text"),
        "{text}"
    );
    assert!(!refused.may_have_been_processed());
    assert!(front.seen().is_empty(), "nothing was sent");

    // Allowed explicitly: it goes (and the key with it).
    at(true).unwrap().status().await.unwrap();
    assert!(front.seen().iter().all(Seen::carries_key));
    assert_eq!(front.seen().len(), 1);

    // Loopback needs nothing: the emulator by IP and by `localhost`, and a redirect off loopback is
    // still not followed (the key never leaves for the host it names).
    builder(&emu).build().unwrap().status().await.unwrap();
    let localhost = emu.base_url().replace("127.0.0.1", "localhost");
    builder_at(&localhost, ALPHA, &key_of(&emu, ALPHA))
        .build()
        .unwrap()
        .status()
        .await
        .unwrap();
    emu.inject_fault(
        Fault::new(FaultKind::Redirect {
            status: 307,
            location: Some(format!("{}/elsewhere", front.origin())),
        })
        .store(ALPHA),
    )
    .unwrap();
    let redirected = builder(&emu).build().unwrap().status().await.unwrap_err();
    assert!(
        matches!(redirected, Error::Redirect { status: 307, .. }),
        "{redirected:?}"
    );
    assert_eq!(front.seen().len(), 1, "the redirect was not followed");
}
