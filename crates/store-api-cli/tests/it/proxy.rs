//! `store-api proxy --record|--replay`, end to end, with curl as the client from another language.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::common::{Env, collect_stderr};
use crate::snap;

/// A `store-api proxy` process and the origin it listens on.
struct Proxy {
    child: Child,
    origin: String,
    /// The base URL its ready line ends with.
    base_url: String,
    stderr: Arc<Mutex<String>>,
    more_stdout: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    /// Starts `cmd proxy --listen 127.0.0.1:0 ARGS` and waits for its one ready line.
    fn start(mut cmd: std::process::Command, args: &[&str], ready: &str) -> Proxy {
        let mut child = cmd
            .args(["proxy", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        let more_stdout = Arc::new(Mutex::new(Vec::new()));
        let more = Arc::clone(&more_stdout);
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = sender.send(lines.next());
            // Anything after the ready line breaks "exactly one line"; `stop` checks.
            for line in lines.map_while(Result::ok) {
                more.lock().unwrap().push(line);
            }
        });
        let stderr = collect_stderr(&mut child);
        let line = match receiver.recv_timeout(Duration::from_secs(30)) {
            Ok(Some(Ok(line))) => line,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "no ready line ({other:?}); stderr: {}",
                    stderr.lock().unwrap()
                );
            }
        };
        assert!(line.starts_with(ready), "{line:?}");
        // The ready line ends with the base URL, version prefix included.
        let base_url = line
            .split_once(", listening on ")
            .map(|(_, base_url)| base_url.to_owned())
            .unwrap_or_else(|| panic!("unexpected ready line {line:?}"));
        assert!(base_url.starts_with("http://127.0.0.1:"), "{line}");
        let origin = base_url
            .strip_suffix(store_api_raw::contract::VERSION_PREFIX)
            .unwrap_or_else(|| panic!("the ready line ends with no version prefix: {line:?}"))
            .to_owned();
        Proxy {
            child,
            origin,
            base_url,
            stderr,
            more_stdout,
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// SIGTERM, as a supervisor stops it; the proxy writes its cassettes and exits 0.
    fn stop(mut self) -> String {
        let pid = self.child.id().to_string();
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = self.child.wait().unwrap();
        // Let the reader threads drain stderr.
        std::thread::sleep(Duration::from_millis(100));
        let stderr = self.stderr();
        assert_eq!(status.code(), Some(0), "{stderr}");
        let more = self.more_stdout.lock().unwrap().clone();
        assert!(more.is_empty(), "more than one line on stdout: {more:?}");
        stderr
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `store-api` with no credentials from the caller's environment, as a std command (to spawn it).
fn bare_std() -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("store-api"));
    for var in [
        "STORE_API_KEY",
        "STORE_API_STORE_ID",
        "STORE_API_BASE_URL",
        "RUST_LOG",
        "STORE_API_PROFILE",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("STORE_API_CONFIG", "/nonexistent/store-api/config.toml");
    cmd
}

/// What curl saw: the status, the headers (lower-case names) and the body.
#[derive(Debug)]
struct Seen {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

/// `curl -s -i ARGS`: a client that is not this SDK.
fn curl(args: &[&str]) -> Seen {
    let output = std::process::Command::new("/usr/bin/curl")
        .args(["-s", "-S", "-i", "-g", "--max-time", "20"])
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "curl {args:?}: {output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text}"));
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Seen {
        status,
        headers,
        body: body.to_owned(),
    }
}

const CUSTOMER: &[&str] = &[
    "Grace",
    "Hopper",
    "grace.hopper@example.org",
    "+1 512 555 0142",
    "1701 Congress Avenue",
    "Suite 1900",
    "Austin",
    "78701",
];

fn order_body() -> String {
    serde_json::json!({
        "externalOrderId": "proxy-test-0001",
        "lineItems": [{ "sku": "AA-TEE-SUN-BLK-M", "quantity": 1 }],
        "shippingAddress": {
            "firstName": CUSTOMER[0],
            "lastName": CUSTOMER[1],
            "email": CUSTOMER[2],
            "phone": CUSTOMER[3],
            "address": {
                "streetAddress": CUSTOMER[4],
                "apartmentOrSuite": CUSTOMER[5],
                "cityOrTown": CUSTOMER[6],
                "stateOrProvince": "TX",
                "zipOrPostalCode": CUSTOMER[7],
                "country": "US"
            }
        }
    })
    .to_string()
}

