//! Processing each event once although it may be delivered up to five times.
//!
//! The service retries a delivery until it gets a 2xx answer, so one event can arrive several times
//! (same event id). A [`Dedupe`] store remembers which events were processed. Its protocol keeps a failed
//! attempt retryable:
//!
//! 1. [`Dedupe::begin`] claims the id for [`Dedupe::lease`]: [`Claim::Fresh`] means process it now (it
//!    carries the claim's [`ClaimToken`]); [`Claim::Duplicate`] means it was processed already (answer
//!    2xx); [`Claim::InProgress`] means another delivery is processing it right now and [`Claim::Busy`]
//!    that the store cannot take another claim now (answer 503 to both so the service tries again later).
//! 2. While the handler runs, and until `complete` answers, [`Dedupe::renew`] extends the claim, so a
//!    handler slower than the lease, or a store slow to mark the event done, does not let a
//!    redelivery run it a second time.
//! 3. After processing, [`Dedupe::complete`] marks it done, only if the claim is still the caller's
//!    (fenced by its token); when processing failed (you answer 5xx), [`Dedupe::abandon`] releases the
//!    claim so the next delivery processes it again.
//!
//! [`process_once`] runs those steps around your handler and gives it a [`Lease`] that says whether the
//! claim is still held. [`MemoryDedupe`] is a bounded in-memory store; implement [`Dedupe`] on your
//! database to survive restarts and to share among instances (`store-api-redis` has one on Redis).
//!
//! # What a handler must do itself
//!
//! The store keeps its own records straight; effects outside it (a row in your database, an e-mail, a
//! call to another service) are the handler's. A run is *told* when its claim was lost, not cancelled:
//!
//! - check [`Lease::is_held`] right before each effect outside the store (or race the work against
//!   [`Lease::lost`] in `tokio::select!`), and give up when it is false: another delivery may run now;
//! - make those effects idempotent, keyed on the event id (an upsert, a unique constraint, an
//!   idempotency key): a receiver killed after its effect and before `complete` cannot be told apart
//!   from one killed before it, so the next delivery runs the handler again.
//!
//! The crate's README has a table of what each failure costs.

mod memory;

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use tracing::Instrument as _;

use crate::telemetry::{self, Verdict};

pub use memory::{DEFAULT_LEASE, MemoryDedupe};

/// The future returned by [`Dedupe`] methods.
pub type DedupeFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, DedupeError>> + Send + 'a>>;

/// Who holds a claim: returned by [`Dedupe::begin`] with [`Claim::Fresh`], passed back to
/// [`Dedupe::renew`], [`Dedupe::complete`] and [`Dedupe::abandon`], which act only while the claim is
/// still this one.
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
    /// Claimed by a delivery still being processed: answer 503 so the service retries later.
    InProgress,
    /// The store cannot take another claim now (a [`MemoryDedupe`] full of claims in progress): answer
    /// 503 so the service retries later. Never 2xx: the event has not been processed.
    Busy,
}

/// A store of processed event ids. Object safe: use it as `Arc<dyn Dedupe>`.
///
/// A claim lasts [`lease`](Self::lease) unless renewed; a claim that is never completed nor abandoned
/// (the process died mid-way) expires, so a later delivery processes the event.
pub trait Dedupe: Send + Sync {
    /// How long a claim lasts without renewal. [`process_once`] renews every third of it.
    fn lease(&self) -> Duration;

    /// Claims `event_id` for processing, or says why not.
    ///
    /// A store that sends its claim again after a lost reply must reuse the same token, and a claim that
    /// finds its own token answers [`Claim::Fresh`]: the event would otherwise stay blocked by the very
    /// claim that was meant to process it.
    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim>;

    /// Extends the claim `token` on `event_id` by the lease from now.
    ///
    /// `Ok(true)`: still held by `token`, extended. `Ok(false)`: not held by `token` any more (it
    /// expired and another delivery claimed the event, the event is done, or the claim is gone): the
    /// run has lost its claim.
    fn renew<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool>;

