//! The client's copy of the store (the catalog and the products) that pre-flight validation checks
//! orders against, and how it stays current at any size of store.
//!
//! - **The first fill** reads both collections whole: one request per 100 items (a store of 20,000
//!   products is 200 requests, about 95 s at the service's sustained 2 requests per second). It happens
//!   once per client, on the first validation (or on [`StoreCache::refresh`]); a command line keeps the
//!   copy on disk between runs ([`StoreCache::save`], [`StoreCache::restore`]).
//! - **Refreshes are incremental.** Both lists sort by `updatedAt`; a refresh reads them newest change
//!   first and stops at the first page that reaches what the copy holds, so it costs one page per list
//!   plus one per 100 changes, whatever the size of the store. Once the copy is older than
//!   [`ClientBuilder::cache_ttl`](crate::ClientBuilder::cache_ttl) (5 minutes by default), the next
//!   validation starts a refresh **in the background** and validates against the copy it has: no
//!   submission waits for a read once the copy is filled.
//! - **Removals** (a deleted product, a blank no longer offered to the store) leave no trace in a list
//!   sorted by change. They reach the copy through the `products_delete` webhook when the service
//!   forwards its product events ([`StoreCache::remove_product`]; `store_api_webhooks::keep_store_cache`
//!   does both kinds of product event), and through a full read in the background: when an incremental
//!   refresh finds the service counting other numbers of items than the copy holds, and in any case
//!   every [`ClientBuilder::reconcile_interval`](crate::ClientBuilder::reconcile_interval) (an hour by
//!   default). A background full read pauses a second between pages, leaving at least half of the
//!   store's rate limit to other calls.
//! - **A refusal is checked again.** An order the copy refuses (a SKU it does not know, a product it
//!   holds as archived, a blank it holds as discontinued) is validated again after one incremental
//!   refresh before the refusal is returned, so a change made since the last refresh never refuses a
//!   good order. [`SubmitOptions::preflight`](crate::SubmitOptions::preflight) skips the local check for
//!   one call; the service validates every order anyway.
//!
//! **The staleness accepted.** Between refreshes (at most the TTL, plus the time a background refresh
//! takes) the copy may miss changes; it can then let an order through that the service refuses with its
//! 400 (nothing is billed), never refuse one the service accepts without reading again. A removal stays
//! in the copy until the next full read (at most the reconciliation interval) unless a webhook or a
//! differing count brings it sooner. Two changes stamped with the same millisecond as the newest the
//! copy holds, one of them made after the copy was read, are beyond what sorting by `updatedAt` can
//! tell apart; the next full read catches them.
//!
//! ```no_run
//! # async fn run(client: store_api::Client) -> Result<(), store_api::Error> {
//! let cache = client.store_cache();
//! let filled = cache.refresh().await?; // the first fill: every page
//! let later = cache.refresh().await?; // only what changed: one page per list
//! assert!(!later.full);
//! println!("{} + {} pages", later.catalog_pages, later.product_pages);
//! # Ok(())
//! # }
//! ```

mod copy;
pub(crate) mod keeper;
mod merge;
mod read;
mod report;
mod saved;
mod versioned;
mod walk;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

pub use copy::StoreCopy;
pub(crate) use keeper::Settings;
use keeper::{Keeper, Kind};
use read::Reads;
pub use report::{Progress, Refreshed};
pub use saved::{RestoreError, SavedStoreCache};
pub use versioned::Collection;

use crate::error::Result;
use crate::handle::Client;
use crate::model::Product;

/// How often a full read of the store settles removals unless
/// [`ClientBuilder::reconcile_interval`](crate::ClientBuilder::reconcile_interval) sets another: an hour.
pub const DEFAULT_RECONCILE_INTERVAL: Duration = Duration::from_secs(3600);

/// The pause between the pages of a full read in the background: one request a second at most, half
/// of the service's sustained rate, so the other calls of the store keep the rest.
pub(crate) const RECONCILE_PAGE_PAUSE: Duration = Duration::from_secs(1);

/// The client's copy of the store: see the [module](self) for how it is kept. From
/// [`Client::store_cache`]; clones of a client share one.
#[derive(Debug, Clone, Copy)]
pub struct StoreCache<'a> {
    client: &'a Client,
}

