//! `webhooks listen`: registered at the emulator while it runs, verifying each delivery with the
//! store's key and passing it on to a receiver; against anything else, it only listens.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;
use store_api_webhooks::sign;

use crate::common::{Env, Run, bare, collect_stderr, data};
use crate::snap;

/// The requests a receiver got: headers and body.
type Seen = Arc<Mutex<Vec<(HeaderMap, Vec<u8>)>>>;

/// The receiver under development behind the listener: answers 202 at `/hook`, 404 elsewhere (so its
/// origin is no emulator).
struct Receiver {
    origin: String,
    seen: Seen,
    runtime: tokio::runtime::Runtime,
}

impl Receiver {
    fn start() -> Receiver {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let seen = Seen::default();
        let sink = Arc::clone(&seen);
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| async move {
                sink.lock().unwrap().push((headers, body.to_vec()));
                StatusCode::ACCEPTED
            }),
        );
        let socket = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let origin = format!("http://{}", socket.local_addr().unwrap());
        runtime.spawn(async move { axum::serve(socket, app).await });
        Receiver {
            origin,
            seen,
            runtime,
        }
    }

    fn hook(&self) -> String {
        format!("{}/hook", self.origin)
    }

    fn seen(&self) -> Vec<(HeaderMap, Vec<u8>)> {
        self.seen.lock().unwrap().clone()
    }

    /// POSTs `body` with `signature` to `url`; the answer's status.
    fn post(&self, url: &str, signature: &str, body: &[u8]) -> u16 {
        let request = http()
            .post(url)
            .header("content-type", "application/json")
            .header("x-service-signature", signature)
            .body(body.to_vec());
        self.runtime
            .block_on(async { request.send().await.unwrap().status().as_u16() })
    }

    /// The store's registrations at the emulator, read over its control plane.
    fn registrations(&self, env: &Env) -> BTreeMap<String, String> {
        let url = format!(
            "{}/_emulator/stores/{}/webhooks",
            env.emu.origin(),
            env.store
        );
        self.runtime.block_on(async {
            let answer = http().get(url).send().await.unwrap();
            assert_eq!(answer.status(), 200);
            answer.json().await.unwrap()
        })
    }
}

