//! Safe to leave running: the control plane answers loopback hosts only, binding elsewhere and
//! delivering webhooks elsewhere need explicit permission, and SIGTERM keeps the state.

use reqwest::Method;
use serde_json::json;
use store_api_fixtures::{Emulator, EmulatorError};

use crate::binary::Binary;
use crate::common::*;

/// `GET /_emulator/stores` with this `Host` header.
async fn stores_with_host(api: &Api, host: &str) -> reqwest::Response {
    api.http
        .get(format!("{}/_emulator/stores", api.origin))
        .header("host", host)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn control_endpoints_refuse_a_host_that_is_not_loopback() {
    let (emu, api) = start().await;
    let port = emu.addr().port();
    // What a page on a DNS-rebound name sends: its own public host name.
    for host in ["rebound.example", "rebound.example:80", "127.0.0.1.nip.io"] {
        let response = stores_with_host(&api, &format!("{host}:{port}")).await;
        assert_eq!(response.status(), 403, "{host}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["statusCode"], 403);
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.contains("loopback") && m.contains("--allow-remote")),
            "{body}"
        );
        assert!(!body.to_string().contains(ALPHA_KEY), "no key leaks");
    }
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        assert_eq!(stores_with_host(&api, &host).await.status(), 200, "{host}");
    }
    // The Store API itself is guarded by its keys, not by the host.
    let status = api.status_with(&[("host", "rebound.example")]).await;
    assert_eq!(status.status(), 200);
}

#[tokio::test]
async fn a_non_loopback_listen_address_needs_allow_remote() {
    let refused = builder()
        .listen("0.0.0.0:0".parse().unwrap())
        .start()
        .await
        .unwrap_err();
    assert!(
        matches!(refused, EmulatorError::RemoteNotAllowed { .. }),
        "{refused:?}"
    );
    assert!(refused.to_string().contains("--allow-remote"), "{refused}");

    let emu: Emulator = builder()
        .listen("0.0.0.0:0".parse().unwrap())
        .allow_remote(true)
        .start()
        .await
        .unwrap();
    let api = Api::new(&emu);
    let api = Api {
        origin: format!("http://127.0.0.1:{}", emu.addr().port()),
        ..api
    };
    assert_eq!(
        stores_with_host(&api, "emulator.lan").await.status(),
        200,
        "allowed remote access answers any host"
    );
}

#[tokio::test]
async fn webhook_urls_must_be_loopback_unless_allowed() {
    let (_emu, api) = start().await;
    for url in [
        "http://10.0.0.7:8080/hook",
        "https://example.com/hook",
        "http://127.0.0.1.nip.io/hook",
    ] {
        api.control(
            Method::PUT,
            "/stores/store_alpha/webhooks",
            Some(&json!({ "orders_create": url })),
        )
        .await
        .error(
            400,
            Msg::List(&["orders_create must be on a loopback host (127.0.0.1, ::1 or localhost) unless the emulator allows remote webhooks (--allow-remote-webhooks)"]),
        );
    }
    assert!(api.deliveries(ALPHA).await.is_empty());
    for url in [
        "http://127.0.0.1:9/hook",
        "http://localhost:9/hook",
        "http://[::1]:9/hook",
    ] {
        api.control(
            Method::PUT,
            "/stores/store_alpha/webhooks",
            Some(&json!({ "orders_create": url })),
        )
        .await
        .ok(204);
    }

    let open = builder().allow_remote_webhooks(true).start().await.unwrap();
    Api::new(&open)
        .control(
            Method::PUT,
            "/stores/store_alpha/webhooks",
            Some(&json!({ "orders_create": "https://example.com/hook" })),
        )
        .await
        .ok(204);
}

// The SIGTERM handler used to be installed after the ready line was printed: a supervisor (or this
// test, on a loaded machine) that stopped the emulator at once killed it with the default action.
#[tokio::test]
async fn sigterm_the_moment_the_ready_line_appears_is_a_clean_exit() {
    for _ in 0..5 {
        let binary = Binary::start(&["--listen", "127.0.0.1:0"]).await;
        assert!(binary.terminate(), "a clean exit on SIGTERM");
    }
}

