//! What every handler shares ([`Shared`]) and its lock discipline: reads take the state's read lock and
//! never wait for each other; a writer takes its turn ([`WriteTurn`]), may check its change under the
//! read lock, and holds the write lock ([`StateGuard`]) only to apply it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use super::store::State;
use crate::artwork::Downloader;
use crate::clock::Clock;
use crate::deviation::Deviations;
use crate::faults::FaultQueue;
use crate::logs::RequestLog;
use crate::ratelimit::StoreLimiter;

/// Settings that do not change while the emulator runs.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Wait before the second webhook attempt; doubled for each further one.
    pub webhook_backoff: Duration,
    /// Control requests for any `Host` (else loopback hosts only).
    pub allow_remote: bool,
    /// Webhook URLs on any host (else loopback only).
    pub allow_remote_webhooks: bool,
    /// Total bytes of stored artwork images kept (the oldest evicted beyond it).
    pub image_bytes_cap: usize,
    /// Where the emulator differs from the spec on purpose (none by default).
    pub deviations: Deviations,
}

/// What every handler shares.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Read-locked by every read (lists, single reads, authentication), so reads never wait for each
    /// other; write-locked only while a change is applied.
    state: RwLock<State>,
    /// Held by a writer from before it reads what it will change until it has changed it (see
    /// [`WriteTurn`]): writers take turns, so one can do its checks under the read lock.
    write_turn: Mutex<()>,
    /// Time and ids: the real ones, or deterministic ones the test controls.
    pub clock: Clock,
    /// Every store's Store API requests.
    pub requests: RequestLog,
    pub limiter: Option<StoreLimiter>,
    pub downloader: Downloader,
    /// The webhook deliveries' HTTP client, built by the first delivery (most emulators deliver none,
    /// and building one is a start's cost otherwise).
    pub http: OnceLock<reqwest::Client>,
    /// `http://127.0.0.1:PORT`, for the URLs the emulator hands out (stored artwork copies).
    pub origin: String,
    pub config: Config,
    pub runtime: tokio::runtime::Handle,
    /// Injected faults still to fire (a lock of its own: checked on every request).
    faults: Mutex<FaultQueue>,
    /// Set by every mutable access to the state; the state-file saver clears it when it saves.
    dirty: AtomicBool,
}

/// The write-locked state. Mutable access marks it changed, so the state-file saver writes only after a
/// change, without every mutation having to say so.
pub(crate) struct StateGuard<'a> {
    // Released before the turn (fields drop in order), so the next writer finds the lock free.
    guard: RwLockWriteGuard<'a, State>,
    dirty: &'a AtomicBool,
    _turn: MutexGuard<'a, ()>,
}

/// A writer's turn: no other writer changes the state until it ends, so a change can be checked and
/// prepared under the read lock (other reads go on meanwhile) and then applied under the write lock,
/// held only for the applying. Order creation works this way: validating, pricing and writing the
/// order's JSON do not stop the store's lists.
pub(crate) struct WriteTurn<'a> {
    shared: &'a Shared,
    turn: MutexGuard<'a, ()>,
}

impl<'a> WriteTurn<'a> {
    /// The state as it is and stays until [`WriteTurn::write`] (which the borrow keeps from being
    /// called while this read guard lives: that would wait for itself).
    pub fn read(&self) -> RwLockReadGuard<'_, State> {
        self.shared.read()
    }

    /// The state, exclusively, to apply the change.
    pub fn write(self) -> StateGuard<'a> {
        StateGuard {
            guard: self
                .shared
                .state
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            dirty: &self.shared.dirty,
            _turn: self.turn,
        }
    }
}

impl std::ops::Deref for StateGuard<'_> {
    type Target = State;

    fn deref(&self) -> &State {
        &self.guard
    }
}

impl std::ops::DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut State {
        self.dirty.store(true, Ordering::Relaxed);
        &mut self.guard
    }
}

impl Shared {
    /// The shared state of an emulator starting from `state`, with no fault injected yet. Must be
    /// called inside the tokio runtime the emulator's background work (webhook deliveries) runs on.
    pub fn new(
        state: State,
        clock: Clock,
        limiter: Option<StoreLimiter>,
        downloader: Downloader,
        origin: String,
        config: Config,
    ) -> Shared {
        Shared {
            state: RwLock::new(state),
            write_turn: Mutex::default(),
            clock,
            requests: RequestLog::default(),
            limiter,
            downloader,
            http: OnceLock::new(),
            origin,
            config,
            runtime: tokio::runtime::Handle::current(),
            faults: Mutex::default(),
            dirty: AtomicBool::new(false),
        }
    }

    /// Whether the state changed since the last call (what the state-file saver asks before it saves).
    pub fn take_changed(&self) -> bool {
        self.dirty.swap(false, Ordering::Relaxed)
    }

    /// The state, exclusively, to change it. A handler that panicked while holding the lock cannot
    /// leave it half-updated (every change is built on a copy and stored at once), so a poisoned lock
    /// is still safe to use.
    pub fn lock(&self) -> StateGuard<'_> {
        self.write_turn().write()
    }

    /// This writer's turn (waiting for the writer before it to finish); see [`WriteTurn`].
    pub fn write_turn(&self) -> WriteTurn<'_> {
        WriteTurn {
            shared: self,
            turn: self
                .write_turn
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        }
    }

    /// The state, shared with other readers (a poisoned lock is safe for the same reason).
    pub fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The injected faults (a poisoned lock is safe for the same reason).
    pub fn faults(&self) -> MutexGuard<'_, FaultQueue> {
        self.faults
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
