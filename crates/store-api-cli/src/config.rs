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
    // A name from the command line is the user's to see; one from the file is a value of the file,
    // and no error about the file quotes one.
    let named_here = named.as_ref().map(|name| format!("{name:?}"));
    let Some(name) = named.or(file.default_profile) else {
        return Ok(None);
    };
    let mut profiles = file.profiles;
    match profiles.remove(&name) {
        Some(profile) => Ok(Some((name, profile))),
        None => Err(CliError::Usage(format!(
            "no profile {} in {} (profiles: {})",
            named_here.unwrap_or_else(|| "named by default_profile".to_owned()),
            path.display(),
            if profiles.is_empty() {
                "none".to_owned()
            } else {
                profiles.keys().cloned().collect::<Vec<_>>().join(", ")
            }
        ))),
    }
}

/// Parses the configuration file; an error names the file, the line, the field and the fix, and
/// never quotes a value (see [`refusal`]).
pub fn parse(text: &str, path: &Path) -> Result<ConfigFile, CliError> {
    toml::from_str(text).map_err(|error| {
        CliError::Usage(format!(
            "the configuration file {} is not valid: {}",
            path.display(),
            refusal(&error, text)
        ))
    })
}

/// What a profile accepts.
const PROFILE_FIELDS: &str = "a profile accepts base_url, store_id, key_file and key_env";
/// What the top level accepts.
const TOP_LEVEL_FIELDS: &str = "the top level accepts default_profile and [profiles.NAME] tables";
/// Where a key goes instead.
const KEY_ADVICE: &str = "the file never holds a key itself: name a file holding it with key_file (chmod 600) or a variable holding it with key_env";
/// Where the file is described.
const SEE: &str = "see Profiles in the store-api-cli README";

/// Why the file was refused, without a byte of what it holds but the names of its fields. The parser's
/// own text (`toml::de::Error`'s `Display`) quotes the offending line and its messages quote values
/// (`invalid type: string "csk_live…"`): a key put in the wrong field went to stderr and CI logs. So
/// the message is rebuilt from the error's kind and position: the line, the field (a key's name, when
/// it looks like one), what it must be, and the fix.
fn refusal(error: &toml::de::Error, text: &str) -> String {
    let message = error.message();
    let start = error.span().map_or(0, |span| span.start).min(text.len());
    let before = text.get(..start).unwrap_or_default();
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    let column = before[line_start..].chars().count() + 1;
    if let Some(field) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next())
    {
        let shown = shown_field(field);
        let level = if message.contains("`key_env`") {
            PROFILE_FIELDS
        } else {
            TOP_LEVEL_FIELDS
        };
        let secretive = ["key", "secret", "token", "password"]
            .iter()
            .any(|word| field.to_ascii_lowercase().contains(word));
        let advice = if secretive || shown.is_none() {
            format!("; {KEY_ADVICE}")
        } else {
            String::new()
        };
        return format!(
            "unknown field {} at line {line}: {level}{advice}; remove or correct the line ({SEE})",
            shown.unwrap_or_else(|| "(its name is not shown)".to_owned())
        );
    }
    const DATA_ERRORS: [&str; 6] = [
        "invalid type:",
        "invalid value:",
        "invalid length",
        "missing field",
        "unknown variant",
        "duplicate field",
    ];
    if DATA_ERRORS.iter().any(|kind| message.starts_with(kind)) {
        // The last `, expected …` is serde's description of the type wanted: it follows the value.
        let expected = message
            .rsplit_once(", expected ")
            .map_or("", |(_, expected)| expected);
        let key = key_before(&before[line_start..]);
        let field = key.and_then(shown_field);
        let must = match key {
            Some("base_url" | "store_id" | "key_env" | "default_profile") => {
                format!(
                    "must be text in quotes ({} = \"...\")",
                    key.unwrap_or_default()
                )
            }
            Some("key_file") => "must be a path in quotes (key_file = \"/path/to/key\")".to_owned(),
            Some("profiles") => {
                "must be a table of profiles: a line [profiles.NAME] for each, its fields under it"
                    .to_owned()
            }
            Some(name) if expected == "struct Profile" && field.is_some() => format!(
                "must be a table of settings: a line [profiles.{name}], its fields under it ({PROFILE_FIELDS})"
            ),
            _ => "has a value of the wrong type".to_owned(),
        };
        return format!(
            "{} at line {line} {must}; the value is not shown, it may be a key ({SEE})",
            field.unwrap_or_else(|| "the field".to_owned())
        );
    }
    format!(
        "line {line}, column {column} is not valid TOML{}: write each setting on a line of its own as name = \"text\" (text in quotes), under a line [profiles.NAME] ({SEE})",
        parser_words(message).map_or_else(String::new, |words| format!(" ({words})"))
    )
}

