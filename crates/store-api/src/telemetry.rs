//! What the client's spans and metrics carry, computed in one place (docs/telemetry.md lists them):
//! the redacted `url.full`, `url.template`, and the `error.type` classes. The spans themselves are
//! opened by the transport (`http.client.request`, `store_api.operation`) and by `Orders::submit`
//! (`store_api.submit`); the metrics, behind the `otel-metrics` feature, live in [`metrics`].
//!
//! Integers are recorded as `i64`: `tracing-opentelemetry` exports a `u64` field as a string, and the
//! conventions type `http.response.status_code` and its siblings as ints.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::time::Duration;

use store_api_raw::contract::{OPERATIONS, Operation, VERSION_PREFIX};
use tracing::field::FieldSet;

use crate::error::Error;

#[cfg(feature = "otel-metrics")]
pub(crate) mod metrics;

/// Polls `future` with `span` entered, as `tracing::Instrument` does, but through a pinned borrow:
/// the future stays where its caller's state holds it, where `Instrument` takes it by value and moves
/// the whole state machine into its wrapper (kilobytes for a submission, copied on every call, span or
/// no span: the instruction count of a submission with no subscriber showed it).
pub(crate) async fn in_span<F: Future>(span: &tracing::Span, mut future: Pin<&mut F>) -> F::Output {
    std::future::poll_fn(|cx| {
        let _entered = span.enter();
        future.as_mut().poll(cx)
    })
    .await
}

/// How long `future` kept its caller waiting: zero, without reading the clock, when it was ready at
/// its first poll (a limiter with room to spare, every try but the throttled ones).
pub(crate) async fn waited_on<F: Future<Output = ()>>(future: F) -> Duration {
    let mut future = std::pin::pin!(future);
    let mut pending_since: Option<tokio::time::Instant> = None;
    std::future::poll_fn(|cx| match future.as_mut().poll(cx) {
        std::task::Poll::Ready(()) => {
            std::task::Poll::Ready(pending_since.map_or(Duration::ZERO, |since| since.elapsed()))
        }
        std::task::Poll::Pending => {
            // The first poll takes no time worth counting: the wait starts when it says pending.
            pending_since.get_or_insert_with(tokio::time::Instant::now);
            std::task::Poll::Pending
        }
    })
    .await
}

