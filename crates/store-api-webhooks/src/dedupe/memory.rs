//! A bounded, in-memory [`Dedupe`]: enough for one process that may forget after a restart.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use super::{Claim, ClaimToken, Dedupe, DedupeFuture, deadline};

/// How long a claim lasts without renewal: 10 seconds. [`process_once`](super::process_once) renews
/// it while the handler runs, so a slow handler keeps it; a process that dies mid-handler blocks its
/// event for at most this long, less than the service's delivery schedule (attempts at 0, 1, 3, 7 and
/// 15 s on the emulator), so a later delivery processes it.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// Remembers up to `capacity` event ids: the events in progress, and the processed ones, of which the
/// one marked done longest ago is forgotten first.
///
/// An event in progress is never forgotten while its claim lasts: when the store is full of live
/// claims, a new claim is refused with [`Claim::Busy`] (answer 503; the service delivers again). An
/// id claimed but neither completed, abandoned nor renewed within the lease (the handler's future
/// was dropped, say) can be claimed again, so an interrupted event is not lost.
///
/// Time is tokio's clock ([`tokio::time::Instant`]), so a test with a paused clock drives the leases.
pub struct MemoryDedupe {
    capacity: usize,
    lease: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Event id to its entry.
    entries: HashMap<String, Entry>,
    /// Done entries by the sequence of their marking, oldest first: what to evict.
    done: BTreeMap<u64, String>,
    /// Live (or expired, not yet evicted) claims by expiry, soonest first: an expired one may go.
    claims: BTreeMap<(Instant, u64), String>,
    next_sequence: u64,
    /// The token of the next claim: every claim gets its own.
    next_token: u64,
}

struct Entry {
    sequence: u64,
    stage: Stage,
}

#[derive(Clone, Copy)]
enum Stage {
    InProgress { expires: Instant, token: ClaimToken },
    Done,
}

impl MemoryDedupe {
    /// Remembers up to `capacity` event ids (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            lease: DEFAULT_LEASE,
            state: Mutex::new(State::default()),
        }
    }

    /// Sets how long a claim lasts without renewal (default [`DEFAULT_LEASE`]; at least 1 ms).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(1));
        self
    }

    /// How many event ids are remembered now.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no event id is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent at every await-free step, so a panic elsewhere does not spoil it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn begin_now(&self, event_id: &str, now: Instant) -> Claim {
        let mut state = self.lock();
        let token = ClaimToken::new(state.next_token);
        state.next_token = state.next_token.wrapping_add(1);
        let expires = deadline(now, self.lease);
        match state.stage(event_id) {
            Some(Stage::Done) => return Claim::Duplicate,
            Some(Stage::InProgress { expires: held, .. }) if now < held => {
                return Claim::InProgress;
            }
            // The previous claim outlived its lease: take it over, with a token of our own.
            Some(Stage::InProgress { .. }) => {
                state.set(event_id, Stage::InProgress { expires, token });
                return Claim::Fresh(token);
            }
            None => {}
        }
        if !state.make_room(self.capacity, now) {
            return Claim::Busy;
        }
        state.set(event_id, Stage::InProgress { expires, token });
        Claim::Fresh(token)
    }

    fn renew_now(&self, event_id: &str, token: ClaimToken, now: Instant) -> bool {
        let mut state = self.lock();
        match state.stage(event_id) {
            // An expired claim is gone, as a key past its TTL would be, even if nobody took it yet.
            Some(Stage::InProgress {
                expires,
                token: held,
            }) if held == token && now < expires => {
                let expires = deadline(now, self.lease);
                state.set(event_id, Stage::InProgress { expires, token });
                true
            }
            _ => false,
        }
    }

    fn complete_now(&self, event_id: &str, token: ClaimToken, now: Instant) -> bool {
        let mut state = self.lock();
        match state.stage(event_id) {
            Some(Stage::Done) => return true,
            // Another claim holds the event: its run decides.
            Some(Stage::InProgress {
                expires,
                token: held,
            }) if held != token && now < expires => {
                return false;
            }
            // Ours (even past its lease: nobody took it over), or an expired claim of another run.
            Some(Stage::InProgress { .. }) => {}
            None => {
                // Evicted after its lease expired: nobody holds it, remember it again. If every other
                // entry is a live claim, the done marker goes over capacity by one until the next claim
                // makes room (done entries go first).
                state.make_room(self.capacity, now);
            }
        }
        state.set(event_id, Stage::Done);
        true
    }

    fn abandon_now(&self, event_id: &str, token: ClaimToken) {
        let mut state = self.lock();
        // Only the holder of the current claim may release it.
        if let Some(Stage::InProgress { token: held, .. }) = state.stage(event_id)
            && held == token
        {
            state.remove(event_id);
        }
    }
}

