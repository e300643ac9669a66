//! Request hooks (issue 16): called around every attempt, retries included, in order; headers they add
//! reach the server; they never see the key.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use store_api::hook::{HeaderMap, HeaderValue, RequestHook, TryInfo, TryOutcome};
use store_api::{Client, RateLimiter, RetryPolicy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const KEY: &str = "csk_hooks_test_key_0123456789abcdef";

/// Records every call, tagged with its name, and adds `x-hook-<name>: <attempt>` to each attempt.
#[derive(Debug)]
struct Recorder {
    name: &'static str,
    log: Log,
}

impl RequestHook for Recorder {
    fn before(&self, attempt: &TryInfo, headers: &mut HeaderMap) {
        assert!(
            !headers.contains_key("x-api-key"),
            "hooks never see the key"
        );
        headers.insert(
            format!("x-hook-{}", self.name)
                .parse::<store_api::hook::HeaderName>()
                .unwrap(),
            HeaderValue::from(attempt.number),
        );
        self.log.lock().unwrap().push(format!(
            "{} before {} {} {} #{}",
            self.name, attempt.method, attempt.operation_id, attempt.path_template, attempt.number
        ));
    }

    fn after(&self, attempt: &TryInfo, outcome: &TryOutcome, duration: Duration) {
        assert!(duration < Duration::from_secs(10));
        self.log.lock().unwrap().push(format!(
            "{} after #{} {outcome:?}",
            self.name, attempt.number
        ));
    }
}

/// What the recorders wrote, in call order.
type Log = Arc<Mutex<Vec<String>>>;

fn recorders() -> (Log, [Arc<dyn RequestHook>; 2]) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let hooks: [Arc<dyn RequestHook>; 2] = [
        Arc::new(Recorder {
            name: "first",
            log: log.clone(),
        }),
        Arc::new(Recorder {
            name: "second",
            log: log.clone(),
        }),
    ];
    (log, hooks)
}

fn builder(base_url: &str, store_id: &str, key: &str) -> store_api::ClientBuilder {
    Client::builder()
        .base_url(base_url)
        .store_id(store_id)
        .api_key(key)
        .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
        .retry_policy(RetryPolicy::default().with_base_delay(Duration::from_millis(5)))
}

/// A server on 127.0.0.1 that answers `503` to the first `failures` requests and `GET …/status`'s
/// answer to the rest, one request per connection, recording each request's head (lowercased).
async fn flaky_server(failures: usize) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buffer = [0; 4096];
            while !head.ends_with(b"\r\n\r\n") {
                let read = socket.read(&mut buffer).await.unwrap();
                if read == 0 {
                    break;
                }
                head.extend_from_slice(&buffer[..read]);
            }
            let number = {
                let mut heads = seen.lock().unwrap();
                heads.push(String::from_utf8_lossy(&head).to_lowercase());
                heads.len()
            };
            let (status, body) = if number <= failures {
                (
                    "503 Service Unavailable",
                    r#"{"statusCode":503,"message":"busy"}"#,
                )
            } else {
                ("200 OK", r#"{"status":"ok","version":"2026-08"}"#)
            };
            let answer = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(answer.as_bytes()).await.unwrap();
        }
    });
    (base_url, heads)
}

#[tokio::test]
async fn hooks_see_every_attempt_of_a_retried_request_in_order() {
    let (base_url, _heads) = flaky_server(2).await;
    let (log, [first, second]) = recorders();
    let client = builder(&base_url, "store_alpha", KEY)
        .hook(first)
        .hook(second)
        .build()
        .unwrap();
    client.status().await.unwrap();
    let mut expected = Vec::new();
    for (attempt, outcome) in [(1, 503), (2, 503), (3, 200)] {
        for name in ["first", "second"] {
            expected.push(format!(
                "{name} before GET get_status /stores/{{storeId}}/status #{attempt}"
            ));
        }
        for name in ["first", "second"] {
            expected.push(format!("{name} after #{attempt} Status({outcome})"));
        }
    }
    assert_eq!(*log.lock().unwrap(), expected);
}

#[tokio::test]
async fn headers_added_by_hooks_reach_the_server_on_every_attempt() {
    // A server that answers 503 to the first request and 200 to the next, recording each request head.
    let (base_url, heads) = flaky_server(1).await;
    let (log, [first, second]) = recorders();
    let client = builder(&base_url, "store_alpha", KEY)
        .hook(first)
        .hook(second)
        .build()
        .unwrap();
    let status = client.status().await.unwrap();
    assert_eq!(status.version.as_deref(), Some("2026-08"));
    let heads = heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 2, "{heads:?}");
    for (attempt, head) in (1..).zip(&heads) {
        assert!(
            head.contains(&format!("x-hook-first: {attempt}\r\n")),
            "{head}"
        );
        assert!(
            head.contains(&format!("x-hook-second: {attempt}\r\n")),
            "{head}"
        );
        assert!(
            head.contains(&format!("x-api-key: {}\r\n", KEY.to_lowercase())),
            "{head}"
        );
    }
    assert_eq!(log.lock().unwrap().len(), 8);
}
