//! `store-api doctor`: the spec's facts and assumptions checked against a running service, read-only.
//!
//! The spec was written from the service's prose documentation and makes explicit assumptions where it
//! says "not shown" (`x-assumption`, each with an id). [`diagnose`] sends a bounded number of `GET`
//! requests with the client's key, under its rate limiter, and reports per fact whether it held,
//! differs (with what was seen) or could not be checked: the status and version, the rate-limit
//! headers and what `X-RateLimit-Reset` counts, the list envelope and its page arithmetic (a page past
//! the end, the page-size bounds' message arrays), filters and sorts, the 404 envelopes and `Cannot GET`
//! for an unserved path, the 401 for a wrong key (on a copy of a request), and values of growing
//! enumerations the spec does not list. It never creates, changes or deletes anything: every request
//! is a `GET`, each sent once.
//!
//! ```no_run
//! # async fn run() -> Result<(), store_api::Error> {
//! let client = store_api::Client::from_env()?;
//! let report = store_api::doctor::diagnose(&client, &store_api::doctor::DoctorOptions::default()).await;
//! println!("{report}");
//! for finding in report.differing() {
//!     eprintln!("{} differs", finding.id);
//! }
//! # Ok(())
//! # }
//! ```

mod checks;
mod finding;
mod wire;

pub use finding::{Finding, Report, Verdict};

use crate::handle::Client;

/// The most requests [`diagnose`] sends unless told otherwise: enough for every probe (16 when the
/// store has two orders with external ids), well within a minute of the rate limit.
pub const DEFAULT_MAX_REQUESTS: u32 = 20;

/// Settings of a probe.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DoctorOptions {
    /// The most requests to send; probes beyond it are reported as not checked.
    pub max_requests: u32,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        DoctorOptions {
            max_requests: DEFAULT_MAX_REQUESTS,
        }
    }
}

impl DoctorOptions {
    /// At most `max_requests` requests.
    pub fn max_requests(mut self, max_requests: u32) -> Self {
        self.max_requests = max_requests;
        self
    }
}

/// Probes the service `client` talks to, with its key, and reports per fact. Never fails: what could
/// not be observed (no connection, the budget spent) is reported as not checked.
pub async fn diagnose(client: &Client, options: &DoctorOptions) -> Report {
    checks::run(client, options.max_requests).await
}
