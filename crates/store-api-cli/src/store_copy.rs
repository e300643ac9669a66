//! The client's copy of the store (what the pre-flight check validates orders against) kept on disk
//! between runs, so that each run after the first reads only what changed: a handful of requests,
//! whatever the size of the store.
//!
//! One file per service and store under the user's cache directory (`$XDG_CACHE_HOME/store-api/stores/`,
//! else `~/.cache/store-api/stores/`), readable by its owner alone, replaced atomically, and holding the
//! catalog and the products only (never the key). A file that cannot be read, is truncated or corrupt,
//! of another format, or of another store is ignored and rewritten: never an error.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest as _, Sha256};
use store_api::Client;
use store_api::store_cache::{Collection, SavedStoreCache, StoreCopy};

use crate::error::CliError;
use crate::output::Output;

/// How old a copy on disk may be before a run reads the whole store again (to see removals, which
/// reading only the changes cannot): a day. Between such reads the service's own check refuses an order
/// for a product removed meanwhile, and nothing is billed.
pub const RECONCILE_INTERVAL: Duration = Duration::from_secs(24 * 3600);

/// The copy of one service's store on disk, and what the client held when it was loaded.
#[derive(Debug)]
pub struct DiskCopy {
    path: Option<PathBuf>,
    /// The copy as loaded, and when it had been read.
    loaded: Option<Arc<StoreCopy>>,
    loaded_read_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl DiskCopy {
    /// Loads the copy of `client`'s store into it, if one is on disk and usable. `env` reads the
    /// environment (`XDG_CACHE_HOME`, `HOME`).
    pub fn load(client: &Client, env: &dyn Fn(&str) -> Option<String>) -> DiskCopy {
        let path = cache_dir(env).map(|dir| dir.join(file_name(client)));
        if let Some(path) = &path {
            match read(path) {
                Ok(Some(saved)) => {
                    if let Err(error) = client.store_cache().restore(saved) {
                        tracing::debug!(path = %path.display(), %error, "the saved copy of the store is not this store's: it is read again");
                    }
                }
                Ok(None) => {}
                Err(error) => {
                    tracing::debug!(path = %path.display(), %error, "the saved copy of the store is unreadable: it is read again");
                }
            }
        }
        DiskCopy {
            path,
            loaded: client.store_cache().current(),
            loaded_read_at: client.store_cache().refreshed_at(),
        }
    }

    /// Fills the client's copy when it has none (the first run for this store), or reads the whole
    /// store again once the copy is older than [`RECONCILE_INTERVAL`], with a progress bar on a
    /// terminal and a line saying why.
    pub async fn fill(&self, client: &Client, out: Output) -> Result<(), CliError> {
        let cache = client.store_cache();
        let why = match cache.reconciled_at() {
            None => "the first order for this store",
            Some(reconciled) if age(reconciled) >= RECONCILE_INTERVAL => {
                "the saved copy is a day old, and only a whole read shows removed products"
            }
            Some(_) => return Ok(()),
        };
        let kept = match &self.path {
            Some(path) => format!("kept in {} for later runs", path.display()),
            None => "not kept: no cache directory (set XDG_CACHE_HOME or HOME)".to_owned(),
        };
        // Said to a person at a terminal, with the bar; a script sees it with `-v`.
        let reason = format!(
            "reading the store's catalog and products for the pre-flight check ({why}; {kept}; --no-preflight skips the check)"
        );
        if crate::progress::visible(out) {
            eprintln!("{reason}");
        } else {
            tracing::info!("{reason}");
        }
        let bar = crate::progress::counter(out);
        let filled = cache
            .reconcile_with_progress(|progress| {
                let what = match progress.collection {
                    Collection::Catalog => "catalog products",
                    _ => "products",
                };
                bar.set_length(progress.total);
                bar.set_position(progress.read);
                bar.set_message(what);
            })
            .await;
        bar.finish_and_clear();
        filled?;
        Ok(())
    }

    /// Writes the client's copy back when it changed, or was read again, since [`DiskCopy::load`]. A failure to write is
    /// reported on stderr and is not an error: the next run reads the store again.
    pub fn save(&self, client: &Client) {
        let Some(path) = &self.path else {
            return;
        };
        let current = client.store_cache().current();
        let unchanged = match (&self.loaded, &current) {
            (Some(loaded), Some(current)) => {
                Arc::ptr_eq(loaded, current)
                    && self.loaded_read_at == client.store_cache().refreshed_at()
            }
            _ => false,
        };
        if unchanged {
            return;
        }
        // Only now the copy is made into its saved form: a clone of the whole store.
        let Some(saved) = client.store_cache().save() else {
            return;
        };
        if let Err(error) = write(path, &saved) {
            eprintln!(
                "note: the copy of the store could not be saved to {} ({error}); the next run reads the store again",
                path.display()
            );
        }
    }
}

fn age(at: chrono::DateTime<chrono::Utc>) -> Duration {
    (chrono::Utc::now() - at).to_std().unwrap_or_default()
}

/// `$XDG_CACHE_HOME/store-api/stores`, else `~/.cache/store-api/stores` (`%LOCALAPPDATA%` on Windows).
pub fn cache_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    let base = if cfg!(windows) {
        set("LOCALAPPDATA").map(PathBuf::from)
    } else {
        set("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| set("HOME").map(|home| Path::new(&home).join(".cache")))
    }?;
    Some(base.join("store-api").join("stores"))
}

/// One file per service and store: the SHA-256 of both, so no URL character reaches the file system.
fn file_name(client: &Client) -> String {
    let digest = Sha256::new()
        .chain_update(client.base_url())
        .chain_update([0])
        .chain_update(client.store_id())
        .finalize();
    format!("{}.json", hex::encode(&digest[..16]))
}

/// The saved copy at `path`: `None` when there is none.
fn read(path: &Path) -> Result<Option<SavedStoreCache>, String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error.to_string()),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|error| error.to_string())
}

fn write(path: &Path, saved: &SavedStoreCache) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let body = serde_json::to_vec(saved).map_err(std::io::Error::other)?;
    // Created readable by its owner alone: never a moment when others could read it.
    store_api_fixtures::durable::replace_file_with_mode(path, 0o600, |file| file.write_all(&body))
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_dir_follows_xdg_then_home() {
        let dir = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            cache_dir(&move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
        };
        if cfg!(windows) {
            return;
        }
        assert_eq!(
            dir(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]),
            Some(PathBuf::from("/x/store-api/stores"))
        );
        assert_eq!(
            dir(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")]),
            Some(PathBuf::from("/h/.cache/store-api/stores"))
        );
        assert_eq!(dir(&[]), None);
    }
}
