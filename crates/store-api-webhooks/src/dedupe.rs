//! Processing each event once although it may be delivered up to five times.
//!
//! The service retries a delivery until it gets a 2xx answer, so one event can arrive several times
//! (same event id). A [`Dedupe`] store remembers which events were processed. Its protocol keeps a failed
//! attempt retryable:
//!
//! 1. [`Dedupe::begin`] claims the id: [`Claim::Fresh`] means process it now (it carries the claim's
//!    [`ClaimToken`]); [`Claim::Duplicate`] means
//!    it was processed already (answer 2xx); [`Claim::InProgress`] means another delivery is processing
//!    it right now (answer 503 so the service tries again later).
//! 2. After processing, [`Dedupe::complete`] marks it done, or, when processing failed (you answer 5xx),
//!    [`Dedupe::abandon`] releases the claim so the next delivery processes it again. Abandoning takes
//!    the claim's token: a slow handler whose lease expired (and whose event another delivery claimed
//!    since) cannot remove that newer claim.
//!
//! [`process_once`] runs those steps around your handler. [`MemoryDedupe`] is a bounded in-memory store;
//! implement [`Dedupe`] on your database to survive restarts and to share among instances.

mod memory;

use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use memory::{DEFAULT_LEASE, MemoryDedupe};

/// The future returned by [`Dedupe`] methods.
pub type DedupeFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, DedupeError>> + Send + 'a>>;

/// Who holds a claim: returned by [`Dedupe::begin`] with [`Claim::Fresh`], passed back to
/// [`Dedupe::abandon`], which releases the claim only if it is still this one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClaimToken(u64);

impl ClaimToken {
    /// A token with this value (a store picks values that differ between claims of one event id).
    pub fn new(value: u64) -> Self {
        Self(value)
    }

    /// The token's value, for a store to keep with the claim.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// The answer of [`Dedupe::begin`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Claim {
    /// Not processed yet and now claimed by the caller with this token: process it, then `complete`,
    /// or `abandon` with the token.
    Fresh(ClaimToken),
    /// Already processed: answer 2xx without processing again.
    Duplicate,
    /// Claimed by a delivery still being processed: answer a 5xx (503) so the service retries later.
    InProgress,
}

/// A store of processed event ids. Object safe: use it as `Arc<dyn Dedupe>`.
///
/// A claim that is never completed nor abandoned (the process died mid-way) should expire after a
/// while, so the event can be processed by a later delivery; [`MemoryDedupe`] does that with a lease.
pub trait Dedupe: Send + Sync {
    /// Claims `event_id` for processing, or says why not.
    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim>;
    /// Marks `event_id` processed: later deliveries are [`Claim::Duplicate`].
    fn complete<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, ()>;
    /// Releases the claim `token` on `event_id` after a failed attempt: the next delivery is
    /// [`Claim::Fresh`]. Does nothing if the claim is no longer `token`'s (its lease expired and another
    /// delivery claimed the event) or the event was completed.
    fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()>;
}

impl<T: Dedupe + ?Sized> Dedupe for Arc<T> {
    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
        (**self).begin(event_id)
    }

    fn complete<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, ()> {
        (**self).complete(event_id)
    }

    fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()> {
        (**self).abandon(event_id, token)
    }
}

/// A failure of the store behind a [`Dedupe`] (a database error, for example).
#[derive(Debug, thiserror::Error)]
#[error("deduplication store failed: {0}")]
pub struct DedupeError(Box<dyn StdError + Send + Sync>);

impl DedupeError {
    /// Wraps the store's own error.
    pub fn new(error: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self(error.into())
    }

    /// The store's own error.
    pub fn into_inner(self) -> Box<dyn StdError + Send + Sync> {
        self.0
    }
}

/// What [`process_once`] did with an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Processed<T> {
    /// The handler ran and succeeded with this value.
    Done(T),
    /// The event had been processed already; the handler did not run.
    Duplicate,
    /// Another delivery is processing the event; the handler did not run. Answer 503.
    InProgress,
}

/// Why [`process_once`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessError<E> {
    /// The handler failed; its claim was abandoned so the next delivery runs it again. Answer 5xx.
    #[error("event handler failed")]
    Handler(#[source] E),
    /// The dedupe store failed. Answer 5xx so the service retries.
    #[error(transparent)]
    Store(#[from] DedupeError),
}

/// Runs `handler` for `event_id` unless the event was processed already or is being processed.
///
/// On success the id is marked complete; on failure the claim is abandoned so the next delivery runs the
/// handler again. If the caller's future is dropped mid-way, the claim stays until the store lets it
/// expire (see [`MemoryDedupe::with_lease`]).
///
/// ```
/// use store_api_webhooks::dedupe::{MemoryDedupe, Processed, process_once};
///
/// # async fn run() {
/// let dedupe = MemoryDedupe::new(10_000);
/// let first = process_once(&dedupe, "evt_1", || async { Ok::<_, std::io::Error>("stored") }).await;
/// assert!(matches!(first, Ok(Processed::Done("stored"))));
/// let again = process_once(&dedupe, "evt_1", || async { Ok::<_, std::io::Error>("stored") }).await;
/// assert!(matches!(again, Ok(Processed::Duplicate)));
/// # }
/// ```
pub async fn process_once<D, F, Fut, T, E>(
    dedupe: &D,
    event_id: &str,
    handler: F,
) -> Result<Processed<T>, ProcessError<E>>
where
    D: Dedupe + ?Sized,
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let token = match dedupe.begin(event_id).await? {
        Claim::Fresh(token) => token,
        Claim::Duplicate => return Ok(Processed::Duplicate),
        Claim::InProgress => return Ok(Processed::InProgress),
    };
    match handler().await {
        Ok(value) => {
            dedupe.complete(event_id).await?;
            Ok(Processed::Done(value))
        }
        Err(error) => {
            dedupe.abandon(event_id, token).await?;
            Err(ProcessError::Handler(error))
        }
    }
}
