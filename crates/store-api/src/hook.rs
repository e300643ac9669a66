//! User hooks around every attempt: tracing propagation, metrics, extra headers.
//!
//! Every request of a [`Client`](crate::Client), retries, [`Orders::submit`](crate::Orders::submit)'s
//! attempts, [`doctor`](crate::doctor)'s probes and [`Client::request`](crate::Client::request)
//! included, goes through one place (the transport's `send_once`); the hooks run there, after
//! the rate limiter let the attempt go, so the duration they see is the attempt's own.

use std::fmt;
use std::time::Duration;

/// The HTTP method type of [`AttemptInfo::method`].
pub use reqwest::Method;
/// The header types a hook works with (`reqwest`'s, re-exported so a hook needs no `reqwest` of its own).
pub use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// Called around every attempt of every request. Register with
/// [`ClientBuilder::hook`](crate::ClientBuilder::hook); several hooks run in the order they were added.
///
/// Hooks are called inline on the request's task: keep them short and non-blocking (record, don't
/// export). Both methods do nothing by default.
///
/// ```no_run
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// use store_api::hook::{AttemptInfo, AttemptOutcome, HeaderMap, HeaderValue, RequestHook};
///
/// /// Adds a trace header and logs each attempt's latency.
/// #[derive(Debug)]
/// struct Trace;
///
/// impl RequestHook for Trace {
///     fn before(&self, _attempt: &AttemptInfo, headers: &mut HeaderMap) {
///         headers.insert("traceparent", HeaderValue::from_static("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
///     }
///
///     fn after(&self, attempt: &AttemptInfo, outcome: &AttemptOutcome, duration: Duration) {
///         println!("{} {} #{}: {outcome:?} in {duration:?}", attempt.method, attempt.path_template, attempt.attempt);
///     }
/// }
///
/// # fn run() -> Result<(), store_api::Error> {
/// let client = store_api::Client::builder()
///     .base_url("http://127.0.0.1:8080")
///     .store_id("store_alpha")
///     .api_key("csk_ce4d6676e735329b21b3d864ca427df5")
///     .hook(Arc::new(Trace))
///     .build()?;
/// # Ok(())
/// # }
/// ```
pub trait RequestHook: Send + Sync + fmt::Debug {
    /// Before the attempt is sent. May add or replace headers (`X-API-Key` is not among them: it is set
    /// after the hooks, from the client's key handle, and cannot be overridden).
    fn before(&self, attempt: &AttemptInfo, headers: &mut HeaderMap) {
        let _ = (attempt, headers);
    }

    /// After the attempt ended: the answer's status (its headers arrived; the body may still be
    /// streaming) or the transport failure, and how long the attempt took.
    fn after(&self, attempt: &AttemptInfo, outcome: &AttemptOutcome, duration: Duration) {
        let _ = (attempt, outcome, duration);
    }
}

/// What a hook knows about an attempt. The path is the template (`/stores/{storeId}/orders/{orderId}`),
/// never the ids, which can be customer data.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AttemptInfo {
    /// The HTTP method.
    pub method: Method,
    /// The snake_case operation id of the route the request takes (`list_orders`, `create_order`), or
    /// `api` for a request of [`Client::request`](crate::Client::request) (or `doctor`'s probe of an
    /// unserved path) that matches no operation of the spec.
    pub operation_id: &'static str,
    /// The operation's path template, from `store_api_raw::contract` (`"unknown"` if it has none).
    pub path_template: &'static str,
    /// 1 for the first attempt, 2 for the first retry, and so on.
    pub attempt: u32,
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttemptOutcome {
    /// The service (or a proxy) answered with this HTTP status.
    Status(u16),
    /// No connection could be made: nothing was sent.
    ConnectFailed,
    /// The attempt timed out.
    TimedOut,
    /// The connection failed after it was made (reset, closed, unreadable answer).
    Failed,
}
