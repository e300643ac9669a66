//! Profiles: one store per environment (the seed's advice), kept in a TOML file so daily commands need
//! no credential flags.
//!
//! ```toml
//! default_profile = "staging"      # used when neither --profile nor STORE_API_PROFILE is given
//!
//! [profiles.staging]
//! base_url = "https://staging.example"
//! store_id = "store_alpha"
//! key_file = "/home/me/.config/store-api/staging.key"   # readable by its owner only (chmod 600)
//!
//! [profiles.production]
//! base_url = "https://api.example"
//! store_id = "store_live"
//! key_env = "PRODUCTION_STORE_API_KEY"                   # or: the name of a variable holding the key
//! ```
//!
//! Each setting is taken from the first place that has it: flags, then the environment
//! (`STORE_API_*`), then the profile; nothing has a built-in default.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::CliError;
use crate::global::{ENV_CONFIG, GlobalArgs, Secret};

/// The configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The profile used when none is named.
    pub default_profile: Option<String>,
    /// The profiles by name.
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

/// One store: where it is, which it is, and where its key comes from.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The service's address.
    pub base_url: Option<String>,
    /// The store id.
    pub store_id: Option<String>,
    /// A file holding the key (and nothing else but surrounding whitespace); must not be readable by
    /// group or others.
    pub key_file: Option<PathBuf>,
    /// The name of an environment variable holding the key.
    pub key_env: Option<String>,
}

/// The connection settings of a run, each from the first place that has it.
#[derive(Debug, Default)]
pub struct Credentials {
    /// The service's address.
    pub base_url: Option<String>,
    /// The store id.
    pub store_id: Option<String>,
    /// The API key.
    pub api_key: Option<Secret>,
    /// The profile the missing settings were looked up in, if any.
    pub profile: Option<String>,
}

/// Where the configuration file is: `$STORE_API_CONFIG`, else the platform's configuration directory
/// (`$XDG_CONFIG_HOME/store-api/config.toml`, `~/.config/store-api/config.toml`, or
/// `%APPDATA%\store-api\config.toml` on Windows).
pub fn config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    if let Some(path) = set(ENV_CONFIG) {
        return Some(PathBuf::from(path));
    }
    let dir = if cfg!(windows) {
        set("APPDATA").map(PathBuf::from)
    } else {
        set("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| set("HOME").map(|home| Path::new(&home).join(".config")))
    }?;
    Some(dir.join("store-api").join("config.toml"))
}

