#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod artwork;
mod clock;
mod control;
mod emulator;
mod error;
mod events;
pub mod faults;
mod logs;
mod loopback;
mod orders;
mod remote;
pub mod seed;
mod serve;
mod server;
#[cfg(feature = "insta")]
#[cfg_attr(docsrs, doc(cfg(feature = "insta")))]
pub mod snapshot;
mod state;
mod wire;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

pub use clock::DETERMINISTIC_START;
pub use control::StoreCredentials;
pub use emulator::{ControlError, DEFAULT_SAVE_INTERVAL, Emulator, EmulatorBuilder, EmulatorError};
pub use events::MAX_ATTEMPTS as WEBHOOK_ATTEMPTS;
pub use faults::{FAULT_HEADER, Fault, FaultKind};
pub use logs::{LOG_CAP, LOG_RETENTION, RequestRecord};
pub use orders::AppAction;
pub use remote::{RemoteEmulator, RemoteError};
pub use seed::Seed;
pub use serve::{ServeArgs, ServeError};
pub use server::{API_PREFIX, MAX_BODY_BYTES};
pub use state::{DEFAULT_IMAGE_BYTES_CAP, Delivery};

/// Settings that do not change while the emulator runs.
#[derive(Debug, Clone)]
struct Config {
    /// Wait before the second webhook attempt; doubled for each further one.
    webhook_backoff: Duration,
    /// Control requests for any `Host` (else loopback hosts only).
    allow_remote: bool,
    /// Webhook URLs on any host (else loopback only).
    allow_remote_webhooks: bool,
    /// Total bytes of stored artwork images kept (the oldest evicted beyond it).
    image_bytes_cap: usize,
}

/// What every handler shares.
#[derive(Debug)]
struct Shared {
    /// Read-locked by every read (lists, single reads, authentication), so reads never wait for each
    /// other; write-locked only while a change is applied.
    state: RwLock<state::State>,
    /// Held by a writer from before it reads what it will change until it has changed it (see
    /// [`WriteTurn`]): writers take turns, so one can do its checks under the read lock.
    write_turn: Mutex<()>,
    /// Time and ids: the real ones, or deterministic ones the test controls.
    clock: clock::Clock,
    /// Every store's Store API requests.
    requests: logs::RequestLog,
    limiter: Option<server::ratelimit::StoreLimiter>,
    downloader: artwork::Downloader,
    http: reqwest::Client,
    /// `http://127.0.0.1:PORT`, for the URLs the emulator hands out (stored artwork copies).
    origin: String,
    config: Config,
    runtime: tokio::runtime::Handle,
    /// Injected faults still to fire (a lock of its own: checked on every request).
    faults: Mutex<faults::FaultQueue>,
    /// Set by every mutable access to the state; the state-file saver clears it when it saves.
    dirty: AtomicBool,
}

/// The write-locked state. Mutable access marks it changed, so the state-file saver writes only after a
/// change, without every mutation having to say so.
struct StateGuard<'a> {
    // Released before the turn (fields drop in order), so the next writer finds the lock free.
    guard: RwLockWriteGuard<'a, state::State>,
    dirty: &'a AtomicBool,
    _turn: MutexGuard<'a, ()>,
}

/// A writer's turn: no other writer changes the state until it ends, so a change can be checked and
/// prepared under the read lock (other reads go on meanwhile) and then applied under the write lock,
/// held only for the applying. Order creation works this way: validating, pricing and writing the
/// order's JSON do not stop the store's lists.
struct WriteTurn<'a> {
    shared: &'a Shared,
    turn: MutexGuard<'a, ()>,
}

impl<'a> WriteTurn<'a> {
    /// The state as it is and stays until [`WriteTurn::write`] (which the borrow keeps from being
    /// called while this read guard lives: that would wait for itself).
    fn read(&self) -> RwLockReadGuard<'_, state::State> {
        self.shared.read()
    }

    /// The state, exclusively, to apply the change.
    fn write(self) -> StateGuard<'a> {
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
    type Target = state::State;

    fn deref(&self) -> &state::State {
        &self.guard
    }
}

impl std::ops::DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut state::State {
        self.dirty.store(true, Ordering::Relaxed);
        &mut self.guard
    }
}

impl Shared {
    /// The state, exclusively, to change it. A handler that panicked while holding the lock cannot
    /// leave it half-updated (every change is built on a copy and stored at once), so a poisoned lock
    /// is still safe to use.
    fn lock(&self) -> StateGuard<'_> {
        self.write_turn().write()
    }

    /// This writer's turn (waiting for the writer before it to finish); see [`WriteTurn`].
    fn write_turn(&self) -> WriteTurn<'_> {
        WriteTurn {
            shared: self,
            turn: self
                .write_turn
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        }
    }

    /// The state, shared with other readers (a poisoned lock is safe for the same reason).
    fn read(&self) -> RwLockReadGuard<'_, state::State> {
        self.state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The injected faults (a poisoned lock is safe for the same reason).
    fn faults(&self) -> MutexGuard<'_, faults::FaultQueue> {
        self.faults
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