impl State {
    fn stage(&self, event_id: &str) -> Option<Stage> {
        self.entries.get(event_id).map(|entry| entry.stage)
    }

    /// Drops `event_id` from the entries and from its index.
    fn remove(&mut self, event_id: &str) {
        if let Some(entry) = self.entries.remove(event_id) {
            self.unindex(&entry);
        }
    }

    fn unindex(&mut self, entry: &Entry) {
        match entry.stage {
            Stage::Done => {
                self.done.remove(&entry.sequence);
            }
            Stage::InProgress { expires, .. } => {
                self.claims.remove(&(expires, entry.sequence));
            }
        }
    }

    /// Records `event_id` at `stage`, with a new sequence (a done entry is as old as its marking).
    fn set(&mut self, event_id: &str, stage: Stage) {
        self.remove(event_id);
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        match stage {
            Stage::Done => self.done.insert(sequence, event_id.to_owned()),
            Stage::InProgress { expires, .. } => {
                self.claims.insert((expires, sequence), event_id.to_owned())
            }
        };
        self.entries
            .insert(event_id.to_owned(), Entry { sequence, stage });
    }

    /// Evicts until one more entry fits: the oldest done entry first, then an expired claim. Returns
    /// false when every entry is a live claim (nothing may be forgotten).
    fn make_room(&mut self, capacity: usize, now: Instant) -> bool {
        while self.entries.len() >= capacity {
            let victim = if let Some((_, oldest)) = self.done.first_key_value() {
                oldest.clone()
            } else if let Some((&(expires, _), soonest)) = self.claims.first_key_value()
                && expires <= now
            {
                soonest.clone()
            } else {
                return false;
            };
            self.remove(&victim);
        }
        true
    }
}

impl Dedupe for MemoryDedupe {
    fn lease(&self) -> Duration {
        self.lease
    }

    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
        let claim = self.begin_now(event_id, Instant::now());
        Box::pin(std::future::ready(Ok(claim)))
    }

    fn renew<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        let held = self.renew_now(event_id, token, Instant::now());
        Box::pin(std::future::ready(Ok(held)))
    }

    fn complete<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, bool> {
        let marked = self.complete_now(event_id, token, Instant::now());
        Box::pin(std::future::ready(Ok(marked)))
    }

    fn abandon<'a>(&'a self, event_id: &'a str, token: ClaimToken) -> DedupeFuture<'a, ()> {
        self.abandon_now(event_id, token);
        Box::pin(std::future::ready(Ok(())))
    }
}

