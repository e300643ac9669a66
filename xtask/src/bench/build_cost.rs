//! What depending on `store-api` costs at build time: a clean debug build of it and its dependencies
//! (default features, so HTTPS through rustls), against a clean build of a scratch crate that depends
//! only on what any HTTPS client of this API needs (reqwest with the same features and the same TLS:
//! `rustls-no-provider` + rustls with ring; tokio, serde, serde_json), the incremental rebuild after the
//! generated transport changes, and a clean build of a webhook receiver (`store-api-webhooks` without
//! features: no HTTP client, no TLS).
//!
//! Each clean build gets a fresh `--target-dir` under `target/bench-build/`, so neither reuses the
//! workspace's artifacts or the other's. The scratch crate is generated in `target/bench-scratch/` with
//! the dependency lines copied from the workspace's `[workspace.dependencies]`, the workspace's
//! `Cargo.lock` (the same versions) and its `[profile.*]` sections. Both build `--offline`.
//!
//! Each build is measured twice over: wall time, and the CPU time (user + system) of Cargo and the
//! compilers it ran. On a shared 2-core machine other processes stretch wall time unevenly between the
//! two builds; the CPU time they need is much less affected.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use super::BenchError;
use super::machine::{TICKS_PER_SECOND, own_cpu_ticks};
use super::metrics::Metrics;
use super::runner::{cargo, show};

/// The dependencies of the scratch crate, by their `[workspace.dependencies]` names.
pub const SCRATCH_DEPENDENCIES: &[&str] = &["reqwest", "rustls", "tokio", "serde", "serde_json"];
/// The scratch crate's own feature that turns on TLS the way `store-api-raw`'s `rustls` feature does.
const SCRATCH_FEATURES: &str = "[features]\ndefault = [\"reqwest/rustls-no-provider\"]\n";
/// `cargo package` of every published crate, verified (each built from its packaged sources).
pub const PACKAGE_ARGS: &[&str] = &[
    "package",
    "--workspace",
    "--exclude",
    "xtask",
    "--exclude",
    "store-api-tests",
    "--allow-dirty",
    "--target-dir",
];
/// The file touched before the incremental rebuild.
pub const TOUCHED: &str = "crates/store-api-raw/src/generated.rs";

/// The three build times, in seconds, as figures.
pub fn measure(root: &Path) -> Result<Metrics, BenchError> {
    let builds = root.join("target/bench-build");
    let store_api_dir = builds.join("store-api");
    let scratch_dir = builds.join("scratch");
    let receiver_dir = builds.join("receiver");
    let scratch = write_scratch_crate(root)?;

    remove(&store_api_dir)?;
    let mut store_api = Command::new(cargo());
    store_api
        .current_dir(root)
        .args(["build", "--offline", "-p", "store-api", "--target-dir"])
        .arg(&store_api_dir);
    let store_api_time = timed(&mut store_api)?;

    remove(&scratch_dir)?;
    let mut scratch_build = Command::new(cargo());
    scratch_build
        .current_dir(&scratch)
        .args(["build", "--offline", "--target-dir"])
        .arg(&scratch_dir);
    let scratch_time = timed(&mut scratch_build)?;

    touch(&root.join(TOUCHED))?;
    let incremental_time = timed(&mut store_api)?;

    remove(&receiver_dir)?;
    let mut receiver = Command::new(cargo());
    receiver
        .current_dir(root)
        .args([
            "build",
            "--offline",
            "-p",
            "store-api-webhooks",
            "--no-default-features",
            "--target-dir",
        ])
        .arg(&receiver_dir);
    let receiver_time = timed(&mut receiver)?;

    // CI packages with `--no-verify` (a verified build of every published crate does not fit its time
    // budget); the full bench run is where packaging is verified: each crate built from its .crate file.
    forget_packaged_sources(root)?;
    let mut package = Command::new(cargo());
    package
        .current_dir(root)
        .args(PACKAGE_ARGS)
        .arg(builds.join("package"));
    let package_time = timed(&mut package)?;

    let mut metrics = Metrics::default();
    metrics.insert("build_store_api_s", store_api_time.wall.as_secs_f64());
    metrics.insert("build_scratch_s", scratch_time.wall.as_secs_f64());
    metrics.insert("build_incremental_s", incremental_time.wall.as_secs_f64());
    metrics.insert("build_receiver_s", receiver_time.wall.as_secs_f64());
    metrics.insert("package_verify_s", package_time.wall.as_secs_f64());
    if let Some(receiver_cpu) = receiver_time.cpu {
        metrics.insert("build_receiver_cpu_s", receiver_cpu);
    }
    if scratch_time.wall > Duration::ZERO {
        metrics.insert(
            "build_ratio",
            store_api_time.wall.as_secs_f64() / scratch_time.wall.as_secs_f64(),
        );
    }
    if let (Some(store_api_cpu), Some(scratch_cpu)) = (store_api_time.cpu, scratch_time.cpu) {
        metrics.insert("build_store_api_cpu_s", store_api_cpu);
        metrics.insert("build_scratch_cpu_s", scratch_cpu);
        if scratch_cpu > 0.0 {
            metrics.insert("build_cpu_ratio", store_api_cpu / scratch_cpu);
        }
    }
    // The fresh target folders are large and of no further use.
    remove(&store_api_dir)?;
    remove(&scratch_dir)?;
    remove(&receiver_dir)?;
    remove(&builds.join("package"))?;
    Ok(metrics)
}