    /// Marks `event_id` processed, so later deliveries are [`Claim::Duplicate`], if `token` still
    /// holds the claim or nobody holds it (it expired and no one claimed it again).
    ///
    /// `Ok(true)`: marked (or it was done already). `Ok(false)`: another claim holds the event now;
    /// nothing was written (that claim's run decides).
    ///
    /// [`process_once`] keeps renewing the claim until this answers, so a store may take its time (try
    /// again while its backend fails over) without another delivery claiming the event meanwhile; a
    /// [`renew`](Self::renew) of the same token may therefore run concurrently, or arrive after the
    /// event was marked done (it answers `Ok(false)` then and must write nothing).
    fn complete<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool>;

    /// Releases the claim `token` on `event_id` after a failed attempt: the next delivery is
    /// [`Claim::Fresh`]. Does nothing if the claim is no longer `token`'s (its lease expired and another
    /// delivery claimed the event) or the event was completed.
    fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()>;
}

impl<T: Dedupe + ?Sized> Dedupe for Arc<T> {
    fn lease(&self) -> Duration {
        (**self).lease()
    }

    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
        (**self).begin(event_id)
    }

    fn renew<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        (**self).renew(event_id, token)
    }

    fn complete<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        (**self).complete(event_id, token)
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
    /// The store could not take another claim ([`Claim::Busy`]); the handler did not run. Answer 503.
    Busy,
}

impl<T> Processed<T> {
    /// The HTTP status to answer the delivery with: 204 when the event is processed (now or before),
    /// 503 when it is not yet (the service delivers it again later). Never answer 2xx to
    /// [`InProgress`](Self::InProgress) or [`Busy`](Self::Busy): the event would be lost.
    pub fn status_code(&self) -> u16 {
        if self.retry_later() { 503 } else { 204 }
    }

    /// Whether the event still has to be processed by a later delivery (answer 503).
    pub fn retry_later(&self) -> bool {
        matches!(self, Processed::InProgress | Processed::Busy)
    }
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

impl<E> ProcessError<E> {
    /// The HTTP status to answer the delivery with: 500 for a failed handler, 503 for a failed store;
    /// either way the service delivers again.
    pub fn status_code(&self) -> u16 {
        match self {
            ProcessError::Handler(_) => 500,
            ProcessError::Store(_) => 503,
        }
    }
}

/// The HTTP status to answer a delivery with, given what [`process_once`] returned: 204 when the event
/// is processed (now or by an earlier delivery), 503 when it is not yet ([`Processed::InProgress`],
/// [`Processed::Busy`], a failed store), 500 when the handler failed. Every non-2xx answer makes the
/// service deliver the event again.
///
/// ```
/// use store_api_webhooks::dedupe::{MemoryDedupe, process_once, response_status};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let dedupe = MemoryDedupe::new(10_000);
/// let outcome = process_once(&dedupe, "evt_1", |_lease| async { Ok::<_, std::io::Error>(()) }).await;
/// assert_eq!(response_status(&outcome), 204);
/// # });
/// ```
pub fn response_status<T, E>(outcome: &Result<Processed<T>, ProcessError<E>>) -> u16 {
    match outcome {
        Ok(processed) => processed.status_code(),
        Err(error) => error.status_code(),
    }
}

/// A handler's view of its claim, given by [`process_once`].
///
/// The claim is held while [`process_once`] keeps renewing it. It is lost once a renewal answers that
/// the claim is not the run's any more, or when no renewal succeeded for the lease (measured from when
/// the last successful claim or renewal was *sent*, so a slow reply does not count in the run's
/// favour). Once lost it stays lost. The run is told, not cancelled: check [`is_held`](Self::is_held)
/// right before an effect outside the store, or race the work against [`lost`](Self::lost).
#[derive(Clone)]
pub struct Lease {
    state: watch::Receiver<LeaseState>,
}

#[derive(Clone, Copy, Debug)]
struct LeaseState {
    /// The claim lasts until then unless renewed.
    held_until: Instant,
    /// A renewal said the claim is not ours, or `held_until` passed before a renewal came back.
    lost: bool,
}

impl Lease {
    /// A lease held for `duration` from now and never renewed: to call a handler outside
    /// [`process_once`] (in its own tests, say).
    pub fn held_for(duration: Duration) -> Lease {
        let (lease, keeper) = Lease::start(deadline(Instant::now(), duration));
        // With its keeper gone, the lease lasts until its deadline.
        drop(keeper);
        lease
    }

    fn start(held_until: Instant) -> (Lease, LeaseKeeper) {
        let (sender, state) = watch::channel(LeaseState {
            held_until,
            lost: false,
        });
        (Lease { state }, LeaseKeeper { sender })
    }

