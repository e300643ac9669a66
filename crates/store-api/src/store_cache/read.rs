//! The reads that fill and refresh the copy of the store, and when they run: before the call that
//! needs them, or in the background.
//!
//! A read runs outside the state's lock (only one at a time, by the keeper's `reading`), and what it
//! found is folded into the copy as it is when the read ends, so a product a webhook brought in
//! meanwhile is not lost.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use chrono::Utc;

use super::copy::newer;
use super::keeper::{Keeper, Kept, Kind};
use super::report::{Progress, Refreshed};
use super::walk::{Reach, walk};
use crate::error::Result;
use crate::handle::Client;
use crate::model::{CatalogProduct, Product};

/// Reads of the copy `keeper` holds for `client`.
pub(crate) struct Reads<'a> {
    pub keeper: &'a Keeper,
    pub client: &'a Client,
}

/// The generation a read is made "unless the copy moved past" to mean "only while there is no copy": no
/// copy ever reaches it, so any copy found when the read's turn comes is taken instead.
const WHILE_EMPTY: u64 = u64::MAX;

impl Reads<'_> {
    /// The copy to validate against. The first call fills it (a full read, before it returns); after
    /// that, a read that falls due runs in the background while this call returns the copy it has, or,
    /// with background reads off, an incremental read runs first (a full one when reconciliation is due).
    pub async fn get(&self) -> Result<Arc<Kept>> {
        let Some(kept) = self.keeper.current() else {
            // Callers that find no copy together wait for one fill, not one each.
            return self
                .read_if(Kind::Changes, Some(WHILE_EMPTY))
                .await
                .map(|(kept, _)| kept);
        };
        let now = Utc::now();
        let reconcile_due = kept.reconciled_for(now) >= self.keeper.settings.reconcile_every;
        let refresh_due = kept.age(now) >= self.keeper.settings.ttl;
        // Counts that differ call for a full read, but not more often than the copy's lifetime: a
        // service whose counts never agree with its pages must not turn the copy into a loop of reads.
        let removals_seen = self.keeper.settings.background
            && kept.counts_differ
            && kept.reconciled_for(now) >= self.keeper.settings.ttl;
        let kind = if reconcile_due || removals_seen {
            Kind::Whole
        } else if refresh_due {
            Kind::Changes
        } else {
            return Ok(kept);
        };
        if self.keeper.settings.background
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            self.spawn(runtime, kind, kept.generation);
            return Ok(kept);
        }
        self.read_if(kind, Some(kept.generation))
            .await
            .map(|(kept, _)| kept)
    }

    fn spawn(&self, runtime: tokio::runtime::Handle, kind: Kind, generation: u64) {
        if self.keeper.in_background.swap(true, Ordering::AcqRel) {
            return;
        }
        let client = self.client.clone();
        let running = self.keeper.in_background.clone();
        runtime.spawn(async move {
            let reads = Reads {
                keeper: &client.inner.cache,
                client: &client,
            };
            let pause = reads.keeper.settings.reconcile_pause;
            let result = reads
                .read_paced(kind, Some(generation), pause, &mut |_| {})
                .await;
            running.store(false, Ordering::Release);
            if let Err(error) = result {
                // The copy it had stays; the next call that finds the read due starts another.
                tracing::warn!(%error, ?kind, "a background read of the store's catalog and products failed");
            }
        });
    }

    /// A read of `kind`, unless the copy moved past `generation` meanwhile (another caller read it):
    /// then the copy as it is now. `None` reads whatever the copy's state.
    pub async fn read_if(
        &self,
        kind: Kind,
        generation: Option<u64>,
    ) -> Result<(Arc<Kept>, Option<Refreshed>)> {
        self.read_paced(kind, generation, Duration::ZERO, &mut |_| {})
            .await
    }

    /// [`Keeper::read_if`], pausing between the pages of a full read, and telling `progress`.
    pub async fn read_paced(
        &self,
        kind: Kind,
        generation: Option<u64>,
        pause: Duration,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<(Arc<Kept>, Option<Refreshed>)> {
        let _reading = self.keeper.reading.lock().await;
        let before = self.keeper.current();
        if let (Some(kept), Some(seen)) = (&before, generation)
            && kept.generation != seen
        {
            return Ok((kept.clone(), None));
        }
        let started = tokio::time::Instant::now();
        let read_at = Utc::now();
        let whole = kind == Kind::Whole || before.is_none();
        let (catalog, products) = match (&before, whole) {
            (Some(kept), false) => (
                walk::<CatalogProduct>(self.client, Reach::Changes(&kept.catalog), progress)
                    .await?,
                walk::<Product>(self.client, Reach::Changes(&kept.products), progress).await?,
            ),
            _ => (
                walk::<CatalogProduct>(self.client, Reach::Whole { pause }, progress).await?,
                walk::<Product>(self.client, Reach::Whole { pause }, progress).await?,
            ),
        };
        let refreshed = Refreshed {
            full: whole,
            catalog_pages: catalog.pages,
            product_pages: products.pages,
            changed: catalog.items.len() + products.items.len(),
            took: started.elapsed(),
        };
        let totals = (catalog.total_items, products.total_items);
        let build = move |keeper: &Keeper| {
            keeper.change_retiring(|now| {
                let generation = now.map_or(0, |k| k.generation + 1);
                let mut next = match now {
                    // Cleared while the read ran: the changes alone are no copy.
                    None if !whole => return None,
                    // Nothing new: the same copy, read again (no rebuild at any size).
                    Some(now)
                        if !whole
                            && catalog.items.iter().all(|i| now.catalog.holds_unchanged(i))
                            && products
                                .items
                                .iter()
                                .all(|i| now.products.holds_unchanged(i)) =>
                    {
                        now.read_again(read_at, generation)
                    }
                    Some(now) if !whole => now.with_changes(
                        newer(catalog.items.clone(), &now.catalog),
                        newer(products.items.clone(), &now.products),
                        &[],
                        read_at,
                        generation,
                    ),
                    _ => Kept::new(
                        catalog.items.clone(),
                        products.items.clone(),
                        read_at,
                        read_at,
                        generation,
                    ),
                };
                next.counts_differ = totals
                    != (
                        next.copy.catalog().count() as u64,
                        next.copy.products().count() as u64,
                    );
                Some(next)
            })
        };
        // Building the next copy is CPU work proportional to the store, and so is freeing the one it
        // replaces: both off the async workers, so a submission on the same runtime never waits
        // behind them (a validation still holding the old copy would otherwise free it when done).
        let built = match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let client = self.client.clone();
                let built = runtime
                    .spawn_blocking(move || build(&client.inner.cache))
                    .await
                    .ok()
                    .flatten();
                built.map(|(kept, replaced)| {
                    if let Some(replaced) = replaced {
                        runtime.spawn_blocking(move || retire(replaced));
                    }
                    kept
                })
            }
            Err(_) => build(self.keeper).map(|(kept, _)| kept),
        };
        let kept = built.ok_or_else(|| {
            crate::Error::invalid_argument(
                "the copy of the store was cleared while it was read; read it again",
            )
        })?;
        if kept.counts_differ {
            tracing::info!(
                service = ?totals,
                copy = ?(kept.copy.catalog().count(), kept.copy.products().count()),
                "the service counts other numbers of catalog products and products than the copy holds; a full read settles it"
            );
        }
        Ok((kept, Some(refreshed)))
    }
}

/// How long a replaced copy waits for the validations still holding it before it is freed anyway (by
/// whichever holder lets go last).
const RETIRE_WAIT: Duration = Duration::from_secs(1);

/// Frees a replaced copy on this (blocking) thread once no validation holds it any more, waiting at
/// most [`RETIRE_WAIT`]: freeing 20,000 products takes a noticeable time, which would otherwise fall
/// on the validation that let go of the copy last.
fn retire(replaced: Arc<Kept>) {
    let started = std::time::Instant::now();
    while (Arc::strong_count(&replaced) > 1 || Arc::strong_count(&replaced.copy) > 1)
        && started.elapsed() < RETIRE_WAIT
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(replaced);
}
