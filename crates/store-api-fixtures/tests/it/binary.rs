//! The `store-api-emulator` binary: one stdout line with the address, then it serves.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

#[tokio::test]
async fn the_binary_prints_its_address_and_serves() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_store-api-emulator"))
        .args(["--listen", "127.0.0.1:0", "--no-rate-limit"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map(|_| line)
    });
    let line = tokio::time::timeout(Duration::from_secs(20), line).await;
    let result = async {
        let line = line.expect("the binary printed nothing").unwrap().unwrap();
        let origin = line
            .trim_end()
            .strip_prefix("store-api-emulator listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
        let port: u16 = origin
            .strip_prefix("http://127.0.0.1:")
            .unwrap()
            .parse()
            .unwrap();
        assert_ne!(port, 0);
        assert!(line.ends_with('\n'));

        // reqwest under `rustls` needs a crypto provider before it builds a client.
        store_api::install_crypto_provider();
        let http = reqwest::Client::builder().no_proxy().build().unwrap();
        let url = format!("{origin}/store-api/2026-08/stores/store_alpha/status");
        let response = http
            .get(&url)
            .header("X-API-Key", crate::common::ALPHA_KEY)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["store"]["id"], "store_alpha");
        // --no-rate-limit: more than a burst passes.
        for _ in 0..12 {
            let response = http
                .get(&url)
                .header("X-API-Key", crate::common::ALPHA_KEY)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200);
        }
    };
    // Run the checks, then always stop the child.
    let outcome = tokio::spawn(result).await;
    child.kill().unwrap();
    child.wait().unwrap();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic.into_panic());
    }
}
