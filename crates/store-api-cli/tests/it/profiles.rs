//! Profiles of the configuration file, and the precedence flags > environment > profile.

use std::path::{Path, PathBuf};

use crate::common::{Env, Run, advance_args, bare};
use crate::snap;

/// A configuration directory with a key file of `mode` holding `key`.
struct Config {
    dir: tempfile::TempDir,
}

impl Config {
    fn new(text: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), text).unwrap();
        Config { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    fn key_file(&self, key: &str, mode: u32) -> PathBuf {
        let path = self.dir.path().join("store.key");
        std::fs::write(&path, format!("{key}\n")).unwrap();
        set_mode(&path, mode);
        path
    }

    /// A profile `dev` for `env`'s store whose key is in a file of `mode`.
    fn with_key_file(env: &Env, mode: u32) -> (Config, PathBuf) {
        let config = Config::new("");
        let key_file = config.key_file(&env.key, mode);
        let key_line = format!("key_file = {:?}", key_file.display().to_string());
        std::fs::write(config.path(), profile(env, &env.store, &key_line)).unwrap();
        (config, key_file)
    }

    /// `store-api ARGS` with no STORE_API_* variables but this configuration file.
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = bare();
        cmd.env("STORE_API_CONFIG", self.path());
        for (name, value) in env {
            cmd.env(name, value);
        }
        Run::from(cmd.args(args).output().unwrap())
    }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) {}

fn profile(env: &Env, store_id: &str, key_line: &str) -> String {
    format!(
        "[profiles.dev]\nbase_url = \"{}\"\nstore_id = \"{store_id}\"\n{key_line}\n",
        env.emu.base_url()
    )
}

#[test]
fn a_profile_with_a_key_file_gives_every_setting() {
    let env = Env::start();
    let (config, _) = Config::with_key_file(&env, 0o600);
    let run = config
        .run(&["status", "--json", "--profile", "dev"], &[])
        .code(0);
    assert_eq!(run.json()["store"]["id"], env.store.as_str());
    // STORE_API_PROFILE names it too.
    config
        .run(&["status"], &[("STORE_API_PROFILE", "dev")])
        .code(0);
}

#[test]
fn flags_beat_the_environment_which_beats_the_profile() {
    let env = Env::start();
    let config = Config::new(&profile(&env, "store_nope", "key_env = \"DEV_KEY\""));
    let base_url = env.emu.base_url();
    let store = env.store.as_str();
    let key = env.key.as_str();
    // The profile's wrong store id loses to the environment's right one.
    config
        .run(
            &["status", "--profile", "dev"],
            &[("STORE_API_STORE_ID", store), ("DEV_KEY", key)],
        )
        .code(0);
    // ...and to the flag, which also beats a wrong environment.
    config
        .run(
            &["status", "--profile", "dev", "--store-id", store],
            &[("STORE_API_STORE_ID", "store_wrong"), ("DEV_KEY", key)],
        )
        .code(0);
    // A wrong key in the environment beats the profile's right one: 401.
    let wrong = config
        .run(
            &["status", "--profile", "dev", "--store-id", store],
            &[("STORE_API_KEY", "csk_wrong"), ("DEV_KEY", key)],
        )
        .code(3);
    assert!(wrong.stderr.contains("401"), "{wrong:?}");
    // Without the profile's values where nothing else gives them, the profile alone is not enough.
    let no_key = config
        .run(&["status", "--profile", "dev", "--store-id", store], &[])
        .code(2);
    assert!(
        no_key
            .stderr
            .contains("profile \"dev\": the variable DEV_KEY named by key_env is not set"),
        "{no_key:?}"
    );
    // A flag beats a profile for the base URL too: a closed port fails, the profile's would work.
    let moved = config
        .run(
            &[
                "status",
                "--profile",
                "dev",
                "--store-id",
                store,
                "--base-url",
                "http://127.0.0.1:9",
            ],
            &[("DEV_KEY", key)],
        )
        .code(4);
    assert!(moved.stderr.contains("connection failed"), "{moved:?}");
    assert!(base_url.starts_with("http://127.0.0.1:"));
}

#[test]
fn default_profile_applies_when_none_is_named() {
    let env = Env::start();
    let text = format!(
        "default_profile = \"dev\"\n{}",
        profile(&env, &env.store, "key_env = \"DEV_KEY\"")
    );
    let config = Config::new(&text);
    config.run(&["status"], &[("DEV_KEY", &env.key)]).code(0);
}

#[cfg(unix)]
#[test]
fn a_key_file_others_can_read_is_refused_with_the_fix() {
    let env = Env::start();
    let (config, key_file) = Config::with_key_file(&env, 0o644);
    let run = config.run(&["status", "--profile", "dev"], &[]).code(2);
    let shown = run
        .stderr
        .replace(&key_file.display().to_string(), "[KEY FILE]");
    snap!("profile_key_file_mode", shown);
    assert!(!run.stderr.contains(&env.key), "{run:?}");
    // Group-readable is refused too; owner-only works.
    set_mode(&key_file, 0o640);
    config.run(&["status", "--profile", "dev"], &[]).code(2);
    set_mode(&key_file, 0o400);
    config.run(&["status", "--profile", "dev"], &[]).code(0);
}

#[test]
fn configuration_mistakes_are_usage_errors_that_say_where() {
    let env = Env::start();
    let config = Config::new(&profile(
        &env,
        &env.store,
        "key_file = \"/x\"\nkey_env = \"K\"",
    ));
    let both = config.run(&["status", "--profile", "dev"], &[]).code(2);
    assert!(
        both.stderr.contains("sets both key_file and key_env"),
        "{both:?}"
    );
    let unknown = config.run(&["status", "--profile", "prod"], &[]).code(2);
    assert!(
        unknown.stderr.contains("no profile \"prod\""),
        "{unknown:?}"
    );
    assert!(unknown.stderr.contains("(profiles: dev)"), "{unknown:?}");
    let typo = Config::new("[profiles.dev]\nstore = \"s\"\n");
    let typo_run = typo.run(&["status", "--profile", "dev"], &[]).code(2);
    assert!(
        typo_run.stderr.contains("config.toml is not valid"),
        "{typo_run:?}"
    );
    assert!(typo_run.stderr.contains("store"), "{typo_run:?}");
    // A named profile needs the file; an unnamed one does not.
    let nowhere = Run::from(
        bare()
            .env("STORE_API_CONFIG", "/nonexistent/config.toml")
            .args(["status", "--profile", "dev"])
            .output()
            .unwrap(),
    )
    .code(2);
    assert!(
        nowhere.stderr.contains("/nonexistent/config.toml"),
        "{nowhere:?}"
    );
}

/// `emulator trigger` takes the emulator's address and the store from a profile too, and needs no key:
/// a profile whose key variable is unset still drives the emulator.
#[test]
fn emulator_trigger_reads_the_profile_but_not_its_key() {
    let env = Env::start();
    let id = env.submit("profile-trigger-1");
    let config = Config::new(&profile(&env, &env.store, "key_env = \"UNSET_KEY\""));
    let mut args = advance_args(&id);
    args.extend(["--profile", "dev"]);
    let advanced = config.run(&args, &[]).code(0);
    assert_eq!(advanced.json()["fulfillmentStatus"], "production_requested");
    // Without a profile or flags it is still a usage error that says what is missing.
    let unnamed = Config::new("").run(&advance_args(&id), &[]).code(2);
    assert!(
        unnamed.stderr.contains("--base-url") && unnamed.stderr.contains("--profile"),
        "{unnamed:?}"
    );
}
