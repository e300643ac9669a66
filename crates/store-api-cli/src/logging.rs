//! `-v` and `RUST_LOG`: what the command logs to stderr. Silent by default, so scripts reading stderr see
//! only the command's own messages.

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

/// Installs the stderr logger for `-v` (`verbosity` 1: each request's span when it closes, with its
/// method, operation, status and duration; 2: debug; 3 and more: trace) or for `RUST_LOG` when set.
/// Nothing is installed without either.
pub fn init(verbosity: u8) {
    let filter = match (EnvFilter::try_from_default_env(), verbosity) {
        (Ok(filter), _) => filter,
        (Err(_), 0) => return,
        (Err(_), 1) => EnvFilter::new("store_api=info,store_api_cli=info"),
        (Err(_), 2) => EnvFilter::new("debug"),
        (Err(_), _) => EnvFilter::new("trace"),
    };
    // A second logger (the emulator command installs one too) is not an error worth failing for.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_span_events(FmtSpan::CLOSE)
        .try_init();
}