/// The handles of some of a span's fields, looked up by name once for the span's callsite, then
/// reused: `FieldSet::field` compares the names one by one, on every record otherwise (what
/// `tracing` itself advises: "access a field by name once").
pub(crate) struct SpanFields<const N: usize> {
    names: [&'static str; N],
    cached: OnceLock<(tracing::callsite::Identifier, [tracing::field::Field; N])>,
}

impl<const N: usize> SpanFields<N> {
    pub(crate) const fn new(names: [&'static str; N]) -> Self {
        SpanFields {
            names,
            cached: OnceLock::new(),
        }
    }

    /// The fields of `span` named at construction, in that order, and the span's whole field set (to
    /// build the `ValueSet` of a `record_all`); `None` for a disabled span or one that lacks a name.
    pub(crate) fn of(
        &self,
        span: &tracing::Span,
    ) -> Option<(&'static FieldSet, [tracing::field::Field; N])> {
        let metadata = span.metadata()?;
        let fields = metadata.fields();
        if let Some((callsite, cached)) = self.cached.get()
            && *callsite == metadata.callsite()
        {
            return Some((fields, cached.clone()));
        }
        let mut found = Vec::with_capacity(N);
        for name in self.names {
            found.push(fields.field(name)?);
        }
        let found: [tracing::field::Field; N] = found.try_into().ok()?;
        // A span of another callsite (none today) is looked up anew each time.
        let _ = self.cached.set((metadata.callsite(), found.clone()));
        Some((fields, found))
    }
}

/// What replaces a part of a URL that holds the key.
pub(crate) const REDACTED: &str = "REDACTED";

/// `url.template`: the base URL's path (up to and with the version prefix) and the operation's path
/// template (`/store-api/2026-08/orders/{orderId}`), an absolute path template as the conventions
/// define it. Borrowed from a table built once when the base URL's path is the version prefix (the
/// service's own URL), so a try allocates nothing for it; built for a base path before the prefix.
pub(crate) fn url_template(path: &str, operation: &'static Operation) -> Cow<'static, str> {
    // The service's own URL, checked first: no substring search on every try.
    let base = if path.starts_with(VERSION_PREFIX) {
        VERSION_PREFIX
    } else {
        path.find(VERSION_PREFIX)
            .map_or(VERSION_PREFIX, |at| &path[..at + VERSION_PREFIX.len()])
    };
    if base == VERSION_PREFIX
        && let Some(names) = own_names(operation)
    {
        return Cow::Borrowed(&names.template);
    }
    let mut template = String::with_capacity(base.len() + operation.path.len());
    template.push_str(base);
    template.push_str(operation.path);
    Cow::Owned(template)
}

/// The names of an operation of the spec's table under the service's own base path, built once.
struct OwnNames {
    method_name: &'static str,
    /// `url.template`: `VERSION_PREFIX` and the path template.
    template: String,
    /// The try span's `otel.name`: the method and `template`.
    otel_name: String,
}

/// `operation`'s names, for an operation of the spec's table (found by its method name, which is
/// unique, and its path).
fn own_names(operation: &Operation) -> Option<&'static OwnNames> {
    static NAMES: OnceLock<Vec<OwnNames>> = OnceLock::new();
    NAMES
        .get_or_init(|| {
            OPERATIONS
                .iter()
                .map(|op| {
                    let template = format!("{VERSION_PREFIX}{}", op.path);
                    OwnNames {
                        method_name: op.method_name,
                        otel_name: format!("{} {template}", op.method.as_str()),
                        template,
                    }
                })
                .collect()
        })
        .iter()
        .find(|names| {
            names.method_name == operation.method_name && names.template.ends_with(operation.path)
        })
}

/// `url.full`: the URL with its query, without userinfo or fragment, and every path segment, query
/// name or query value whose percent-decoded text contains one of `keys` written as `REDACTED`. If a
/// key could still be read in what is left (a key holding `/` or `&`, which the service's never do),
/// path and query are dropped whole.
pub(crate) fn url_full(url: &url::Url, keys: &[&str]) -> String {
    // The common case, checked in one search: no userinfo, nothing escaped (so the text is what it
    // decodes to) and no key anywhere after the host: the URL as it is, up to its fragment.
    let head = &url[..url::Position::AfterQuery];
    let rest = &url[url::Position::BeforePath..url::Position::AfterQuery];
    if url.username().is_empty()
        && url.password().is_none()
        && !rest.bytes().any(|b| b == b'%' || b == b'+')
        && !keys
            .iter()
            .any(|key| !key.is_empty() && contains(rest.as_bytes(), key.as_bytes()))
    {
        return head.to_owned();
    }
    let mut full = String::with_capacity(url.as_str().len());
    full.push_str(url.scheme());
    full.push_str("://");
    full.push_str(url.host_str().unwrap_or_default());
    if let Some(port) = url.port() {
        full.push(':');
        full.push_str(&port.to_string());
    }
    let origin_len = full.len();
    let holds_key = |raw: &str, plus_is_space: bool| {
        let decoded = percent_decode(raw, plus_is_space);
        keys.iter()
            .any(|key| !key.is_empty() && contains(&decoded, key.as_bytes()))
    };
    for (n, segment) in url.path().split('/').enumerate() {
        if n > 0 {
            full.push('/');
        }
        full.push_str(if holds_key(segment, false) {
            REDACTED
        } else {
            segment
        });
    }
    if let Some(query) = url.query() {
        full.push('?');
        for (n, pair) in query.split('&').enumerate() {
            if n > 0 {
                full.push('&');
            }
            let (name, value) = match pair.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (pair, None),
            };
            full.push_str(if holds_key(name, true) {
                REDACTED
            } else {
                name
            });
            if let Some(value) = value {
                full.push('=');
                full.push_str(if holds_key(value, true) {
                    REDACTED
                } else {
                    value
                });
            }
        }
    }
    let rest = &full[origin_len..];
    if holds_key(rest, false) || holds_key(rest, true) {
        full.truncate(origin_len);
        full.push('/');
        full.push_str(REDACTED);
    }
    full
}

/// `text` with its `%XX` escapes (and `+`, in a query) decoded, as bytes.
fn percent_decode(text: &str, plus_is_space: bool) -> Cow<'_, [u8]> {
    let bytes = text.as_bytes();
    if !bytes
        .iter()
        .any(|&b| b == b'%' || (plus_is_space && b == b'+'))
    {
        return Cow::Borrowed(bytes);
    }
    let hex = |b: u8| (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok());
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => match (
                bytes.get(i + 1).and_then(|&b| hex(b)),
                bytes.get(i + 2).and_then(|&b| hex(b)),
            ) {
                (Some(high), Some(low)) => {
                    out.push(high << 4 | low);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus_is_space => out.push(b' '),
            other => out.push(other),
        }
        i += 1;
    }
    Cow::Owned(out)
}

