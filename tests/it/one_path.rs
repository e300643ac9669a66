//! Issue 30, "one way to send": every caller of the client (a typed operation, `Orders::submit`,
//! `doctor` and the escape hatch `Client::request`) goes through the one request path, so each
//! concern it applies (key, hooks, limiter, deadline, size cap, origin guard, redirect refusal) holds
//! for all four alike. One test per concern drives the four callers over real HTTP on 127.0.0.1,
//! against the emulator behind a recording front (`tests/src/hostile.rs`) that misbehaves on demand.
//!
//! Before the change, `doctor` sent its probes past the hooks and followed no redirect refusal of the
//! transport's own (it read a redirect's body as an answer), and the escape hatch did not exist (the
//! CLI called the raw client's `pre`/`exec`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use futures::{StreamExt as _, stream};
use store_api::hook::{HeaderMap, HeaderValue, Method, RequestHook, TryInfo, TryOutcome};
use store_api::{
    Client, ClientBuilder, Error, KeyHandle, Limiter, LimiterFuture, RateLimiter, RetryPolicy,
    Submission,
};
use store_api_conformance::{ProbeOptions, Report, probe};
use store_api_tests::hostile::{Hostile, Seen, Upstream, answer};
use store_api_tests::{ALPHA, emulator, key_of, relaxed_limiter, tee_submission};

/// The four callers of the one request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    /// A typed operation (`Client::status`).
    Typed,
    /// `Orders::submit` (its pre-flight reads, its POST, its lookups).
    Submit,
    /// `store_api_conformance::probe` (`store-api doctor`, once `store_api::doctor`), limited to its
    /// first probe (`GET /status`): the escape hatch, a single attempt.
    Doctor,
    /// The escape hatch, `Client::request(GET, "/status")`.
    EscapeHatch,
}

const CALLERS: [Caller; 4] = [
    Caller::Typed,
    Caller::Submit,
    Caller::Doctor,
    Caller::EscapeHatch,
];

/// What a caller got.
#[derive(Debug)]
enum Got {
    Typed(Result<(), Error>),
    Submit(Box<Result<Submission, Error>>),
    Doctor(Report),
    EscapeHatch(Result<u16, Error>),
}

impl Got {
    /// The error a caller ended with (for `doctor`, which never fails: `None`).
    fn error(&self) -> Option<&Error> {
        match self {
            Got::Typed(result) => result.as_ref().err(),
            Got::Submit(result) => result.as_ref().as_ref().err(),
            Got::EscapeHatch(result) => result.as_ref().err(),
            Got::Doctor(_) => None,
        }
    }

    /// Whether it succeeded (for `doctor`: its status probe held).
    fn succeeded(&self) -> bool {
        match self {
            Got::Doctor(report) => !report.to_string().contains("no answer: "),
            Got::EscapeHatch(result) => matches!(result, Ok(200)),
            other => other.error().is_none(),
        }
    }

    /// The caller's failure as text: its error, or the `doctor` report (whose findings say why a
    /// probe was not answered).
    fn text(&self) -> String {
        match self {
            Got::Doctor(report) => report.to_string(),
            other => other
                .error()
                .map_or_else(|| "ok".to_owned(), ToString::to_string),
        }
    }
}

/// Runs `caller` once; `external_id` names the order `submit` places.
async fn drive(client: &Client, caller: Caller, external_id: &str) -> Got {
    match caller {
        Caller::Typed => Got::Typed(client.status().await.map(drop)),
        Caller::Submit => Got::Submit(Box::new(
            client.orders().submit(&tee_submission(external_id)).await,
        )),
        Caller::Doctor => {
            Got::Doctor(probe(client, &ProbeOptions::default().max_requests(1)).await)
        }
        Caller::EscapeHatch => Got::EscapeHatch(
            client
                .request(Method::GET, "/status")
                .send()
                .await
                .map(|response| response.status()),
        ),
    }
}

/// The pre-flight reads of `submit` (the catalog and the products), which a misbehaving front lets
/// through so that `submit` reaches its POST.
fn is_preflight_read(seen: &Seen) -> bool {
    let path = seen.uri.path();
    seen.method == "GET" && (path.ends_with("/catalog-products") || path.ends_with("/products"))
}

/// A front of the emulator that forwards every request and records it.
async fn recording_front(upstream: &str) -> Hostile {
    Hostile::start(
        "127.0.0.1",
        Some(upstream.to_owned()),
        |seen: Seen, up: Upstream| async move {
            let (status, headers, body) = up.forward(&seen).await;
            let mut response = answer(status.as_u16(), &[], body);
            if let Some(kind) = headers.get("content-type") {
                response.headers_mut().insert("content-type", kind.clone());
            }
            response
        },
    )
    .await
}

