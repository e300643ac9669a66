//! The client's copy of the store: the state every clone of a client shares, and its changes. The
//! reads that fill and refresh it are `read`'s (this module makes no calls, so the client's handle can
//! hold it).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::copy::{StoreCopy, newer};
use super::versioned::Held;
use crate::model::{CatalogProduct, Product};

/// How the copy is kept: the client builder's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// How long the copy is trusted before an incremental read falls due.
    pub ttl: Duration,
    /// How long before a full read (removals) falls due.
    pub reconcile_every: Duration,
    /// Whether reads that fall due run in the background (a service) or before the call (the CLI).
    pub background: bool,
    /// The pause between the pages of a background full read, which leaves the store's rate limit
    /// to the calls that need it.
    pub reconcile_pause: Duration,
}

/// One state of the copy.
#[derive(Debug)]
pub(crate) struct Kept {
    pub copy: Arc<StoreCopy>,
    pub catalog: Arc<Held>,
    pub products: Arc<Held>,
    /// The last read (any kind) that completed.
    pub refreshed_at: DateTime<Utc>,
    /// The last full read.
    pub reconciled_at: DateTime<Utc>,
    /// Counts the states, so a caller can tell whether the copy moved since it looked.
    pub generation: u64,
    /// An incremental read found the service's count of items differ from the copy's: something was
    /// removed (or a read missed an item), which only a full read settles.
    pub counts_differ: bool,
}

impl Kept {
    pub fn new(
        catalog: Vec<CatalogProduct>,
        products: Vec<Product>,
        refreshed_at: DateTime<Utc>,
        reconciled_at: DateTime<Utc>,
        generation: u64,
    ) -> Kept {
        Kept {
            catalog: Arc::new(Held::of(&catalog)),
            products: Arc::new(Held::of(&products)),
            copy: Arc::new(StoreCopy::new(catalog, products)),
            refreshed_at,
            reconciled_at,
            generation,
            counts_differ: false,
        }
    }

    /// This copy with `catalog` and `products` (as the service has them now, older than nothing held)
    /// put in and the products `removed` taken out: a layer of the changes, not a copy of the store.
    pub fn with_changes(
        &self,
        catalog: Vec<CatalogProduct>,
        products: Vec<Product>,
        removed: &[&str],
        refreshed_at: DateTime<Utc>,
        generation: u64,
    ) -> Kept {
        Kept {
            catalog: Arc::new(self.catalog.updated(&catalog, &[])),
            products: Arc::new(self.products.updated(&products, removed)),
            copy: Arc::new(self.copy.with_changes(catalog, products, removed)),
            refreshed_at,
            reconciled_at: self.reconciled_at,
            generation,
            counts_differ: self.counts_differ,
        }
    }

    /// The same copy, read again at `refreshed_at` and found unchanged: shares everything.
    pub fn read_again(&self, refreshed_at: DateTime<Utc>, generation: u64) -> Kept {
        Kept {
            copy: self.copy.clone(),
            catalog: self.catalog.clone(),
            products: self.products.clone(),
            refreshed_at,
            reconciled_at: self.reconciled_at,
            generation,
            counts_differ: self.counts_differ,
        }
    }

    pub fn age(&self, now: DateTime<Utc>) -> Duration {
        (now - self.refreshed_at).to_std().unwrap_or_default()
    }

    pub fn reconciled_for(&self, now: DateTime<Utc>) -> Duration {
        (now - self.reconciled_at).to_std().unwrap_or_default()
    }
}

/// Which read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Only what changed since the copy was read (a fill when there is no copy).
    Changes,
    /// Everything.
    Whole,
}

/// The copy and its reads.
#[derive(Debug)]
pub(crate) struct Keeper {
    pub settings: Settings,
    state: RwLock<Option<Arc<Kept>>>,
    /// Held through a read: one read at a time per client (and its clones).
    pub reading: tokio::sync::Mutex<()>,
    /// A background read was started and has not ended.
    pub in_background: Arc<AtomicBool>,
}

impl Keeper {
    pub fn new(settings: Settings) -> Keeper {
        Keeper {
            settings,
            state: RwLock::new(None),
            reading: tokio::sync::Mutex::new(()),
            in_background: Arc::new(AtomicBool::new(false)),
        }
    }

    pub fn current(&self) -> Option<Arc<Kept>> {
        self.state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn install(&self, kept: Kept) -> Arc<Kept> {
        let kept = Arc::new(kept);
        *self.state.write().unwrap_or_else(PoisonError::into_inner) = Some(kept.clone());
        kept
    }

    /// Replaces the copy with `change` applied to the current one. The next copy is built outside the
    /// lock (at 20,000 products that takes a good part of a second, which no validation may wait for)
    /// and swapped in only if no other change landed meanwhile; otherwise it is built again on top of
    /// that one, so two changes never lose each other.
    pub fn change(&self, change: impl FnMut(Option<&Kept>) -> Option<Kept>) -> Option<Arc<Kept>> {
        self.change_retiring(change).map(|(next, _)| next)
    }

    /// [`Keeper::change`], handing back the copy it replaced, for the caller to let go of where
    /// freeing it costs no one a wait (see `read::retire`).
    pub fn change_retiring(
        &self,
        mut change: impl FnMut(Option<&Kept>) -> Option<Kept>,
    ) -> Option<(Arc<Kept>, Option<Arc<Kept>>)> {
        loop {
            let base = self.current();
            let next = Arc::new(change(base.as_deref())?);
            let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
            let unchanged = match (state.as_ref(), base.as_ref()) {
                (Some(now), Some(base)) => Arc::ptr_eq(now, base),
                (None, None) => true,
                _ => false,
            };
            if unchanged {
                let replaced = state.replace(next.clone());
                return Some((next, replaced));
            }
        }
    }

    pub fn clear(&self) {
        *self.state.write().unwrap_or_else(PoisonError::into_inner) = None;
    }

    pub fn restore(&self, kept: Kept) {
        let generation = self.current().map_or(0, |k| k.generation + 1);
        self.install(Kept { generation, ..kept });
    }

    /// Puts one product as the service has it now into the copy (no copy yet: nothing to do; a
    /// product older than the one held: nothing changes).
    pub fn put_product(&self, product: Product) -> bool {
        self.change(|now| {
            let now = now?;
            let products = newer(vec![product.clone()], &now.products);
            Some(now.with_changes(
                Vec::new(),
                products,
                &[],
                now.refreshed_at,
                now.generation + 1,
            ))
        })
        .is_some()
    }

    /// Drops one product from the copy.
    pub fn remove_product(&self, product_id: &str) -> bool {
        self.change(|now| {
            let now = now?;
            Some(now.with_changes(
                Vec::new(),
                Vec::new(),
                &[product_id],
                now.refreshed_at,
                now.generation + 1,
            ))
        })
        .is_some()
    }
}