/// Writes the scratch crate; returns its folder.
fn write_scratch_crate(root: &Path) -> Result<PathBuf, BenchError> {
    let folder = root.join("target/bench-scratch");
    let manifest_path = root.join("Cargo.toml");
    let workspace = std::fs::read_to_string(&manifest_path)
        .map_err(|e| BenchError::Io(format!("reading {}", manifest_path.display()), e))?;
    let manifest = scratch_manifest(&workspace)?;
    let src = folder.join("src");
    std::fs::create_dir_all(&src)
        .map_err(|e| BenchError::Io(format!("creating {}", src.display()), e))?;
    write(&folder.join("Cargo.toml"), &manifest)?;
    write(&src.join("lib.rs"), SCRATCH_LIB)?;
    let lock = root.join("Cargo.lock");
    std::fs::copy(&lock, folder.join("Cargo.lock"))
        .map_err(|e| BenchError::Io(format!("copying {}", lock.display()), e))?;
    Ok(folder)
}

/// The scratch crate's manifest, its dependency lines taken from the workspace manifest.
pub fn scratch_manifest(workspace_manifest: &str) -> Result<String, BenchError> {
    let mut manifest = String::from(
        "# Generated by `cargo xtask bench`: the build-cost baseline (see xtask/src/bench/build_cost.rs).\n\
         [package]\nname = \"bench-scratch\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         # Not a member of the workspace above it.\n[workspace]\n\n[dependencies]\n",
    );
    for name in SCRATCH_DEPENDENCIES {
        let line =
            dependency_line(workspace_manifest, name).ok_or_else(|| BenchError::Command {
                command: "reading Cargo.toml".to_owned(),
                detail: format!("no `{name} = ...` line in [workspace.dependencies]"),
            })?;
        manifest.push_str(line);
        manifest.push('\n');
    }
    manifest.push('\n');
    manifest.push_str(SCRATCH_FEATURES);
    manifest.push_str("\n# The workspace's profiles, copied so that both builds compile alike.\n");
    manifest.push_str(&profile_sections(workspace_manifest));
    Ok(manifest)
}

