//! A value fetched on demand and kept for a TTL: the client keeps what pre-flight validation knows of
//! the store (the catalog and the products, fetched whole) in one, so a program that validates many
//! orders does not refetch them. The cell knows nothing of the client: the caller hands it the fetch.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

/// A value and the time it was fetched, kept while younger than the TTL.
#[derive(Debug)]
pub(crate) struct TtlCell<T> {
    ttl: Duration,
    slot: Mutex<Option<(Instant, Arc<T>)>>,
}

impl<T> TtlCell<T> {
    pub fn new(ttl: Duration) -> TtlCell<T> {
        TtlCell {
            ttl,
            slot: Mutex::new(None),
        }
    }

    /// The value, from `fetch` when there is none younger than the TTL. Concurrent callers wait for
    /// one fetch; a failed fetch keeps nothing, so the next caller fetches again.
    pub async fn get_or_fetch<E>(
        &self,
        fetch: impl Future<Output = Result<T, E>>,
    ) -> Result<Arc<T>, E> {
        let mut slot = self.slot.lock().await;
        if let Some((taken, value)) = slot.as_ref()
            && taken.elapsed() < self.ttl
        {
            return Ok(value.clone());
        }
        let value = Arc::new(fetch.await?);
        *slot = Some((Instant::now(), value.clone()));
        Ok(value)
    }

    /// Forgets the value.
    pub async fn clear(&self) {
        *self.slot.lock().await = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_value_is_kept_for_the_ttl_and_a_failure_keeps_nothing() {
        let cell = TtlCell::new(Duration::from_secs(60));
        let failed: Result<_, &str> = cell.get_or_fetch(async { Err("down") }).await;
        assert!(failed.is_err());
        // (fetched value, value the cell gives, whether the cell is cleared first)
        for (fetched, given, clear) in [(1, 1, false), (2, 1, false), (3, 3, true)] {
            if clear {
                cell.clear().await;
            }
            let value = cell.get_or_fetch(async { Ok::<_, &str>(fetched) }).await;
            assert_eq!(value.as_deref(), Ok(&given));
        }
        let expired = TtlCell::new(Duration::ZERO);
        for fetched in [4, 5] {
            let value = expired.get_or_fetch(async { Ok::<_, &str>(fetched) }).await;
            assert_eq!(value.as_deref(), Ok(&fetched));
        }
    }
}
