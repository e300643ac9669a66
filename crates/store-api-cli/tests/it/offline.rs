//! webhooks verify, placement fit and completions.

use store_api_webhooks::sign;

use crate::common::{Env, Run, bare};
use crate::snap;

const KEY: &str = "csk_ce4d6676e735329b21b3d864ca427df5";
const BODY: &str = r#"{"id":"evt_0123456789abcdef","storeId":"store_alpha","topic":"orders_update","data":{"id":"ord_0123456789abcdef"},"isTest":false,"createdAt":"2026-08-01T12:00:00.000Z"}"#;

fn verify(signature: &str, key: Option<&str>, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body.json");
    std::fs::write(&file, BODY).unwrap();
    let mut cmd = bare();
    cmd.args([
        "webhooks",
        "verify",
        "--signature",
        signature,
        "--file",
        file.to_str().unwrap(),
    ]);
    if let Some(key) = key {
        cmd.args(["--key", key]);
    }
    Run::from(cmd.args(extra).output().unwrap())
}

#[test]
fn webhook_deliveries_are_verified_offline() {
    let signature = sign(KEY, BODY.as_bytes());
    let ok = verify(&signature, Some(KEY), &[]).code(0);
    snap!("webhooks_verify_human", ok.stdout);
    let json = verify(&signature, Some(KEY), &["--json"]).code(0);
    snap!("webhooks_verify_json", json.stdout);
    // The key can come from the environment like the API's.
    let from_env = Run::from(
        bare()
            .env("STORE_API_KEY", KEY)
            .args([
                "webhooks",
                "verify",
                "--signature",
                &signature,
                "--file",
                "/dev/null",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(
        from_env.code, 1,
        "an empty body was not what was signed: {from_env:?}"
    );

    let wrong_key = verify(&signature, Some("csk_another_key"), &[]).code(1);
    assert_eq!(
        wrong_key.stderr,
        "error: the delivery does not verify: signature does not match the body\n"
    );
    let malformed = verify("not-a-signature", Some(KEY), &[]).code(1);
    assert!(
        malformed.stderr.contains("malformed X-Service-Signature"),
        "{malformed:?}"
    );
    let no_key = verify(&signature, None, &[]).code(2);
    assert!(
        no_key.stderr.contains("missing the signing key"),
        "{no_key:?}"
    );
    for run in [wrong_key, malformed] {
        assert!(!run.stderr.contains(KEY), "{run:?}");
    }
}

#[test]
fn placement_fit_keeps_the_aspect_ratio() {
    let env = Env::start();
    let top = env
        .run(&[
            "placement",
            "fit",
            "--catalog-product",
            "cp_bc3001",
            "--location",
            "front",
            "--image-px",
            "3000x2400",
        ])
        .code(0);
    snap!("placement_fit_top_human", top.stdout);
    let center = env
        .run(&[
            "placement",
            "fit",
            "--catalog-product",
            "cp_bc3001",
            "--location",
            "left_chest",
            "--image-px",
            "3000x2400",
            "--align",
            "center",
            "--json",
        ])
        .code(0);
    assert_eq!(
        center.json(),
        serde_json::json!({
            "physicalWidth": 4.0,
            "physicalHeight": 3.2,
            "horizontalOffsetFromCenter": 0.0,
            "verticalOffsetFromTop": 0.4
        })
    );
    let tall = env
        .run(&[
            "placement",
            "fit",
            "--catalog-product",
            "cp_g18500",
            "--location",
            "front",
            "--image-px",
            "1000x2000",
            "--json",
        ])
        .code(0);
    assert_eq!(tall.json()["physicalWidth"], 5.0);
    assert_eq!(tall.json()["physicalHeight"], 10.0);

    let nowhere = env
        .run(&[
            "placement",
            "fit",
            "--catalog-product",
            "cp_bc3001",
            "--location",
            "cap_front",
            "--image-px",
            "10x10",
        ])
        .code(2);
    assert!(
        nowhere.stderr.contains("it has: front, back, left_chest"),
        "{nowhere:?}"
    );
    env.run(&[
        "placement",
        "fit",
        "--catalog-product",
        "cp_bc3001",
        "--location",
        "front",
        "--image-px",
        "0x10",
    ])
    .code(2);
    env.run(&[
        "placement",
        "fit",
        "--catalog-product",
        "cp_nope",
        "--location",
        "front",
        "--image-px",
        "10x10",
    ])
    .code(3);
}

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let run = Run::from(bare().args(["completions", shell]).output().unwrap()).code(0);
        for word in ["store-api", "orders", "watch", "--emulator"] {
            assert!(run.stdout.contains(word), "{shell} lacks {word}");
        }
    }
    Run::from(bare().args(["completions", "tcsh"]).output().unwrap()).code(2);
}

// Issue 10: `--key ""` (an unset variable) would verify HMAC("", body), which anyone can compute.
#[test]
fn an_empty_key_is_refused() {
    let forged = sign("", BODY.as_bytes());
    let run = verify(&forged, Some(""), &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("empty"), "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
}

#[test]
fn a_delivery_body_can_come_from_standard_input() {
    let signature = sign(KEY, BODY.as_bytes());
    let verify_stdin = |body: String| {
        Run::from(
            bare()
                .args([
                    "webhooks",
                    "verify",
                    "--signature",
                    &signature,
                    "--key",
                    KEY,
                ])
                .args(["--file", "-"])
                .write_stdin(body)
                .output()
                .unwrap(),
        )
    };
    let verified = verify_stdin(BODY.to_owned());
    assert_eq!(verified.code, 0, "{verified:?}");
    let forged = verify_stdin(BODY.replace("orders_update", "orders_create"));
    assert_ne!(forged.code, 0, "{forged:?}");
}

#[test]
fn verbose_logs_each_request_without_the_key() {
    let quiet = Run::from(bare().args(["--emulator", "status"]).output().unwrap());
    assert_eq!(quiet.code, 0, "{quiet:?}");
    assert!(!quiet.stderr.contains(" → "), "{quiet:?}");
    let verbose = Run::from(
        bare()
            .args(["--emulator", "-v", "status"])
            .output()
            .unwrap(),
    );
    assert_eq!(verbose.code, 0, "{verbose:?}");
    // One line per try: method, full URL, status, time (tests/it/traffic.rs has the rest).
    let line = verbose
        .stderr
        .lines()
        .find(|line| line.contains(" → "))
        .unwrap_or_else(|| panic!("no request line: {}", verbose.stderr));
    assert!(line.starts_with("GET http://127.0.0.1:"), "{line}");
    assert!(
        line.contains("/store-api/2026-08/stores/") && line.contains("/status → 200 in "),
        "{line}"
    );
    assert!(!verbose.stderr.contains(KEY), "the key was logged");
}