/// A field's name in backquotes, when it looks like a name (a short word of letters, digits, `_`,
/// `-`): anything else may be a key pasted where a name belongs, and is not shown.
fn shown_field(name: &str) -> Option<String> {
    let plain = !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    plain.then(|| format!("`{name}`"))
}

/// The key whose value starts where `line` (the text of its line up to the value) ends: the last key
/// before a `=`, unquoted, its last dotted part (`profiles = { dev = { store_id = ` gives `store_id`).
fn key_before(line: &str) -> Option<&str> {
    let key = line.trim_end().strip_suffix('=')?;
    let key = key.rsplit(['{', ',']).next()?.trim();
    let key = key.rsplit('.').next()?.trim().trim_matches(['"', '\'']);
    (!key.is_empty()).then_some(key)
}

/// The parser's description of a syntax error (`invalid basic string, expected `"``), when it quotes
/// nothing but grammar (tokens of at most two characters in backquotes): its wording is the parser's,
/// and a later version could quote what it read.
fn parser_words(message: &str) -> Option<&str> {
    let mut rest = message;
    while let Some((outside, after)) = rest.split_once('`') {
        if outside.contains(['"', '\'']) {
            return None;
        }
        let (token, after) = after.split_once('`')?;
        if token.chars().count() > 2 {
            return None;
        }
        rest = after;
    }
    (!rest.contains(['"', '\''])).then_some(message)
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
                CliError::Usage(match shown_variable(&variable) {
                    Some(variable) => format!(
                        "profile {name:?}: the variable {variable} named by key_env is not set"
                    ),
                    None => format!(
                        "profile {name:?}: no variable named by key_env is set (its value is not shown: it is not an upper-case name like PRODUCTION_STORE_API_KEY, and may be the key itself); key_env names a variable holding the key, key_file a file holding it"
                    ),
                })
            }),
        (None, None) => Ok(None),
    }
}

/// Reads a key file, refusing one that group or others may read: the key bills the store.
pub fn read_key_file(path: &Path) -> Result<Secret, CliError> {
    let shown = shown_path(path);
    let label = shown.as_deref().unwrap_or(
        "named by key_file (its name is not shown: with no folder and no extension it may be the key itself; key_file names a file holding the key)",
    );
    let metadata = std::fs::metadata(path)
        .map_err(|e| CliError::Usage(format!("cannot read the key file {label}: {e}")))?;
    check_owner_only(label, shown.as_deref(), &metadata)?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read the key file {label}: {e}")))?;
    let key = text.trim();
    if key.is_empty() {
        return Err(CliError::Usage(format!("the key file {label} is empty")));
    }
    Ok(Secret::from(key.to_owned()))
}

/// The name of a variable, when it looks like one by convention (upper-case letters, digits, `_`); a
/// key pasted into `key_env` does not, and is not shown.
fn shown_variable(name: &str) -> Option<&str> {
    let conventional = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    conventional.then_some(name)
}

/// A key file's path, when it looks like one (a folder or an extension in it); a key pasted into
/// `key_file` does not, and is not shown.
fn shown_path(path: &Path) -> Option<String> {
    let text = path.to_string_lossy();
    text.contains(['/', '\\', '.'])
        .then(|| path.display().to_string())
}

#[cfg(unix)]
fn check_owner_only(
    label: &str,
    path: Option<&str>,
    metadata: &std::fs::Metadata,
) -> Result<(), CliError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = metadata.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(CliError::Usage(format!(
            "the key file {label} can be read by group or others (mode {mode:03o}); run `chmod 600 {}`",
            path.unwrap_or("FILE")
        )));
    }
    Ok(())
}

// Windows has no mode bits; the file's ACL is the user's business there.
#[cfg(not(unix))]
fn check_owner_only(_: &str, _: Option<&str>, _: &std::fs::Metadata) -> Result<(), CliError> {
    Ok(())
}

