//! What the command shows of its traffic on stderr (`-v`, `-vv`, `-vvv` or `--debug`), and the wait on
//! the store's rate limit that a user must hear of when a command seems to hang.
//!
//! `-v`: one line per try, built from the client's per-try span `http.client.request` (target
//! `store_api::http`) when it closes ([`TrafficLayer`]): the same span an OpenTelemetry exporter sees, so
//! the line and a trace never disagree. Headers and bodies are not in the library's spans (they hold
//! customer data); `-vv` and more show them from a [`network::ShownNetwork`] under the client instead.
//!
//! **Architecture Invariant:** nothing here prints the API key, and at `-vvv` customer data only as the
//! cassette crate's placeholders; nothing prints a colour code to a stderr that is not a terminal.

pub mod network;

use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use crate::global::GlobalArgs;

/// The client's per-try span (the telemetry contract of issue 37, item 1).
pub const TRY_SPAN: &str = "http.client.request";
/// Its target.
pub const TRY_TARGET: &str = "store_api::http";
/// The target of the rate limiter's "waiting for the store's rate limit" event (item 3).
pub const WAIT_TARGET: &str = "store_api::rate_limit";
/// The event's field: the wait, in seconds.
const WAIT_FIELD: &str = "store_api.rate_limit.wait_s";
/// Shorter waits pass unannounced: they do not make a command look hung.
pub const ANNOUNCED_WAIT: Duration = Duration::from_secs(1);

/// How much of the traffic a run shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Detail {
    /// Nothing (only a long wait on the rate limit, unless `--json`).
    Off,
    /// `-v`: one line per try.
    Lines,
    /// `-vv`: the request's and the answer's headers too, the key redacted.
    Headers,
    /// `-vvv` or `--debug`: the bodies too, customer data redacted.
    Bodies,
}

impl Detail {
    /// What the flags ask for.
    pub fn of(global: &GlobalArgs) -> Detail {
        match (global.debug, global.verbose) {
            (true, _) | (_, 3..) => Detail::Bodies,
            (_, 2) => Detail::Headers,
            (_, 1) => Detail::Lines,
            (_, 0) => Detail::Off,
        }
    }
}

/// Whether stderr may carry colour codes: a terminal, and no `NO_COLOR` (set and not empty, as
/// `tracing-subscriber` and <https://no-color.org> read it).
pub fn colour_on_stderr() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    !no_color && std::io::stderr().is_terminal()
}

/// Where the traffic's text goes: stderr, or a test's buffer.
pub type Sink = Arc<dyn Fn(&str) + Send + Sync>;

/// Writes `text` to stderr in one piece (a block of lines does not interleave with another's).
pub fn stderr_sink() -> Sink {
    Arc::new(|text: &str| {
        // A closed stderr is no reason to fail a command.
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    })
}

/// Colour codes, or none.
#[derive(Debug, Clone, Copy)]
pub struct Paint {
    /// Whether to colour at all.
    pub ansi: bool,
}

impl Paint {
    fn wrap(self, text: &str, code: &str) -> String {
        if self.ansi {
            format!("\u{1b}[{code}m{text}\u{1b}[0m")
        } else {
            text.to_owned()
        }
    }

    /// A status (green for 2xx, yellow for 3xx and 4xx, red for 5xx) or an error type (red).
    fn outcome(self, text: &str, status: Option<u64>) -> String {
        let code = match status {
            Some(200..=299) => "32",
            Some(300..=499) => "33",
            _ => "31",
        };
        self.wrap(text, code)
    }

    /// Lines of heads and bodies, dimmed so the per-try lines stand out.
    pub fn dim(self, text: &str) -> String {
        self.wrap(text, "2")
    }
}

/// Prints one line per try when the client's `http.client.request` span closes (with `tries`), and a
/// wait on the rate limit of [`ANNOUNCED_WAIT`] or more (always).
pub struct TrafficLayer {
    tries: bool,
    paint: Paint,
    sink: Sink,
}

impl TrafficLayer {
    /// A layer writing to `sink`.
    pub fn new(tries: bool, paint: Paint, sink: Sink) -> TrafficLayer {
        TrafficLayer { tries, paint, sink }
    }

    /// The spans and events this layer needs, and nothing else (the library's other spans then cost
    /// nothing when no other layer wants them).
    pub fn filter(&self) -> Targets {
        let targets = Targets::new().with_target(WAIT_TARGET, tracing::Level::INFO);
        if self.tries {
            targets.with_target(TRY_TARGET, tracing::Level::INFO)
        } else {
            targets
        }
    }
}

fn is_try(metadata: &Metadata<'_>) -> bool {
    metadata.name() == TRY_SPAN && metadata.target() == TRY_TARGET
}

/// The fields of one try that its line shows, as they are recorded.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TryFields {
    /// `http.request.method`.
    pub method: Option<String>,
    /// `url.full` (never the key: the library writes it as `REDACTED`).
    pub url: Option<String>,
    /// `http.response.status_code`.
    pub status: Option<u64>,
    /// `error.type`.
    pub error: Option<String>,
    /// `http.request.resend_count`.
    pub resend: Option<u64>,
    /// `store_api.rate_limit.remaining`.
    pub remaining: Option<u64>,
}

