//! Faults on demand: for the next N requests that match an operation and a store, answer with an error,
//! a 429, a reset connection, a delay, a foreign or cut-off answer, what an intermediary answers instead
//! of the service (a redirect to another host, its own HTML error page), an endless or a trickling
//! body, or drop the answer after the request was processed. Queued in process
//! ([`Emulator::inject_fault`](crate::Emulator::inject_fault)) or over HTTP (`POST /_emulator/faults`),
//! so tests in any language can make a real client meet the rare faults; or carried by one request in
//! the [`FAULT_HEADER`] header, for a test (or a fault-injecting proxy) that decides request by request.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use store_api_raw::contract;

/// A request header naming a fault for that request alone, in the JSON form of `/_emulator/faults`
/// without `operation`, `store` and `times` (the header already names one request):
/// `x-emulator-fault: {"kind":"truncated_body"}`. Honoured only where the control endpoints are (a
/// loopback `Host`, or `--allow-remote`); a header that does not parse is a 400 naming it.
pub const FAULT_HEADER: &str = "x-emulator-fault";

/// Longest delay a fault may impose (a test that needs more is waiting on nothing).
pub const MAX_FAULT_DELAY: Duration = Duration::from_secs(300);

/// The statuses a [`FaultKind::Redirect`] may answer.
pub const REDIRECT_STATUSES: [u16; 5] = [301, 302, 303, 307, 308];

/// Where a [`FaultKind::Redirect`] without a `location` points: the same path and query on this other
/// loopback address, at the emulator's port (nothing listens there unless a test puts a listener there).
pub const REDIRECT_HOST: &str = "127.0.0.2";

/// What happens to a matching request.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultKind {
    /// Answers this status (4xx or 5xx) with the error envelope; nothing is processed.
    Status {
        /// The status, 400 to 599.
        status: u16,
    },
    /// Answers 429 with this `Retry-After` value, sent verbatim (absurd values included); nothing is
    /// processed and the store's bucket is not touched.
    RateLimited {
        /// The `Retry-After` header value.
        retry_after: String,
    },
    /// Resets the connection (TCP RST) before anything is processed.
    Reset,
    /// Processes the request (an order is created), then closes the connection without answering.
    DropAfterCommit,
    /// Processes the request, then holds the answer this long (at most [`MAX_FAULT_DELAY`]).
    Delay {
        /// How long.
        delay: Duration,
    },
    /// Processes the request, then answers this status with the error envelope instead of its answer.
    StatusAfterCommit {
        /// The status, 400 to 599.
        status: u16,
    },
    /// Processes the request, then answers 409 with an HTML page instead of its answer: a conflict
    /// reported by something in front of the service (a proxy's page, not the service's envelope).
    ForeignConflict,
    /// Processes the request, then sends its status, its headers (the full `Content-Length`) and half
    /// its body, and closes the connection.
    TruncatedBody,
    /// As [`FaultKind::TruncatedBody`], but resets the connection (TCP RST) inside the body.
    ResetMidBody,
    /// Processes the request, then answers its page with no items (and zero counts), as an index that has
    /// not caught up with a write yet; an answer that is not a page is sent unchanged.
    EmptyPage,
    /// Answers a redirect to another host instead of the service (a load balancer, a misconfigured base
    /// URL): `status` (one of [`REDIRECT_STATUSES`]) with `Location: location`, or, without one, the same
    /// path and query at [`REDIRECT_HOST`] on the emulator's port; nothing is processed. A client that
    /// follows it sends the request (and whatever headers it keeps) to that host.
    Redirect {
        /// 301, 302, 303, 307 or 308.
        status: u16,
        /// An absolute `http` or `https` URL; the same request at [`REDIRECT_HOST`] when absent.
        location: Option<String>,
    },
    /// Answers an intermediary's own error page instead of the service (a firewall's 403, a gateway's 404
    /// during a deploy, a 408, a 413, a 502): `status` with an HTML body and `Content-Type: text/html`,
    /// not the service's envelope; nothing is processed.
    ForeignPage {
        /// The status, 400 to 599.
        status: u16,
    },
    /// Processes the request, then answers `200` with a JSON `Content-Type`, no `Content-Length` and a
    /// body that never ends (it never closes a JSON value either): a client must stop reading by itself.
    EndlessBody,
    /// Processes the request, then sends its status and headers (the full `Content-Length`) at once and
    /// its body `bytes` at a time, `interval` apart (each pause at most [`MAX_FAULT_DELAY`]).
    SlowBody {
        /// How long between two pieces of the body.
        interval: Duration,
        /// How many bytes each piece carries (at least 1).
        bytes: usize,
    },
}

