//! The copy of the store in a form that outlives the process: what the command line keeps in the
//! user's cache directory between runs.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::keeper::Kept;
use crate::model::{CatalogProduct, Product};

/// The format of [`SavedStoreCache`]; a saved copy of another format is refused on restore (and a
/// program keeping one in a file reads it again from the service).
const FORMAT: u32 = 1;

/// A saved copy of the store: from [`StoreCache::save`](super::StoreCache::save), back with
/// [`StoreCache::restore`](super::StoreCache::restore); `Serialize` and `Deserialize` to keep it in a
/// file. It names the service and store it was read from and holds no key: only what any call of the
/// store returns (the catalog and the products), and when it was read.
///
/// ```
/// # fn run(client: store_api::Client) -> Result<(), Box<dyn std::error::Error>> {
/// if let Some(saved) = client.store_cache().save() {
///     let text = serde_json::to_string(&saved)?;
///     // ... later, in another process with a client of the same store:
///     let saved: store_api::store_cache::SavedStoreCache = serde_json::from_str(&text)?;
///     client.store_cache().restore(saved)?;
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedStoreCache {
    format: u32,
    base_url: String,
    store_id: String,
    refreshed_at: DateTime<Utc>,
    reconciled_at: DateTime<Utc>,
    catalog: Vec<CatalogProduct>,
    products: Vec<Product>,
}

/// Why [`StoreCache::restore`](super::StoreCache::restore) refused a saved copy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RestoreError {
    /// Saved by another version of this crate, in a format it no longer reads.
    #[error("the saved copy is of format {found}, this client reads format {expected}")]
    Format {
        /// The saved copy's format.
        found: u32,
        /// The format this crate writes.
        expected: u32,
    },
    /// Saved by a client of another service or store.
    #[error(
        "the saved copy is of store {saved_store} at {saved_base_url}, not of this client's store"
    )]
    OtherStore {
        /// The saved copy's base URL.
        saved_base_url: String,
        /// The saved copy's store.
        saved_store: String,
    },
}

impl SavedStoreCache {
    pub(crate) fn of(base_url: &str, store_id: &str, kept: &Kept) -> SavedStoreCache {
        SavedStoreCache {
            format: FORMAT,
            base_url: base_url.to_owned(),
            store_id: store_id.to_owned(),
            refreshed_at: kept.refreshed_at,
            reconciled_at: kept.reconciled_at,
            catalog: kept.copy.catalog().cloned().collect(),
            products: kept.copy.products().cloned().collect(),
        }
    }

    pub(crate) fn into_kept(self, base_url: &str, store_id: &str) -> Result<Kept, RestoreError> {
        if self.format != FORMAT {
            return Err(RestoreError::Format {
                found: self.format,
                expected: FORMAT,
            });
        }
        if self.base_url != base_url || self.store_id != store_id {
            return Err(RestoreError::OtherStore {
                saved_base_url: self.base_url,
                saved_store: self.store_id,
            });
        }
        let mut kept = Kept::new(
            self.catalog,
            self.products,
            self.refreshed_at,
            self.reconciled_at,
            0,
        );
        // A copy from the future (a clock set back since) is as old as can be: read again.
        let now = Utc::now();
        if kept.refreshed_at > now || kept.reconciled_at > now {
            kept.refreshed_at = DateTime::<Utc>::MIN_UTC;
            kept.reconciled_at = DateTime::<Utc>::MIN_UTC;
        }
        Ok(kept)
    }

    /// The service's base URL the copy was read from.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The store the copy was read from.
    pub fn store_id(&self) -> &str {
        &self.store_id
    }

    /// When the copy was last read.
    pub fn refreshed_at(&self) -> DateTime<Utc> {
        self.refreshed_at
    }

    /// When the copy was last read whole.
    pub fn reconciled_at(&self) -> DateTime<Utc> {
        self.reconciled_at
    }
}