/// Every `[profile.*]` section of the manifest, with its lines, as written there.
fn profile_sections(manifest: &str) -> String {
    let mut out = String::new();
    let mut in_profile = false;
    for line in manifest.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            in_profile = trimmed.starts_with("[profile.");
        }
        if in_profile {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The `name = ...` line of `[workspace.dependencies]` (one-line entries only).
fn dependency_line<'a>(manifest: &'a str, name: &str) -> Option<&'a str> {
    let mut in_section = false;
    for line in manifest.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_section = trimmed == "[workspace.dependencies]";
            continue;
        }
        let key = trimmed.split('=').next().map(str::trim);
        if in_section && key == Some(name) {
            return Some(trimmed);
        }
    }
    None
}

/// Uses every dependency, so none is dead weight the compiler could skip.
const SCRATCH_LIB: &str = r#"//! The build-cost baseline: an HTTPS JSON client on reqwest, rustls (ring), tokio and serde.

#[derive(Debug, serde::Deserialize, serde::Serialize)]
pub struct Page {
    pub items: Vec<serde_json::Value>,
}

pub async fn fetch(client: &reqwest::Client, url: &str, key: &str) -> Result<Page, reqwest::Error> {
    client
        .get(url)
        .header("x-api-key", key)
        .query(&[("limit", 100)])
        .send()
        .await?
        .json()
        .await
}

pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    // reqwest's `rustls-no-provider` takes the process default provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio::runtime::Builder::new_multi_thread().enable_all().build()
}
"#;

/// How long a build took.
#[derive(Debug, Clone, Copy)]
struct BuildTime {
    wall: Duration,
    /// CPU seconds of the build's processes, when /proc could be read.
    cpu: Option<f64>,
}

/// Runs `command` to success; returns how long it took.
fn timed(command: &mut Command) -> Result<BuildTime, BenchError> {
    eprintln!("==> build cost: {}", show(command));
    let ticks_before = own_cpu_ticks();
    let started = Instant::now();
    let status = command
        .status()
        .map_err(|e| BenchError::Io(format!("running {}", show(command)), e))?;
    if !status.success() {
        return Err(BenchError::Command {
            command: show(command),
            detail: status.to_string(),
        });
    }
    let wall = started.elapsed();
    // The build has been waited for, so its CPU time (and its compilers') is in our children's.
    let cpu = ticks_before
        .zip(own_cpu_ticks())
        .and_then(|(before, after)| after.checked_sub(before))
        .map(|ticks| ticks as f64 / TICKS_PER_SECOND);
    eprintln!(
        "    {:.1} s{}",
        wall.as_secs_f64(),
        cpu.map_or(String::new(), |cpu| format!(" ({cpu:.1} s of CPU)"))
    );
    Ok(BuildTime { wall, cpu })
}

/// Sets the file's modification time to now, as an editor saving it would (its content is unchanged).
fn touch(path: &Path) -> Result<(), BenchError> {
    std::fs::File::options()
        .append(true)
        .open(path)
        .and_then(|file| file.set_modified(SystemTime::now()))
        .map_err(|e| BenchError::Io(format!("touching {}", path.display()), e))
}

/// Removes the sources Cargo extracted from earlier `cargo package` runs of this workspace's own crates.
/// Verification builds each crate against its siblings' `.crate` files through a temporary local
/// registry, and Cargo extracts those under `$CARGO_HOME/registry/src/<that registry>/NAME-VERSION`,
/// reusing a folder that already exists: with the version unchanged since the last run, it would build
/// against last run's sources and fail on anything added since.
fn forget_packaged_sources(root: &Path) -> Result<(), BenchError> {
    let mut metadata = Command::new(cargo());
    metadata.current_dir(root).args([
        "metadata",
        "--no-deps",
        "--offline",
        "--format-version",
        "1",
    ]);
    let output = metadata
        .output()
        .map_err(|e| BenchError::Io(show(&metadata), e))?;
    let parsed: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|e| BenchError::Command {
            command: show(&metadata),
            detail: e.to_string(),
        })?;
    let own: Vec<String> = parsed["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            Some(format!(
                "{}-{}",
                p["name"].as_str()?,
                p["version"].as_str()?
            ))
        })
        .collect();
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    let Some(sources) = cargo_home.map(|home| home.join("registry").join("src")) else {
        return Ok(());
    };
    let Ok(registries) = std::fs::read_dir(&sources) else {
        return Ok(());
    };
    for registry in registries.flatten() {
        // crates.io's own sources are left alone; only the temporary registries hold our crates.
        if registry.file_name().to_string_lossy().starts_with("index.") {
            continue;
        }
        for name in &own {
            remove(&registry.path().join(name))?;
        }
    }
    Ok(())
}

