//! The service's conventions that the spec fixes and that more than one checker judges: what
//! `X-RateLimit-Reset` may say, and a list page's envelope and arithmetic. One implementation, read by
//! `store_api_conformance`'s probe (a running service) and its recordings check (recorded traffic).
//!
//! ```
//! use store_api_raw::conventions::{list_envelope, reset_reading};
//!
//! // 4 of 10 tokens spent, refilled at the spec's rate: full again within 3 seconds.
//! assert!(reset_reading(10, 6, 2).is_ok());
//! let late = reset_reading(10, 6, 1_785_542_400).unwrap_err();
//! assert!(late.contains("Unix time in seconds"), "{late}");
//!
//! let page = serde_json::json!({
//!     "items": [{"id": "a"}], "totalItems": 3, "startItem": 3, "endItem": 3, "totalPages": 3,
//!     "query": {"page": 3, "limit": 1, "sort": {"createdAt": "desc"}}
//! });
//! let envelope = list_envelope(&page)?;
//! assert_eq!((envelope.page, envelope.limit, envelope.total), (3, 1, 3));
//! # Ok::<(), String>(())
//! ```

use serde_json::Value;

use crate::contract::RATE_LIMIT_PER_SECOND;

/// The most seconds `X-RateLimit-Reset` may say when `limit - remaining` tokens are spent: the spent
/// tokens at the spec's refill rate, rounded up, and a second more for a token refilled between the
/// two readings.
pub fn reset_bound(limit: u64, remaining: u64) -> u64 {
    let per_second = u64::from(RATE_LIMIT_PER_SECOND.max(1));
    limit
        .saturating_sub(remaining)
        .div_ceil(per_second)
        .saturating_add(1)
}

/// Whether `reset` is what the spec's `X-RateLimit-Reset` may say beside `limit` and `remaining`:
/// `Ok` with what was read, or `Err` saying what it looks like instead (a Unix time, milliseconds).
pub fn reset_reading(limit: u64, remaining: u64, reset: u64) -> Result<String, String> {
    let missing = limit.saturating_sub(remaining);
    let most = reset_bound(limit, remaining);
    if reset <= most {
        return Ok(format!(
            "X-RateLimit-Reset {reset} with {missing} of {limit} tokens spent"
        ));
    }
    let looks = if reset > 1_000_000_000_000 {
        ": it looks like a Unix time in milliseconds"
    } else if reset > 1_000_000_000 {
        ": it looks like a Unix time in seconds"
    } else if reset > most.saturating_mul(100) {
        ": it looks like milliseconds"
    } else {
        ""
    };
    Err(format!(
        "X-RateLimit-Reset {reset} with {missing} of {limit} tokens spent (the bucket fills again within {most} s){looks}"
    ))
}

/// A list page as the spec fixes it, read from its JSON by [`list_envelope`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ListEnvelope<'a> {
    /// The page's items (an omitted `items` is none).
    pub items: &'a [Value],
    /// `totalItems`.
    pub total: u64,
    /// `totalPages`.
    pub pages: u64,
    /// The page number the answer echoes.
    pub page: u64,
    /// The page size the answer echoes.
    pub limit: u64,
}

/// Reads a list answer's envelope and checks what the spec fixes of it: `items` (a list, or omitted
/// when empty), `totalItems`, `startItem`, `endItem` and `totalPages` as counts, the query echo (`page`
/// and `limit` from 1, a `sort` with `createdAt`), and the arithmetic between them. `Err` says what
/// differs.
pub fn list_envelope(json: &Value) -> Result<ListEnvelope<'_>, String> {
    let number = |key: &str| json[key].as_u64().ok_or_else(|| format!("no {key}"));
    let items: &[Value] = match &json["items"] {
        // Empty fields may be omitted.
        Value::Null => &[],
        Value::Array(items) => items,
        _ => return Err("items is not a list".to_owned()),
    };
    let (total, start, end, pages) = (
        number("totalItems")?,
        number("startItem")?,
        number("endItem")?,
        number("totalPages")?,
    );
    let query = &json["query"];
    let (Some(page), Some(limit)) = (query["page"].as_u64(), query["limit"].as_u64()) else {
        return Err(format!("the query echoed {query}"));
    };
    if !query["sort"]["createdAt"].is_string() {
        return Err(format!(
            "the echoed sort has no createdAt: {}",
            query["sort"]
        ));
    }
    let count = items.len() as u64;
    let skip = page.saturating_sub(1).saturating_mul(limit);
    let expected = if count == 0 {
        (0, 0)
    } else {
        (skip.saturating_add(1), skip.saturating_add(count))
    };
    if page == 0 || limit == 0 || (start, end) != expected || pages != total.div_ceil(limit) {
        return Err(format!(
            "startItem {start}, endItem {end}, totalPages {pages} for {count} items of {total} on page {page} of {limit}"
        ));
    }
    Ok(ListEnvelope {
        items,
        total,
        pages,
        page,
        limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_reset_within_the_refill_time_is_read_and_others_say_what_they_look_like() {
        assert_eq!(reset_bound(10, 10), 1);
        assert_eq!(reset_bound(10, 0), 6);
        assert!(reset_reading(10, 0, 6).is_ok());
        let cases = [
            (7, ""),
            (5_000, ": it looks like milliseconds"),
            (1_785_542_400, ": it looks like a Unix time in seconds"),
            (
                1_785_542_400_000,
                ": it looks like a Unix time in milliseconds",
            ),
        ];
        for (reset, looks) in cases {
            let seen = reset_reading(10, 0, reset).unwrap_err();
            assert!(seen.ends_with(&format!("within 6 s){looks}")), "{seen}");
        }
    }

    #[test]
    fn a_page_is_checked_against_its_own_echo() {
        let page = |start: u64, end: u64, pages: u64| {
            json!({"items": [{}, {}], "totalItems": 5, "startItem": start, "endItem": end,
                   "totalPages": pages, "query": {"page": 2, "limit": 2, "sort": {"createdAt": "desc"}}})
        };
        let good = page(3, 4, 3);
        assert_eq!(list_envelope(&good).map(|e| e.items.len()), Ok(2));
        assert!(list_envelope(&page(1, 2, 3)).is_err());
        assert!(list_envelope(&page(3, 4, 2)).is_err());
        let past_end = json!({"totalItems": 5, "startItem": 0, "endItem": 0, "totalPages": 3,
                              "query": {"page": 7, "limit": 2, "sort": {"createdAt": "desc"}}});
        assert_eq!(list_envelope(&past_end).map(|e| e.total), Ok(5));
        let unsorted = json!({"totalItems": 0, "startItem": 0, "endItem": 0, "totalPages": 0,
                              "query": {"page": 1, "limit": 2}});
        assert!(list_envelope(&unsorted).unwrap_err().contains("createdAt"));
        assert_eq!(
            list_envelope(&json!({"items": 3})).unwrap_err(),
            "items is not a list"
        );
    }
}
