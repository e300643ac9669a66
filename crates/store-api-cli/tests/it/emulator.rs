//! `store-api emulator` (the server) and `--emulator` (embedded in the command).

use std::io::{BufRead as _, BufReader};
use std::process::Stdio;
use std::time::Duration;

use crate::common::{Run, bare};

const ALPHA_KEY: &str = "csk_ce4d6676e735329b21b3d864ca427df5";

#[test]
fn the_emulator_command_prints_one_ready_line_and_serves() {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("store-api"))
        .args(["emulator", "--listen", "127.0.0.1:0", "--no-rate-limit"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = sender.send(line);
    });
    let line = receiver.recv_timeout(Duration::from_secs(20));
    let checked = std::panic::catch_unwind(|| {
        let line = line.expect("the emulator printed nothing");
        let origin = line
            .trim_end()
            .strip_prefix("store-api-emulator listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
        assert!(origin.starts_with("http://127.0.0.1:"), "{origin}");
        let status = Run::from(
            bare()
                .args([
                    "status",
                    "--json",
                    "--base-url",
                    origin,
                    "--store-id",
                    "store_alpha",
                    "--api-key",
                    ALPHA_KEY,
                ])
                .output()
                .unwrap(),
        )
        .code(0);
        assert_eq!(status.json()["version"], "2026-08");
    });
    child.kill().unwrap();
    child.wait().unwrap();
    if let Err(panic) = checked {
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn embedded_emulator_says_so_and_keeps_state_between_commands() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let state = state.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--emulator", "--emulator-state", state];
        all.extend_from_slice(args);
        Run::from(bare().args(&all).output().unwrap())
    };
    let status = run(&["status"]).code(0);
    assert!(
        status
            .stderr
            .starts_with("using the embedded emulator at http://127.0.0.1:"),
        "{status:?}"
    );
    assert!(
        status
            .stderr
            .contains(", store store_alpha — not the real service"),
        "{status:?}"
    );

    // The sample image the embedded emulator serves.
    let artwork = run(&[
        "artworks",
        "create",
        "--name",
        "Sunset",
        "--url",
        "https://demo-assets.example.test/sunset-3000x2400.png",
        "--json",
    ])
    .code(0);
    let artwork_id = artwork.json()["id"].as_str().unwrap().to_owned();
    // A copy: `submit` writes the generated externalOrderId into a file that has none.
    let order_file = dir.path().join("order.json");
    std::fs::copy(crate::common::data("order.json"), &order_file).unwrap();
    let submitted = run(&[
        "orders",
        "submit",
        "--file",
        order_file.to_str().unwrap(),
        "--json",
    ])
    .code(0);
    let order_id = submitted.json()["order"]["id"].as_str().unwrap().to_owned();

    // A later command, a new process, the same data.
    run(&["artworks", "get", &artwork_id]).code(0);
    let watch = run(&[
        "orders",
        "watch",
        &order_id,
        "--advance",
        "--interval-ms",
        "10",
    ])
    .code(0);
    assert!(
        watch.stdout.contains("5/5 fulfilled (status fulfilled"),
        "{watch:?}"
    );
    assert!(watch.stdout.contains("tracking: UPS 1Z"), "{watch:?}");
    let after = run(&["orders", "get", &order_id, "--json"]).code(0);
    assert_eq!(after.json()["status"], "fulfilled");

    // Without the state file every run starts from the seed.
    let fresh = Run::from(
        bare()
            .args(["--emulator", "orders", "list", "--json"])
            .output()
            .unwrap(),
    )
    .code(0);
    assert_eq!(fresh.json()["items"], serde_json::json!([]));
    Run::from(
        bare()
            .args(["--emulator-state", state, "status"])
            .output()
            .unwrap(),
    )
    .code(2);
}

#[test]
fn trigger_drives_a_running_emulator() {
    use std::io::Write as _;

    let env = crate::common::Env::start();
    let id = env.submit("trigger-1");
    // orders_update: one rung up.
    let advanced = env.run(&crate::common::advance_args(&id));
    assert_eq!(advanced.code, 0, "{advanced:?}");
    assert_eq!(advanced.json()["fulfillmentStatus"], "production_requested");

    // orders_create from standard input.
    let order = std::fs::read_to_string(crate::common::data("order.json")).unwrap();
    let mut child = env
        .std_cmd()
        .args(["emulator", "trigger", "orders_create", "--file", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(order.as_bytes())
        .unwrap();
    let created = child.wait_with_output().unwrap();
    assert!(created.status.success(), "{created:?}");
    let line = String::from_utf8(created.stdout).unwrap();
    assert!(line.starts_with("orders_create: ord_"), "{line}");
    assert_eq!(env.emu.order_count(&env.store), 2);

    // Missing flags are usage errors; a refused move is a failure naming the emulator's reason.
    let missing = env.run(&["emulator", "trigger", "orders_update"]);
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(
        missing.stderr.contains("orders_update needs --order"),
        "{missing:?}"
    );
    let refused = env.run(&[
        "emulator",
        "trigger",
        "orders_update",
        "--order",
        "ord_nope",
    ]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("Order not found"), "{refused:?}");
}
