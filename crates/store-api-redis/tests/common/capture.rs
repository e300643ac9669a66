//! Captures formatted tracing output in memory, for tests that inspect what the limiter logs. A copy
//! of `store_api_tests::capture`, which this crate cannot use (`store-api-tests` dev-depends on it).

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::util::SubscriberInitExt;

/// Everything written by the subscriber installed with [`capture_traces`].
#[derive(Debug, Clone, Default)]
pub struct Captured {
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl Captured {
    /// The text logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes.lock().unwrap_or_else(PoisonError::into_inner))
            .into_owned()
    }
}

/// One write into the shared buffer.
struct Sink(Arc<Mutex<Vec<u8>>>);

impl io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Installs, for the current thread until the guard drops, a TRACE-level fmt subscriber writing into
/// memory, with span openings and closings logged. Use it in a current-thread runtime so that every
/// task logs through it.
pub fn capture_traces() -> (Captured, tracing::subscriber::DefaultGuard) {
    let captured = Captured::default();
    let bytes = captured.bytes.clone();
    let guard = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_span_events(FmtSpan::NEW | FmtSpan::CLOSE)
        .with_writer(move || Sink(bytes.clone()))
        .finish()
        .set_default();
    (captured, guard)
}
