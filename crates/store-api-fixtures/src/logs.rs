//! The emulator's logs (webhook deliveries, Store API requests) and their entries: kept [`LOG_RETENTION`] of emulator time
//! and at most [`LOG_CAP`] entries per store, oldest dropped first, so a long-running emulator's memory
//! stays bounded.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

/// How long log entries are kept (emulator time).
pub const LOG_RETENTION: TimeDelta = TimeDelta::days(14);

/// Entries kept per store and log; beyond it the oldest are dropped.
pub const LOG_CAP: usize = 10_000;

/// Bytes of a request's path (and method) a request-log entry keeps; a longer one is cut there and
/// marked with its full length, so no request can make one entry large (the log keeps
/// [`LOG_CAP`] entries per store, 401s for a known store included).
pub const LOG_PATH_BYTES: usize = 2048;

/// Something logged at a moment.
pub(crate) trait Timed {
    fn at(&self) -> DateTime<Utc>;
}

impl Timed for Delivery {
    fn at(&self) -> DateTime<Utc> {
        self.at
    }
}

/// Whether an entry logged `at` is still kept at `now`.
fn kept<T: Timed>(entry: &T, now: DateTime<Utc>) -> bool {
    now.signed_duration_since(entry.at()) <= LOG_RETENTION
}

/// Appends `entry` (the log is oldest first), then drops what expired and what exceeds the cap.
pub(crate) fn push<T: Timed>(log: &mut VecDeque<T>, entry: T, now: DateTime<Utc>) {
    log.push_back(entry);
    // A deque: the request log is written on every request and, once full, drops one entry per write,
    // which from the front of a Vec would move the whole log each time.
    while log.front().is_some_and(|e| !kept(e, now)) || log.len() > LOG_CAP {
        log.pop_front();
    }
}

/// The entries still kept at `now`, oldest first (reading drops nothing: the next write does).
pub(crate) fn recent<T: Timed + Clone>(log: &VecDeque<T>, now: DateTime<Utc>) -> Vec<T> {
    log.iter().filter(|e| kept(*e, now)).cloned().collect()
}

/// One delivery attempt of a webhook event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Delivery {
    /// The event's id (the same for every attempt of one event).
    pub event_id: String,
    /// The event's topic.
    pub topic: String,
    /// Where it was sent.
    pub url: String,
    /// 1 for the first attempt, up to 5.
    pub attempt: u32,
    /// The receiver's HTTP status, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Why the attempt failed without a status (connection refused, timeout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether this attempt counted as delivered (a 2xx answer).
    pub delivered: bool,
    /// When the attempt was made.
    pub at: DateTime<Utc>,
}

/// One Store API request of a known store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RequestRecord {
    /// When it arrived (emulator time).
    pub at: DateTime<Utc>,
    /// The HTTP method (`GET`).
    pub method: String,
    /// The path as requested, without the query (`/store-api/2026-08/stores/store_alpha/orders`).
    pub path: String,
    /// The spec's operation id (`listOrders`); absent for a path the API does not serve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// The status answered.
    pub status: u16,
}

impl RequestRecord {
    /// An entry for a request, keeping at most [`LOG_PATH_BYTES`] of its method and of its path.
    pub(crate) fn new(
        at: DateTime<Utc>,
        method: &str,
        path: &str,
        operation_id: Option<&str>,
        status: u16,
    ) -> RequestRecord {
        RequestRecord {
            at,
            method: bounded(method),
            path: bounded(path),
            operation_id: operation_id.map(str::to_owned),
            status,
        }
    }
}

/// `text`, or its first [`LOG_PATH_BYTES`] bytes (to a character boundary) marked with its length.
fn bounded(text: &str) -> String {
    if text.len() <= LOG_PATH_BYTES {
        return text.to_owned();
    }
    let mut end = LOG_PATH_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…({} bytes in all)", &text[..end], text.len())
}

impl Timed for RequestRecord {
    fn at(&self) -> DateTime<Utc> {
        self.at
    }
}

/// Every store's request log, under a lock of its own: written on every request, and not part of the
/// state file (it would make every read a change to save).
#[derive(Debug, Default)]
pub(crate) struct RequestLog(Mutex<HashMap<String, VecDeque<RequestRecord>>>);

impl RequestLog {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, VecDeque<RequestRecord>>> {
        // Every change is one push: a poisoned lock holds a whole log.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn record(&self, store_id: &str, record: RequestRecord, now: DateTime<Utc>) {
        let mut logs = self.lock();
        match logs.get_mut(store_id) {
            Some(log) => push(log, record, now),
            None => push(logs.entry(store_id.to_owned()).or_default(), record, now),
        }
    }

    pub fn recent(&self, store_id: &str, now: DateTime<Utc>) -> Vec<RequestRecord> {
        self.lock()
            .get(store_id)
            .map(|log| recent(log, now))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at: DateTime<Utc>) -> RequestRecord {
        RequestRecord {
            at,
            method: "GET".into(),
            path: "/".into(),
            operation_id: None,
            status: 200,
        }
    }

    #[test]
    fn entries_older_than_the_retention_are_dropped_on_the_next_write() {
        let start = crate::clock::DETERMINISTIC_START;
        let mut log = VecDeque::from(vec![entry(start)]);
        let later = start + LOG_RETENTION;
        assert_eq!(recent(&log, later).len(), 1, "exactly 14 days old is kept");
        let later = later + TimeDelta::milliseconds(1);
        assert!(recent(&log, later).is_empty());
        push(&mut log, entry(later), later);
        assert_eq!(log, vec![entry(later)]);
    }

    #[test]
    fn an_entry_keeps_a_bounded_part_of_a_long_path() {
        let start = crate::clock::DETERMINISTIC_START;
        let short = RequestRecord::new(start, "GET", "/a", Some("getStatus"), 200);
        assert_eq!((short.method.as_str(), short.path.as_str()), ("GET", "/a"));
        let path = format!("/{}", "é".repeat(LOG_PATH_BYTES));
        let long = RequestRecord::new(start, &"M".repeat(5000), &path, None, 401);
        assert_eq!(
            long.path,
            format!(
                "{}…({} bytes in all)",
                &path[..LOG_PATH_BYTES - 1],
                path.len()
            )
        );
        assert!(long.method.starts_with(&"M".repeat(LOG_PATH_BYTES)));
        assert!(long.method.ends_with("…(5000 bytes in all)"));
    }

    #[test]
    fn the_cap_drops_the_oldest() {
        let start = crate::clock::DETERMINISTIC_START;
        let mut log = VecDeque::new();
        for i in 0..(LOG_CAP as i64 + 5) {
            push(&mut log, entry(start + TimeDelta::seconds(i)), start);
        }
        assert_eq!(log.len(), LOG_CAP);
        assert_eq!(log[0].at, start + TimeDelta::seconds(5));
    }
}
