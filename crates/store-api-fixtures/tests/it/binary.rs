//! The `store-api-emulator` binary: a ready line with the address and a banner of the stores on
//! stdout, then it serves.

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

/// A running `store-api-emulator` and everything it printed on start: the ready line and the banner
/// (read up to its last line, the one naming `store-api login`).
async fn start_with_banner(args: &[&str]) -> (Binary, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_store-api-emulator"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let read = tokio::task::spawn_blocking(move || {
        let mut reader = BufReader::new(stdout);
        let mut text = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 {
                break;
            }
            text.push_str(&line);
            if line.starts_with("# or keep one in a profile") {
                break;
            }
        }
        Ok::<_, std::io::Error>(text)
    });
    let Ok(Ok(Ok(text))) = tokio::time::timeout(Duration::from_secs(20), read).await else {
        let _ = child.kill();
        panic!("the binary printed no banner");
    };
    let origin = text
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("store-api-emulator listening on "))
        .unwrap_or_else(|| panic!("unexpected start {text:?}"))
        .to_owned();
    (Binary { child, origin }, text)
}

/// The banner as a snapshot sees it: the port and every key replaced.
fn redacted_banner(text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]");
    settings.add_filter(r"csk_[0-9a-f]{32}", "[KEY]");
    settings.bind(|| insta::assert_snapshot!("start_banner", text));
}

#[tokio::test]
async fn the_start_banner_names_each_active_store_and_a_line_a_shell_takes() {
    let (binary, banner) = start_with_banner(&["--listen", "127.0.0.1:0"]).await;
    redacted_banner(&banner);
    // Every line after the ready line is a shell's: evaluated, it sets the three variables.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("banner.txt");
    std::fs::write(&file, &banner).unwrap();
    let shell = Command::new("sh")
        .args([
            "-c",
            r#"eval "$(sed 1d "$0")" && printf '%s\n' "$STORE_API_BASE_URL" "$STORE_API_STORE_ID" "$STORE_API_KEY""#,
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(shell.status.success(), "{shell:?}");
    let printed = String::from_utf8(shell.stdout).unwrap();
    let values: Vec<&str> = printed.lines().collect();
    assert_eq!(
        values,
        [
            format!("{}/store-api/2026-08", binary.origin).as_str(),
            "store_alpha",
            crate::common::ALPHA_KEY
        ]
    );
    // And they work.
    store_api_raw::tls::install_crypto_provider();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let status = http
        .get(format!("{}/stores/{}/status", values[0], values[1]))
        .header("X-API-Key", values[2])
        .send()
        .await
        .unwrap();
    assert_eq!(status.status(), 200);
}

#[tokio::test]
async fn the_server_serves_the_sample_artwork_and_names_the_control_call_for_other_hosts() {
    let binary = Binary::start(&["--listen", "127.0.0.1:0", "--no-rate-limit"]).await;
    store_api_raw::tls::install_crypto_provider();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let create = |url: &str| {
        http.post(format!(
            "{}/store-api/2026-08/stores/store_alpha/artworks",
            binary.origin
        ))
        .header("X-API-Key", crate::common::ALPHA_KEY)
        .json(&serde_json::json!({ "name": "Sunset", "image": { "url": url } }))
        .send()
    };
    let created = create(store_api_fixtures::artwork::SAMPLE_IMAGE_URL)
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let artwork: serde_json::Value = created.json().await.unwrap();
    let image_url = artwork["image"]["url"].as_str().unwrap();
    let image = http.get(image_url).send().await.unwrap();
    assert_eq!(image.status(), 200);
    assert_eq!(
        image.bytes().await.unwrap().as_ref(),
        store_api_fixtures::artwork::SAMPLE_PNG
    );

    // `.invalid` never resolves (RFC 6761): nothing leaves the machine.
    let unknown = create("https://unknown-host.invalid/x.png").await.unwrap();
    assert_eq!(unknown.status(), 400);
    let body: serde_json::Value = unknown.json().await.unwrap();
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with("The URL host could not be resolved (emulator: "),
        "{message}"
    );
    assert!(message.contains("unknown-host.invalid"), "{message}");
    assert!(
        message.contains("PUT /_emulator/artwork-hosts"),
        "{message}"
    );
}

#[tokio::test]
async fn a_frozen_clock_says_so_in_its_429() {
    let binary = Binary::start(&["--listen", "127.0.0.1:0", "--deterministic", "3"]).await;
    store_api_raw::tls::install_crypto_provider();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let status = format!(
        "{}/store-api/2026-08/stores/store_alpha/status",
        binary.origin
    );
    let mut last = None;
    for _ in 0..=store_api_raw::contract::RATE_LIMIT_BURST {
        last = Some(
            http.get(&status)
                .header("X-API-Key", crate::common::ALPHA_KEY)
                .send()
                .await
                .unwrap(),
        );
    }
    let limited = last.unwrap();
    assert_eq!(limited.status(), 429);
    let body: serde_json::Value = limited.json().await.unwrap();
    insta::assert_snapshot!("frozen_clock_429", body["message"].as_str().unwrap());
    // Advanced as it says, the store's bucket has a token again.
    http.post(format!("{}/_emulator/clock/advance", binary.origin))
        .json(&serde_json::json!({ "ms": 1000 }))
        .send()
        .await
        .unwrap();
    let again = http
        .get(&status)
        .header("X-API-Key", crate::common::ALPHA_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 200);
}
