//! `login`: keeps a store's address, id and key in a profile of the configuration file, as `gh auth
//! login` does, from the flags (or the environment), from standard input (`--with-key`) or from a
//! running emulator (`--from-emulator`). The key is written to a file only its owner can read and is
//! never printed.

use std::io::Read as _;

use store_api_fixtures::{RemoteEmulator, StoreCredentials};

use crate::cli::LoginArgs;
use crate::config::{self, NewProfile};
use crate::error::CliError;
use crate::global::{GlobalArgs, Secret};
use crate::output::Output;

/// The profile written when `--profile` names none.
pub const DEFAULT_PROFILE: &str = "default";

/// Gathers the settings, writes the profile and says where (never the key).
pub async fn run(args: LoginArgs, global: &GlobalArgs, out: Output) -> Result<(), CliError> {
    let name = global
        .profile
        .clone()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| DEFAULT_PROFILE.to_owned());
    let (base_url, store_id, key) = match &args.from_emulator {
        Some(url) => from_emulator(url, global.store_id.as_deref()).await?,
        None => from_flags(&args, global)?,
    };
    let path = config::config_path(&config::process_env).ok_or_else(|| {
        CliError::Usage(format!(
            "no place for the configuration file: set {} (or XDG_CONFIG_HOME or HOME)",
            crate::global::ENV_CONFIG
        ))
    })?;
    let saved = config::save_profile(
        &path,
        &NewProfile {
            name: name.clone(),
            base_url: base_url.clone(),
            store_id: store_id.clone(),
            key,
            make_default: args.default,
        },
    )?;
    if out.json {
        return out.json(&serde_json::json!({
            "profile": name,
            "baseUrl": base_url,
            "storeId": store_id,
            "configFile": saved.config,
            "keyFile": saved.key_file,
            "default": saved.is_default,
        }));
    }
    let using = if saved.is_default {
        "every command uses it when no --profile is given".to_owned()
    } else {
        format!("use it with --profile {name}")
    };
    out.line(format!(
        "profile {name} saved in {}: store {store_id} at {base_url}, its key in {} (mode 600); {using}",
        saved.config.display(),
        saved.key_file.display()
    ));
    Ok(())
}

/// The address and store from the flags (or the environment), the key from them or, with
/// `--with-key`, from standard input.
fn from_flags(args: &LoginArgs, global: &GlobalArgs) -> Result<(String, String, Secret), CliError> {
    let key = if args.with_key {
        Some(key_from_stdin()?)
    } else {
        global.api_key.clone()
    };
    let missing: Vec<&str> = [
        (global.base_url.is_none(), "--base-url"),
        (global.store_id.is_none(), "--store-id"),
        (
            key.is_none(),
            "--api-key (or --with-key to read it from standard input)",
        ),
    ]
    .into_iter()
    .filter_map(|(missing, flag)| missing.then_some(flag))
    .collect();
    match (global.base_url.clone(), global.store_id.clone(), key) {
        (Some(base_url), Some(store_id), Some(key)) => Ok((base_url, store_id, key)),
        _ => Err(CliError::Usage(format!(
            "login needs {} (or their {} variables), or --from-emulator URL",
            missing.join(", "),
            "STORE_API_*"
        ))),
    }
}

/// The key on standard input: its first line, without surrounding whitespace (`echo "$KEY" |`,
/// `< key.txt`, a secret manager's pipe).
fn key_from_stdin() -> Result<Secret, CliError> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| CliError::Usage(format!("--with-key: cannot read standard input: {e}")))?;
    let key = text.lines().next().unwrap_or_default().trim();
    if key.is_empty() {
        return Err(CliError::Usage(
            "--with-key: standard input holds no key (pipe it in: `store-api login --with-key < key.txt`)"
                .into(),
        ));
    }
    Ok(Secret::from(key.to_owned()))
}

/// The emulator's base URL and the credentials of `store_id`, or of its first active store, from its
/// control plane (`GET /_emulator/stores`).
async fn from_emulator(
    url: &str,
    store_id: Option<&str>,
) -> Result<(String, String, Secret), CliError> {
    let emulator = RemoteEmulator::new(url).map_err(|e| {
        CliError::Usage(format!(
            "--from-emulator: {e} (the emulator's address, http://127.0.0.1:PORT)"
        ))
    })?;
    let stores = emulator.stores().await.map_err(|e| {
        CliError::Usage(format!(
            "--from-emulator: {e} (is `store-api emulator` or `store-api-emulator` running there?)"
        ))
    })?;
    let listed = || {
        stores
            .iter()
            .map(|store| {
                format!(
                    "{}{}",
                    store.id,
                    if store.active { "" } else { " (inactive)" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen: Option<&StoreCredentials> = match store_id {
        Some(id) => stores.iter().find(|store| store.id == id),
        None => stores.iter().find(|store| store.active),
    };
    let store = chosen.ok_or_else(|| {
        CliError::Usage(match store_id {
            Some(id) => format!(
                "--from-emulator: the emulator has no store {id:?} (stores: {})",
                listed()
            ),
            None => format!(
                "--from-emulator: the emulator has no active store (stores: {})",
                listed()
            ),
        })
    })?;
    Ok((
        format!("{}{}", emulator.origin(), store_api_fixtures::API_PREFIX),
        store.id.clone(),
        Secret::from(store.api_key.clone()),
    ))
}