    /// Whether the claim is still held: no renewal answered "not yours" and the last successful one
    /// (or the claim) was sent less than a lease ago.
    pub fn is_held(&self) -> bool {
        let state = *self.state.borrow();
        !state.lost && Instant::now() < state.held_until
    }

    /// Resolves once the claim is lost (at once if it is already): for `tokio::select!` around the
    /// handler's work.
    pub async fn lost(&self) {
        let mut state = self.state.clone();
        loop {
            let now = *state.borrow_and_update();
            if now.lost || Instant::now() >= now.held_until {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep_until(now.held_until) => {}
                changed = state.changed() => {
                    if changed.is_err() {
                        // Nobody renews any more: the claim lasts until its deadline.
                        let held_until = state.borrow().held_until;
                        tokio::time::sleep_until(held_until).await;
                        return;
                    }
                }
            }
        }
    }
}

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = *self.state.borrow();
        f.debug_struct("Lease")
            .field("held", &self.is_held())
            .field("held_until", &state.held_until)
            .finish()
    }
}

/// The renewal loop's side of a [`Lease`].
struct LeaseKeeper {
    sender: watch::Sender<LeaseState>,
}

impl LeaseKeeper {
    /// A renewal sent at `sent` succeeded: the claim lasts a lease from then, unless it was lost
    /// meanwhile (the deadline passed first: a handler may have seen it lost, and lost stays lost).
    /// Returns whether the lease is still held.
    fn renewed(&self, held_until: Instant) -> bool {
        let now = Instant::now();
        let mut held = false;
        self.sender.send_if_modified(|state| {
            if state.lost {
                return false;
            }
            if now >= state.held_until {
                state.lost = true;
                return true;
            }
            held = true;
            let extended = held_until > state.held_until;
            state.held_until = state.held_until.max(held_until);
            extended
        });
        held
    }

    /// A renewal failed (the store did not answer): the claim counts as held until its deadline.
    fn still_held(&self) -> bool {
        self.renewed(Instant::now())
    }

    /// The store said the claim is not ours any more.
    fn lose(&self) {
        self.sender.send_if_modified(|state| {
            let changed = !state.lost;
            state.lost = true;
            changed
        });
    }
}

/// `now + duration`, or far in the future when that does not fit in an `Instant` (a lease of
/// `Duration::MAX` means "no limit", never a panic).
fn deadline(now: Instant, duration: Duration) -> Instant {
    const FAR: Duration = Duration::from_secs(86_400 * 365 * 30);
    now.checked_add(duration)
        .or_else(|| now.checked_add(FAR))
        .unwrap_or(now)
}