#[tokio::test]
async fn sigterm_saves_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let binary = Binary::start(&[
        "--listen",
        "127.0.0.1:0",
        "--state",
        state.to_str().unwrap(),
    ])
    .await;
    store_api_raw::tls::install_crypto_provider();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let rotated: serde_json::Value = http
        .post(format!(
            "{}/_emulator/stores/store_alpha/rotate-key",
            binary.origin
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let new_key = rotated["apiKey"].as_str().unwrap().to_owned();
    assert!(binary.terminate(), "a clean exit on SIGTERM");
    let saved = std::fs::read_to_string(&state).expect("the state file was written");
    assert!(saved.contains(&new_key), "the rotation survived");
}

#[tokio::test]
async fn its_base_url_and_a_stores_credentials_reach_the_store() {
    let (emu, api) = start().await;
    assert!(
        !emu.rate_limited(),
        "the tests' emulators run without the limit"
    );
    let store = emu.store(ALPHA).unwrap();
    assert_eq!(store.id, ALPHA);
    assert!(store.active);
    // Everything a client needs: the base URL and the store's id and key.
    let status = |key: String| {
        let url = format!("{}/stores/{}/status", emu.base_url(), store.id);
        let http = api.http.clone();
        async move { http.get(url).header("X-API-Key", key).send().await.unwrap() }
    };
    let answer = status(store.api_key.clone()).await;
    assert_eq!(answer.status(), 200);
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body["store"]["id"], ALPHA);
    // A rotation: the old key stops working, the new one is what `store` hands out.
    let rotated = emu.rotate_key(ALPHA).unwrap();
    assert_eq!(status(store.api_key.clone()).await.status(), 401);
    assert_eq!(emu.store(ALPHA).unwrap().api_key, rotated);
    assert_eq!(status(rotated).await.status(), 200);
    assert_eq!(emu.store("store_nope"), None);
    let limited = Emulator::builder()
        .rate_limit(true)
        .network_downloads(false)
        .start()
        .await
        .unwrap();
    assert!(limited.rate_limited());
}

#[tokio::test]
async fn forward_to_registers_every_topic_of_every_store() {
    let receiver = Receiver::start().await;
    let binary = Binary::start(&[
        "--listen",
        "127.0.0.1:0",
        "--forward-to",
        &receiver.url("/hooks"),
    ])
    .await;
    store_api_raw::tls::install_crypto_provider();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let created = http
        .post(format!(
            "{}/store-api/2026-08/stores/{BETA}/orders",
            binary.origin
        ))
        .header("X-API-Key", BETA_KEY)
        .json(&beta_order(Some("fwd-1")))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let event = &receiver.wait_for(1).await[0];
    assert_eq!(event.path, "/hooks");
    assert_eq!(event.json["topic"], "orders_create");
    assert_eq!(event.json["storeId"], BETA);

    // Forwarding elsewhere than loopback is refused like any registration.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_store-api-emulator"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--forward-to",
            "https://example.com/hooks",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--forward-to") && stderr.contains("loopback"),
        "{stderr}"
    );
}

#[tokio::test]
async fn writes_survive_kill_9_after_the_save_interval() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let binary = Binary::start(&[
        "--listen",
        "127.0.0.1:0",
        "--state",
        state.to_str().unwrap(),
        "--save-interval-ms",
        "50",
    ])
    .await;
    store_api_raw::tls::install_crypto_provider();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let created: serde_json::Value = http
        .post(format!(
            "{}/store-api/2026-08/stores/{ALPHA}/orders",
            binary.origin
        ))
        .header("X-API-Key", ALPHA_KEY)
        .json(&simple_order(Some("survives-kill-9")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let order_id = created["id"].as_str().unwrap().to_owned();
    // Wait for the save (polling the file, not a fixed sleep), then kill without any chance to save.
    wait_until_saved(&state, &order_id).await;
    let pid = binary.child.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-KILL", &pid])
            .status()
            .unwrap()
            .success()
    );
    drop(binary);
    // A new emulator on the same file has the order.
    let restarted = builder().state_file(&state).start().await.unwrap();
    assert_eq!(restarted.order_count(ALPHA), 1);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers,
        [std::ffi::OsString::from("state.json")],
        "no temp files"
    );
}

/// A control request as a browser would send it: `method` to `path` with these extra headers and an
/// optional body with its `Content-Type`.
async fn control_as(
    api: &Api,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<(&str, &str)>,
) -> reqwest::Response {
    let mut request = api
        .http
        .request(method, format!("{}/_emulator{path}", api.origin));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some((content_type, body)) = body {
        request = request
            .header("content-type", content_type)
            .body(body.to_owned());
    }
    request.send().await.unwrap()
}

/// The envelope of a refusal: its status and message.
async fn refusal(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("answered {status} {text:?}, not a refusal's envelope ({e})"));
    assert_eq!(body["statusCode"], status, "{body}");
    (
        status,
        body["message"].as_str().unwrap_or_default().to_owned(),
    )
}