/// Whether `needle` (not empty) occurs in `haystack`: a window is compared only where its first byte
/// matches (a URL's path is short; `str::contains` would build a two-way searcher per key per try).
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else {
        return true;
    };
    haystack
        .windows(needle.len())
        .any(|window| window[0] == first && window == needle)
}

/// `error.type` of a call or try that ended in `error`: the status as a string for an answer of
/// 400 or more, else one of a fixed set of classes.
pub(crate) fn error_type(error: &Error) -> Cow<'static, str> {
    if let Some(status) = error.status().filter(|status| *status >= 400) {
        return status_text(status);
    }
    Cow::Borrowed(match error {
        Error::Timeout { .. } => "timeout",
        Error::Transport {
            may_have_been_processed: false,
            ..
        } => "connect",
        Error::Redirect { .. } => "redirect",
        Error::ResponseTooLarge { .. } => "response_too_large",
        Error::Refused { .. } => "refused",
        _ => "_OTHER",
    })
}

/// A status code as `error.type` writes it (`"503"`), without allocating for the common ones.
pub(crate) fn status_text(status: u16) -> Cow<'static, str> {
    Cow::Borrowed(match status {
        400 => "400",
        401 => "401",
        403 => "403",
        404 => "404",
        409 => "409",
        413 => "413",
        429 => "429",
        500 => "500",
        502 => "502",
        503 => "503",
        504 => "504",
        other => return Cow::Owned(other.to_string()),
    })
}