/// A front that forwards `submit`'s pre-flight reads and answers everything else with `misbehave`.
async fn misbehaving_front<F>(upstream: &str, misbehave: F) -> Hostile
where
    F: Fn(&Seen) -> axum::response::Response + Clone + Send + Sync + 'static,
{
    Hostile::start(
        "127.0.0.1",
        Some(upstream.to_owned()),
        move |seen: Seen, up: Upstream| {
            let misbehave = misbehave.clone();
            async move {
                if is_preflight_read(&seen) {
                    return up.relay(&seen).await;
                }
                misbehave(&seen)
            }
        },
    )
    .await
}

/// Test settings: quick retries, few of them, a short timeout.
fn builder(origin: &str, key: &str) -> ClientBuilder {
    let fast = RetryPolicy::default()
        .with_max_attempts(2)
        .with_base_delay(Duration::from_millis(5))
        .with_max_elapsed(Duration::from_secs(2));
    Client::builder()
        .base_url(origin)
        .store_id(ALPHA)
        .api_key(key)
        .in_process_limiter(relaxed_limiter())
        .retry_policy(fast)
        .submit_retry_policy(fast)
        .timeout(Duration::from_secs(5))
}

/// Records what the hooks were shown: the operation of every attempt, and any key among the headers.
#[derive(Debug, Default)]
struct Recorder {
    before: Mutex<Vec<&'static str>>,
    after: Mutex<Vec<(&'static str, TryOutcome)>>,
    saw_key: AtomicUsize,
}

impl RequestHook for Recorder {
    fn before(&self, attempt: &TryInfo, headers: &mut HeaderMap) {
        if headers.contains_key("x-api-key") {
            self.saw_key.fetch_add(1, Ordering::SeqCst);
        }
        headers.insert("x-hooked", HeaderValue::from_static("yes"));
        lock(&self.before).push(attempt.operation_id);
    }

    fn after(&self, attempt: &TryInfo, outcome: &TryOutcome, _duration: Duration) {
        lock(&self.after).push((attempt.operation_id, *outcome));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A limiter that counts the tokens it hands out (and hands them out at once).
#[derive(Debug, Default)]
struct Counting {
    acquired: AtomicUsize,
}

impl Limiter for Counting {
    fn acquire(&self) -> LimiterFuture<'_> {
        self.acquired.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::ready(()))
    }

    fn pause_for(&self, _duration: Duration) -> LimiterFuture<'_> {
        Box::pin(std::future::ready(()))
    }

    fn observe_remaining(&self, _remaining: u64) -> LimiterFuture<'_> {
        Box::pin(std::future::ready(()))
    }
}

// The key: every request of every caller carries the key the handle holds when it is sent (here, one
// rotated in after the client was built), and no hook is ever shown it. `doctor`'s one deliberate
// exception (its probe of a wrong key) is not in its first probe.
#[tokio::test]
async fn every_caller_sends_the_handles_current_key_and_no_hook_sees_it() {
    let emu = emulator().await;
    let key = key_of(&emu, ALPHA);
    let front = recording_front(emu.origin()).await;
    let handle = KeyHandle::new("csk_before_rotation");
    let recorder = Arc::new(Recorder::default());
    let client = builder(&front.origin(), "unused")
        .key_handle(handle.clone())
        .hook(recorder.clone())
        .build()
        .unwrap();
    handle.rotate(key.as_str());
    for (n, caller) in CALLERS.into_iter().enumerate() {
        let before = front.seen().len();
        let got = drive(&client, caller, &format!("one-path-key-{n}")).await;
        assert!(got.succeeded(), "{caller:?}: {}", got.text());
        let seen = front.seen();
        assert!(seen.len() > before, "{caller:?} sent nothing");
        for request in &seen[before..] {
            assert_eq!(
                request.headers.get("x-api-key").map(HeaderValue::as_bytes),
                Some(key.as_bytes()),
                "{caller:?}: {} {}",
                request.method,
                request.uri
            );
        }
    }
    assert_eq!(recorder.saw_key.load(Ordering::SeqCst), 0);
}

