//! List conventions: `page`/`limit`, `filter[field]=a,b`, `sort[field]=asc|desc` with createdAt last,
//! and the list envelope with its `query` echo.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::io::Write;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use bytes::{BufMut, Bytes, BytesMut};
use chrono::{DateTime, Utc};
use store_api_raw::contract::{Bounds, ListRules, OutOfBounds};
use store_api_raw::types::{self, SortDirection};

use super::record::Record;
use crate::deviation::{Deviation, Deviations};
use crate::error::ApiError;

/// Which filters and sorts an endpoint accepts (others are ignored, like unknown body fields), and its
/// page bounds: the spec's rules of the operation, generated.
pub(crate) type ListSpec = &'static ListRules;

/// A parsed list query, with defaults applied.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ListQuery {
    pub page: u64,
    pub limit: u64,
    /// Field → accepted values (match any).
    pub filters: Vec<(String, Vec<String>)>,
    /// Sorts in the order applied; createdAt is always last.
    pub sorts: Vec<(String, SortDirection)>,
    /// Where the emulator differs from the spec on purpose.
    pub deviations: Deviations,
}

/// One page of a list: how many items matched, and the envelope written up to the page's items.
#[derive(Debug)]
pub(crate) struct Page {
    pub total: u64,
    /// Items on the page.
    pub count: u64,
    /// `{` and, when the page has items, `"items":[` and their JSON: copied out of the records'
    /// cached JSON while the state is read, the rest written by [`ListQuery::respond`] after.
    body: BytesMut,
}

/// Room for the envelope's fields after the items, so that writing them seldom grows the buffer.
const ENVELOPE_TAIL: usize = 256;

/// A resource that can be listed: text and time fields for sorting, values for filtering.
pub(crate) trait Listable {
    fn text(&self, field: &str) -> Option<&str>;
    fn time(&self, field: &str) -> Option<DateTime<Utc>>;
    /// Whether the resource matches any of `values` for `field`.
    fn matches(&self, field: &str, values: &[String]) -> bool;
}

