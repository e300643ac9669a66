//! Shared by the Redis test binaries.
#![allow(dead_code)]

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use store_api::{Limiter, LimiterFuture};
use store_api_redis::testing::RedisServer;

/// A private Redis, or `None` (after a loud message) when it is not installed and CI did not require it.
pub fn redis() -> Option<RedisServer> {
    RedisServer::start().expect("cannot start redis-server")
}

/// A private Redis that persists every write (for restarts that must keep the data).
pub fn persistent_redis() -> Option<RedisServer> {
    RedisServer::start_persistent().expect("cannot start redis-server")
}

/// Counts what the transport tells a limiter: acquires are requests, `pause_for` calls are 429s.
#[derive(Debug)]
pub struct Counting<L> {
    pub inner: L,
    pub acquired: AtomicU64,
    pub refused: AtomicU64,
}

impl<L: Limiter> Counting<L> {
    pub fn new(inner: L) -> Arc<Counting<L>> {
        Arc::new(Counting {
            inner,
            acquired: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        })
    }

    pub fn requests(&self) -> u64 {
        self.acquired.load(Ordering::SeqCst)
    }

    pub fn status_429(&self) -> u64 {
        self.refused.load(Ordering::SeqCst)
    }
}

impl<L: Limiter> Limiter for Counting<L> {
    fn acquire(&self) -> LimiterFuture<'_> {
        self.acquired.fetch_add(1, Ordering::SeqCst);
        self.inner.acquire()
    }

    fn pause_for(&self, duration: Duration) -> LimiterFuture<'_> {
        // The transport calls this for a 429 and for nothing else.
        self.refused.fetch_add(1, Ordering::SeqCst);
        self.inner.pause_for(duration)
    }

    fn observe_remaining(&self, remaining: u64) -> LimiterFuture<'_> {
        self.inner.observe_remaining(remaining)
    }
}

/// What this thread logs while the returned value lives (tests on tokio's current-thread runtime log
/// from their own thread).
pub fn capture_logs() -> Captured {
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    Captured {
        buffer,
        _guard: tracing::subscriber::set_default(subscriber),
    }
}

/// Logs captured by [`capture_logs`].
pub struct Captured {
    buffer: Buffer,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Captured {
    pub fn text(&self) -> String {
        let bytes = self.buffer.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl io::Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
