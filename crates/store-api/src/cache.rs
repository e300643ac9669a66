//! What pre-flight validation knows of the store: the catalog and the products, fetched whole and kept
//! for a TTL, so a program that validates many orders does not refetch them.

use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::client::Client;
use crate::error::Result;
use crate::query::{CatalogQuery, ProductQuery};
use crate::validate::StoreSnapshot;

/// The cached snapshot with its age.
#[derive(Debug)]
pub(crate) struct StoreCache {
    ttl: Duration,
    slot: Mutex<Option<(Instant, Arc<StoreSnapshot>)>>,
}

impl StoreCache {
    pub fn new(ttl: Duration) -> StoreCache {
        StoreCache {
            ttl,
            slot: Mutex::new(None),
        }
    }

    /// The snapshot, fetched again when older than the TTL. Concurrent callers wait for one fetch.
    pub async fn snapshot(&self, client: &Client) -> Result<Arc<StoreSnapshot>> {
        let mut slot = self.slot.lock().await;
        if let Some((taken, snapshot)) = slot.as_ref()
            && taken.elapsed() < self.ttl
        {
            return Ok(snapshot.clone());
        }
        let catalog = client
            .catalog()
            .stream(&CatalogQuery::new())
            .try_collect()
            .await?;
        let products = client
            .products()
            .stream(&ProductQuery::new())
            .map_ok(|p| p.wire)
            .try_collect()
            .await?;
        let snapshot = Arc::new(StoreSnapshot::new(catalog, products));
        *slot = Some((Instant::now(), snapshot.clone()));
        Ok(snapshot)
    }

    /// Forgets the snapshot (after the store's products changed, for example).
    pub async fn clear(&self) {
        *self.slot.lock().await = None;
    }
}

impl Client {
    /// The catalog and products pre-flight validation uses, from the cache when fresh.
    pub async fn store_snapshot(&self) -> Result<Arc<StoreSnapshot>> {
        self.inner.cache.snapshot(self).await
    }

    /// Drops the cached catalog and products; the next validation fetches them again.
    pub async fn clear_cache(&self) {
        self.inner.cache.clear().await;
    }
}