/// Runs `handler` for `event_id` unless the event was processed already or is being processed.
///
/// The claim is renewed every third of [`Dedupe::lease`] while the handler runs; the handler gets a
/// [`Lease`] that says whether the claim is still held (check it right before each effect outside the
/// store: the run is told when its claim was lost, not cancelled). On success the event is marked done,
/// fenced by the claim's token, and the claim is still renewed until [`Dedupe::complete`] answers, so a
/// redelivery meanwhile is [`Processed::InProgress`] however long the store takes to answer: if the
/// claim was lost and another delivery holds the event now, nothing is written and the result is still
/// [`Processed::Done`] (the lease said it was lost; that other run decides). On failure the claim is
/// abandoned so the next delivery runs the handler again. If the caller's future is dropped mid-way,
/// renewal stops and the claim expires after the lease.
///
/// Traced as the delivery span `store_api.webhooks.delivery` with the steps `store_api.webhooks.claim`,
/// `store_api.webhooks.handler` (the handler's own spans nest under it) and `store_api.webhooks.complete`
/// (around `complete`, or `abandon` after a failure), and the verdict; it goes on with the span
/// [`Verifier::verify`](crate::Verifier::verify) or the axum extractor opened for this event id in the
/// same task, or opens one. Details in the crate's README ("Observability").
///
/// ```
/// use store_api_webhooks::dedupe::{MemoryDedupe, Processed, process_once, response_status};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let dedupe = MemoryDedupe::new(10_000);
/// let first = process_once(&dedupe, "evt_1", |lease| async move {
///     // Right before an effect outside the store: is the claim still ours?
///     if !lease.is_held() {
///         return Err("claim lost: another delivery may be running");
///     }
///     Ok("stored")
/// })
/// .await;
/// assert!(matches!(first, Ok(Processed::Done("stored"))));
/// let again = process_once(&dedupe, "evt_1", |_| async { Ok::<_, &str>("stored") }).await;
/// assert!(matches!(again, Ok(Processed::Duplicate)));
/// assert_eq!(response_status(&again), 204);
/// # });
/// ```
pub async fn process_once<D, F, Fut, T, E>(
    dedupe: &D,
    event_id: &str,
    handler: F,
) -> Result<Processed<T>, ProcessError<E>>
where
    D: Dedupe + ?Sized,
    F: FnOnce(Lease) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    // The delivery span a verification of this event opened in this task, or a new one.
    let run = telemetry::Run::start(event_id);
    let mut facts = RunFacts::default();
    let outcome = run_once(dedupe, event_id, handler, &run.span, &mut facts)
        .instrument(run.span.clone())
        .await;
    let (verdict, error_type) = match &outcome {
        Ok(Processed::Done(_)) if facts.lost_claim => (Verdict::Stale, None),
        Ok(Processed::Done(_)) => (Verdict::Processed, None),
        Ok(Processed::Duplicate) => (Verdict::Duplicate, None),
        Ok(Processed::InProgress | Processed::Busy) => (Verdict::Busy, None),
        Err(ProcessError::Handler(_)) => (Verdict::HandlerFailed, None),
        // The handler failed and abandoning its claim failed too: what the handler did decides.
        Err(ProcessError::Store(_)) if facts.handler_failed => (Verdict::HandlerFailed, None),
        // Not processed, the service retries (as for `busy`); the span says the store failed.
        Err(ProcessError::Store(_)) => (Verdict::Busy, Some("dedupe_store")),
    };
    run.finish(verdict, error_type);
    #[cfg(feature = "otel-metrics")]
    if let Some(elapsed) = facts.handler_time {
        crate::metrics::handler_duration(elapsed, verdict, run.topic());
    }
    outcome
}

/// What [`run_once`] saw that its result does not say, for the verdict.
#[derive(Default)]
struct RunFacts {
    /// `complete` answered that another claim holds the event: the run was stale.
    lost_claim: bool,
    /// The handler returned an error.
    handler_failed: bool,
    /// How long the handler ran, if it ran.
    #[cfg(feature = "otel-metrics")]
    handler_time: Option<std::time::Duration>,
}

/// [`process_once`]'s steps, each in its span under `delivery`.
async fn run_once<D, F, Fut, T, E>(
    dedupe: &D,
    event_id: &str,
    handler: F,
    delivery: &tracing::Span,
    facts: &mut RunFacts,
) -> Result<Processed<T>, ProcessError<E>>
where
    D: Dedupe + ?Sized,
    F: FnOnce(Lease) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let lease_length = dedupe.lease();
    let sent = Instant::now();
    let claim = dedupe
        .begin(event_id)
        .instrument(telemetry::claim_span(delivery))
        .await?;
    let token = match claim {
        Claim::Fresh(token) => token,
        Claim::Duplicate => return Ok(Processed::Duplicate),
        Claim::InProgress => return Ok(Processed::InProgress),
        Claim::Busy => return Ok(Processed::Busy),
    };
    let (lease, keeper) = Lease::start(deadline(sent, lease_length));
    let handler_span = telemetry::handler_span(delivery);
    // The handler's own spans nest under the handler step.
    let work = handler_span
        .in_scope(|| handler(lease))
        .instrument(handler_span);
    let renewal = keep_renewing(dedupe, event_id, token, lease_length, keeper);
    tokio::pin!(renewal);
    #[cfg(feature = "otel-metrics")]
    let started = std::time::Instant::now();
    let outcome = tokio::select! {
        // The handler first: once it is done, its outcome counts even if a renewal is due.
        biased;
        outcome = work => outcome,
        never = &mut renewal => match never {},
    };
    #[cfg(feature = "otel-metrics")]
    {
        facts.handler_time = Some(started.elapsed());
    }
    match outcome {
        Ok(value) => {
            // The claim is renewed until `complete` answers, not only until the handler returned: a
            // store may take up to a lease to answer it (`RedisDedupe` tries again while Redis fails
            // over), longer than what is left of the claim (as little as two thirds of a lease), and
            // a delivery in between would find the event free and run the handler again (issue 35).
            let marked = tokio::select! {
                biased;
                // `false`: the claim was lost and another delivery holds the event; it marks it done.
                marked = dedupe
                    .complete(event_id, token)
                    .instrument(telemetry::complete_span(delivery)) => marked,
                never = &mut renewal => match never {},
            };
            facts.lost_claim = !marked?;
            Ok(Processed::Done(value))
        }
        Err(error) => {
            facts.handler_failed = true;
            dedupe
                .abandon(event_id, token)
                .instrument(telemetry::complete_span(delivery))
                .await?;
            Err(ProcessError::Handler(error))
        }
    }
}

