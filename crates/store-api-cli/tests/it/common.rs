//! An emulator per test and the `store-api` command pointed at it.

use std::collections::HashMap;
use std::io::Read as _;
use std::process::{Child, Output};
use std::sync::{Arc, Mutex};

use assert_cmd::Command;
use store_api_fixtures::Emulator;
use store_api_fixtures::artwork::FakeResource;

/// The fake public image the tests' emulators serve.
pub const IMAGE_URL: &str = "https://art.example.test/logo.png";

/// A running emulator (rate limit off, no network downloads) and its first active store.
pub struct Env {
    pub emu: Emulator,
    pub store: String,
    pub key: String,
    /// `XDG_CACHE_HOME` of this emulator's runs: the copy of the store they keep between them, apart
    /// from the user's own and from other tests'.
    pub cache: tempfile::TempDir,
    // Dropped last: it runs the emulator.
    _runtime: tokio::runtime::Runtime,
}

impl Env {
    pub fn start() -> Env {
        Env::start_with(|builder| builder)
    }

    /// [`Env::start`] with the emulator's settings adjusted by `adjust`.
    pub fn start_with(
        adjust: impl FnOnce(store_api_fixtures::EmulatorBuilder) -> store_api_fixtures::EmulatorBuilder,
    ) -> Env {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let emu = runtime
            .block_on(
                adjust(
                    Emulator::builder()
                        .rate_limit(false)
                        .network_downloads(false),
                )
                .start(),
            )
            .unwrap();
        // The emulator sniffs the type from the first bytes only.
        let png = [b"\x89PNG\r\n\x1a\n".as_slice(), &[0; 32]].concat();
        emu.fake_hosts()
            .replace(HashMap::from([(
                IMAGE_URL.to_owned(),
                FakeResource::image(&png),
            )]))
            .unwrap();
        let store = emu.active_store().unwrap();
        Env {
            store: store.id,
            key: store.api_key,
            cache: tempfile::tempdir().unwrap(),
            emu,
            _runtime: runtime,
        }
    }

    /// `store-api` with this emulator's credentials in the environment.
    pub fn cmd(&self) -> Command {
        let mut cmd = bare();
        cmd.env("STORE_API_BASE_URL", self.emu.base_url())
            .env("STORE_API_STORE_ID", &self.store)
            .env("STORE_API_KEY", &self.key)
            .env("XDG_CACHE_HOME", self.cache.path());
        cmd
    }

    /// The same as [`Env::cmd`], as a std command (to spawn and wait on it).
    pub fn std_cmd(&self) -> std::process::Command {
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
        cmd.env("STORE_API_BASE_URL", self.emu.base_url())
            .env("STORE_API_STORE_ID", &self.store)
            .env("STORE_API_KEY", &self.key)
            .env("XDG_CACHE_HOME", self.cache.path());
        cmd
    }

    /// Runs `store-api ARGS` against this emulator.
    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.cmd().args(args).output().unwrap())
    }

    /// The id of the order created from `tests/it/data/order.json` with this external id.
    pub fn submit(&self, external_id: &str) -> String {
        let run = self.run(&[
            "orders",
            "submit",
            "--file",
            &data("order.json"),
            "--external-id",
            external_id,
            "--json",
        ]);
        assert_eq!(run.code, 0, "{run:?}");
        run.json()["order"]["id"].as_str().unwrap().to_owned()
    }
}

/// `store-api` with no credentials from the caller's environment.
pub fn bare() -> Command {
    let mut cmd = Command::cargo_bin("store-api").unwrap();
    for var in [
        "STORE_API_KEY",
        "STORE_API_STORE_ID",
        "STORE_API_BASE_URL",
        "RUST_LOG",
    ] {
        cmd.env_remove(var);
    }
    // No profile from the machine's own configuration file.
    cmd.env_remove("STORE_API_PROFILE")
        .env("STORE_API_CONFIG", "/nonexistent/store-api/config.toml");
    cmd.env("NO_COLOR", "1");
    // Never the user's own cache directory: a folder of this test process's (an `Env` sets its own).
    cmd.env(
        "XDG_CACHE_HOME",
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("cli-cache-{}", std::process::id())),
    );
    cmd
}

/// The path of a test data file.
pub fn data(name: &str) -> String {
    format!("{}/tests/it/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// What a run printed and how it ended.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }

    /// Asserts the exit code and returns self.
    pub fn code(self, code: i32) -> Run {
        assert_eq!(self.code, code, "{self:?}");
        self
    }
}

/// Insta settings that replace what changes from run to run: ids, times, ports, UUIDs, tracking.
pub fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    for (pattern, replacement) in [
        // A loopback URL inside a table cell, with the padding its varying port length causes.
        (r"http://127\.0\.0\.1:\d+[^\s│┆]*[ ]*", "[LOCAL URL] "),
        (r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]"),
        (r"\b(ord|art|img|li|evt)_[0-9a-f]{16}\b", "${1}_[ID]"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[TIME]"),
        (
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "[UUID]",
        ),
        (r"1Z[0-9A-F]{16}", "[TRACKING]"),
        (r"done in \d+\.\d+ s", "done in [SECONDS] s"),
    ] {
        settings.add_filter(pattern, replacement);
    }
    settings.set_prepend_module_to_snapshot(false);
    settings
}

/// Snapshots `value` under `name` with the filters of [`settings`].
#[macro_export]
macro_rules! snap {
    ($name:expr, $value:expr) => {
        $crate::common::settings().bind(|| insta::assert_snapshot!($name, $value))
    };
}

/// `store-api emulator trigger orders_update --order ORDER --json`: moves an order one rung up.
pub fn advance_args(order: &str) -> Vec<&str> {
    vec![
        "emulator",
        "trigger",
        "orders_update",
        "--order",
        order,
        "--json",
    ]
}

/// What `child` writes on its standard error, gathered as it comes by a thread of its own (a
/// long-running command's stderr, read while it runs).
pub fn collect_stderr(child: &mut Child) -> Arc<Mutex<String>> {
    let stderr = Arc::new(Mutex::new(String::new()));
    let Some(mut pipe) = child.stderr.take() else {
        return stderr;
    };
    let sink = Arc::clone(&stderr);
    std::thread::spawn(move || {
        let mut buffer = [0; 4096];
        while let Ok(read) = pipe.read(&mut buffer) {
            if read == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buffer[..read]));
        }
    });
    stderr
}
