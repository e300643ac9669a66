//! `api METHOD PATH [--data]`: any request over real HTTP to the emulator, with the session's key and
//! store.

use crate::common::{Env, Run, data};
use crate::snap;

#[test]
fn a_get_relative_to_the_store_prints_the_status_and_the_pretty_body() {
    let env = Env::start();
    let run = env.run(&["api", "GET", "/status"]).code(0);
    assert_eq!(run.stderr, "200 OK\n");
    snap!("api_get_status", run.stdout);
    assert_eq!(run.json()["store"]["id"], env.store.as_str());
    // The same resource by its path under the version prefix.
    let absolute = format!("/store-api/2026-08/stores/{}/status", env.store);
    let again = env.run(&["api", "get", &absolute]).code(0);
    assert_eq!(again.json()["store"]["id"], env.store.as_str());
}

#[test]
fn a_post_sends_the_body_from_a_file_stdin_or_the_command_line() {
    let env = Env::start();
    let mut order: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("order.json")).unwrap()).unwrap();
    order["externalOrderId"] = "api-1".into();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("order.json");
    std::fs::write(&file, order.to_string()).unwrap();
    let from_file = env
        .run(&[
            "api",
            "POST",
            "/orders",
            "--data",
            &format!("@{}", file.display()),
        ])
        .code(0);
    assert_eq!(from_file.stderr, "201 Created\n");
    snap!("api_post_order", from_file.stdout);
    assert_eq!(from_file.json()["externalOrderId"], "api-1");

    order["externalOrderId"] = "api-2".into();
    let from_stdin = Run::from(
        env.cmd()
            .args(["api", "POST", "/orders", "--data", "-"])
            .write_stdin(order.to_string())
            .output()
            .unwrap(),
    )
    .code(0);
    assert_eq!(from_stdin.json()["externalOrderId"], "api-2");

    // Inline, and reusing api-1: the service's 409, body printed, exit code 3 like every refusal.
    order["externalOrderId"] = "api-1".into();
    let conflict = env
        .run(&["api", "POST", "/orders", "-d", &order.to_string()])
        .code(3);
    assert_eq!(
        conflict.stderr,
        "error: the service answered 409 Conflict\n"
    );
    assert_eq!(conflict.json()["statusCode"], 409);

    // The query string goes as written: both orders, newest first, one per page.
    let list = env
        .run(&[
            "api",
            "GET",
            "/orders?limit=1&filter[externalOrderId]=api-1,api-2",
        ])
        .code(0);
    assert_eq!(list.json()["totalItems"], 2, "{list:?}");
    assert_eq!(list.json()["items"][0]["externalOrderId"], "api-2");
}

#[test]
fn failures_keep_the_exit_codes_of_the_other_commands() {
    let env = Env::start();
    let missing = env.run(&["api", "GET", "/orders/ord_nope"]).code(3);
    assert_eq!(missing.json()["statusCode"], 404);
    let json = env
        .run(&["api", "GET", "/orders/ord_nope", "--json"])
        .code(3);
    let error: serde_json::Value = serde_json::from_str(&json.stderr).unwrap();
    assert_eq!(error["error"]["statusCode"], 404);
    assert_eq!(error["error"]["exitCode"], 3);
    // A wrong key: 401, never printed.
    let secret = "csk_0123456789abcdef0123456789abcdef";
    let wrong = env
        .run(&["api", "GET", "/status", "--api-key", secret])
        .code(3);
    assert!(
        !format!("{wrong:?}").contains("0123456789abcdef"),
        "{wrong:?}"
    );
    // Usage errors: not JSON, not a method, a URL to another host (the key stays home).
    let not_json = env
        .run(&["api", "POST", "/orders", "--data", "{oops"])
        .code(2);
    assert!(
        not_json
            .stderr
            .contains("--data: the value given is not JSON"),
        "{not_json:?}"
    );
    env.run(&["api", "GE T", "/status"]).code(2);
    let url = env
        .run(&["api", "GET", "https://elsewhere.example/status"])
        .code(2);
    assert!(url.stderr.contains("not a URL"), "{url:?}");
    // Nothing listens: a transport failure after the retries of a GET.
    let closed = env
        .run(&["api", "GET", "/status", "--base-url", "http://127.0.0.1:9"])
        .code(4);
    assert!(
        closed.stderr.starts_with("error: connection failed"),
        "{closed:?}"
    );
}

#[test]
fn dash_v_logs_the_request_with_its_full_url() {
    let env = Env::start();
    let run = env.run(&["api", "GET", "/orders?limit=1", "-v"]).code(0);
    let line = format!(
        "GET {}/stores/{}/orders?limit=1 → 200 in ",
        env.emu.base_url(),
        env.store
    );
    assert!(run.stderr.starts_with(&line), "{run:?}");
    assert!(!run.stderr.contains(&env.key), "{run:?}");
}

/// Issue 22, defect 1: `api` sends the key to the session's service only. A server on 127.0.0.1
/// answering `307 Location: <a server on 127.0.0.2>` used to have the key (and the body) carried there.
#[test]
fn a_redirect_is_reported_and_never_followed() {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let elsewhere = TcpListener::bind("127.0.0.2:0").unwrap();
    let elsewhere_addr = elsewhere.local_addr().unwrap();
    let reached = Arc::new(AtomicUsize::new(0));
    let counted = reached.clone();
    std::thread::spawn(move || {
        for stream in elsewhere.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    let front = TcpListener::bind("127.0.0.1:0").unwrap();
    let front_addr = front.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut stream in front.incoming().flatten() {
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let answer = format!(
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://{elsewhere_addr}/steal\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    let run = Run::from(
        crate::common::bare()
            .args([
                "--base-url",
                &format!("http://{front_addr}"),
                "--store-id",
                "store_alpha",
                "--api-key",
                "csk_ce4d6676e735329b21b3d864ca427df5",
                "api",
                "POST",
                "/orders",
                "-d",
                "{}",
            ])
            .output()
            .unwrap(),
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("redirect (307)"), "{run:?}");
    assert!(run.stderr.contains(&elsewhere_addr.to_string()), "{run:?}");
    assert!(!run.stderr.contains("csk_ce4d"), "{run:?}");
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "the other host was reached"
    );
}