/// Renews the claim every third of the lease until it is lost, then waits forever (the handler, then
/// `complete`, decide when the run ends). A failed renewal is tried again at the next tick; the
/// lease's deadline says when the claim must count as lost.
async fn keep_renewing<D>(
    dedupe: &D,
    event_id: &str,
    token: ClaimToken,
    lease: Duration,
    keeper: LeaseKeeper,
) -> std::convert::Infallible
where
    D: Dedupe + ?Sized,
{
    let interval = (lease / 3).max(Duration::from_millis(1));
    let mut next = deadline(Instant::now(), interval);
    loop {
        tokio::time::sleep_until(next).await;
        let sent = Instant::now();
        let held = match dedupe.renew(event_id, token).await {
            Ok(true) => keeper.renewed(deadline(sent, lease)),
            Ok(false) => {
                keeper.lose();
                false
            }
            // The deadline decides: a store that answers again in time keeps the claim.
            Err(_) => keeper.still_held(),
        };
        if !held {
            // Lost stays lost: renewing further would only keep other deliveries waiting.
            return std::future::pending().await;
        }
        // After a renewal slower than the interval the next one starts at once, not in a burst.
        next = deadline(next, interval).max(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use tokio::sync::Notify;

    use super::*;

    /// A `MemoryDedupe` whose first `complete` answers only once released: a store that takes its
    /// time to mark an event done (as `RedisDedupe`'s does while it tries again for up to a lease).
    struct SlowComplete {
        inner: MemoryDedupe,
        hold: AtomicBool,
        completing: Notify,
        release: Notify,
    }

    impl Dedupe for SlowComplete {
        fn lease(&self) -> Duration {
            self.inner.lease()
        }

        fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
            self.inner.begin(event_id)
        }

        fn renew<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
            self.inner.renew(event_id, token)
        }

        fn complete<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
            Box::pin(async move {
                if self.hold.swap(false, Ordering::SeqCst) {
                    self.completing.notify_one();
                    self.release.notified().await;
                }
                self.inner.complete(event_id, token).await
            })
        }

        fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()> {
            self.inner.abandon(event_id, token)
        }
    }

    // Issue 35, defect 13: renewal stopped when the handler returned, so a `complete` still being
    // tried when the claim's last lease ran out (as little as two thirds of a lease after the handler
    // returned) let a redelivery claim the event fresh and run the handler a second time.
    #[tokio::test(start_paused = true)]
    async fn a_redelivery_while_complete_is_outstanding_does_not_run_the_handler_again() {
        let lease = Duration::from_secs(10);
        let store = Arc::new(SlowComplete {
            inner: MemoryDedupe::new(8).with_lease(lease),
            hold: AtomicBool::new(true),
            completing: Notify::new(),
            release: Notify::new(),
        });
        let runs = Arc::new(AtomicUsize::new(0));
        let start = Instant::now();
        let first = {
            let (store, runs) = (store.clone(), runs.clone());
            tokio::spawn(async move {
                process_once(&*store, "evt_1", |_lease| async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    // Returns right before the first renewal (due at a third of the lease): what
                    // is left of the claim is two thirds of a lease.
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    Ok::<_, String>(())
                })
                .await
            })
        };
        store.completing.notified().await;
        // Past the claim's lease as it stood when the handler returned; `complete` still outstanding.
        tokio::time::sleep_until(start + lease + Duration::from_secs(1)).await;
        let again = process_once(&*store, "evt_1", |_lease| async {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(())
        })
        .await;
        assert_eq!(
            again.ok(),
            Some(Processed::InProgress),
            "the claim is kept while complete is outstanding"
        );
        store.release.notify_one();
        let first = first.await.unwrap();
        assert_eq!(first.ok(), Some(Processed::Done(())));
        let after = process_once(&*store, "evt_1", |_lease| async {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(())
        })
        .await;
        assert_eq!(after.ok(), Some(Processed::Duplicate));
        assert_eq!(runs.load(Ordering::SeqCst), 1, "the handler ran once");
    }

    /// A `MemoryDedupe` whose renewals fail (the store does not answer) when `failing` says so of
    /// their number (0 for the first); it records when each renewal was sent.
    struct FailingRenewals {
        inner: MemoryDedupe,
        failing: fn(usize) -> bool,
        sent: std::sync::Mutex<Vec<Instant>>,
    }

    impl FailingRenewals {
        fn new(lease: Duration, failing: fn(usize) -> bool) -> Self {
            Self {
                inner: MemoryDedupe::new(8).with_lease(lease),
                failing,
                sent: std::sync::Mutex::new(Vec::new()),
            }
        }
    }

    impl Dedupe for FailingRenewals {
        fn lease(&self) -> Duration {
            self.inner.lease()
        }

        fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
            self.inner.begin(event_id)
        }

        fn renew<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
            let number = {
                let mut sent = self.sent.lock().unwrap();
                sent.push(Instant::now());
                sent.len() - 1
            };
            if (self.failing)(number) {
                return Box::pin(std::future::ready(Err(DedupeError::new(
                    "the store did not answer",
                ))));
            }
            self.inner.renew(event_id, token)
        }

        fn complete<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
            self.inner.complete(event_id, token)
        }

        fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()> {
            self.inner.abandon(event_id, token)
        }
    }

    // A renewal the store did not answer is tried again at the next tick: the claim is kept (in the
    // store and in the lease) as long as a renewal succeeds within the lease (issue 39: cargo-mutants'
    // `still_held` → `false`, which stopped renewing at the first failure).
    #[tokio::test(start_paused = true)]
    async fn a_failed_renewal_is_tried_again_and_the_claim_kept() {
        let lease = Duration::from_secs(3);
        let store = Arc::new(FailingRenewals::new(lease, |number| number == 0));
        let runs = Arc::new(AtomicUsize::new(0));
        let first = {
            let (store, runs) = (store.clone(), runs.clone());
            tokio::spawn(async move {
                process_once(&*store, "evt_1", |lease: Lease| async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    Ok::<_, String>(lease.is_held())
                })
                .await
            })
        };
        tokio::time::sleep(Duration::from_secs(5)).await;
        let again = process_once(&*store, "evt_1", |_lease| async {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(true)
        })
        .await;
        assert_eq!(
            again.ok(),
            Some(Processed::InProgress),
            "past the first lease, the claim renewed after one failure still holds"
        );
        let first = first.await.unwrap();
        assert_eq!(first.ok(), Some(Processed::Done(true)), "the lease held");
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert!(
            store.sent.lock().unwrap().len() >= 9,
            "renewed every second"
        );
    }

    // While the store does not answer, the claim counts as held until its deadline; once that passed,
    // the lease is lost and no renewal is sent any more: lost stays lost, and renewing would only keep
    // other deliveries waiting (issue 39: cargo-mutants' `still_held` → `true`, which went on renewing).
    #[tokio::test(start_paused = true)]
    async fn renewals_stop_once_the_lease_ran_out_while_the_store_failed() {
        let lease = Duration::from_secs(3);
        let store = FailingRenewals::new(lease, |_| true);
        let start = Instant::now();
        let outcome = process_once(&store, "evt_1", |lease: Lease| async move {
            assert!(lease.is_held());
            lease.lost().await;
            let lost_at = Instant::now();
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok::<_, String>((lost_at, lease.is_held()))
        })
        .await;
        let Ok(Processed::Done((lost_at, held))) = outcome else {
            panic!("the handler ran and succeeded: {outcome:?}");
        };
        assert_eq!(lost_at, start + lease, "lost at the claim's deadline");
        assert!(!held, "lost stays lost");
        let sent = store.sent.lock().unwrap();
        assert!(!sent.is_empty());
        assert!(
            sent.iter().all(|&at| at <= start + lease),
            "renewals sent after the lease ran out: {:?}",
            sent.iter().map(|at| *at - start).collect::<Vec<_>>()
        );
    }
}