fn remove(folder: &Path) -> Result<(), BenchError> {
    match std::fs::remove_dir_all(folder) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(BenchError::Io(format!("removing {}", folder.display()), e))
        }
        _ => Ok(()),
    }
}

fn write(path: &Path, text: &str) -> Result<(), BenchError> {
    std::fs::write(path, text).map_err(|e| BenchError::Io(format!("writing {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scratch_crate_copies_the_workspace_dependency_lines() {
        let workspace = "[workspace.dependencies]\n\
                         serde = { version = \"1\", features = [\"derive\"] }\n\
                         serde_json = \"1\"\n\
                         serde_yaml = \"0.9\"\n\
                         reqwest = { version = \"0.13.4\", default-features = false, features = [\"json\"] }\n\
                         tokio = { version = \"1\", features = [\"macros\"] }\n\
                         rustls = { version = \"0.23\", default-features = false, features = [\"ring\"] }\n\
                         [workspace.lints.rust]\nserde = \"not a dependency\"\n";
        let manifest = scratch_manifest(workspace).unwrap();
        assert!(manifest.contains("\nserde = { version = \"1\", features = [\"derive\"] }\n"));
        assert!(manifest.contains("\nserde_json = \"1\"\n"));
        assert!(manifest.contains("default-features = false"));
        assert!(!manifest.contains("serde_yaml"));
        assert!(!manifest.contains("not a dependency"));
        assert!(manifest.contains("\n[workspace]\n"));
    }

    #[test]
    fn the_real_workspace_declares_every_scratch_dependency() {
        let root = crate::workspace_root();
        let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let manifest = scratch_manifest(&workspace).unwrap();
        assert!(
            manifest.contains("features = [\"json\", \"query\", \"stream\"]"),
            "{manifest}"
        );
        // The floor has TLS on, as the default store-api build has.
        assert!(manifest.contains("\nrustls = {"), "{manifest}");
        assert!(manifest.contains("\"ring\""), "{manifest}");
        assert!(
            manifest.contains("default = [\"reqwest/rustls-no-provider\"]"),
            "{manifest}"
        );
    }

    #[test]
    fn the_scratch_crate_compiles_with_the_workspaces_profiles() {
        let workspace = "[workspace.dependencies]\nserde = \"1\"\nserde_json = \"1\"\n\
                         reqwest = \"0.13\"\ntokio = \"1\"\nrustls = \"0.23\"\n\
                         [profile.dev]\ndebug = \"line-tables-only\"\n\
                         [profile.dev.package.\"*\"]\ndebug = false\n\
                         [workspace.lints.clippy]\nunwrap_used = \"warn\"\n";
        let manifest = scratch_manifest(workspace).unwrap();
        assert!(manifest.ends_with(
            "[profile.dev]\ndebug = \"line-tables-only\"\n[profile.dev.package.\"*\"]\ndebug = false\n"
        ));
        assert!(!manifest.contains("unwrap_used"));
        assert!(!manifest.contains("opt-level"));
    }

    #[test]
    fn a_missing_dependency_is_an_error() {
        assert!(scratch_manifest("[workspace.dependencies]\nserde = \"1\"\n").is_err());
    }
}