// The hooks: every attempt of every caller runs them, named by the operation of its route, and what
// they add reaches the service.
#[tokio::test]
async fn every_caller_runs_the_hooks_around_every_attempt() {
    let emu = emulator().await;
    let front = recording_front(emu.origin()).await;
    let recorder = Arc::new(Recorder::default());
    let client = builder(&front.origin(), &key_of(&emu, ALPHA))
        .hook(recorder.clone())
        .build()
        .unwrap();
    let expected: [(Caller, &str); 4] = [
        (Caller::Typed, "get_status"),
        (Caller::Submit, "create_order"),
        (Caller::Doctor, "get_status"),
        (Caller::EscapeHatch, "get_status"),
    ];
    for (n, (caller, operation)) in expected.into_iter().enumerate() {
        let (sent_before, hooked_before) = (front.seen().len(), lock(&recorder.before).len());
        let got = drive(&client, caller, &format!("one-path-hooks-{n}")).await;
        assert!(got.succeeded(), "{caller:?}: {}", got.text());
        let seen = front.seen();
        let sent = &seen[sent_before..];
        let hooked: Vec<_> = lock(&recorder.before)[hooked_before..].to_vec();
        assert_eq!(hooked.len(), sent.len(), "{caller:?}: {hooked:?}");
        assert!(hooked.contains(&operation), "{caller:?}: {hooked:?}");
        assert!(
            sent.iter()
                .all(|request| request.headers.get("x-hooked").is_some()),
            "{caller:?}: a request went without the hooks' header"
        );
    }
    let after = lock(&recorder.after);
    assert_eq!(after.len(), lock(&recorder.before).len());
    assert!(
        after
            .iter()
            .all(|(_, outcome)| matches!(outcome, TryOutcome::Status(200 | 201))),
        "{after:?}"
    );
}

// The limiter: every request of every caller takes a token first, one per request sent.
#[tokio::test]
async fn every_caller_takes_a_token_of_the_limiter_per_request() {
    let emu = emulator().await;
    let front = recording_front(emu.origin()).await;
    let limiter = Arc::new(Counting::default());
    let client = builder(&front.origin(), &key_of(&emu, ALPHA))
        .limiter(limiter.clone())
        .build()
        .unwrap();
    for (n, caller) in CALLERS.into_iter().enumerate() {
        let (sent_before, tokens_before) =
            (front.seen().len(), limiter.acquired.load(Ordering::SeqCst));
        let got = drive(&client, caller, &format!("one-path-limiter-{n}")).await;
        assert!(got.succeeded(), "{caller:?}: {}", got.text());
        let sent = front.seen().len() - sent_before;
        let tokens = limiter.acquired.load(Ordering::SeqCst) - tokens_before;
        assert!(sent > 0, "{caller:?} sent nothing");
        assert_eq!(tokens, sent, "{caller:?}");
    }
    // And a limiter that lets nothing go holds every caller back: nothing is sent.
    let closed = RateLimiter::with_rate(1, Duration::from_secs(3600));
    let client = builder(&front.origin(), &key_of(&emu, ALPHA))
        .in_process_limiter(closed.clone())
        .build()
        .unwrap();
    closed.pause_for(Duration::from_secs(3600));
    let sent_before = front.seen().len();
    for (n, caller) in CALLERS.into_iter().enumerate() {
        let held = tokio::time::timeout(
            Duration::from_millis(300),
            drive(&client, caller, &format!("one-path-closed-{n}")),
        )
        .await;
        assert!(held.is_err(), "{caller:?} was not held by the limiter");
    }
    assert_eq!(front.seen().len(), sent_before);
}

// The deadline: an answer whose body never ends is cut at the client's timeout, for every caller.
#[tokio::test]
async fn every_caller_ends_at_the_deadline_when_the_body_never_ends() {
    let emu = emulator().await;
    let front = misbehaving_front(emu.origin(), |_| {
        let stalled = stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(b"{"))])
            .chain(stream::pending());
        answer(
            200,
            &[("content-type", "application/json")],
            Body::from_stream(stalled),
        )
    })
    .await;
    let timeout = Duration::from_millis(300);
    let client = builder(&front.origin(), &key_of(&emu, ALPHA))
        .timeout(timeout)
        .build()
        .unwrap();
    for (n, caller) in CALLERS.into_iter().enumerate() {
        let started = Instant::now();
        let got = drive(&client, caller, &format!("one-path-deadline-{n}")).await;
        let took = started.elapsed();
        // `submit` may take a few: its POST, then the lookups that settle the outcome.
        assert!(took < Duration::from_secs(6), "{caller:?} took {took:?}");
        match (&got, got.error()) {
            (Got::Doctor(report), _) => {
                assert!(report.to_string().contains("timed out"), "{report}");
            }
            (_, Some(Error::Timeout { .. })) => {}
            _ => panic!("{caller:?}: {}", got.text()),
        }
    }
}