impl ListQuery {
    /// Parses the raw query string. Body and query are validated alike: every problem is reported in
    /// one message array.
    /// `deviations` are where the emulator differs from the spec on purpose (none by default).
    pub fn parse(
        raw: Option<&str>,
        spec: ListSpec,
        deviations: Deviations,
    ) -> Result<ListQuery, ApiError> {
        let mut page = spec.page.default.unwrap_or(1);
        let mut limit = spec.limit.default.unwrap_or(u64::MAX);
        let mut filters: Vec<(String, Vec<String>)> = Vec::new();
        let mut sorts: Vec<(String, SortDirection)> = Vec::new();
        let mut created_at = SortDirection::Desc;
        let mut problems = Vec::new();
        for (key, value) in url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
            match key.as_ref() {
                "page" => match parse_bounded("page", &value, spec.page) {
                    Ok(n) => page = n,
                    Err(problem) => problems.push(problem),
                },
                "limit" => match parse_bounded("limit", &value, spec.limit) {
                    Ok(n) => limit = n,
                    Err(_)
                        if deviations.has(Deviation::LimitBelowMinimumDefaulted)
                            && below_minimum(&value, spec.limit) => {}
                    Err(problem) => problems.push(problem),
                },
                other => {
                    if let Some(field) = bracketed(other, "filter") {
                        if spec.filter(field).is_some() {
                            let values: Vec<String> = value
                                .split(',')
                                .filter(|v| !v.is_empty())
                                .map(str::to_owned)
                                .collect();
                            filters.retain(|(f, _)| f != field);
                            if !values.is_empty() {
                                filters.push((field.to_owned(), values));
                            }
                        }
                    } else if let Some(field) = bracketed(other, "sort")
                        && let Some(sort) = spec.sort(field)
                    {
                        let direction = match value.parse::<SortDirection>() {
                            Ok(direction) if sort.accepts(&value) => direction,
                            _ => {
                                let allowed = sort.values.unwrap_or_default().join(", ");
                                problems.push(format!(
                                    "sort[{field}] must be one of the following values: {allowed}"
                                ));
                                continue;
                            }
                        };
                        if field == "createdAt" {
                            created_at = direction;
                        } else {
                            sorts.retain(|(f, _)| f != field);
                            sorts.push((field.to_owned(), direction));
                        }
                    }
                }
            }
        }
        if !problems.is_empty() {
            return Err(ApiError::Invalid(problems));
        }
        sorts.push(("createdAt".to_owned(), created_at));
        Ok(ListQuery {
            page,
            limit,
            filters,
            sorts,
            deviations,
        })
    }

    /// The `query` echo of the envelope.
    pub fn echo(&self) -> types::ListQuery {
        let mut echo = types::ListQuery::new();
        echo.page = Some(i64::try_from(self.page).unwrap_or(i64::MAX));
        echo.limit = Some(i64::try_from(self.limit).unwrap_or(i64::MAX));
        echo.filter = self.filters.iter().cloned().collect::<BTreeMap<_, _>>();
        echo.sort = self.sorts.iter().cloned().collect::<BTreeMap<_, _>>();
        echo
    }

    /// Whether the list is sorted by `createdAt` alone (the default), and in which direction: the order
    /// an index in creation order can answer without sorting.
    pub fn creation_order(&self) -> Option<SortDirection> {
        match self.sorts.as_slice() {
            [(field, direction)] if field == "createdAt" => Some(*direction),
            _ => None,
        }
    }

    /// Filters, sorts and pages `records`.
    pub fn select<'a, T: Listable + 'a>(
        &self,
        records: impl Iterator<Item = &'a Record<T>>,
    ) -> Page {
        let mut selected: Vec<&Record<T>> = records
            .filter(|r| {
                self.filters
                    .iter()
                    .all(|(field, values)| r.value.matches(field, values))
            })
            .collect();
        selected.sort_by(|a, b| self.compare(a, b));
        self.page_of(selected.len(), selected.into_iter().map(|r| &r.json))
    }

    /// The page out of `total` items already filtered and in the list's order (only the page's items
    /// are read from `ordered`).
    ///
    /// The items' JSON is copied rather than shared: a copy reads the records, while sharing them
    /// (`Bytes` clones) makes every concurrent list write the same reference counts, which costs more
    /// than the copy when two cores list the same page.
    pub fn page_of<'a>(&self, total: usize, ordered: impl Iterator<Item = &'a Bytes>) -> Page {
        let skip = usize::try_from(self.skip()).unwrap_or(usize::MAX);
        let take = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let items: Vec<&Bytes> = ordered.skip(skip).take(take).collect();
        let room = items.iter().map(|json| json.len() + 1).sum::<usize>();
        let mut body = BytesMut::with_capacity(room + ENVELOPE_TAIL);
        body.put_u8(b'{');
        // Empty fields are omitted, as the service does (and as the generated types serialize).
        if let Some((first, rest)) = items.split_first() {
            body.put_slice(b"\"items\":[");
            body.put_slice(first);
            for json in rest {
                body.put_u8(b',');
                body.put_slice(json);
            }
            body.put_slice(b"],");
        }
        Page {
            total: total as u64,
            count: items.len() as u64,
            body,
        }
    }

    /// Items before the page.
    fn skip(&self) -> u64 {
        (self.page - 1).saturating_mul(self.limit)
    }

    /// Answers with the page: its envelope finished after the state lock is released.
    pub fn respond(&self, page: Page) -> Response {
        (
            [(header::CONTENT_TYPE, "application/json")],
            self.envelope(page),
        )
            .into_response()
    }

    /// The list envelope of `page`: its items, the counts and the `query` echo.
    pub fn envelope(&self, page: Page) -> Bytes {
        let Page {
            mut total,
            count,
            body,
        } = page;
        let skip = self.skip();
        if skip >= total && self.deviations.has(Deviation::PastEndPageWithoutTotals) {
            total = 0;
        }
        let total_pages = total.div_ceil(self.limit);
        let (start, end) = if count == 0 {
            (0, 0)
        } else {
            (skip + 1, skip + count)
        };
        let mut writer = body.writer();
        // Writing into memory cannot fail, and the echo's maps have string keys.
        let _ = write!(
            writer,
            "\"totalItems\":{total},\"startItem\":{start},\"endItem\":{end},\"totalPages\":{total_pages},\"query\":"
        );
        if serde_json::to_writer(&mut writer, &self.echo()).is_err() {
            writer.get_mut().put_slice(b"{}");
        }
        let mut body = writer.into_inner();
        body.put_u8(b'}');
        body.freeze()
    }

    fn compare<T: Listable>(&self, a: &Record<T>, b: &Record<T>) -> Ordering {
        for (field, direction) in &self.sorts {
            let ordering = match (a.value.time(field), b.value.time(field)) {
                (None, None) => a.value.text(field).cmp(&b.value.text(field)),
                (ta, tb) => ta.cmp(&tb),
            };
            let ordering = match direction {
                SortDirection::Asc => ordering,
                SortDirection::Desc => ordering.reverse(),
            };
            if ordering != Ordering::Equal {
                return ordering;
            }
        }
        // Creation order breaks ties inside one millisecond, in createdAt's direction.
        let by_creation = a.seq.cmp(&b.seq);
        match self.sorts.last() {
            Some((_, SortDirection::Asc)) => by_creation,
            _ => by_creation.reverse(),
        }
    }
}

