//! JSON as the service writes it: every timestamp with milliseconds.
//!
//! chrono writes a `DateTime` with only the fraction digits it needs, so `10:00:00.000Z` comes out as
//! `10:00:00Z`. The seed's convention is ISO 8601 UTC with milliseconds on every timestamp, so every
//! field named `...At` (or `at`) holding an RFC 3339 time is rewritten with exactly three digits.

use chrono::{DateTime, SecondsFormat};
use serde::Serialize;
use serde_json::Value;

/// `value` as wire JSON bytes.
pub(crate) fn to_vec<T: Serialize>(value: &T) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(&to_value(value)?)
}

/// `value` as a wire JSON value.
pub(crate) fn to_value<T: Serialize>(value: &T) -> serde_json::Result<Value> {
    let mut value = serde_json::to_value(value)?;
    with_milliseconds(&mut value);
    Ok(value)
}

fn with_milliseconds(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(with_milliseconds),
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if let Value::String(text) = item
                    && (key == "at" || key.ends_with("At"))
                    && let Ok(time) = DateTime::parse_from_rfc3339(text)
                {
                    *text = time.to_utc().to_rfc3339_opts(SecondsFormat::Millis, true);
                } else {
                    with_milliseconds(item);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn timestamps_get_three_fraction_digits_and_nothing_else_changes() {
        let value = json!({
            "createdAt": "2025-01-15T10:00:00Z",
            "updatedAt": "2025-01-15T10:00:00.5Z",
            "items": [{ "fulfilledAt": "2026-07-14T09:30:00.123Z", "at": "2026-07-14T09:30:00Z" }],
            "query": { "sort": { "createdAt": "desc" } },
            "name": "2025-01-15T10:00:00Z"
        });
        assert_eq!(
            to_value(&value).unwrap(),
            json!({
                "createdAt": "2025-01-15T10:00:00.000Z",
                "updatedAt": "2025-01-15T10:00:00.500Z",
                "items": [{ "fulfilledAt": "2026-07-14T09:30:00.123Z", "at": "2026-07-14T09:30:00.000Z" }],
                "query": { "sort": { "createdAt": "desc" } },
                "name": "2025-01-15T10:00:00Z"
            })
        );
    }
}
