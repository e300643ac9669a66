//! The `store-api-emulator` binary: one stdout line with the address, then it serves.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `store-api-emulator` with `args` and the origin from its ready line.
pub struct Binary {
    pub child: Child,
    pub origin: String,
}

impl Binary {
    pub async fn start(args: &[&str]) -> Binary {
        let mut child = Command::new(env!("CARGO_BIN_EXE_store-api-emulator"))
            .args(args)
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
        let Ok(Ok(Ok(line))) = line else {
            let _ = child.kill();
            panic!("the binary printed no ready line");
        };
        let Some(origin) = line
            .trim_end()
            .strip_prefix("store-api-emulator listening on ")
            .map(str::to_owned)
        else {
            let _ = child.kill();
            panic!("unexpected first line {line:?}");
        };
        assert!(line.ends_with('\n'));
        Binary { child, origin }
    }

    /// Sends SIGTERM and waits for the process to exit; true when it exited successfully.
    pub fn terminate(mut self) -> bool {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
        self.child.wait().unwrap().success()
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn the_binary_prints_its_address_and_serves() {
    let binary = Binary::start(&["--listen", "127.0.0.1:0", "--no-rate-limit"]).await;
    let origin = binary.origin.clone();
    let result = async move {
        let port: u16 = origin
            .strip_prefix("http://127.0.0.1:")
            .unwrap()
            .parse()
            .unwrap();
        assert_ne!(port, 0);
        // reqwest under `rustls` needs a crypto provider before it builds a client.
        store_api_raw::tls::install_crypto_provider();
        store_api_raw::tls::install_crypto_provider();
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
    let outcome = tokio::spawn(result).await;
    drop(binary);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic.into_panic());
    }
}

#[tokio::test]
async fn deterministic_flag_gives_the_clock_to_the_caller() {
    let binary = Binary::start(&["--listen", "127.0.0.1:0", "--deterministic", "9"]).await;
    store_api_raw::tls::install_crypto_provider();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let advanced: serde_json::Value = http
        .post(format!("{}/_emulator/clock/advance", binary.origin))
        .json(&serde_json::json!({ "ms": 1500 }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(advanced["now"], "2026-08-01T00:00:01.500Z");
}