/// A profile for [`save_profile`] to write (what `store-api login` gathered).
#[derive(Debug)]
pub struct NewProfile {
    /// Its name: letters, digits, `_` and `-`.
    pub name: String,
    /// The service's address.
    pub base_url: String,
    /// The store id.
    pub store_id: String,
    /// The key, written to the profile's key file only.
    pub key: Secret,
    /// Make it the file's `default_profile` even when the file names another.
    pub make_default: bool,
}

/// Where [`save_profile`] put a profile.
#[derive(Debug)]
pub struct Saved {
    /// The configuration file.
    pub config: PathBuf,
    /// The file holding the key (mode 600).
    pub key_file: PathBuf,
    /// Whether the profile is now the file's `default_profile`.
    pub is_default: bool,
}

/// Where `login` keeps a profile's key: `keys/NAME.key` beside the configuration file, in a folder
/// only its owner may enter.
pub fn key_file_path(config: &Path, name: &str) -> PathBuf {
    config
        .parent()
        .unwrap_or(Path::new("."))
        .join("keys")
        .join(format!("{name}.key"))
}

/// Adds `profile` to the configuration file at `config`, or replaces the one of that name, keeping the
/// rest of the file as it is (other profiles, comments, layout). The key goes to
/// [`key_file_path`], created with mode 600 (never readable by others, not even for a moment) and
/// written atomically, before the file that names it; the profile gets `key_file`, and loses a
/// `key_env` it had. It becomes the `default_profile` when asked, or when the file names none.
pub fn save_profile(config: &Path, profile: &NewProfile) -> Result<Saved, CliError> {
    let name = &profile.name;
    let valid_name = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_name {
        return Err(CliError::Usage(format!(
            "--profile {name:?}: a profile name is 1 to 64 letters, digits, `_` or `-` (it names the key file too)"
        )));
    }
    let text = match std::fs::read_to_string(config) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(CliError::Usage(format!(
                "cannot read the configuration file {}: {e}",
                config.display()
            )));
        }
    };
    // The reader's checks first: a file it would refuse is not rewritten (and its refusal quotes
    // no value of it).
    parse(&text, config)?;
    let mut document: toml_edit::DocumentMut = text.parse().map_err(|_| {
        CliError::Usage(format!(
            "the configuration file {} cannot be edited: fix it by hand first ({SEE})",
            config.display()
        ))
    })?;
    // Absolute: the profile is read from any working directory, the file may have been named relatively.
    let key_file = std::path::absolute(key_file_path(config, name)).map_err(|e| {
        CliError::Usage(format!("the configuration file {}: {e}", config.display()))
    })?;
    let written = |what: &Path, e: std::io::Error| {
        CliError::Failed(format!("cannot write {}: {e}", what.display()))
    };
    if let Some(folder) = key_file.parent() {
        create_private_folder(folder).map_err(|e| written(folder, e))?;
    }
    store_api_raw::durable::replace_file_with_mode(&key_file, 0o600, |file| {
        use std::io::Write as _;
        // `replace_file_with_mode` creates a new file: the mode holds whatever the old one had.
        file.write_all(format!("{}\n", profile.key.expose()).as_bytes())
    })
    .map_err(|e| written(&key_file, e))?;

    let profiles = document
        .entry("profiles")
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            // `[profiles.NAME]` headers only, no empty `[profiles]` line.
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_mut()
        .ok_or_else(|| {
            CliError::Usage(format!(
                "`profiles` in {} is not a table ({SEE})",
                config.display()
            ))
        })?;
    let entry = profiles
        .entry(name)
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_mut()
        .ok_or_else(|| {
            CliError::Usage(format!(
                "profile {name:?} in {} is not a table ({SEE})",
                config.display()
            ))
        })?;
    entry.insert("base_url", toml_edit::value(profile.base_url.as_str()));
    entry.insert("store_id", toml_edit::value(profile.store_id.as_str()));
    entry.insert(
        "key_file",
        toml_edit::value(key_file.to_string_lossy().as_ref()),
    );
    entry.remove("key_env");
    let is_default = profile.make_default || !document.contains_key("default_profile");
    if is_default {
        // A value of the top level: written before every `[profiles.NAME]`, whatever the order.
        document.insert("default_profile", toml_edit::value(name.as_str()));
    }
    if let Some(folder) = config.parent() {
        std::fs::create_dir_all(folder).map_err(|e| written(folder, e))?;
    }
    store_api_raw::durable::replace_file(config, |file| {
        use std::io::Write as _;
        file.write_all(document.to_string().as_bytes())
    })
    .map_err(|e| written(config, e))?;
    Ok(Saved {
        config: config.to_owned(),
        key_file,
        is_default,
    })
}