impl FaultKind {
    /// This fault as a [`FAULT_HEADER`] value, for a request that should meet it.
    ///
    /// ```
    /// use store_api_fixtures::FaultKind;
    /// assert_eq!(FaultKind::TruncatedBody.header_value(), r#"{"kind":"truncated_body"}"#);
    /// ```
    pub fn header_value(&self) -> String {
        let mut form = FaultForm::from(Fault::new(self.clone()));
        form.times = None;
        serde_json::to_string(&form).unwrap_or_default()
    }

    /// Whether the emulator processes the request (an order may be created) before the fault.
    pub fn commits(&self) -> bool {
        !matches!(
            self,
            FaultKind::Status { .. }
                | FaultKind::RateLimited { .. }
                | FaultKind::Reset
                | FaultKind::Redirect { .. }
                | FaultKind::ForeignPage { .. }
        )
    }
}

/// A fault to inject: what, into which requests, how many times.
///
/// ```
/// use store_api_fixtures::{Fault, FaultKind};
///
/// // The next two order creations of store_alpha get 503; nothing is created.
/// let fault = Fault::new(FaultKind::Status { status: 503 })
///     .operation("create_order")
///     .store("store_alpha")
///     .times(2);
/// assert_eq!(fault.times, 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "FaultForm", into = "FaultForm")]
#[non_exhaustive]
pub struct Fault {
    /// What happens.
    pub kind: FaultKind,
    /// The operation (`create_order` or the spec's `createOrder`, …); any operation when absent.
    pub operation: Option<String>,
    /// The store id; any store when absent.
    pub store: Option<String>,
    /// How many matching requests get it (default 1).
    pub times: u32,
}

/// The JSON form of a fault at `/_emulator/faults`:
/// `{"kind": "status", "status": 503, "operation": "create_order", "store": "store_alpha", "times": 2}`;
/// kinds `status`, `rate_limited` (`retryAfter`), `reset`, `drop_after_commit`, `delay` (`ms`),
/// `status_after_commit` (`status`), `foreign_conflict`, `truncated_body`, `reset_mid_body`,
/// `empty_page`, `redirect` (`status`, optional `location`), `foreign_page` (`status`),
/// `endless_body`, `slow_body` (`ms`, optional `bytes`, default 1).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FaultForm {
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    location: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bytes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    operation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    store: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    times: Option<u32>,
}

impl TryFrom<FaultForm> for Fault {
    type Error = String;

    fn try_from(form: FaultForm) -> Result<Fault, String> {
        let needs = |field: &str| format!("{field} is required for kind {}", form.kind);
        let status = || form.status.ok_or_else(|| needs("status"));
        let ms = || {
            form.ms
                .ok_or_else(|| needs("ms"))
                .map(Duration::from_millis)
        };
        let kind = match form.kind.as_str() {
            "status" => FaultKind::Status { status: status()? },
            "rate_limited" => FaultKind::RateLimited {
                retry_after: form
                    .retry_after
                    .clone()
                    .ok_or_else(|| needs("retryAfter"))?,
            },
            "reset" => FaultKind::Reset,
            "drop_after_commit" => FaultKind::DropAfterCommit,
            "delay" => FaultKind::Delay { delay: ms()? },
            "status_after_commit" => FaultKind::StatusAfterCommit { status: status()? },
            "foreign_conflict" => FaultKind::ForeignConflict,
            "truncated_body" => FaultKind::TruncatedBody,
            "reset_mid_body" => FaultKind::ResetMidBody,
            "empty_page" => FaultKind::EmptyPage,
            "redirect" => FaultKind::Redirect {
                status: status()?,
                location: form.location.clone(),
            },
            "foreign_page" => FaultKind::ForeignPage { status: status()? },
            "endless_body" => FaultKind::EndlessBody,
            "slow_body" => FaultKind::SlowBody {
                interval: ms()?,
                bytes: form.bytes.unwrap_or(1),
            },
            other => {
                return Err(format!(
                    "kind must be one of status, rate_limited, reset, drop_after_commit, delay, status_after_commit, foreign_conflict, truncated_body, reset_mid_body, empty_page, redirect, foreign_page, endless_body, slow_body, not {other:?}"
                ));
            }
        };
        Ok(Fault {
            kind,
            operation: form.operation,
            store: form.store,
            times: form.times.unwrap_or(1),
        })
    }
}