/// The process's environment, as [`resolve`] and [`config_path`] read it (unset or not Unicode: `None`).
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Resolves the settings of a run from the flags (which clap already merged with the `STORE_API_*`
/// variables) and the selected profile. `env` reads the environment (a test passes its own).
pub fn resolve(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Credentials, CliError> {
    let mut credentials = Credentials {
        base_url: global.base_url.clone(),
        store_id: global.store_id.clone(),
        api_key: global.api_key.clone(),
        profile: None,
    };
    let Some((name, profile)) = selected_profile(global, env)? else {
        return Ok(credentials);
    };
    credentials.base_url = credentials.base_url.or(profile.base_url);
    credentials.store_id = credentials.store_id.or(profile.store_id);
    if credentials.api_key.is_none() {
        credentials.api_key = profile_key(&name, profile.key_file, profile.key_env, env)?;
    }
    credentials.profile = Some(name);
    Ok(credentials)
}

/// The service's address and the store id of a run, from the flags or else the selected profile,
/// without reading any key: for commands that need no key (`emulator trigger` drives the emulator's
/// control plane), so a key file they would not use cannot stop them.
pub fn resolve_target(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Option<String>, Option<String>), CliError> {
    let (base_url, store_id) = (global.base_url.clone(), global.store_id.clone());
    Ok(match selected_profile(global, env)? {
        Some((_, profile)) => (base_url.or(profile.base_url), store_id.or(profile.store_id)),
        None => (base_url, store_id),
    })
}

/// The profile `--profile`/`STORE_API_PROFILE` names, or the file's `default_profile`; none when
/// neither names one (a missing file is then not an error: profiles are optional).
fn selected_profile(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<(String, Profile)>, CliError> {
    let named = global.profile.clone().filter(|name| !name.is_empty());
    let Some(path) = config_path(env) else {
        return match named {
            Some(name) => Err(CliError::Usage(format!(
                "profile {name:?}: no configuration file (set {ENV_CONFIG}, XDG_CONFIG_HOME or HOME)"
            ))),
            None => Ok(None),
        };
    };
    let file = match std::fs::read_to_string(&path) {
        Ok(text) => parse(&text, &path)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && named.is_none() => return Ok(None),
        Err(e) => {
            return Err(CliError::Usage(format!(
                "cannot read the configuration file {}: {e}",
                path.display()
            )));
        }
    };
    let Some(name) = named.or(file.default_profile) else {
        return Ok(None);
    };
    let mut profiles = file.profiles;
    match profiles.remove(&name) {
        Some(profile) => Ok(Some((name, profile))),
        None => Err(CliError::Usage(format!(
            "no profile {name:?} in {} (profiles: {})",
            path.display(),
            if profiles.is_empty() {
                "none".to_owned()
            } else {
                profiles.keys().cloned().collect::<Vec<_>>().join(", ")
            }
        ))),
    }
}

/// Parses the configuration file; an error names the file, the line and the field.
pub fn parse(text: &str, path: &Path) -> Result<ConfigFile, CliError> {
    toml::from_str(text).map_err(|e| {
        CliError::Usage(format!(
            "the configuration file {} is not valid: {}",
            path.display(),
            e.to_string().trim_end()
        ))
    })
}

/// The key of a profile, from its key file or its variable (not both: which would win is a guess).
fn profile_key(
    name: &str,
    key_file: Option<PathBuf>,
    key_env: Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Secret>, CliError> {
    match (key_file, key_env) {
        (Some(_), Some(_)) => Err(CliError::Usage(format!(
            "profile {name:?} sets both key_file and key_env; keep one"
        ))),
        (Some(path), None) => read_key_file(&path).map(Some),
        (None, Some(variable)) => env(&variable)
            .filter(|key| !key.is_empty())
            .map(|key| Some(Secret::from(key)))
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "profile {name:?}: the variable {variable} named by key_env is not set"
                ))
            }),
        (None, None) => Ok(None),
    }
}

/// Reads a key file, refusing one that group or others may read: the key bills the store.
pub fn read_key_file(path: &Path) -> Result<Secret, CliError> {
    let metadata = std::fs::metadata(path).map_err(|e| {
        CliError::Usage(format!("cannot read the key file {}: {e}", path.display()))
    })?;
    check_owner_only(path, &metadata)?;
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::Usage(format!("cannot read the key file {}: {e}", path.display()))
    })?;
    let key = text.trim();
    if key.is_empty() {
        return Err(CliError::Usage(format!(
            "the key file {} is empty",
            path.display()
        )));
    }
    Ok(Secret::from(key.to_owned()))
}

#[cfg(unix)]
fn check_owner_only(path: &Path, metadata: &std::fs::Metadata) -> Result<(), CliError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = metadata.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(CliError::Usage(format!(
            "the key file {path} can be read by group or others (mode {mode:03o}); run `chmod 600 {path}`",
            path = path.display()
        )));
    }
    Ok(())
}

// Windows has no mode bits; the file's ACL is the user's business there.
#[cfg(not(unix))]
fn check_owner_only(_: &Path, _: &std::fs::Metadata) -> Result<(), CliError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn the_config_file_is_found_where_the_platform_keeps_it() {
        type Vars<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(Vars, Option<&str>)] = &[
            (
                &[(ENV_CONFIG, "/x/c.toml"), ("HOME", "/h")],
                Some("/x/c.toml"),
            ),
            (
                &[("XDG_CONFIG_HOME", "/xdg"), ("HOME", "/h")],
                Some("/xdg/store-api/config.toml"),
            ),
            (&[("HOME", "/h")], Some("/h/.config/store-api/config.toml")),
            (
                &[("XDG_CONFIG_HOME", ""), ("HOME", "/h")],
                Some("/h/.config/store-api/config.toml"),
            ),
            (&[], None),
        ];
        if cfg!(windows) {
            return;
        }
        for (env, expected) in cases {
            let path = config_path(&env_of(env));
            assert_eq!(path.as_deref(), expected.map(Path::new), "{env:?}");
        }
    }

    #[test]
    fn a_typo_in_the_file_is_named() {
        let error = parse(
            "[profiles.a]\nbase_url = \"http://h\"\nstore = \"s\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("c.toml"), "{error}");
        assert!(error.contains("store"), "{error}");
        assert!(error.contains("line 3"), "{error}");
    }
}
