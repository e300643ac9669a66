//! The client's copy of the store: the state every clone of a client shares, and its changes. The
//! reads that fill and refresh it are `read`'s (this module makes no calls, so the client's handle can
//! hold it).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::merge::fold;
use super::versioned::Held;
use crate::model::{CatalogProduct, Product};
use crate::validate::StoreSnapshot;

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
    pub snapshot: Arc<StoreSnapshot>,
    pub catalog: Held,
    pub products: Held,
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
            catalog: Held::of(&catalog),
            products: Held::of(&products),
            snapshot: Arc::new(StoreSnapshot::new(catalog, products)),
            refreshed_at,
            reconciled_at,
            generation,
            counts_differ: false,
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

    /// Replaces the copy in one step with `change` applied to the current one (under the lock, so two
    /// changes never lose each other).
    pub fn change(&self, change: impl FnOnce(Option<&Kept>) -> Option<Kept>) -> Option<Arc<Kept>> {
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        let next = change(state.as_deref())?;
        let next = Arc::new(next);
        *state = Some(next.clone());
        Some(next)
    }

    pub fn clear(&self) {
        *self.state.write().unwrap_or_else(PoisonError::into_inner) = None;
    }

    pub fn restore(&self, kept: Kept) {
        let generation = self.current().map_or(0, |k| k.generation + 1);
        self.install(Kept { generation, ..kept });
    }

    /// Folds one product as the service has it now into the copy (no copy yet: nothing to do).
    pub fn put_product(&self, product: Product) -> bool {
        self.change(|now| {
            let now = now?;
            Some(Kept::new(
                now.snapshot.catalog().to_vec(),
                fold(now.snapshot.products(), vec![product], &[]),
                now.refreshed_at,
                now.reconciled_at,
                now.generation + 1,
            ))
        })
        .is_some()
    }

    /// Drops one product from the copy.
    pub fn remove_product(&self, product_id: &str) -> bool {
        self.change(|now| {
            let now = now?;
            Some(Kept::new(
                now.snapshot.catalog().to_vec(),
                fold(now.snapshot.products(), Vec::new(), &[product_id]),
                now.refreshed_at,
                now.reconciled_at,
                now.generation + 1,
            ))
        })
        .is_some()
    }
}