impl From<Fault> for FaultForm {
    fn from(fault: Fault) -> FaultForm {
        let mut form = FaultForm {
            operation: fault.operation,
            store: fault.store,
            times: Some(fault.times),
            ..FaultForm::default()
        };
        form.kind = match fault.kind {
            FaultKind::Status { status } => {
                form.status = Some(status);
                "status"
            }
            FaultKind::RateLimited { retry_after } => {
                form.retry_after = Some(retry_after);
                "rate_limited"
            }
            FaultKind::Reset => "reset",
            FaultKind::DropAfterCommit => "drop_after_commit",
            FaultKind::Delay { delay } => {
                form.ms = Some(millis(delay));
                "delay"
            }
            FaultKind::StatusAfterCommit { status } => {
                form.status = Some(status);
                "status_after_commit"
            }
            FaultKind::ForeignConflict => "foreign_conflict",
            FaultKind::TruncatedBody => "truncated_body",
            FaultKind::ResetMidBody => "reset_mid_body",
            FaultKind::EmptyPage => "empty_page",
            FaultKind::Redirect { status, location } => {
                form.status = Some(status);
                form.location = location;
                "redirect"
            }
            FaultKind::ForeignPage { status } => {
                form.status = Some(status);
                "foreign_page"
            }
            FaultKind::EndlessBody => "endless_body",
            FaultKind::SlowBody { interval, bytes } => {
                form.ms = Some(millis(interval));
                form.bytes = Some(bytes);
                "slow_body"
            }
        }
        .to_owned();
        form
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Fault {
    /// A fault for the next request of any operation and store.
    pub fn new(kind: FaultKind) -> Fault {
        Fault {
            kind,
            operation: None,
            store: None,
            times: 1,
        }
    }

    /// Only requests of this operation id.
    pub fn operation(mut self, operation_id: impl Into<String>) -> Fault {
        self.operation = Some(operation_id.into());
        self
    }

    /// Only requests for this store.
    pub fn store(mut self, store_id: impl Into<String>) -> Fault {
        self.store = Some(store_id.into());
        self
    }

    /// The next `times` matching requests (default 1).
    pub fn times(mut self, times: u32) -> Fault {
        self.times = times;
        self
    }

    /// Why this fault cannot be injected, if it cannot.
    pub(crate) fn problems(&self, known_operation: impl Fn(&str) -> bool) -> Vec<String> {
        let mut problems = Vec::new();
        match &self.kind {
            FaultKind::Status { status }
            | FaultKind::StatusAfterCommit { status }
            | FaultKind::ForeignPage { status }
                if !(400..=599).contains(status) =>
            {
                problems.push(format!("status must be between 400 and 599, not {status}"));
            }
            FaultKind::Redirect { status, location } => {
                if !REDIRECT_STATUSES.contains(status) {
                    problems.push(format!(
                        "status must be one of 301, 302, 303, 307 and 308 for a redirect, not {status}"
                    ));
                }
                if let Some(location) = location
                    && !is_absolute_http_url(location)
                {
                    problems.push(format!(
                        "location must be an absolute http or https URL, not {location:?}"
                    ));
                }
            }
            FaultKind::SlowBody { bytes: 0, .. } => {
                problems.push("bytes must be at least 1".to_owned());
            }
            FaultKind::RateLimited { retry_after }
                if axum::http::HeaderValue::from_str(retry_after).is_err() =>
            {
                problems.push("retryAfter must be a valid header value".to_owned());
            }
            _ => {}
        }
        if let FaultKind::Delay { delay: pause }
        | FaultKind::SlowBody {
            interval: pause, ..
        } = &self.kind
            && *pause > MAX_FAULT_DELAY
        {
            problems.push(format!(
                "ms must be at most {}",
                MAX_FAULT_DELAY.as_millis()
            ));
        }
        if let Some(operation) = &self.operation
            && !known_operation(operation)
        {
            problems.push(format!("{operation} is not an operation of the Store API"));
        }
        if self.times == 0 {
            problems.push("times must be at least 1".to_owned());
        }
        problems
    }

    /// The fault a [`FAULT_HEADER`] value names, or why it names none.
    pub(crate) fn from_header(value: &str) -> Result<FaultKind, String> {
        let form: FaultForm = serde_json::from_str(value).map_err(|e| e.to_string())?;
        if form.operation.is_some() || form.store.is_some() || form.times.is_some() {
            return Err(
                "operation, store and times are not allowed: the header names one request".into(),
            );
        }
        let fault = Fault::try_from(form)?;
        match fault.problems(|_| true).first() {
            Some(problem) => Err(problem.clone()),
            None => Ok(fault.kind),
        }
    }

    fn matches(&self, operation_id: &str, store_id: &str) -> bool {
        self.operation.as_deref().is_none_or(|o| o == operation_id)
            && self.store.as_deref().is_none_or(|s| s == store_id)
    }
}

/// Whether `location` can go into a `Location` header as an absolute `http(s)` URL.
fn is_absolute_http_url(location: &str) -> bool {
    axum::http::HeaderValue::from_str(location).is_ok()
        && url::Url::parse(location).is_ok_and(|url| matches!(url.scheme(), "http" | "https"))
}

/// The operation's name as the fault queue matches it (the generated client's name), for either of the
/// spec's forms (`createOrder` or `create_order`); `None` when the Store API has no such operation.
pub(crate) fn canonical_operation(id: &str) -> Option<&'static str> {
    contract::operation(id).map(|op| op.method_name)
}

/// The injected faults still to fire, in the order they were injected.
#[derive(Debug, Default)]
pub(crate) struct FaultQueue {
    pending: Vec<Fault>,
}

impl FaultQueue {
    pub fn push(&mut self, fault: Fault) {
        self.pending.push(fault);
    }