/// An integer within the spec's bounds. A number too large for u64 is read as u64::MAX: the spec sets
/// no maximum on `page`, so it is still valid (and names a page past the end).
fn parse_bounded(name: &str, value: &str, bounds: Bounds) -> Result<u64, String> {
    let value = value.trim();
    let digits = value.strip_prefix('+').unwrap_or(value);
    let below = |min: u64| format!("{name} must not be less than {min}");
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let n = digits.parse::<u64>().unwrap_or(u64::MAX);
        return bounds.check(n).map_err(|out| match out {
            OutOfBounds::BelowMinimum(min) => below(min),
            OutOfBounds::AboveMaximum(max) => format!("{name} must not be greater than {max}"),
        });
    }
    // A negative integer is below any minimum; anything else is not an integer.
    match (value.parse::<i128>(), bounds.min) {
        (Ok(n), Some(min)) if n < i128::from(min) => Err(below(min)),
        _ => Err(format!("{name} must be an integer number")),
    }
}

/// Whether `value` is an integer below the minimum of `bounds`.
fn below_minimum(value: &str, bounds: Bounds) -> bool {
    matches!((value.trim().parse::<i128>(), bounds.min), (Ok(n), Some(min)) if n < i128::from(min))
}

/// `filter[status]` → `status` for prefix `filter`.
fn bracketed<'a>(key: &'a str, prefix: &str) -> Option<&'a str> {
    key.strip_prefix(prefix)?
        .strip_prefix('[')?
        .strip_suffix(']')
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORDERS: ListSpec = &store_api_raw::contract::LIST_ORDERS_QUERY;

    #[test]
    fn defaults_and_the_created_at_tiebreak() {
        let q = ListQuery::parse(None, ORDERS, Deviations::default()).unwrap();
        assert_eq!((q.page, q.limit), (1, 50));
        assert_eq!(q.sorts, vec![("createdAt".to_owned(), SortDirection::Desc)]);
        let q = ListQuery::parse(
            Some("sort[createdAt]=asc&sort[updatedAt]=desc"),
            ORDERS,
            Deviations::default(),
        )
        .unwrap();
        assert_eq!(
            q.sorts,
            vec![
                ("updatedAt".to_owned(), SortDirection::Desc),
                ("createdAt".to_owned(), SortDirection::Asc)
            ]
        );
    }

    #[test]
    fn filters_split_on_commas_and_unknown_keys_are_ignored() {
        let q = ListQuery::parse(
            Some("filter%5Bstatus%5D=pending%2Con_hold&filter[color]=x&foo=1"),
            ORDERS,
            Deviations::default(),
        )
        .unwrap();
        assert_eq!(
            q.filters,
            vec![(
                "status".to_owned(),
                vec!["pending".to_owned(), "on_hold".to_owned()]
            )]
        );
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let error = ListQuery::parse(
            Some("page=0&limit=101&sort[updatedAt]=up"),
            ORDERS,
            Deviations::default(),
        )
        .unwrap_err();
        assert_eq!(
            error,
            ApiError::Invalid(vec![
                "page must not be less than 1".into(),
                "limit must not be greater than 100".into(),
                "sort[updatedAt] must be one of the following values: asc, desc".into(),
            ])
        );
        let huge = ListQuery::parse(
            Some("page=228789383393040695296"),
            ORDERS,
            Deviations::default(),
        )
        .unwrap();
        assert_eq!(huge.page, u64::MAX);
        let error = ListQuery::parse(Some("limit=abc&page=1e3"), ORDERS, Deviations::default())
            .unwrap_err();
        assert_eq!(
            error,
            ApiError::Invalid(vec![
                "limit must be an integer number".into(),
                "page must be an integer number".into()
            ])
        );
    }
}