/// Creates `folder` (and its parents) when missing; a folder created here is its owner's only (700),
/// one that exists keeps its mode.
fn create_private_folder(folder: &Path) -> std::io::Result<()> {
    if folder.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(folder)
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

    fn check(text: &str, expected: &str) {
        const SECRET: &str = "csk_live_0123456789abcdef0123456789abcdef";
        let error = parse(&text.replace("SECRET", SECRET), Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(!error.contains("csk_"), "{error}");
        assert_eq!(
            error.strip_prefix("the configuration file c.toml is not valid: "),
            Some(expected),
            "{text}"
        );
    }

    #[test]
    fn a_refusal_names_the_line_the_field_and_the_fix_but_no_value() {
        check(
            "[profiles.dev]\nstore_id = \"s\"\napi_key = \"SECRET\"\n",
            "unknown field `api_key` at line 3: a profile accepts base_url, store_id, key_file and key_env; the file never holds a key itself: name a file holding it with key_file (chmod 600) or a variable holding it with key_env; remove or correct the line (see Profiles in the store-api-cli README)",
        );
        check(
            "default = \"dev\"\n",
            "unknown field `default` at line 1: the top level accepts default_profile and [profiles.NAME] tables; remove or correct the line (see Profiles in the store-api-cli README)",
        );
        check(
            "[profiles.dev]\n\"SECRET\" = 1\n",
            "unknown field (its name is not shown) at line 2: a profile accepts base_url, store_id, key_file and key_env; the file never holds a key itself: name a file holding it with key_file (chmod 600) or a variable holding it with key_env; remove or correct the line (see Profiles in the store-api-cli README)",
        );
        check(
            "[profiles.dev]\n\nkey_env = [\"SECRET\"]\n",
            "`key_env` at line 3 must be text in quotes (key_env = \"...\"); the value is not shown, it may be a key (see Profiles in the store-api-cli README)",
        );
        check(
            "profiles = { dev = { key_file = 5 } }\n",
            "`key_file` at line 1 must be a path in quotes (key_file = \"/path/to/key\"); the value is not shown, it may be a key (see Profiles in the store-api-cli README)",
        );
        check(
            "[profiles]\ndev = \"SECRET\"\n",
            "`dev` at line 2 must be a table of settings: a line [profiles.dev], its fields under it (a profile accepts base_url, store_id, key_file and key_env); the value is not shown, it may be a key (see Profiles in the store-api-cli README)",
        );
        check(
            "profiles = \"SECRET\"\n",
            "`profiles` at line 1 must be a table of profiles: a line [profiles.NAME] for each, its fields under it; the value is not shown, it may be a key (see Profiles in the store-api-cli README)",
        );
        let syntax = |line: &str, words: &str| {
            format!(
                "{line} is not valid TOML{words}: write each setting on a line of its own as name = \"text\" (text in quotes), under a line [profiles.NAME] (see Profiles in the store-api-cli README)"
            )
        };
        check(
            "[profiles.dev]\nstore_id = SECRET\n",
            &syntax(
                "line 2, column 12",
                " (string values must be quoted, expected literal string)",
            ),
        );
        check(
            "[profiles.dev]\nkey_env = \"SECRET\n",
            &syntax(
                "line 2, column 53",
                " (invalid basic string, expected `\"`)",
            ),
        );
        check(
            "SECRET\n",
            &syntax("line 1, column 42", " (key with no value, expected `=`)"),
        );
        check(
            "[profiles.dev]\nkey_env = \"A\"\nkey_env = \"SECRET\"\n",
            &syntax("line 3, column 1", " (duplicate key)"),
        );
    }

    #[test]
    fn only_grammar_of_the_parser_is_repeated() {
        assert!(parser_words("expected `=`, `#`").is_some());
        assert!(parser_words("unexpected `csk_live`").is_none());
        assert!(parser_words("invalid \"x\"").is_none());
        assert!(parser_words("invalid 'x'").is_none());
        assert!(parser_words("unclosed `").is_none());
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