    pub fn clear(&mut self) {
        self.pending.clear();
    }

    pub fn pending(&self) -> Vec<Fault> {
        self.pending.clone()
    }

    /// The first pending fault matching the request, counted down (and removed when spent).
    pub fn take(&mut self, operation_id: &str, store_id: &str) -> Option<FaultKind> {
        let index = self
            .pending
            .iter()
            .position(|f| f.matches(operation_id, store_id))?;
        let fault = self.pending.get_mut(index)?;
        let kind = fault.kind.clone();
        fault.times = fault.times.saturating_sub(1);
        if fault.times == 0 {
            self.pending.remove(index);
        }
        Some(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_fault_fires_and_counts_down() {
        let mut queue = FaultQueue::default();
        queue.push(
            Fault::new(FaultKind::Reset)
                .operation("create_order")
                .store("store_a")
                .times(2),
        );
        queue.push(Fault::new(FaultKind::Status { status: 503 }));
        assert_eq!(
            queue.take("get_order", "store_b"),
            Some(FaultKind::Status { status: 503 })
        );
        assert_eq!(queue.take("get_order", "store_b"), None);
        assert_eq!(queue.take("create_order", "store_b"), None);
        assert_eq!(
            queue.take("create_order", "store_a"),
            Some(FaultKind::Reset)
        );
        assert_eq!(
            queue.take("create_order", "store_a"),
            Some(FaultKind::Reset)
        );
        assert_eq!(queue.take("create_order", "store_a"), None);
        assert!(queue.pending().is_empty());
    }

    #[test]
    fn faults_read_and_write_the_control_form() {
        let fault: Fault = serde_json::from_str(
            r#"{"kind":"rate_limited","retryAfter":"-1","operation":"list_orders","times":3}"#,
        )
        .unwrap();
        assert_eq!(
            fault,
            Fault::new(FaultKind::RateLimited {
                retry_after: "-1".into()
            })
            .operation("list_orders")
            .times(3)
        );
        let text = serde_json::to_string(&Fault::new(FaultKind::Delay {
            delay: Duration::from_millis(5),
        }))
        .unwrap();
        assert_eq!(text, r#"{"kind":"delay","ms":5,"times":1}"#);
        assert!(serde_json::from_str::<Fault>(r#"{"kind":"explode"}"#).is_err());
        for (kind, text) in [
            (
                FaultKind::Redirect {
                    status: 307,
                    location: None,
                },
                r#"{"kind":"redirect","status":307}"#,
            ),
            (
                FaultKind::Redirect {
                    status: 301,
                    location: Some("http://127.0.0.2:9/x".into()),
                },
                r#"{"kind":"redirect","status":301,"location":"http://127.0.0.2:9/x"}"#,
            ),
            (
                FaultKind::ForeignPage { status: 403 },
                r#"{"kind":"foreign_page","status":403}"#,
            ),
            (FaultKind::EndlessBody, r#"{"kind":"endless_body"}"#),
            (
                FaultKind::SlowBody {
                    interval: Duration::from_millis(20),
                    bytes: 4,
                },
                r#"{"kind":"slow_body","ms":20,"bytes":4}"#,
            ),
        ] {
            assert_eq!(kind.header_value(), text);
            assert_eq!(Fault::from_header(text), Ok(kind));
        }
        assert_eq!(
            Fault::from_header(r#"{"kind":"slow_body","ms":20}"#),
            Ok(FaultKind::SlowBody {
                interval: Duration::from_millis(20),
                bytes: 1
            })
        );
        assert!(serde_json::from_str::<Fault>(r#"{"kind":"reset","extra":1}"#).is_err());
    }

    #[test]
    fn bad_faults_are_named() {
        let known = |op: &str| op == "create_order";
        let bad = Fault::new(FaultKind::Status { status: 200 })
            .operation("fly")
            .times(0);
        assert_eq!(
            bad.problems(known),
            [
                "status must be between 400 and 599, not 200",
                "fly is not an operation of the Store API",
                "times must be at least 1"
            ]
        );
        let delay = Duration::from_millis(1);
        assert!(
            Fault::new(FaultKind::Delay { delay })
                .problems(known)
                .is_empty()
        );
        let error = serde_json::from_str::<Fault>(r#"{"kind":"status"}"#).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("status is required for kind status"),
            "{error}"
        );
    }
}
