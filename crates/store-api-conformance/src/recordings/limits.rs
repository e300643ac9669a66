//! The rate limit: the three headers on every answer to an identified store (401s for a known store
//! included, without spending a token), the burst as the limit, the reset in seconds, and the 429.

use std::collections::{BTreeMap, BTreeSet};

use store_api_raw::contract::RATE_LIMIT_BURST;
use store_api_raw::conventions::reset_reading;

use super::exchange::{Message, Seen};
use super::facts::Facts;
use crate::statements::{RATE_LIMIT_HEADERS_SENT, TOO_MANY_REQUESTS};

/// The three headers of one answer, when it carries them all.
fn bucket(seen: &Seen<'_>) -> Option<(u64, u64, u64)> {
    Some((
        seen.header_u64("x-ratelimit-limit")?,
        seen.header_u64("x-ratelimit-remaining")?,
        seen.header_u64("x-ratelimit-reset")?,
    ))
}

fn has_any(seen: &Seen<'_>) -> bool {
    [
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
    ]
    .iter()
    .any(|name| seen.header(name).is_some())
}

/// Whether the answer is a `Cannot GET …` 404 of a path the API does not serve: it carries the headers
/// only for the store's own key, which a cassette does not show.
fn unserved(seen: &Seen<'_>) -> bool {
    seen.status() == 404
        && seen.envelope().is_some_and(
            |e| matches!(&e.message, Message::Text(text) if text.starts_with("Cannot ")),
        )
}

pub(crate) fn check(all: &[Seen<'_>], facts: &mut Facts) {
    // A store is known when some answer under it was not a 401 (its key worked).
    let known: BTreeSet<&str> = all
        .iter()
        .filter(|seen| seen.status() != 401 && seen.operation.is_some())
        .filter_map(|seen| seen.store.as_deref())
        .collect();
    // The remaining tokens of each store's last answer that carried them.
    let mut remaining: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
    for seen in all {
        let at = seen.at();
        let status = seen.status();
        let bucket = bucket(seen);
        let identified = seen.operation.is_some() && status != 401 && status < 500;
        if identified && !unserved(seen) {
            facts.judge(
                RATE_LIMIT_HEADERS_SENT.id,
                &at,
                match bucket {
                    Some(_) => Ok(format!("{status} with all three")),
                    None if has_any(seen) => {
                        Err(format!("{status} without all three X-RateLimit headers"))
                    }
                    None => Err(format!("{status} without X-RateLimit headers")),
                },
            );
        }
        if let Some((limit, left, reset)) = bucket {
            let expected = u64::from(RATE_LIMIT_BURST);
            facts.judge(
                "rate-limit-limit",
                &at,
                if limit == expected {
                    Ok(format!("X-RateLimit-Limit {limit}"))
                } else {
                    Err(format!(
                        "X-RateLimit-Limit {limit} (the spec's burst is {expected})"
                    ))
                },
            );
            facts.judge("rate-limit-reset", &at, reset_reading(limit, left, reset));
        }
        if status == 401
            && let Some(store) = seen.store.as_deref()
            && known.contains(store)
        {
            let result = match (bucket, remaining.get(store)) {
                (None, _) => Err(format!(
                    "a 401 for the known store {store} carried no X-RateLimit headers"
                )),
                (Some((_, left, _)), Some((before, earlier))) if left < *earlier => Err(format!(
                    "the 401 spent a token: X-RateLimit-Remaining {left} after {earlier} at #{before}"
                )),
                (Some((_, left, _)), _) => Ok(format!(
                    "a 401 for store {store} with the headers, {left} remaining"
                )),
            };
            facts.judge("rate-limit-headers", &at, result);
        }
        if let (Some((_, left, _)), Some(store)) = (bucket, seen.store.as_deref()) {
            remaining.insert(store, (seen.index, left));
        }
        if status == 429 {
            let retry = seen.header_u64("retry-after");
            let envelope = seen.envelope();
            let result = match (retry, &envelope) {
                (Some(retry), Some(e)) if e.status_code == Some(429) => {
                    Ok(format!("429, Retry-After {retry}"))
                }
                (None, _) => Err("a 429 without Retry-After in whole seconds".to_owned()),
                _ => Err(format!(
                    "a 429 without the error envelope: {}",
                    seen.describe()
                )),
            };
            facts.judge(TOO_MANY_REQUESTS.id, &at, result);
            if let Some(e) = envelope
                && matches!(e.message, Message::Text(_))
            {
                let with = if bucket.is_some() { "with" } else { "without" };
                facts.held(
                    "rate-limit-message",
                    &at,
                    format!("{} {with} X-RateLimit headers", seen.describe()),
                );
            }
        }
    }
}