impl TryFields {
    fn set_text(&mut self, field: &Field, value: String) {
        match field.name() {
            "http.request.method" => self.method = Some(value),
            "url.full" => self.url = Some(value),
            "error.type" => self.error = Some(value),
            // A number recorded as text (`%count`) still counts.
            name => {
                if let Ok(number) = value.parse() {
                    self.set_number(name, number);
                }
            }
        }
    }

    fn set_number(&mut self, name: &str, value: u64) {
        match name {
            "http.response.status_code" => self.status = Some(value),
            "http.request.resend_count" => self.resend = Some(value),
            "store_api.rate_limit.remaining" => self.remaining = Some(value),
            _ => {}
        }
    }
}

impl Visit for TryFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set_text(field, value.to_owned());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.set_number(field.name(), value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if let Ok(value) = u64::try_from(value) {
            self.set_number(field.name(), value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        // `%value` arrives here, its Debug being its Display.
        self.set_text(field, format!("{value:?}"));
    }
}

/// When a try began (its span's creation).
struct Began(Instant);

/// The one line of a try: `GET https://host/… → 200 in 84 ms (resend 1, rate limit 7 left)`.
pub fn try_line(fields: &TryFields, took: Duration, paint: Paint) -> String {
    let outcome = match (fields.status, &fields.error) {
        (Some(status), _) => status.to_string(),
        (None, Some(error)) => error.clone(),
        (None, None) => "no answer".to_owned(),
    };
    let mut line = format!(
        "{} {} → {} in {}",
        fields.method.as_deref().unwrap_or("?"),
        // Already percent-encoded by the URL parser; cleaned all the same, as a server's text.
        crate::terminal::clean(fields.url.as_deref().unwrap_or("?")),
        paint.outcome(&crate::terminal::clean(&outcome), fields.status),
        took_text(took),
    );
    let notes: Vec<String> = [
        fields.resend.map(|n| format!("resend {n}")),
        fields.remaining.map(|n| format!("rate limit {n} left")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !notes.is_empty() {
        let _ = write!(line, " ({})", notes.join(", "));
    }
    line.push('\n');
    line
}

/// `84 ms` below ten seconds, `12.3 s` from there.
fn took_text(took: Duration) -> String {
    if took < Duration::from_secs(10) {
        format!("{} ms", took.as_millis())
    } else {
        format!("{:.1} s", took.as_secs_f64())
    }
}

/// The line announcing a wait on the rate limit, or none for a short one.
pub fn wait_line(wait_s: f64) -> Option<String> {
    (wait_s >= ANNOUNCED_WAIT.as_secs_f64())
        .then(|| format!("waiting {wait_s:.1} s for the store's rate limit\n"))
}

/// The wait an event announces.
#[derive(Default)]
struct Wait(Option<f64>);

impl Visit for Wait {
    fn record_f64(&mut self, field: &Field, value: f64) {
        if field.name() == WAIT_FIELD {
            self.0 = Some(value);
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == WAIT_FIELD {
            self.0 = Some(value as f64);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == WAIT_FIELD {
            self.0 = format!("{value:?}").parse().ok();
        }
    }
}

impl<S> tracing_subscriber::Layer<S> for TrafficLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if !self.tries || !is_try(attrs.metadata()) {
            return;
        }
        let Some(span) = ctx.span(id) else { return };
        let mut fields = TryFields::default();
        attrs.record(&mut fields);
        let mut extensions = span.extensions_mut();
        extensions.insert(fields);
        extensions.insert(Began(Instant::now()));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        if let Some(fields) = span.extensions_mut().get_mut::<TryFields>() {
            values.record(fields);
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() != WAIT_TARGET {
            return;
        }
        let mut wait = Wait::default();
        event.record(&mut wait);
        if let Some(line) = wait.0.and_then(wait_line) {
            (self.sink)(&line);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let mut extensions = span.extensions_mut();
        let (Some(fields), Some(Began(began))) = (
            extensions.remove::<TryFields>(),
            extensions.remove::<Began>(),
        ) else {
            return;
        };
        drop(extensions);
        (self.sink)(&try_line(&fields, began.elapsed(), self.paint));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    const PLAIN: Paint = Paint { ansi: false };

    fn check(fields: TryFields, took: Duration, expected: &str) {
        assert_eq!(try_line(&fields, took, PLAIN), format!("{expected}\n"));
    }

    fn get(url: &str) -> TryFields {
        TryFields {
            method: Some("GET".into()),
            url: Some(url.into()),
            ..TryFields::default()
        }
    }

    #[test]
    fn a_try_is_one_line() {
        let url = "https://host/store-api/2026-08/orders?limit=100";
        check(
            TryFields {
                status: Some(200),
                resend: Some(1),
                remaining: Some(7),
                ..get(url)
            },
            Duration::from_millis(84),
            &format!("GET {url} → 200 in 84 ms (resend 1, rate limit 7 left)"),
        );
        check(
            TryFields {
                status: Some(503),
                error: Some("503".into()),
                ..get(url)
            },
            Duration::from_millis(3),
            &format!("GET {url} → 503 in 3 ms"),
        );
        check(
            TryFields {
                error: Some("timeout".into()),
                resend: Some(2),
                ..get(url)
            },
            Duration::from_millis(30_000),
            &format!("GET {url} → timeout in 30.0 s (resend 2)"),
        );
        check(
            TryFields {
                remaining: Some(0),
                ..get("https://host/a\u{1b}[2J")
            },
            Duration::ZERO,
            "GET https://host/a\\u{1b}[2J → no answer in 0 ms (rate limit 0 left)",
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let fields = TryFields {
            status: Some(200),
            ..get("https://host/x")
        };
        let plain = try_line(&fields, Duration::ZERO, PLAIN);
        assert!(!plain.contains('\u{1b}'), "{plain:?}");
        let coloured = try_line(&fields, Duration::ZERO, Paint { ansi: true });
        assert!(coloured.contains("\u{1b}[32m200\u{1b}[0m"), "{coloured:?}");
    }

    #[test]
    fn only_a_wait_of_a_second_or_more_is_announced() {
        assert_eq!(wait_line(0.99), None);
        assert_eq!(
            wait_line(1.0).as_deref(),
            Some("waiting 1.0 s for the store's rate limit\n")
        );
        assert_eq!(
            wait_line(4.54).as_deref(),
            Some("waiting 4.5 s for the store's rate limit\n")
        );
    }

    /// Runs `work` under a subscriber with a [`TrafficLayer`] (and its filter), returning what it wrote.
    fn shown(tries: bool, work: impl FnOnce()) -> String {
        let written = Arc::new(Mutex::new(String::new()));
        let sink: Sink = {
            let written = written.clone();
            Arc::new(move |text: &str| written.lock().unwrap().push_str(text))
        };
        let layer = TrafficLayer::new(tries, PLAIN, sink);
        let filter = layer.filter();
        let subscriber = tracing_subscriber::registry().with(layer.with_filter(filter));
        tracing::subscriber::with_default(subscriber, work);
        written.lock().unwrap().clone()
    }

    /// A try as the contract (issue 37, item 1) makes one: fields known at the start, the rest
    /// recorded as the answer comes.
    fn a_try(resend: Option<u32>, status: u16, remaining: Option<u64>) {
        let span = tracing::info_span!(
            target: "store_api::http",
            "http.client.request",
            "otel.name" = "GET /store-api/2026-08/orders",
            "otel.kind" = "client",
            "http.request.method" = "GET",
            "server.address" = "host",
            "server.port" = 443u16,
            "url.full" = "https://host/store-api/2026-08/orders?limit=100",
            "url.template" = "/store-api/2026-08/orders",
            "store_api.operation" = "list_orders",
            "http.request.resend_count" = resend,
            "http.response.status_code" = tracing::field::Empty,
            "error.type" = tracing::field::Empty,
            "store_api.rate_limit.remaining" = tracing::field::Empty,
        );
        span.in_scope(|| tracing::info!(target: "store_api::http", "inside"));
        span.record("http.response.status_code", status);
        if status >= 400 {
            span.record("error.type", status.to_string().as_str());
        }
        if let Some(remaining) = remaining {
            span.record("store_api.rate_limit.remaining", remaining);
        }
    }

    #[test]
    fn the_layer_prints_each_try_when_its_span_closes() {
        let text = shown(true, || {
            let operation =
                tracing::info_span!(target: "store_api::operation", "store_api.operation");
            let _in = operation.enter();
            a_try(None, 503, None);
            a_try(Some(1), 200, Some(7));
            // Another span of the same target is no try.
            drop(tracing::info_span!(target: "store_api::http", "something.else"));
        });
        let lines: Vec<&str> = text.lines().collect();
        let url = "https://host/store-api/2026-08/orders?limit=100";
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].starts_with(&format!("GET {url} → 503 in ")),
            "{text}"
        );
        assert!(
            lines[1].starts_with(&format!("GET {url} → 200 in ")),
            "{text}"
        );
        assert!(
            lines[1].ends_with(" ms (resend 1, rate limit 7 left)"),
            "{text}"
        );
    }

    #[test]
    fn the_layer_announces_long_waits_even_without_tries() {
        let text = shown(false, || {
            a_try(None, 200, None);
            tracing::event!(target: "store_api::rate_limit", tracing::Level::INFO, { store_api.rate_limit.wait_s = 0.2f64 }, "waiting for the store's rate limit");
            tracing::event!(target: "store_api::rate_limit", tracing::Level::INFO, { store_api.rate_limit.wait_s = 4.5f64 }, "waiting for the store's rate limit");
        });
        assert_eq!(text, "waiting 4.5 s for the store's rate limit\n");
    }
}
