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
fn dash_v_logs_the_request_under_its_operation() {
    let env = Env::start();
    let run = env.run(&["api", "GET", "/orders?limit=1", "-v"]).code(0);
    assert!(run.stderr.contains("list_orders"), "{run:?}");
    assert!(!run.stderr.contains(&env.key), "{run:?}");
}