impl<'a> StoreCache<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        StoreCache { client }
    }

    fn keeper(&self) -> &'a Keeper {
        &self.client.inner.cache
    }

    fn reads(&self) -> Reads<'a> {
        Reads {
            keeper: self.keeper(),
            client: self.client,
        }
    }

    /// The copy as it is, reading nothing: `None` before the first fill.
    pub fn current(&self) -> Option<Arc<StoreCopy>> {
        self.keeper().current().map(|kept| kept.copy.clone())
    }

    /// When the copy was last read (a refresh or a full read); `None` before the first fill.
    pub fn refreshed_at(&self) -> Option<DateTime<Utc>> {
        self.keeper().current().map(|kept| kept.refreshed_at)
    }

    /// When the copy was last read whole (a fill or a reconciliation); `None` before the first fill.
    pub fn reconciled_at(&self) -> Option<DateTime<Utc>> {
        self.keeper().current().map(|kept| kept.reconciled_at)
    }

    /// The copy pre-flight validation uses: filled first if there is none; a refresh that is due starts
    /// in the background (or, with [`ClientBuilder::background_refresh`](crate::ClientBuilder::background_refresh)
    /// off, runs first).
    pub async fn snapshot(&self) -> Result<Arc<StoreCopy>> {
        Ok(self.reads().get().await?.copy.clone())
    }

    /// Reads what changed since the copy was read, now (the first fill when there is no copy).
    pub async fn refresh(&self) -> Result<Refreshed> {
        self.read(Kind::Changes, &mut |_| {}).await
    }

    /// Reads the whole store now and replaces the copy: what settles removals.
    pub async fn reconcile(&self) -> Result<Refreshed> {
        self.read(Kind::Whole, &mut |_| {}).await
    }

    /// [`StoreCache::reconcile`], telling `progress` after each page (the first fill of a large store
    /// takes minutes: show it).
    pub async fn reconcile_with_progress(
        &self,
        mut progress: impl FnMut(Progress) + Send,
    ) -> Result<Refreshed> {
        self.read(Kind::Whole, &mut progress).await
    }

    async fn read(
        &self,
        kind: Kind,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<Refreshed> {
        let (_, refreshed) = self
            .reads()
            .read_paced(kind, None, Duration::ZERO, progress)
            .await?;
        refreshed.ok_or_else(|| crate::Error::invalid_argument("the store was not read"))
    }

    /// Reads again what changed, unless the copy moved since `seen` was taken from it: what a refusal
    /// is checked against before it is returned.
    pub(crate) async fn refresh_since(&self, seen: &Arc<StoreCopy>) -> Result<Arc<StoreCopy>> {
        let keeper = self.keeper();
        let generation = keeper
            .current()
            .filter(|kept| Arc::ptr_eq(&kept.copy, seen))
            .map(|kept| kept.generation);
        let Some(generation) = generation else {
            return self.snapshot().await;
        };
        let (kept, _) = self
            .reads()
            .read_if(Kind::Changes, Some(generation))
            .await?;
        Ok(kept.copy.clone())
    }

    /// Puts a product as the service has it now into the copy: what a `products_create` or
    /// `products_update` webhook brings (fetch it with `GET /products/{id}`, as
    /// `store_api_webhooks::keep_store_cache` does). A copy not filled yet is left alone (its fill
    /// reads the product). Returns whether the copy changed. A product older than the one held is not
    /// put back.
    pub fn put_product(&self, product: Product) -> bool {
        self.keeper().put_product(product)
    }

    /// Removes a product from the copy: what a `products_delete` webhook says. Returns whether there
    /// was a copy.
    pub fn remove_product(&self, product_id: &str) -> bool {
        self.keeper().remove_product(product_id)
    }

    /// Forgets the copy; the next validation fills it again.
    pub fn clear(&self) {
        self.keeper().clear();
    }

    /// The copy in a form to keep across processes (serde), with the client's base URL and store id
    /// and never its key: `None` before the first fill. See [`SavedStoreCache`].
    pub fn save(&self) -> Option<SavedStoreCache> {
        let kept = self.keeper().current()?;
        Some(SavedStoreCache::of(
            self.client.base_url(),
            self.client.store_id(),
            &kept,
        ))
    }

    /// Takes a copy saved by [`StoreCache::save`] (by this process or an earlier one) as this client's,
    /// with the age it had: refreshed as usual once older than the TTL. Refused, with nothing changed,
    /// when it is of another format, service or store.
    pub fn restore(&self, saved: SavedStoreCache) -> std::result::Result<(), RestoreError> {
        let kept = saved.into_kept(self.client.base_url(), self.client.store_id())?;
        self.keeper().restore(kept);
        Ok(())
    }
}