impl fmt::Debug for MemoryDedupe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryDedupe")
            .field("capacity", &self.capacity)
            .field("lease", &self.lease)
            .field("len", &self.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::dedupe::{Processed, process_once};

    fn fresh(claim: Claim) -> ClaimToken {
        match claim {
            Claim::Fresh(token) => token,
            other => panic!("expected a fresh claim, got {other:?}"),
        }
    }

    #[test]
    fn a_claim_is_fresh_then_in_progress_then_duplicate_once_complete() {
        let dedupe = MemoryDedupe::new(8);
        let now = Instant::now();
        let token = fresh(dedupe.begin_now("e", now));
        assert_eq!(dedupe.begin_now("e", now), Claim::InProgress);
        assert!(dedupe.complete_now("e", token, now));
        assert_eq!(dedupe.begin_now("e", now), Claim::Duplicate);
        // Abandoning a completed event does not make it processable again.
        dedupe.abandon_now("e", token);
        assert_eq!(dedupe.begin_now("e", now), Claim::Duplicate);
    }

    #[test]
    fn an_abandoned_claim_is_fresh_again() {
        let dedupe = MemoryDedupe::new(8);
        let now = Instant::now();
        let token = fresh(dedupe.begin_now("e", now));
        assert!(!dedupe.is_empty(), "a claim is remembered");
        dedupe.abandon_now("e", token);
        assert!(dedupe.is_empty());
        fresh(dedupe.begin_now("e", now));
    }

    #[test]
    fn an_expired_claim_can_be_taken_over() {
        let dedupe = MemoryDedupe::new(8).with_lease(Duration::from_secs(10));
        let start = Instant::now();
        fresh(dedupe.begin_now("e", start));
        assert_eq!(
            dedupe.begin_now("e", start + Duration::from_secs(9)),
            Claim::InProgress
        );
        fresh(dedupe.begin_now("e", start + Duration::from_secs(10)));
    }

    #[test]
    fn a_renewed_claim_outlives_its_first_lease_and_an_expired_one_cannot_be_renewed() {
        let dedupe = MemoryDedupe::new(8).with_lease(Duration::from_secs(10));
        let start = Instant::now();
        let token = fresh(dedupe.begin_now("e", start));
        assert!(dedupe.renew_now("e", token, start + Duration::from_secs(8)));
        assert_eq!(
            dedupe.begin_now("e", start + Duration::from_secs(17)),
            Claim::InProgress
        );
        assert!(
            !dedupe.renew_now("e", token, start + Duration::from_secs(18)),
            "past its lease the claim is gone"
        );
        assert!(!dedupe.renew_now("e", ClaimToken::new(token.get() ^ 1), start));
    }

    // Issue 10: a slow handler whose lease expired must not remove the claim of the delivery that took
    // the event over.
    #[test]
    fn a_stale_abandon_does_not_remove_a_newer_claim() {
        let dedupe = MemoryDedupe::new(8).with_lease(Duration::from_secs(10));
        let start = Instant::now();
        let slow = fresh(dedupe.begin_now("e", start));
        let newer = fresh(dedupe.begin_now("e", start + Duration::from_secs(11)));
        assert_ne!(slow, newer);
        dedupe.abandon_now("e", slow);
        assert_eq!(
            dedupe.begin_now("e", start + Duration::from_secs(12)),
            Claim::InProgress,
            "the newer claim still holds"
        );
        dedupe.abandon_now("e", newer);
        fresh(dedupe.begin_now("e", start + Duration::from_secs(12)));
    }

    // Issue 29, defect 5: the first run's `complete` must not mark done a claim it no longer holds.
    #[test]
    fn a_stale_complete_does_not_mark_done_a_newer_claim() {
        let dedupe = MemoryDedupe::new(8).with_lease(Duration::from_secs(10));
        let start = Instant::now();
        let slow = fresh(dedupe.begin_now("e", start));
        let newer = fresh(dedupe.begin_now("e", start + Duration::from_secs(11)));
        assert!(!dedupe.complete_now("e", slow, start + Duration::from_secs(12)));
        assert_eq!(
            dedupe.begin_now("e", start + Duration::from_secs(12)),
            Claim::InProgress,
            "the newer claim still holds: a stale complete wrote nothing"
        );
        assert!(dedupe.complete_now("e", newer, start + Duration::from_secs(13)));
        assert_eq!(
            dedupe.begin_now("e", start + Duration::from_secs(13)),
            Claim::Duplicate
        );
    }

    // A claim lasts until its expiry, excluded, for every operation alike: at that very instant another
    // delivery may take the event over (`begin`), its holder can no longer renew it, and a stale run's
    // `complete` is no longer fenced by it (issue 39: cargo-mutants' `<` → `<=` in `complete_now`).
    #[test]
    fn a_claim_no_longer_holds_at_the_instant_it_expires() {
        let dedupe = MemoryDedupe::new(8).with_lease(Duration::from_secs(10));
        let start = Instant::now();
        let slow = fresh(dedupe.begin_now("e", start));
        let newer_at = start + Duration::from_secs(11);
        let newer = fresh(dedupe.begin_now("e", newer_at));
        let expiry = newer_at + Duration::from_secs(10);
        let just_before = expiry - Duration::from_millis(1);
        assert_eq!(dedupe.begin_now("e", just_before), Claim::InProgress);
        assert!(!dedupe.complete_now("e", slow, just_before), "fenced");
        assert!(!dedupe.renew_now("e", newer, expiry), "expired");
        assert!(
            dedupe.complete_now("e", slow, expiry),
            "the newer claim expired: nobody holds the event"
        );
        assert_eq!(dedupe.begin_now("e", expiry), Claim::Duplicate);
    }

    // A lease of `Duration::MAX` means "no limit": the claim lasts decades (the deadline is 30 years
    // out when `now + lease` does not fit in an `Instant`), never a panic nor a claim that lapses within
    // days (issue 39: cargo-mutants' changes to that constant).
    #[test]
    fn a_lease_without_limit_lasts_decades() {
        let dedupe = MemoryDedupe::new(8).with_lease(Duration::MAX);
        let start = Instant::now();
        let token = fresh(dedupe.begin_now("e", start));
        let twenty_years = start + Duration::from_secs(20 * 365 * 86_400);
        assert_eq!(dedupe.begin_now("e", twenty_years), Claim::InProgress);
        assert!(dedupe.renew_now("e", token, twenty_years));
        assert!(dedupe.complete_now("e", token, twenty_years));
    }

    #[test]
    fn a_late_complete_marks_done_when_nobody_took_the_claim_over() {
        let dedupe = MemoryDedupe::new(8).with_lease(Duration::from_secs(10));
        let start = Instant::now();
        let slow = fresh(dedupe.begin_now("e", start));
        assert!(dedupe.complete_now("e", slow, start + Duration::from_secs(30)));
        assert_eq!(
            dedupe.begin_now("e", start + Duration::from_secs(31)),
            Claim::Duplicate
        );
    }

    #[test]
    fn the_oldest_done_id_is_evicted_at_capacity() {
        let dedupe = MemoryDedupe::new(2);
        let now = Instant::now();
        for id in ["a", "b"] {
            let token = fresh(dedupe.begin_now(id, now));
            assert!(dedupe.complete_now(id, token, now));
        }
        fresh(dedupe.begin_now("c", now));
        assert_eq!(dedupe.len(), 2);
        assert_eq!(dedupe.begin_now("b", now), Claim::Duplicate);
        // "a" was forgotten, so it reads as new; "c" is in progress, so "b" goes.
        fresh(dedupe.begin_now("a", now));
        assert_eq!(dedupe.len(), 2);
        assert_eq!(dedupe.begin_now("c", now), Claim::InProgress);
    }

    // Issue 29, defect 6: a full store evicted its oldest entry whatever its stage, so an event still
    // being processed could be claimed (and run) again.
    #[test]
    fn a_full_store_keeps_its_claims_in_progress_and_answers_busy() {
        let dedupe = MemoryDedupe::new(2).with_lease(Duration::from_secs(10));
        let start = Instant::now();
        fresh(dedupe.begin_now("a", start));
        fresh(dedupe.begin_now("b", start + Duration::from_secs(1)));
        assert_eq!(
            dedupe.begin_now("c", start + Duration::from_secs(2)),
            Claim::Busy
        );
        assert_eq!(
            dedupe.begin_now("a", start + Duration::from_secs(2)),
            Claim::InProgress,
            "the event in progress is still claimed"
        );
        // Once "a"'s claim expired it may make room.
        fresh(dedupe.begin_now("c", start + Duration::from_secs(10)));
        assert_eq!(
            dedupe.begin_now("b", start + Duration::from_secs(10)),
            Claim::InProgress
        );
        assert_eq!(dedupe.len(), 2);
    }

    #[test]
    fn abandoning_frees_a_slot_without_confusing_eviction_order() {
        let dedupe = MemoryDedupe::new(2);
        let now = Instant::now();
        let a = fresh(dedupe.begin_now("a", now));
        let b = fresh(dedupe.begin_now("b", now));
        dedupe.abandon_now("a", a);
        assert!(dedupe.complete_now("b", b, now));
        fresh(dedupe.begin_now("c", now));
        assert_eq!(dedupe.len(), 2);
        assert_eq!(dedupe.begin_now("b", now), Claim::Duplicate);
    }

    // Issue 29, defect 6 through `process_once`: a delivery of an event in progress is not run again
    // because other events filled the store; the delivery that finds it full is told to retry (503).
    #[tokio::test(start_paused = true)]
    async fn a_full_store_does_not_run_an_event_in_progress_twice() {
        let dedupe = Arc::new(MemoryDedupe::new(2));
        let runs = Arc::new(AtomicUsize::new(0));
        let slow = {
            let (dedupe, runs) = (dedupe.clone(), runs.clone());
            tokio::spawn(async move {
                process_once(&*dedupe, "slow", |_| async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    Ok::<_, String>(())
                })
                .await
            })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        let other = process_once(&*dedupe, "other", |_| async { Ok::<_, String>(()) }).await;
        assert_eq!(other.ok(), Some(Processed::Done(())));
        let third = process_once(&*dedupe, "third", |_| async { Ok::<_, String>(()) }).await;
        assert_eq!(
            third.ok(),
            Some(Processed::Done(())),
            "evicts 'other', done"
        );
        let again = process_once(&*dedupe, "slow", |_| async {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(())
        })
        .await;
        assert_eq!(again.ok(), Some(Processed::InProgress));
        assert_eq!(
            slow.await.ok().and_then(Result::ok),
            Some(Processed::Done(()))
        );
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
}
