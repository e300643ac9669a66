//! The live evidence: the spec's facts probed on a running service, read-only, through the client's
//! public escape hatch ([`Client::request`], each request a `GET` sent once).
//!
//! [`probe`] sends a bounded number of `GET` requests with the client's key, under its rate limiter,
//! and reports per fact whether it held, differs (with what was seen) or could not be checked: the
//! status and version, the rate-limit headers and what `X-RateLimit-Reset` counts, the list envelope
//! and its page arithmetic (a page past the end, the page-size bounds' message arrays), filters and
//! sorts, the 404 envelopes and `Cannot GET` for an unserved path, the 401 for a wrong key, and values
//! of growing enumerations the spec does not list. It never creates, changes or deletes anything.

mod checks;
mod wire;

use store_api::Client;

use crate::report::Report;

/// The most requests [`probe`] sends unless told otherwise: enough for every check (16 when the
/// store has two orders with external ids), well within a minute of the rate limit.
pub const DEFAULT_MAX_REQUESTS: u32 = 20;

/// Settings of a [`probe`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProbeOptions {
    /// The most requests to send; checks beyond it are reported as not checked.
    pub max_requests: u32,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            max_requests: DEFAULT_MAX_REQUESTS,
        }
    }
}

impl ProbeOptions {
    /// At most `max_requests` requests.
    pub fn max_requests(mut self, max_requests: u32) -> Self {
        self.max_requests = max_requests;
        self
    }
}

/// Probes the service `client` talks to, with its key, and reports per fact. Never fails: what could
/// not be observed (no connection, the budget spent, a 429 from other traffic) is reported as not
/// checked.
///
/// Every request goes through [`Client::request`] with
/// [`single_attempt`](store_api::ApiRequest::single_attempt) (the client's limiter, hooks, timeout,
/// size cap, origin guard and redirect refusal, no retry); the 401 is asked with
/// [`api_key`](store_api::ApiRequest::api_key) and a random key of the client's key's shape (its
/// length and brand prefix, nothing else of it). Each route is a path template of the generated
/// contract (`store_api_raw::contract`) under the client's base URL.
///
/// ```no_run
/// # async fn run() -> Result<(), store_api::Error> {
/// use store_api_conformance::{ProbeOptions, probe};
///
/// let client = store_api::Client::from_env()?;
/// let report = probe(&client, &ProbeOptions::default().max_requests(16)).await;
/// println!("{report}");
/// for finding in report.differing() {
///     eprintln!("{} differs", finding.id);
/// }
/// # Ok(())
/// # }
/// ```
pub async fn probe(client: &Client, options: &ProbeOptions) -> Report {
    checks::run(client, options.max_requests).await
}
