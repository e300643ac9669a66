//! User hooks around every try of the transport (one HTTP exchange: the first send or a retry):
//! tracing propagation, metrics, extra headers. A try is not a submission's
//! [`Attempt`](crate::Attempt) (one POST of an order, which may itself take several tries).
//!
//! Every request of a [`Client`](crate::Client), retries, [`Orders::submit`](crate::Orders::submit)'s
//! attempts and [`Client::request`](crate::Client::request) (a single attempt or with another key
//! too) included, goes through one place (the transport's `send_once`, one try at a time); the hooks
//! run there, after the rate limiter let the try go, so the duration they see is the try's own.

use std::fmt;
use std::time::Duration;

/// The HTTP method type of [`TryInfo::method`].
pub use reqwest::Method;
/// The header types a hook works with (`reqwest`'s, re-exported so a hook needs no `reqwest` of its own).
pub use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// Called around every try of every request. Register with
/// [`ClientBuilder::hook`](crate::ClientBuilder::hook); several hooks run in the order they were added.
///
/// Hooks are called inline on the request's task: keep them short and non-blocking (record, don't
/// export). Both methods do nothing by default.
///
/// ```no_run
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// use store_api::hook::{TryInfo, TryOutcome, HeaderMap, HeaderValue, RequestHook};
///
/// /// Adds a trace header and logs each try's latency.
/// #[derive(Debug)]
/// struct Trace;
///
/// impl RequestHook for Trace {
///     fn before(&self, _info: &TryInfo, headers: &mut HeaderMap) {
///         headers.insert("traceparent", HeaderValue::from_static("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
///     }
///
///     fn after(&self, info: &TryInfo, outcome: &TryOutcome, duration: Duration) {
///         println!("{} {} #{}: {outcome:?} in {duration:?}", info.method, info.path_template, info.number);
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
    /// Before the try is sent. May add or replace headers (`X-API-Key` is not among them: it is set
    /// after the hooks, from the client's key handle, and cannot be overridden).
    fn before(&self, info: &TryInfo, headers: &mut HeaderMap) {
        let _ = (info, headers);
    }

    /// After the try ended: the answer's status (its headers arrived; the body may still be
    /// streaming) or the transport failure, and how long the try took.
    fn after(&self, info: &TryInfo, outcome: &TryOutcome, duration: Duration) {
        let _ = (info, outcome, duration);
    }
}

/// What a hook knows about a try. The path is the template (`/stores/{storeId}/orders/{orderId}`),
/// never the ids, which can be customer data.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TryInfo {
    /// The HTTP method.
    pub method: Method,
    /// The snake_case operation id of the route the request takes (`list_orders`, `create_order`), or
    /// `api` for a request of [`Client::request`](crate::Client::request) that matches no operation
    /// of the spec (such as `store_api_conformance::probe`'s probe of an unserved path).
    pub operation_id: &'static str,
    /// The operation's path template, from `store_api_raw::contract` (`"unknown"` if it has none).
    pub path_template: &'static str,
    /// 1 for the first try, 2 for the first retry, and so on.
    pub number: u32,
}

/// How a try ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TryOutcome {
    /// The service (or a proxy) answered with this HTTP status.
    Status(u16),
    /// No connection could be made: nothing was sent.
    ConnectFailed,
    /// The try timed out.
    TimedOut,
    /// The connection failed after it was made (reset, closed, unreadable answer).
    Failed,
}