/// Seconds as the spans and metrics carry durations.
pub(crate) fn seconds(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

/// The `otel.name` of a try: `"{METHOD} {url.template}"`, or the method alone. Borrowed from the
/// table of [`url_template`] for an operation's own method under the service's own base path.
pub(crate) fn try_name(
    method: &str,
    operation: Option<&'static Operation>,
    template: Option<&str>,
) -> Cow<'static, str> {
    let Some(template) = template else {
        return Cow::Owned(method.to_owned());
    };
    if let Some(names) = operation
        .filter(|op| op.method.as_str() == method)
        .and_then(own_names)
        .filter(|names| names.template == template)
    {
        return Cow::Borrowed(&names.otel_name);
    }
    Cow::Owned(format!("{method} {template}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "csk_ce4d6676e735329b21b3d864ca427df5";

    fn full(url: &str) -> String {
        url_full(&url::Url::parse(url).unwrap(), &[KEY])
    }

    #[test]
    fn url_full_keeps_the_url_and_drops_the_key_wherever_it_sits() {
        let cases = [
            (
                "http://127.0.0.1:8080/store-api/2026-08/stores/s/orders?limit=2",
                "http://127.0.0.1:8080/store-api/2026-08/stores/s/orders?limit=2",
            ),
            (
                "https://user:pw@h/store-api/2026-08/x#frag",
                "https://h/store-api/2026-08/x",
            ),
            (
                &format!("http://h:1/p/{KEY}/q?k={KEY}&a=1&{KEY}"),
                "http://h:1/p/REDACTED/q?k=REDACTED&a=1&REDACTED",
            ),
            (
                "http://h/p/%63sk_ce4d6676e735329b21b3d864ca427df5?x=a+csk%5Fce4d6676e735329b21b3d864ca427df5",
                "http://h/p/REDACTED?x=REDACTED",
            ),
        ];
        for (url, expected) in cases {
            assert_eq!(full(url), expected, "{url}");
        }
    }

    #[test]
    fn a_key_that_spans_separators_drops_path_and_query() {
        let url = url::Url::parse("http://h/a/b?c=d").unwrap();
        assert_eq!(url_full(&url, &["a/b?c"]), "http://h/REDACTED");
    }

    #[test]
    fn url_template_keeps_the_base_path() {
        let operation = store_api_raw::contract::OPERATIONS
            .iter()
            .find(|op| op.method_name == "get_order")
            .unwrap();
        assert_eq!(
            url_template("/proxy/store-api/2026-08/stores/s/orders/o1", operation),
            format!("/proxy/store-api/2026-08{}", operation.path)
        );
        // The service's own base path: borrowed from the table, the same text.
        let own = url_template("/store-api/2026-08/stores/s/orders/o1", operation);
        assert!(matches!(own, Cow::Borrowed(_)));
        assert_eq!(own, format!("/store-api/2026-08{}", operation.path));
        // An operation the table does not hold is built.
        let other: &'static Operation = Box::leak(Box::new(Operation {
            path: "/elsewhere",
            ..*operation
        }));
        assert_eq!(
            url_template("/store-api/2026-08/x", other),
            "/store-api/2026-08/elsewhere"
        );
    }

    #[test]
    fn a_try_is_named_from_the_table_for_the_services_own_path() {
        let create = OPERATIONS
            .iter()
            .find(|op| op.method_name == "create_order")
            .unwrap();
        let own = url_template("/store-api/2026-08/stores/s/orders", create);
        let name = try_name("POST", Some(create), Some(&own));
        assert!(matches!(name, Cow::Borrowed(_)));
        assert_eq!(name, format!("POST /store-api/2026-08{}", create.path));
        // Another base path, or a method the operation does not have: formatted, the same shape.
        let proxied = url_template("/p/store-api/2026-08/stores/s/orders", create);
        assert_eq!(
            try_name("POST", Some(create), Some(&proxied)),
            format!("POST /p/store-api/2026-08{}", create.path)
        );
        assert_eq!(
            try_name("PUT", Some(create), Some(&own)),
            format!("PUT /store-api/2026-08{}", create.path)
        );
        assert_eq!(try_name("GET", None, None), "GET");
    }

    #[test]
    fn contains_finds_a_needle_anywhere() {
        assert!(contains(b"abcabd", b"abd"));
        assert!(contains(b"abd", b"abd"));
        assert!(!contains(b"abcab", b"abd"));
        assert!(!contains(b"ab", b"abd"));
        assert!(contains(b"ab", b""));
    }

    #[test]
    fn error_types() {
        let timeout = Error::Timeout {
            may_have_been_processed: true,
        };
        assert_eq!(error_type(&timeout), "timeout");
        assert_eq!(
            error_type(&Error::RateLimited {
                retry_after: None,
                message: String::new()
            }),
            "429"
        );
        assert_eq!(
            error_type(&Error::ResponseTooLarge { limit: 1 }),
            "response_too_large"
        );
        assert_eq!(status_text(418), "418");
    }
}