// Issue 22, defect 7: a page in the user's browser could POST to the control plane as a "simple"
// cross-origin request (text/plain, no preflight) and rotate keys, inject faults or create orders. It
// checked the Host only; these requests carry a loopback Host.
#[tokio::test]
async fn a_web_page_cannot_drive_the_control_plane() {
    let (emu, api) = start().await;
    let port = emu.addr().port();
    let fault = r#"{"kind":"reset"}"#;
    // A foreign page's request: its Origin, or the browser's own mark.
    for headers in [
        vec![("origin", "https://evil.example")],
        vec![("origin", "http://evil.example:80")],
        vec![("origin", "null")],
        vec![("origin", "http://127.0.0.1.nip.io")],
        vec![("sec-fetch-site", "cross-site")],
        vec![
            ("origin", "http://localhost:3000"),
            ("sec-fetch-site", "cross-site"),
        ],
    ] {
        for (method, path, body) in [
            (Method::POST, "/faults", Some(("text/plain", fault))),
            (Method::POST, "/faults", Some(("application/json", fault))),
            (Method::POST, "/stores/store_alpha/rotate-key", None),
            (Method::GET, "/stores", None),
        ] {
            let response = control_as(&api, method.clone(), path, &headers, body).await;
            let (status, message) = refusal(response).await;
            assert_eq!(status, 403, "{method} {path} {headers:?}: {message}");
            assert!(message.contains("page"), "{message}");
            assert!(!message.contains(ALPHA_KEY));
        }
    }
    assert!(emu.pending_faults().is_empty(), "no fault was injected");
    assert_eq!(
        emu.active_store().unwrap().api_key,
        ALPHA_KEY,
        "no key was rotated"
    );
    // A fault header from a foreign page is refused too.
    let answer = api
        .status_with(&[
            ("origin", "https://evil.example"),
            (store_api_fixtures::FAULT_HEADER, r#"{"kind":"reset"}"#),
        ])
        .await;
    assert_eq!(answer.status(), 403);

    // No Origin (curl, the SDK, RemoteEmulator), the emulator's own origin, a page on a loopback origin
    // (a tool under development on this machine), the same site: answered.
    let own = format!("http://127.0.0.1:{port}");
    for headers in [
        vec![],
        vec![("origin", own.as_str())],
        vec![("origin", "http://localhost:3000")],
        vec![("origin", "http://[::1]:5173")],
        vec![("origin", "https://127.0.0.2")],
        vec![("origin", own.as_str()), ("sec-fetch-site", "same-origin")],
        vec![
            ("origin", "http://127.0.0.1:3000"),
            ("sec-fetch-site", "same-site"),
        ],
        vec![("sec-fetch-site", "none")],
    ] {
        let response = control_as(
            &api,
            Method::POST,
            "/faults",
            &headers,
            Some(("application/json", fault)),
        )
        .await;
        assert_eq!(response.status(), 204, "{headers:?}");
    }
    assert_eq!(emu.pending_faults().len(), 8);
    api.control(Method::DELETE, "/faults", None).await.ok(204);
    // The Store API itself is not a control request: an Origin does not matter there.
    let status = api
        .status_with(&[
            ("origin", "https://evil.example"),
            ("sec-fetch-site", "cross-site"),
        ])
        .await;
    assert_eq!(status.status(), 200);
}

// Issue 22, defect 7: control bodies were read whatever their Content-Type, so a form or a text/plain
// fetch (no preflight) reached them; a body must now say it is JSON.
#[tokio::test]
async fn a_control_body_must_be_json() {
    let (emu, api) = start().await;
    let fault = r#"{"kind":"reset"}"#;
    let inject_as = |content_type| {
        control_as(
            &api,
            Method::POST,
            "/faults",
            &[],
            Some((content_type, fault)),
        )
    };
    for content_type in [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonp",
        "",
    ] {
        let (status, message) = refusal(inject_as(content_type).await).await;
        assert_eq!(status, 415, "{content_type:?}: {message}");
        assert!(message.contains("application/json"), "{message}");
    }
    // A body without any Content-Type, on a route that reads none.
    let response = api
        .http
        .post(format!(
            "{}/_emulator/stores/{ALPHA}/rotate-key",
            api.origin
        ))
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(refusal(response).await.0, 415);
    assert!(emu.pending_faults().is_empty());
    assert_eq!(emu.active_store().unwrap().api_key, ALPHA_KEY);
    for content_type in [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
    ] {
        let response = inject_as(content_type).await;
        assert_eq!(response.status(), 204, "{content_type}");
    }
    // Without a body, no Content-Type is needed.
    let rotated = api
        .control(Method::POST, &format!("/stores/{ALPHA}/rotate-key"), None)
        .await;
    rotated.ok(200);
}
