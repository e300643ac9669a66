//! Issue 38: the emulator says how to use it (its banner, a shell's `export` line), `login` keeps a
//! store in a profile (from flags, standard input or a running emulator; the key in a 600 file, never
//! printed), the emulator and the proxy listen on different ports by default, and a deterministic
//! emulator's 429 says its clock is frozen.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::common::{Env, Run, bare};
use crate::snap;

/// A `store-api emulator` process with `args`, its origin, and everything it printed on start.
struct Server {
    child: Child,
    origin: String,
    banner: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("store-api"))
            .arg("emulator")
            .args(args)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut text = String::new();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                text.push_str(&line);
                if line.starts_with("# or keep one in a profile") {
                    break;
                }
                line.clear();
            }
            let _ = sender.send(text);
        });
        let banner = match receiver.recv_timeout(Duration::from_secs(20)) {
            Ok(banner) => banner,
            Err(_) => {
                let _ = child.kill();
                panic!("the emulator printed no banner");
            }
        };
        let origin = banner
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("store-api-emulator listening on "))
            .map(str::to_owned);
        let Some(origin) = origin else {
            let _ = child.kill();
            panic!("unexpected start {banner:?}");
        };
        Server {
            child,
            origin,
            banner,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `store-api` with the configuration file `config` and no credentials of the caller's.
fn with_config(config: &Path) -> assert_cmd::Command {
    let mut cmd = bare();
    cmd.env("STORE_API_CONFIG", config);
    cmd
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The key file `login` wrote for `profile` beside `config`.
fn key_file(config: &Path, profile: &str) -> PathBuf {
    config
        .parent()
        .unwrap()
        .join("keys")
        .join(format!("{profile}.key"))
}

/// Asserts the key appears in neither output.
fn quiet_about(run: &Run, key: &str) {
    assert!(!run.stdout.contains(key), "{run:?}");
    assert!(!run.stderr.contains(key), "{run:?}");
}

#[test]
fn the_emulators_export_line_points_the_command_line_at_it() {
    let server = Server::start(&["--listen", "127.0.0.1:0", "--no-rate-limit"]);
    exact(&[]).bind(|| insta::assert_snapshot!("emulator_banner", server.banner));
    // A shell takes every line after the ready line; the command then needs no credential flag.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("banner.txt");
    std::fs::write(&file, &server.banner).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("store-api");
    let status = Run::from(
        std::process::Command::new("sh")
            .args([
                "-c",
                r#"eval "$(sed 1d "$0")" && echo "$STORE_API_STORE_ID" && exec "$1" status --json"#,
            ])
            .arg(&file)
            .arg(&bin)
            .env_remove("STORE_API_PROFILE")
            .env("STORE_API_CONFIG", "/nonexistent/store-api/config.toml")
            .env("XDG_CACHE_HOME", dir.path())
            .output()
            .unwrap(),
    )
    .code(0);
    let (store, json) = status.stdout.split_once('\n').unwrap();
    assert_eq!(store, "store_alpha");
    let json: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(json["store"]["id"], "store_alpha");
}

#[test]
fn the_emulator_serves_the_sample_artwork_and_names_the_control_call_for_other_hosts() {
    let server = Server::start(&["--listen", "127.0.0.1:0", "--no-rate-limit"]);
    let run = |args: &[&str]| {
        Run::from(
            bare()
                .args([
                    "--base-url",
                    &server.origin,
                    "--store-id",
                    "store_alpha",
                    "--api-key",
                    "csk_ce4d6676e735329b21b3d864ca427df5",
                ])
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let sample = run(&[
        "artworks",
        "create",
        "--name",
        "Sunset",
        "--url",
        "https://demo-assets.example.test/sunset-3000x2400.png",
        "--json",
    ])
    .code(0);
    assert_eq!(sample.json()["name"], "Sunset");
    // `.invalid` never resolves (RFC 6761): nothing leaves the machine.
    let unknown = run(&[
        "artworks",
        "create",
        "--name",
        "x",
        "--url",
        "https://unknown-host.invalid/x.png",
    ])
    .code(3);
    snap!("emulator_unknown_artwork_host", unknown.stderr);
}

#[test]
fn login_from_flags_writes_a_profile_later_commands_use() {
    let env = Env::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("store-api").join("config.toml");
    let login = Run::from(
        with_config(&config)
            .args([
                "login",
                "--base-url",
                &env.emu.base_url(),
                "--store-id",
                &env.store,
                "--api-key",
                &env.key,
            ])
            .output()
            .unwrap(),
    )
    .code(0);
    quiet_about(&login, &env.key);
    let folder = regex_escape(&dir.path().display().to_string());
    exact(&[(&folder, "[DIR]")]).bind(|| {
        insta::assert_snapshot!("login_from_flags", login.stdout);
        insta::assert_snapshot!(
            "login_config_file",
            std::fs::read_to_string(&config).unwrap()
        );
    });
    let key = key_file(&config, "default");
    assert_eq!(mode(&key), 0o600);
    assert_eq!(std::fs::read_to_string(&key).unwrap().trim(), env.key);
    // The first profile is the default one: no flag at all.
    let status = Run::from(
        with_config(&config)
            .env("XDG_CACHE_HOME", env.cache.path())
            .args(["status", "--json"])
            .output()
            .unwrap(),
    )
    .code(0);
    assert_eq!(status.json()["store"]["id"], env.store.as_str());
}

#[test]
fn login_with_key_reads_standard_input_and_keeps_the_rest_of_the_file() {
    let env = Env::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let before = "# my profiles\ndefault_profile = \"prod\"\n\n[profiles.prod] # the live store\nbase_url = \"https://api.example\"\nstore_id = \"store_live\"\nkey_env = \"PROD_KEY\"\n";
    std::fs::write(&config, before).unwrap();
    let login = Run::from(
        with_config(&config)
            .args([
                "login",
                "--profile",
                "local",
                "--with-key",
                "--base-url",
                &env.emu.base_url(),
                "--store-id",
                &env.store,
            ])
            .write_stdin(format!("{}\n", env.key))
            .output()
            .unwrap(),
    )
    .code(0);
    quiet_about(&login, &env.key);
    assert!(
        login.stdout.contains("use it with --profile local"),
        "{login:?}"
    );
    let after = std::fs::read_to_string(&config).unwrap();
    assert!(after.starts_with(before), "{after}");
    assert_eq!(mode(&key_file(&config, "local")), 0o600);
    let status = Run::from(
        with_config(&config)
            .env("XDG_CACHE_HOME", env.cache.path())
            .args(["--profile", "local", "status", "--json"])
            .output()
            .unwrap(),
    )
    .code(0);
    assert_eq!(status.json()["store"]["id"], env.store.as_str());

    // Nothing on standard input: refused, the file untouched.
    let empty = Run::from(
        with_config(&config)
            .args(["login", "--profile", "other", "--with-key"])
            .args(["--base-url", "http://127.0.0.1:1", "--store-id", "s"])
            .write_stdin("")
            .output()
            .unwrap(),
    )
    .code(2);
    assert!(empty.stderr.contains("--with-key"), "{empty:?}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), after);
}

#[test]
fn login_from_a_running_emulator_takes_its_store() {
    let server = Server::start(&["--listen", "127.0.0.1:0", "--no-rate-limit"]);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let login = Run::from(
        with_config(&config)
            .args([
                "login",
                "--from-emulator",
                &server.origin,
                "--profile",
                "emu",
                "--store-id",
                "store_beta",
                "--json",
            ])
            .output()
            .unwrap(),
    )
    .code(0);
    let key = std::fs::read_to_string(key_file(&config, "emu")).unwrap();
    quiet_about(&login, key.trim());
    assert!(key.trim().starts_with("csk_"), "the key file holds the key");
    assert_eq!(mode(&key_file(&config, "emu")), 0o600);
    let saved = login.json();
    assert_eq!(saved["storeId"], "store_beta");
    assert_eq!(
        saved["baseUrl"],
        format!("{}/store-api/2026-08", server.origin)
    );
    let status = Run::from(
        with_config(&config)
            .args(["--profile", "emu", "status", "--json"])
            .output()
            .unwrap(),
    )
    .code(0);
    assert_eq!(status.json()["store"]["id"], "store_beta");

    let missing = Run::from(
        with_config(&config)
            .args(["login", "--from-emulator", &server.origin])
            .args(["--store-id", "store_nope"])
            .output()
            .unwrap(),
    )
    .code(2);
    assert!(
        missing
            .stderr
            .contains("no store \"store_nope\" (stores: store_alpha"),
        "{missing:?}"
    );
}

#[test]
fn the_emulator_and_the_proxy_listen_on_different_ports_by_default() {
    let default_of = |command: &str| {
        let help = Run::from(bare().args([command, "--help"]).output().unwrap()).code(0);
        let at = help.stdout.find("[default: 127.0.0.1:").unwrap();
        help.stdout[at..]
            .split(']')
            .next()
            .unwrap()
            .trim_start_matches("[default: ")
            .to_owned()
    };
    let (emulator, proxy) = (default_of("emulator"), default_of("proxy"));
    assert_eq!(emulator, "127.0.0.1:8080");
    assert_ne!(emulator, proxy);
}

#[test]
fn a_frozen_clocks_429_says_how_to_advance_it() {
    let server = Server::start(&["--listen", "127.0.0.1:0", "--deterministic", "5"]);
    let run = || {
        Run::from(
            bare()
                .args([
                    "--base-url",
                    &server.origin,
                    "--store-id",
                    "store_alpha",
                    "--api-key",
                    "csk_ce4d6676e735329b21b3d864ca427df5",
                    "status",
                ])
                .output()
                .unwrap(),
        )
    };
    // Each run has a burst of its own; the emulator's bucket is one, and its clock stands still.
    for _ in 0..store_api_raw::contract::RATE_LIMIT_BURST {
        run().code(0);
    }
    let limited = run().code(4);
    snap!("frozen_clock_429", limited.stderr);
}

/// Insta settings that replace only the port, the keys and `more`: the banner's and the file's
/// layout is what these snapshots are about.
fn exact(more: &[(&str, &str)]) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]");
    settings.add_filter(r"csk_[0-9a-f]{32}", "[KEY]");
    for (pattern, replacement) in more {
        settings.add_filter(pattern, *replacement);
    }
    settings
}

/// `text` as a regular expression matching itself.
fn regex_escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '/' || c == '_' || c == '-' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}