// The size cap: an answer longer than `max_response_bytes` is refused, for every caller.
#[tokio::test]
async fn every_caller_refuses_an_answer_over_the_size_cap() {
    const LIMIT: usize = 256 << 10;
    let emu = emulator().await;
    let front = misbehaving_front(emu.origin(), |_| {
        // Streamed, without a Content-Length: the cap is counted, not read from a header.
        let chunk = Bytes::from(vec![b' '; 64 << 10]);
        let long = stream::iter((0..8).map(move |_| Ok::<_, std::io::Error>(chunk.clone())));
        answer(
            200,
            &[("content-type", "application/json")],
            Body::from_stream(long),
        )
    })
    .await;
    let client = builder(&front.origin(), &key_of(&emu, ALPHA))
        .max_response_bytes(LIMIT)
        .build()
        .unwrap();
    for (n, caller) in CALLERS.into_iter().enumerate() {
        let got = drive(&client, caller, &format!("one-path-size-{n}")).await;
        match (&got, got.error()) {
            (Got::Doctor(report), _) => {
                let text = report.to_string();
                assert!(
                    text.contains(&format!("larger than {LIMIT} bytes")),
                    "{text}"
                );
            }
            (_, Some(Error::ResponseTooLarge { limit })) => assert_eq!(*limit, LIMIT),
            _ => panic!("{caller:?}: {}", got.text()),
        }
    }
}

// The redirect refusal: a 307 to another host is never followed (the key and the order stay home),
// for every caller.
#[tokio::test]
async fn every_caller_refuses_a_redirect() {
    let emu = emulator().await;
    let elsewhere =
        Hostile::start("127.0.0.2", None, |_, _| async { answer(200, &[], "{}") }).await;
    let target = elsewhere.origin();
    let front = misbehaving_front(emu.origin(), move |seen| {
        answer(307, &[("location", &format!("{target}{}", seen.uri))], "")
    })
    .await;
    let client = builder(&front.origin(), &key_of(&emu, ALPHA))
        .build()
        .unwrap();
    for (n, caller) in CALLERS.into_iter().enumerate() {
        let got = drive(&client, caller, &format!("one-path-redirect-{n}")).await;
        match (&got, got.error()) {
            (Got::Doctor(report), _) => {
                let text = report.to_string();
                assert!(text.contains("redirect (307)"), "{text}");
            }
            (_, Some(Error::Redirect { status: 307, .. })) => {}
            _ => panic!("{caller:?}: {}", got.text()),
        }
    }
    assert!(elsewhere.seen().is_empty(), "{:?}", elsewhere.seen());
}

// The origin guard: nothing leaves for another origin than the base URL's. The escape hatch, which
// takes a whole URL, is refused before anything is sent (no token, no hook, no key); the typed
// operations, `submit` and `doctor` build their routes from the generated code under the base URL,
// so a store id written to leave it stays at the base URL's host.
#[tokio::test]
async fn no_caller_sends_to_another_origin() {
    let emu = emulator().await;
    let elsewhere =
        Hostile::start("127.0.0.2", None, |_, _| async { answer(200, &[], "{}") }).await;
    let front = recording_front(emu.origin()).await;
    let limiter = Arc::new(Counting::default());
    let recorder = Arc::new(Recorder::default());
    let client = builder(&front.origin(), &key_of(&emu, ALPHA))
        .limiter(limiter.clone())
        .hook(recorder.clone())
        .build()
        .unwrap();
    let url = format!(
        "{}/store-api/2026-08/stores/{ALPHA}/status",
        elsewhere.origin()
    );
    let error = client.request(Method::GET, &url).send().await.unwrap_err();
    assert!(error.to_string().contains("another origin"), "{error}");
    assert!(!error.may_have_been_processed());
    assert_eq!(limiter.acquired.load(Ordering::SeqCst), 0);
    assert!(lock(&recorder.before).is_empty());

    let authority = elsewhere.origin().trim_start_matches("http://").to_owned();
    for store_id in [
        format!("@{authority}"),
        format!("x/../../..//{authority}"),
        format!("..%2F..%2F@{authority}"),
    ] {
        let client = builder(&front.origin(), &key_of(&emu, ALPHA))
            .store_id(store_id.as_str())
            .build()
            .unwrap();
        for (n, caller) in CALLERS.into_iter().enumerate() {
            let before = front.seen().len();
            let _ = drive(&client, caller, &format!("one-path-origin-{n}")).await;
            assert!(front.seen().len() > before, "{caller:?} sent nothing");
        }
    }
    assert!(elsewhere.seen().is_empty(), "{:?}", elsewhere.seen());
}