/// A `store-api webhooks listen` process.
struct Listener {
    child: Child,
    url: String,
    lines: mpsc::Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Listener {
    /// Starts `cmd webhooks listen ARGS` and waits for its ready line.
    fn start(mut cmd: std::process::Command, args: &[&str]) -> Listener {
        let mut child = cmd
            .args(["webhooks", "listen"])
            .args(args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        let stderr = collect_stderr(&mut child);
        let mut listener = Listener {
            child,
            url: String::new(),
            lines,
            stderr,
        };
        const READY: &str = "store-api webhooks listen, listening on ";
        // With --json, stdout holds the events only and the ready line is on stderr.
        let ready = if args.contains(&"--json") {
            let stderr = listener.stderr_with(READY);
            stderr
                .lines()
                .find(|line| line.starts_with(READY))
                .unwrap()
                .to_owned()
        } else {
            listener.next_line()
        };
        listener.url = ready
            .strip_prefix(READY)
            .unwrap_or_else(|| panic!("unexpected ready line {ready:?}"))
            .to_owned();
        assert!(listener.url.starts_with("http://127.0.0.1:"), "{ready}");
        listener
    }

    /// The next line on stdout, waited for at most 30 s.
    fn next_line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("no line on stdout ({e}); stderr: {}", self.stderr()))
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Stderr once it holds `needle` (it comes after the ready line), waited for at most 10 s.
    fn stderr_with(&self, needle: &str) -> String {
        for _ in 0..100 {
            let stderr = self.stderr();
            if stderr.contains(needle) {
                return stderr;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{needle:?} is not on stderr: {}", self.stderr())
    }

    /// Sends `signal` (`INT` as Ctrl-C does, `TERM` as a supervisor does); the exit code and stderr.
    fn stop(mut self, signal: &str) -> (Option<i32>, String) {
        let sent = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = self.child.wait().unwrap();
        // Let the reader thread drain stderr.
        std::thread::sleep(Duration::from_millis(100));
        (status.code(), self.stderr())
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client that talks to 127.0.0.1 directly, whatever proxy the environment names.
fn http() -> reqwest::Client {
    // reqwest panics when it builds a client before a rustls provider is installed.
    store_api::install_crypto_provider();
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// The status of the store's first delivery attempt, once the emulator has logged it (the listener
/// prints its line before it answers).
fn delivered_status(env: &Env) -> Option<u16> {
    for _ in 0..100 {
        if let Some(delivery) = env.emu.webhook_deliveries(&env.store).unwrap().first() {
            return delivery.status;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no delivery logged")
}

/// The event in a body.
fn event(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap()
}

#[test]
fn listen_registers_verifies_forwards_and_puts_back_on_ctrl_c() {
    let env = Env::start();
    let receiver = Receiver::start();
    // A registration of the user's own, displaced for the session and put back after it.
    let mine = "http://127.0.0.1:9/mine".to_owned();
    env.emu
        .set_webhooks(
            &env.store,
            BTreeMap::from([("orders_create".to_owned(), mine.clone())]),
        )
        .unwrap();
    let listener = Listener::start(env.std_cmd(), &["--forward-to", &receiver.hook()]);
    let registered = receiver.registrations(&env);
    assert_eq!(
        registered.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "orders_create",
            "orders_update",
            "products_create",
            "products_delete",
            "products_update"
        ]
    );
    assert!(registered.values().all(|url| *url == listener.url));
    let stderr = listener.stderr();
    assert!(
        stderr.contains(&format!(
            "orders_create was registered to {mine}: put back on exit"
        )),
        "{stderr}"
    );

    // An event the emulator emits: verified, forwarded with its own signature and body.
    Run::from(
        env.cmd()
            .args(["emulator", "trigger", "orders_create", "--file"])
            .arg(data("order.json"))
            .output()
            .unwrap(),
    )
    .code(0);
    let line = listener.next_line();
    snap!("listen_emulator_event", &line);
    let seen = receiver.seen();
    assert_eq!(seen.len(), 1);
    let (headers, body) = &seen[0];
    assert_eq!(
        headers["x-service-signature"],
        sign(&env.key, body).as_str()
    );
    assert_eq!(headers["content-type"], "application/json");
    let sent = event(body);
    assert_eq!(sent["topic"], "orders_create");
    assert!(
        line.contains(sent["id"].as_str().unwrap()),
        "{line} / {sent}"
    );
    // The emulator heard the receiver's own answer.
    assert_eq!(delivered_status(&env), Some(202));

    // A forged delivery posted straight to the listener: refused, never passed on.
    let forged =
        br#"{"id":"evt_forged","storeId":"x","topic":"orders_update","data":{"id":"ord_forged"}}"#;
    let status = receiver.post(&listener.url, &sign("not the store's key", forged), forged);
    assert_eq!(status, 401);
    snap!("listen_forged_delivery", listener.next_line());
    assert_eq!(receiver.seen().len(), 1);

    // Ctrl-C: the registration goes, the user's own comes back.
    let (code, stderr) = listener.stop("INT");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("removed the registration"), "{stderr}");
    assert_eq!(
        receiver.registrations(&env),
        BTreeMap::from([("orders_create".to_owned(), mine)])
    );
}

#[test]
fn an_unknown_topic_is_refused_with_the_known_ones() {
    let run = Run::from(
        bare()
            .args(["webhooks", "listen", "--topics", "orders_create,bogus"])
            .output()
            .unwrap(),
    )
    .code(2);
    snap!("listen_unknown_topic", run.stderr);
}

/// The real service's key in [`service_cmd`].
const KEY: &str = "sk_live_listener_test";

/// `store-api` against the receiver's origin, which has no control plane: taken for the real service.
fn service_cmd(receiver: &Receiver) -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("store-api"));
    cmd.env_remove("STORE_API_PROFILE")
        .env("STORE_API_CONFIG", "/nonexistent/store-api/config.toml")
        .env(
            "STORE_API_BASE_URL",
            format!("{}/store-api/2026-08", receiver.origin),
        )
        .env("STORE_API_STORE_ID", "store_1")
        .env("STORE_API_KEY", KEY);
    cmd
}

#[test]
fn a_receiver_that_does_not_answer_is_said_and_the_listener_goes_on() {
    let receiver = Receiver::start();
    let listener = Listener::start(
        service_cmd(&receiver),
        &[
            "--listen",
            "127.0.0.1:0",
            "--forward-to",
            "http://127.0.0.1:1/hook",
        ],
    );
    let body =
        br#"{"id":"evt_1","storeId":"store_1","topic":"orders_update","data":{"id":"ord_1"}}"#;
    for _ in 0..2 {
        assert_eq!(receiver.post(&listener.url, &sign(KEY, body), body), 502);
        let line = listener.next_line();
        assert!(
            line.starts_with("orders_update  evt_1  order ord_1  verified  -> forward failed: "),
            "{line}"
        );
    }
    let (code, stderr) = listener.stop("INT");
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn against_the_real_service_it_says_what_to_register_and_only_listens() {
    let receiver = Receiver::start();

    let listener = Listener::start(
        service_cmd(&receiver),
        &[
            "--listen",
            "127.0.0.1:0",
            "--topics",
            "orders_update",
            "--forward-to",
            &receiver.hook(),
        ],
    );
    let stderr = listener.stderr_with("is not an emulator");
    assert!(
        stderr.contains(&format!(
            "register for orders_update a public https URL that reaches {}",
            listener.url
        )),
        "{stderr}"
    );

    let update =
        br#"{"id":"evt_1","storeId":"store_1","topic":"orders_update","data":{"id":"ord_1"}}"#;
    assert_eq!(
        receiver.post(&listener.url, &sign(KEY, update), update),
        202
    );
    assert_eq!(
        listener.next_line(),
        "orders_update  evt_1  order ord_1  verified  -> 202"
    );
    let created =
        br#"{"id":"evt_2","storeId":"store_1","topic":"products_create","data":{"id":"prd_1"}}"#;
    assert_eq!(
        receiver.post(&listener.url, &sign(KEY, created), created),
        204
    );
    assert_eq!(
        listener.next_line(),
        "products_create  evt_2  product prd_1  verified  -> not in --topics, not forwarded"
    );
    assert_eq!(receiver.seen().len(), 1);

    let (code, stderr) = listener.stop("TERM");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("removed the registration"), "{stderr}");
}

#[test]
fn with_json_each_event_is_one_object_per_line() {
    let env = Env::start();
    let listener = Listener::start(env.std_cmd(), &["--json", "--topics", "orders_update"]);
    assert_eq!(
        Receiver::start().registrations(&env),
        BTreeMap::from([("orders_update".to_owned(), listener.url.clone())])
    );
    let order = env.submit("listen-json");
    Run::from(
        env.cmd()
            .args(crate::common::advance_args(&order))
            .output()
            .unwrap(),
    )
    .code(0);
    let line: Value = serde_json::from_str(&listener.next_line()).unwrap();
    assert_eq!(line["topic"], "orders_update");
    assert_eq!(line["resource"], format!("order {order}"));
    assert_eq!(line["verdict"], "verified");
    assert!(
        line["eventId"].as_str().unwrap().starts_with("evt_"),
        "{line}"
    );
    // No --forward-to: nothing to pass on, the sender gets 204.
    assert_eq!(line["forwardStatus"], Value::Null);
    assert_eq!(delivered_status(&env), Some(204));
    let (code, stderr) = listener.stop("TERM");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("removed the registration"), "{stderr}");
}

#[test]
fn it_says_what_it_lacks_before_it_listens() {
    // A loopback base URL nobody answers at: an emulator not started, not the real service.
    let run = Run::from(
        bare()
            .args(["--base-url", "http://127.0.0.1:1", "webhooks", "listen"])
            .output()
            .unwrap(),
    )
    .code(1);
    assert!(
        run.stderr
            .contains("nothing answers at http://127.0.0.1:1/ (")
            && run.stderr.contains("is the emulator running?"),
        "{run:?}"
    );
    // A store the emulator does not have: refused, with the ones it has.
    let env = Env::start();
    let run = Run::from(
        env.cmd()
            .args(["--store-id", "store_nope", "webhooks", "listen"])
            .output()
            .unwrap(),
    )
    .code(2);
    assert!(
        run.stderr
            .contains("--store-id store_nope is not a store of the emulator at")
            && run.stderr.contains(&env.store),
        "{run:?}"
    );
    assert_eq!(Receiver::start().registrations(&env), BTreeMap::new());
}
