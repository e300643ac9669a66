//! A bounded, in-memory [`Dedupe`]: enough for one process that may forget after a restart.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::{Claim, ClaimToken, Dedupe, DedupeFuture};

/// How long a claim lasts if it is neither completed nor abandoned: 30 seconds.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// Remembers the last `capacity` event ids it saw; the oldest is forgotten first.
///
/// An id claimed but neither completed nor abandoned within the lease (the handler's future was dropped,
/// say) can be claimed again, so an interrupted event is not lost.
pub struct MemoryDedupe {
    capacity: usize,
    lease: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Event id to its entry.
    entries: HashMap<String, Entry>,
    /// Insertion sequence to event id, oldest first: what to evict.
    order: BTreeMap<u64, String>,
    next_sequence: u64,
    /// The token of the next claim: every claim gets its own.
    next_token: u64,
}

struct Entry {
    sequence: u64,
    stage: Stage,
}

enum Stage {
    InProgress { since: Instant, token: ClaimToken },
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

    /// Sets how long an unfinished claim blocks other deliveries (default [`DEFAULT_LEASE`]).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
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
        if let Some(entry) = state.entries.get_mut(event_id) {
            match entry.stage {
                Stage::Done => return Claim::Duplicate,
                Stage::InProgress { since, .. } if now.duration_since(since) < self.lease => {
                    return Claim::InProgress;
                }
                // The previous claim outlived its lease: take it over, with a token of our own.
                Stage::InProgress { .. } => {
                    entry.stage = Stage::InProgress { since: now, token };
                    return Claim::Fresh(token);
                }
            }
        }
        state.insert(
            event_id,
            Stage::InProgress { since: now, token },
            self.capacity,
        );
        Claim::Fresh(token)
    }

    fn complete_now(&self, event_id: &str) {
        let mut state = self.lock();
        match state.entries.get_mut(event_id) {
            Some(entry) => entry.stage = Stage::Done,
            // Evicted while processing: remember it again.
            None => state.insert(event_id, Stage::Done, self.capacity),
        }
    }

    fn abandon_now(&self, event_id: &str, token: ClaimToken) {
        let mut state = self.lock();
        // Only the holder of the current claim may release it.
        if let Some(Entry {
            stage: Stage::InProgress { token: held, .. },
            sequence,
        }) = state.entries.get(event_id)
            && *held == token
        {
            let sequence = *sequence;
            state.entries.remove(event_id);
            state.order.remove(&sequence);
        }
    }
}

impl State {
    fn insert(&mut self, event_id: &str, stage: Stage, capacity: usize) {
        while self.entries.len() >= capacity {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.entries.remove(&oldest);
        }
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        self.order.insert(sequence, event_id.to_owned());
        self.entries
            .insert(event_id.to_owned(), Entry { sequence, stage });
    }
}

impl Dedupe for MemoryDedupe {
    fn begin<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, Claim> {
        let claim = self.begin_now(event_id, Instant::now());
        Box::pin(std::future::ready(Ok(claim)))
    }

    fn complete<'a>(&'a self, event_id: &'a str) -> DedupeFuture<'a, ()> {
        self.complete_now(event_id);
        Box::pin(std::future::ready(Ok(())))
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
    use super::*;

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
        dedupe.complete_now("e");
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

    #[test]
    fn the_oldest_id_is_evicted_at_capacity() {
        let dedupe = MemoryDedupe::new(2);
        let now = Instant::now();
        for id in ["a", "b"] {
            fresh(dedupe.begin_now(id, now));
            dedupe.complete_now(id);
        }
        fresh(dedupe.begin_now("c", now));
        assert_eq!(dedupe.len(), 2);
        assert_eq!(dedupe.begin_now("b", now), Claim::Duplicate);
        // "a" was forgotten, so it reads as new (and evicts "b", now the oldest).
        fresh(dedupe.begin_now("a", now));
        assert_eq!(dedupe.len(), 2);
    }

    #[test]
    fn abandoning_frees_a_slot_without_confusing_eviction_order() {
        let dedupe = MemoryDedupe::new(2);
        let now = Instant::now();
        let a = fresh(dedupe.begin_now("a", now));
        fresh(dedupe.begin_now("b", now));
        dedupe.abandon_now("a", a);
        dedupe.complete_now("b");
        fresh(dedupe.begin_now("c", now));
        assert_eq!(dedupe.len(), 2);
        assert_eq!(dedupe.begin_now("b", now), Claim::Duplicate);
    }
}
