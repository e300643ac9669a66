//! Rendered `GET /orders` answers of one order book, kept until the book changes. A client that polls a
//! list (a test waiting for an order to ship, a dashboard) is answered with the bytes written last time
//! instead of a fresh copy of every order on the page; any change to the book retires them all.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

/// Answers kept per book: the few queries a client polls, not every query ever asked.
const KEPT: usize = 8;

/// The kept answers, each under the raw query string that asked for it, all of one version of the book.
#[derive(Debug, Default)]
pub(crate) struct PageCache(Mutex<Pages>);

#[derive(Debug, Default)]
struct Pages {
    /// The book's version the answers were written from.
    version: u64,
    /// Oldest first.
    answers: VecDeque<(String, Bytes)>,
}

impl PageCache {
    /// The answer to `query` kept for this `version` of the book.
    pub fn get(&self, version: u64, query: &str) -> Option<Bytes> {
        let pages = self.lock();
        if pages.version != version {
            return None;
        }
        pages
            .answers
            .iter()
            .find(|(kept, _)| kept == query)
            .map(|(_, answer)| answer.clone())
    }

    /// Keeps `answer` to `query`, written from `version` of the book. An answer of an older version
    /// than the kept ones (the book changed while it was written) is dropped; a newer one retires them.
    pub fn put(&self, version: u64, query: &str, answer: Bytes) {
        let mut pages = self.lock();
        if version < pages.version {
            return;
        }
        if version > pages.version {
            pages.version = version;
            pages.answers.clear();
        }
        if pages.answers.iter().any(|(kept, _)| kept == query) {
            return;
        }
        if pages.answers.len() == KEPT {
            pages.answers.pop_front();
        }
        pages.answers.push_back((query.to_owned(), answer));
    }

    fn lock(&self) -> MutexGuard<'_, Pages> {
        // Every change leaves the cache consistent: a poisoned lock still holds valid answers.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A copy of a book starts with no answers: they belong to the original's versions.
impl Clone for PageCache {
    fn clone(&self) -> PageCache {
        PageCache::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_served_for_its_query_and_version_only() {
        let cache = PageCache::default();
        cache.put(3, "limit=100", Bytes::from_static(b"a"));
        assert_eq!(cache.get(3, "limit=100").as_deref(), Some(&b"a"[..]));
        assert_eq!(cache.get(3, "limit=10"), None);
        assert_eq!(cache.get(4, "limit=100"), None, "the book changed");
    }

    #[test]
    fn a_newer_version_retires_every_answer_and_an_older_one_is_dropped() {
        let cache = PageCache::default();
        cache.put(3, "limit=100", Bytes::from_static(b"a"));
        cache.put(4, "limit=10", Bytes::from_static(b"b"));
        assert_eq!(cache.get(4, "limit=100"), None);
        cache.put(3, "limit=100", Bytes::from_static(b"stale"));
        assert_eq!(cache.get(4, "limit=100"), None);
        assert_eq!(cache.get(4, "limit=10").as_deref(), Some(&b"b"[..]));
    }

    #[test]
    fn the_oldest_answer_makes_room() {
        let cache = PageCache::default();
        for n in 0..=KEPT {
            cache.put(1, &format!("page={n}"), Bytes::from(n.to_string()));
        }
        assert_eq!(cache.get(1, "page=0"), None);
        assert!(cache.get(1, &format!("page={KEPT}")).is_some());
    }
}