/// The same session of curl requests, against the proxy at `origin` with `key` (or none).
fn session(origin: &str, store: &str, key: Option<&str>) -> Vec<Seen> {
    let base = format!("{origin}/store-api/2026-08/stores/{store}");
    let key_header = key.map(|key| format!("X-API-Key: {key}"));
    let with_key = |mut args: Vec<String>| {
        if let Some(header) = &key_header {
            args.extend(["-H".to_owned(), header.clone()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        curl(&args)
    };
    let get = |path: &str| with_key(vec![format!("{base}{path}")]);
    let post = |path: &str, body: &str| {
        with_key(vec![
            "-X".into(),
            "POST".into(),
            "-H".into(),
            "Content-Type: application/json".into(),
            "--data-binary".into(),
            body.into(),
            format!("{base}{path}"),
        ])
    };
    vec![
        get("/status"),
        get("/catalog-products?limit=2"),
        post("/orders", &order_body()),
        // The same request again: the service answers 409 with the existing order's id.
        post("/orders", &order_body()),
        get("/orders?filter[externalOrderId]=proxy-test-0001"),
        get("/products/prod_does_not_exist"),
        // Another cassette, named by the proxy's own header.
        with_key(vec![
            "-H".into(),
            "X-Store-Api-Cassette: second".into(),
            format!("{base}/artworks?limit=1"),
        ]),
    ]
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn curl_records_through_the_proxy_and_replays_with_nothing_behind_it() {
    let dir = tempfile::tempdir().unwrap();
    let cassettes = dir.path().join("cassettes");
    let cassettes_arg = cassettes.to_str().unwrap();
    let env = Env::start();
    let store = env.store.clone();
    // The base URL comes from STORE_API_BASE_URL (Env::std_cmd), like any command's.
    let proxy = Proxy::start(
        env.std_cmd(),
        &["--record", cassettes_arg],
        "store-api proxy recording into ",
    );
    let recorded = session(&proxy.origin, &store, Some(&env.key));
    let statuses: Vec<u16> = recorded.iter().map(|seen| seen.status).collect();
    assert_eq!(
        statuses,
        [200, 200, 201, 409, 200, 404, 200],
        "{recorded:#?}"
    );
    assert_eq!(recorded[3].json()["error"], "Conflict");
    // The service's own headers pass back as received.
    assert!(
        recorded[0].header("x-ratelimit-limit").is_some(),
        "{recorded:?}"
    );

    // Written after each exchange: a proxy killed now would lose nothing.
    let written = store_api_cassette::Cassette::load(cassettes.join("proxy.json")).unwrap();
    assert_eq!(written.exchanges.len(), 6);
    let stderr = proxy.stop();
    assert!(!stderr.contains(&env.key), "{stderr}");
    let main = read(&cassettes.join("proxy.json"));
    let second = read(&cassettes.join("second.json"));
    for text in [&main, &second] {
        assert!(!text.contains(&env.key), "the key was written:\n{text}");
        for value in CUSTOMER {
            assert!(!text.contains(value), "{value:?} was written:\n{text}");
        }
    }
    assert_eq!(
        store_api_cassette::Cassette::load(cassettes.join("second.json"))
            .unwrap()
            .exchanges
            .len(),
        1
    );

    // Nothing behind the replay: the emulator is gone.
    let emulator = env.emu.base_url();
    drop(env);
    let gone = std::process::Command::new("/usr/bin/curl")
        .args([
            "-s",
            "--max-time",
            "5",
            &format!("{emulator}/stores/{store}/status"),
        ])
        .status()
        .unwrap();
    assert!(!gone.success(), "the emulator still answers");

    let proxy = Proxy::start(
        bare_std(),
        &["--replay", cassettes_arg],
        "store-api proxy replaying ",
    );
    // Any key or none: a replay never checks it.
    let replayed = session(&proxy.origin, &store, None);
    for (index, (live, again)) in recorded.iter().zip(&replayed).enumerate() {
        assert_eq!(live.status, again.status, "exchange {index}: {again:?}");
        assert_eq!(live.json(), again.json(), "exchange {index}");
        assert_eq!(
            live.header("content-type"),
            again.header("content-type"),
            "exchange {index}"
        );
    }

    // A request the cassette does not hold: the loud miss, the diff on stderr too.
    let miss = curl(&[&format!(
        "{}/store-api/2026-08/stores/{store}/products/prod_never_recorded",
        proxy.origin
    )]);
    assert_eq!(miss.status, 500, "{miss:?}");
    assert_eq!(miss.header("x-store-api-proxy"), Some("cassette-miss"));
    let envelope = miss.json();
    assert_eq!(envelope["statusCode"], 500);
    assert_eq!(envelope["error"], "Cassette Miss");
    let message = envelope["message"].as_str().unwrap();
    assert!(!message.is_empty(), "{envelope}");
    // A cassette the directory does not hold.
    let unknown = curl(&[
        "-H",
        "X-Store-Api-Cassette: never-recorded",
        &format!("{}/store-api/2026-08/stores/{store}/status", proxy.origin),
    ]);
    assert_eq!(unknown.status, 500, "{unknown:?}");
    assert!(
        unknown.json()["message"]
            .as_str()
            .unwrap()
            .contains("never-recorded.json"),
        "{unknown:?}"
    );
    let stderr = proxy.stop();
    assert!(!stderr.contains("never asked for"), "{stderr}");
    assert!(stderr.contains("prod_never_recorded"), "{stderr}");
    assert!(stderr.contains(message.lines().next().unwrap()), "{stderr}");
}

/// A tiny HTTP server: answers every request with `answer`, keeps each request's head.
struct Upstream {
    origin: String,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Upstream {
    fn start(host: &str, answer: String) -> Upstream {
        let listener = TcpListener::bind((host, 0)).unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let heads = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&heads);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut head = Vec::new();
                let mut byte = [0];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                seen.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&head).into_owned());
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        Upstream { origin, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

#[test]
fn a_redirect_is_passed_back_never_followed_and_other_hosts_are_refused() {
    // Where the redirect points, and what an absolute-form request names: neither may see a request.
    let elsewhere = Upstream::start("127.0.0.2", "HTTP/1.1 200 OK\r\n\r\n".into());
    let location = format!("{}/elsewhere", elsewhere.origin);
    let body = r#"{"moved":true}"#;
    let upstream = Upstream::start(
        "127.0.0.1",
        format!(
            "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    let dir = tempfile::tempdir().unwrap();
    let cassettes = dir.path().to_str().unwrap();
    let key = "csk_0123456789abcdef0123456789abcdef";
    let proxy = Proxy::start(
        bare_std(),
        &[
            "--base-url",
            &format!("{}/store-api/2026-08", upstream.origin),
            "--record",
            cassettes,
        ],
        "store-api proxy recording into ",
    );
    let path = "/store-api/2026-08/stores/store_alpha/status?x=1";
    let seen = curl(&[
        "-H",
        &format!("X-API-Key: {key}"),
        "-H",
        "X-Store-Api-Cassette: redirect",
        &format!("{}{path}", proxy.origin),
    ]);
    assert_eq!(seen.status, 302, "{seen:?}");
    assert_eq!(seen.header("location"), Some(location.as_str()));
    assert_eq!(seen.body, body);
    // The origin got the path and query as sent, its own Host, the caller's key, and not the
    // proxy's header.
    let heads = upstream.heads();
    assert_eq!(heads.len(), 1, "{heads:?}");
    let head = heads[0].to_ascii_lowercase();
    assert!(
        head.starts_with(&format!("get {path} http/1.1\r\n")),
        "{head}"
    );
    let authority = upstream.origin.trim_start_matches("http://");
    assert!(
        head.contains(&format!("\r\nhost: {authority}\r\n")),
        "{head}"
    );
    assert!(
        head.contains(&format!("\r\nx-api-key: {key}\r\n")),
        "{head}"
    );
    assert!(!head.contains("x-store-api-cassette"), "{head}");

    // An absolute-form request (as to a forward proxy) naming another host is refused, not sent.
    let refused = curl(&[
        "--proxy",
        &proxy.origin,
        &format!("{}/stolen?key={key}", elsewhere.origin),
    ]);
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(refused.header("x-store-api-proxy"), Some("refused"));
    assert!(
        refused.json()["message"]
            .as_str()
            .unwrap()
            .contains("only to its configured origin"),
        "{refused:?}"
    );
    // A cassette name that is not a safe file name.
    let unsafe_name = curl(&[
        "-H",
        "X-Store-Api-Cassette: ../outside",
        &format!("{}{path}", proxy.origin),
    ]);
    assert_eq!(unsafe_name.status, 400, "{unsafe_name:?}");
    assert!(unsafe_name.body.contains("is not a cassette name"));
    proxy.stop();
    assert!(elsewhere.heads().is_empty(), "{:?}", elsewhere.heads());
    assert_eq!(upstream.heads().len(), 1);
    let text = read(&dir.path().join("redirect.json"));
    assert!(!text.contains(key), "{text}");

    // Replayed: the same 302, with nothing behind.
    let proxy = Proxy::start(
        bare_std(),
        &["--replay", cassettes],
        "store-api proxy replaying ",
    );
    let again = curl(&[
        "-H",
        "X-Store-Api-Cassette: redirect",
        &format!("{}{path}", proxy.origin),
    ]);
    assert_eq!(again.status, 302, "{again:?}");
    assert_eq!(again.header("location"), Some(location.as_str()));
    assert_eq!(again.json(), seen.json());
    proxy.stop();
    assert!(elsewhere.heads().is_empty());
}

#[test]
fn the_embedded_emulator_can_stand_behind_the_recording_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = Proxy::start(
        bare_std(),
        &["--emulator", "--record", dir.path().to_str().unwrap()],
        "store-api proxy recording into ",
    );
    // The embedded emulator's first store, with its seeded key.
    let seen = curl(&[
        "-H",
        "X-API-Key: csk_ce4d6676e735329b21b3d864ca427df5",
        &format!(
            "{}/store-api/2026-08/stores/store_alpha/status",
            proxy.origin
        ),
    ]);
    assert_eq!(seen.status, 200, "{seen:?}");
    let stderr = proxy.stop();
    assert!(
        stderr.contains("using the embedded emulator at"),
        "{stderr}"
    );
    let cassette = store_api_cassette::Cassette::load(dir.path().join("proxy.json")).unwrap();
    assert_eq!(cassette.exchanges.len(), 1);
}

#[test]
fn the_proxy_says_what_it_lacks_before_it_listens() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap();
    let run = |args: &[&str]| {
        crate::common::Run::from(
            crate::common::bare()
                .arg("proxy")
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let nowhere = run(&["--listen", "127.0.0.1:0", "--record", dir]).code(2);
    assert!(nowhere.stderr.contains("--base-url"), "{nowhere:?}");
    let remote = run(&["--listen", "0.0.0.0:0", "--replay", dir]).code(2);
    assert!(
        remote.stderr.contains("--allow-insecure-http"),
        "{remote:?}"
    );
    let clear = run(&[
        "--listen",
        "127.0.0.1:0",
        "--record",
        dir,
        "--base-url",
        "http://store.example.test",
    ])
    .code(2);
    assert!(clear.stderr.contains("clear text"), "{clear:?}");
    let emulator = run(&["--listen", "127.0.0.1:0", "--replay", dir, "--emulator"]).code(2);
    assert!(
        emulator.stderr.contains("only apply with --record"),
        "{emulator:?}"
    );
    let neither = run(&["--listen", "127.0.0.1:0"]).code(2);
    assert!(neither.stderr.contains("--record"), "{neither:?}");
    let missing = run(&[
        "--listen",
        "127.0.0.1:0",
        "--replay",
        "/nonexistent/cassettes",
    ])
    .code(2);
    assert!(
        missing.stderr.contains("/nonexistent/cassettes"),
        "{missing:?}"
    );
}

#[test]
fn customer_data_is_kept_only_when_asked_and_unused_exchanges_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let cassettes = dir.path().to_str().unwrap();
    let proxy = Proxy::start(
        bare_std(),
        &["--emulator", "--record", cassettes, "--keep-customer-data"],
        "store-api proxy recording into ",
    );
    let key = "csk_ce4d6676e735329b21b3d864ca427df5";
    let recorded = session(&proxy.origin, "store_alpha", Some(key));
    assert_eq!(recorded[2].status, 201, "{recorded:?}");
    proxy.stop();
    let text = read(&dir.path().join("proxy.json"));
    assert!(text.contains("\"customerData\": \"kept\""), "{text}");
    for value in CUSTOMER {
        assert!(text.contains(value), "{value:?} was not kept:\n{text}");
    }
    assert!(!text.contains(key), "{text}");

    // A replay that stops after the first request names the rest on exit.
    let proxy = Proxy::start(
        bare_std(),
        &["--replay", cassettes],
        "store-api proxy replaying ",
    );
    let status = curl(&[&format!(
        "{}/store-api/2026-08/stores/store_alpha/status",
        proxy.origin
    )]);
    assert_eq!(status.status, 200, "{status:?}");
    let stderr = proxy.stop();
    assert!(
        stderr.contains("cassette proxy: 5 recorded exchanges never asked for"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cassette second: 1 recorded exchanges"),
        "{stderr}"
    );
}

#[test]
fn an_answer_over_max_kept_body_is_recorded_by_size_and_cannot_be_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let cassettes = dir.path().to_str().unwrap();
    let proxy = Proxy::start(
        bare_std(),
        &["--emulator", "--record", cassettes, "--max-kept-body", "10"],
        "store-api proxy recording into ",
    );
    let status = format!(
        "{}/store-api/2026-08/stores/store_alpha/status",
        proxy.origin
    );
    let live = curl(&[
        "-H",
        "X-API-Key: csk_ce4d6676e735329b21b3d864ca427df5",
        &status,
    ]);
    assert_eq!(live.status, 200, "{live:?}");
    proxy.stop();
    let text = read(&dir.path().join("proxy.json"));
    assert!(text.contains("\"sha256\""), "{text}");

    let proxy = Proxy::start(
        bare_std(),
        &["--replay", cassettes],
        "store-api proxy replaying ",
    );
    let status = format!(
        "{}/store-api/2026-08/stores/store_alpha/status",
        proxy.origin
    );
    let replayed = curl(&[&status]);
    assert_eq!(replayed.status, 500, "{replayed:?}");
    assert!(replayed.body.contains("too large to keep"), "{replayed:?}");
    proxy.stop();
}

/// The seeded key of the embedded emulator's first store.
const ALPHA_KEY: &str = "csk_ce4d6676e735329b21b3d864ca427df5";

// Issue 35, defect 1: through `proxy --record` in front of the emulator, `GET /_emulator/stores` with
// `Host: attacker.example` (a page whose name was pointed at 127.0.0.1: DNS rebinding) answered 200
// with every store's key, where the emulator alone answers 403: the proxy dropped the caller's Host
// and sent the origin's loopback one. It now refuses a Host that is not a loopback one, and never
// forwards the control plane unless asked.
#[test]
fn the_recording_proxy_keeps_the_emulators_guards() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = Proxy::start(
        bare_std(),
        &["--emulator", "--record", dir.path().to_str().unwrap()],
        "store-api proxy recording into ",
    );
    let port = proxy.origin.rsplit(':').next().unwrap().to_owned();
    let status = "/store-api/2026-08/stores/store_alpha/status";
    let refused = |seen: &Seen, says: &str| {
        assert_eq!(seen.status, 403, "{seen:?}");
        assert_eq!(
            seen.header("x-store-api-proxy"),
            Some("refused"),
            "{seen:?}"
        );
        assert!(seen.body.contains(says), "{seen:?}");
        assert!(!seen.body.contains("csk_"), "{seen:?}");
    };
    for path in ["/_emulator/stores", status] {
        for host in [
            format!("attacker.example:{port}"),
            "attacker.example".to_owned(),
            format!("127.0.0.1.nip.io:{port}"),
        ] {
            let host = format!("Host: {host}");
            let rebound = curl(&[
                "-H",
                &host,
                "-H",
                &format!("X-API-Key: {ALPHA_KEY}"),
                &format!("{}{path}", proxy.origin),
            ]);
            refused(&rebound, "--allow-remote");
        }
    }
    // A loopback Host, but the control plane: in every spelling that reaches it.
    for path in [
        "/_emulator/stores",
        "/_EMULATOR/stores",
        "/%5femulator/stores",
        "/store-api/../_emulator/stores",
        "/store-api/%2e%2e/_emulator/stores",
        "//_emulator/stores",
    ] {
        let control = curl(&["--path-as-is", &format!("{}{path}", proxy.origin)]);
        refused(&control, "--forward-control-plane");
    }
    let fault = curl(&[
        "-H",
        &format!("{}: status=503", store_api_fixtures::FAULT_HEADER),
        "-H",
        &format!("X-API-Key: {ALPHA_KEY}"),
        &format!("{}{status}", proxy.origin),
    ]);
    refused(&fault, "--forward-control-plane");
    // The API itself, addressed to a loopback name: forwarded.
    for host in [format!("localhost:{port}"), format!("[::1]:{port}")] {
        let seen = curl(&[
            "-H",
            &format!("Host: {host}"),
            "-H",
            &format!("X-API-Key: {ALPHA_KEY}"),
            &format!("{}{status}", proxy.origin),
        ]);
        assert_eq!(seen.status, 200, "{seen:?}");
    }
    let stderr = proxy.stop();
    assert!(stderr.contains("refused: "), "{stderr}");
    let cassette = read(&dir.path().join("proxy.json"));
    assert!(!cassette.contains("_emulator"), "{cassette}");
    assert_eq!(
        store_api_cassette::Cassette::load(dir.path().join("proxy.json"))
            .unwrap()
            .exchanges
            .len(),
        2
    );
}

// Issue 35, defect 1: what the guards leave to the user, each behind its own flag.
#[test]
fn remote_hosts_and_the_control_plane_pass_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = Proxy::start(
        bare_std(),
        &[
            "--emulator",
            "--record",
            dir.path().to_str().unwrap(),
            "--allow-remote",
            "--forward-control-plane",
        ],
        "store-api proxy recording into ",
    );
    // A caller elsewhere names this machine by its own name.
    let remote = curl(&[
        "-H",
        "Host: store-proxy.example:8080",
        "-H",
        &format!("X-API-Key: {ALPHA_KEY}"),
        &format!(
            "{}/store-api/2026-08/stores/store_alpha/status",
            proxy.origin
        ),
    ]);
    assert_eq!(remote.status, 200, "{remote:?}");
    let stores = curl(&[&format!("{}/_emulator/stores", proxy.origin)]);
    assert_eq!(stores.status, 200, "{stores:?}");
    assert_eq!(stores.header("x-store-api-proxy"), None, "{stores:?}");
    proxy.stop();
    // Both need a recording proxy or a remote listener to mean anything; a replay refuses the
    // control plane's flag, and a non-loopback listener needs --allow-remote too.
    let run = |args: &[&str]| {
        crate::common::Run::from(
            crate::common::bare()
                .arg("proxy")
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let cassettes = dir.path().to_str().unwrap();
    let replay = run(&[
        "--listen",
        "127.0.0.1:0",
        "--replay",
        cassettes,
        "--forward-control-plane",
    ])
    .code(2);
    assert!(replay.stderr.contains("--record"), "{replay:?}");
    let listener = run(&[
        "--listen",
        "0.0.0.0:0",
        "--replay",
        cassettes,
        "--allow-insecure-http",
    ])
    .code(2);
    assert!(listener.stderr.contains("--allow-remote"), "{listener:?}");
}

/// `store-api ARGS` until it exits, at most `limit`; a process still running then is killed and
/// reported as `None`.
fn exit_within(mut cmd: std::process::Command, limit: Duration) -> Option<crate::common::Run> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while started.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(crate::common::Run::from(child.wait_with_output().unwrap()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

// Issue 35, defect 8: two recording proxies on one directory (parallel test shards) each rewrote the
// same cassettes with their own exchanges: 300 of 600 were kept, and a reader once saw an empty file.
// A recording proxy now holds a lock in its directory; a second one refuses to start (exit 4, as an
// order file locked by another run), naming the lock.
#[test]
fn a_second_recording_proxy_on_one_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cassettes = dir.path().to_str().unwrap();
    let first = Proxy::start(
        bare_std(),
        &["--emulator", "--record", cassettes],
        "store-api proxy recording into ",
    );
    let mut second = bare_std();
    second.args([
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--emulator",
        "--record",
        cassettes,
    ]);
    let second = exit_within(second, Duration::from_secs(30))
        .expect("a second recording proxy started on the same directory")
        .code(4);
    assert!(second.stdout.is_empty(), "{second:?}");
    assert!(
        second
            .stderr
            .contains("another `store-api proxy --record` is recording into this directory"),
        "{second:?}"
    );
    assert!(
        second.stderr.contains(".store-api-proxy.lock"),
        "{second:?}"
    );
    // The first records on.
    let seen = curl(&[
        "-H",
        &format!("X-API-Key: {ALPHA_KEY}"),
        &format!(
            "{}/store-api/2026-08/stores/store_alpha/status",
            first.origin
        ),
    ]);
    assert_eq!(seen.status, 200, "{seen:?}");
    first.stop();
    // Once it has exited, the directory is free again; a replay does not lock it.
    let again = Proxy::start(
        bare_std(),
        &["--emulator", "--record", cassettes],
        "store-api proxy recording into ",
    );
    let replay = Proxy::start(
        bare_std(),
        &["--replay", cassettes],
        "store-api proxy replaying ",
    );
    replay.stop();
    again.stop();
}

/// The lines of a proxy's stderr a snapshot pins: each exchange's, each run's start and the counts
/// (not a miss's diff, nor the embedded emulator's address).
fn exchange_lines(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|line| {
            [
                "recorded ",
                "replayed ",
                "missed ",
                "cassette ",
                "store-api proxy stopped",
                "  cassette ",
            ]
            .iter()
            .any(|start| line.starts_with(start))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A test suite of three requests against `base_url` (the proxy's ready line, taken as it is): the
/// store's status, an order placed, the order looked up by its external id.
fn suite(base_url: &str, key: &str) -> Vec<Seen> {
    let store = format!("{base_url}/stores/store_alpha");
    let key = format!("X-API-Key: {key}");
    let mut body: Value = serde_json::from_str(&order_body()).unwrap();
    body["externalOrderId"] = "suite-0001".into();
    vec![
        curl(&["-H", &key, &format!("{store}/status")]),
        curl(&[
            "-H",
            &key,
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            &body.to_string(),
            &format!("{store}/orders"),
        ]),
        curl(&[
            "-H",
            &key,
            &format!("{store}/orders?filter[externalOrderId]=suite-0001"),
        ]),
    ]
}

// Issue 38, point 5: the second run of a suite against a replaying proxy got three 500 misses. A run
// now starts over when the cassette's first recorded request comes again; within a run a write
// repeated is still a miss.
#[test]
fn a_replaying_proxy_serves_a_suite_run_twice_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let cassettes = dir.path().to_str().unwrap();
    let proxy = Proxy::start(
        bare_std(),
        &["--emulator", "--record", cassettes],
        "store-api proxy recording into ",
    );
    assert!(
        proxy.base_url.ends_with("/store-api/2026-08"),
        "{}",
        proxy.base_url
    );
    let recorded = suite(&proxy.base_url, ALPHA_KEY);
    let statuses: Vec<u16> = recorded.iter().map(|seen| seen.status).collect();
    assert_eq!(statuses, [200, 201, 200], "{recorded:#?}");
    let stderr = proxy.stop();
    assert!(!stderr.contains(ALPHA_KEY), "{stderr}");
    snap!("proxy_record_lines", exchange_lines(&stderr));

    let proxy = Proxy::start(
        bare_std(),
        &["--replay", cassettes],
        "store-api proxy replaying ",
    );
    for run in 1..=2 {
        let replayed = suite(&proxy.base_url, "csk_any_key_for_a_replay");
        for (index, (live, again)) in recorded.iter().zip(&replayed).enumerate() {
            assert_eq!(
                again.header("x-store-api-proxy"),
                None,
                "run {run}, {index}: {again:?}"
            );
            assert_eq!(live.status, again.status, "run {run}, {index}: {again:?}");
            assert_eq!(live.json(), again.json(), "run {run}, {index}");
        }
    }
    // Within run 2, the order placed again: a miss, not the recorded 201 once more.
    let mut body: Value = serde_json::from_str(&order_body()).unwrap();
    body["externalOrderId"] = "suite-0001".into();
    let again = curl(&[
        "-H",
        "Content-Type: application/json",
        "--data-binary",
        &body.to_string(),
        &format!("{}/stores/store_alpha/orders", proxy.base_url),
    ]);
    assert_eq!(again.status, 500, "{again:?}");
    assert_eq!(again.header("x-store-api-proxy"), Some("cassette-miss"));
    assert!(again.body.contains("in run 2"), "{again:?}");
    let stderr = proxy.stop();
    for value in CUSTOMER {
        assert!(!stderr.contains(value), "{value:?} on stderr:\n{stderr}");
    }
    snap!("proxy_replay_lines", exchange_lines(&stderr));
}

/// The fenced block of `language` under the heading `heading` of `markdown`.
fn snippet(markdown: &str, heading: &str, language: &str) -> String {
    let section = markdown
        .split_once(heading)
        .unwrap_or_else(|| panic!("no heading {heading:?}"))
        .1;
    let block = section
        .split_once(&format!("```{language}\n"))
        .unwrap_or_else(|| panic!("no {language} block under {heading:?}"))
        .1;
    block.split_once("```").unwrap().0.to_owned()
}

/// Whether `program ARGS` runs (an interpreter the snippets need, with its libraries).
fn available(program: &str, args: &[&str]) -> bool {
    std::process::Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|output| output.status.success())
}

// Issue 38, point 5: the cassette crate's README shows how a suite in Python (requests) and in
// JavaScript (fetch) names its cassette; both snippets are run, as written, against a replaying proxy.
#[test]
fn the_readmes_python_and_javascript_snippets_name_their_cassette() {
    // Read from the workspace at run time: a packaged CLI crate ships no sibling crate (and a
    // published crate's `include_str!` must stay inside it, `.ci/package-includes`).
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../store-api-cassette/README.md"
    );
    let Ok(readme) = std::fs::read_to_string(path) else {
        eprintln!("skipping: {path} is not there (a CLI crate built outside its workspace)");
        return;
    };
    let readme = readme.as_str();
    let heading = "## A test suite in another language";
    let python = snippet(readme, heading, "python");
    let javascript = snippet(readme, heading, "js");
    let dir = tempfile::tempdir().unwrap();
    let cassettes = dir.path().to_str().unwrap();
    let proxy = Proxy::start(
        bare_std(),
        &["--emulator", "--record", cassettes],
        "store-api proxy recording into ",
    );
    let status = curl(&[
        "-H",
        &format!("X-API-Key: {ALPHA_KEY}"),
        "-H",
        "X-Store-Api-Cassette: checkout",
        &format!("{}/stores/store_alpha/status", proxy.base_url),
    ]);
    assert_eq!(status.status, 200, "{status:?}");
    proxy.stop();
    assert!(dir.path().join("checkout.json").is_file());

    let proxy = Proxy::start(
        bare_std(),
        &["--replay", cassettes],
        "store-api proxy replaying ",
    );
    let mut ran = 0;
    let runs: [(&str, Vec<&str>, &[&str]); 2] = [
        ("python3", vec!["-c", &python], &["-c", "import requests"]),
        (
            "node",
            vec!["--input-type=module", "-e", &javascript],
            &["-e", "fetch"],
        ),
    ];
    for (program, args, probe) in runs {
        if !available(program, probe) {
            eprintln!(
                "skipping the {program} snippet: {program} (with its libraries) is not installed"
            );
            continue;
        }
        let output = std::process::Command::new(program)
            .args(&args)
            .env("STORE_API_BASE_URL", &proxy.base_url)
            .env_remove("STORE_API_KEY")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{program}: {output:?}");
        assert_eq!(stdout.trim(), "200 ok", "{program}: {output:?}");
        ran += 1;
    }
    let stderr = proxy.stop();
    // Each snippet's request was answered from the cassette it named.
    assert_eq!(stderr.matches("(checkout)").count(), ran, "{stderr}");
    assert!(!stderr.contains("missed "), "{stderr}");
}
