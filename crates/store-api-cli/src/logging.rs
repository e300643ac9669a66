//! What the command logs to stderr: its traffic (`-v`, `-vv`, `-vvv`/`--debug`, see [`crate::traffic`]),
//! its own messages at `-v`, and whatever `RUST_LOG` asks for. Quiet by default, so scripts reading
//! stderr see only the command's own messages, and a wait of a second or more on the store's rate
//! limit (not with `--json`, whose stderr is one JSON object on failure).

use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer as _;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::global::GlobalArgs;
use crate::traffic::{self, Detail, Paint, TrafficLayer};

/// Installs the stderr logger the flags ask for:
/// - the traffic ([`TrafficLayer`]): a line per try from `-v` on, and a wait on the rate limit of a
///   second or more at any verbosity (with `--json`, only from `-v` on);
/// - the command line's own messages (why a saved copy of the store was not used): info at `-v`,
///   debug from `-vv`; or, when `RUST_LOG` is set, what it names (spans too, when they close).
///
/// Colour codes only on a terminal without `NO_COLOR`, for both.
pub fn init(global: &GlobalArgs) {
    let detail = Detail::of(global);
    let paint = Paint {
        ansi: traffic::colour_on_stderr(),
    };
    let traffic = (detail > Detail::Off || !global.json).then(|| {
        let layer = TrafficLayer::new(detail > Detail::Off, paint, traffic::stderr_sink());
        let filter = layer.filter();
        layer.with_filter(filter)
    });
    let fmt = match (EnvFilter::try_from_default_env(), detail) {
        (Ok(filter), _) => Some((filter, FmtSpan::CLOSE)),
        (Err(_), Detail::Off) => None,
        (Err(_), Detail::Lines) => Some((EnvFilter::new("store_api_cli=info"), FmtSpan::NONE)),
        (Err(_), _) => Some((EnvFilter::new("store_api_cli=debug"), FmtSpan::NONE)),
    }
    .map(|(filter, spans)| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(paint.ansi)
            .with_span_events(spans)
            .with_filter(filter)
    });
    // A second logger is not an error worth failing for.
    let _ = tracing_subscriber::registry()
        .with(traffic)
        .with(fmt)
        .try_init();
}
