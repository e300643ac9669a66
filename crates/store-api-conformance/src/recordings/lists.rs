//! The list conventions: the envelope and its page arithmetic, the page and limit bounds, a page past
//! the end, unknown filter values, filters and sorts, and the comma rule of `filter[externalOrderId]`.

use std::collections::BTreeSet;

use serde_json::Value;
use store_api_raw::contract::{LIST_ORDERS, LIST_PRODUCTS, PAGE_NUMBER, PAGE_SIZE};
use store_api_raw::conventions::list_envelope;
use store_api_raw::open::{
    DecorationMethod, FulfillmentStatus, OrderStatus, PaymentStatus, ProductStatus,
};

use super::exchange::{Message, Seen};
use super::facts::Facts;
use crate::statements::{FILTERS_AND_SORTS, LIST_ENVELOPE, PAGE_SIZE_MAXIMUM};

/// A 200 list page's counts, checked against its own echoed query.
struct Page<'a> {
    items: &'a [Value],
    total: u64,
    page: u64,
    limit: u64,
    json: &'a Value,
}

fn page<'a>(seen: &Seen<'a>) -> Result<Page<'a>, String> {
    let json = seen.answer_json().ok_or("not JSON")?;
    let envelope = list_envelope(json)?;
    Ok(Page {
        items: envelope.items,
        total: envelope.total,
        page: envelope.page,
        limit: envelope.limit,
        json,
    })
}

/// The request's collection: its path and its query without `page` and `limit`.
fn collection(seen: &Seen<'_>) -> (String, Vec<(String, String)>) {
    let mut rest: Vec<(String, String)> = seen
        .query
        .iter()
        .filter(|(key, _)| key != "page" && key != "limit")
        .cloned()
        .collect();
    rest.sort();
    (seen.exchange.request.path.clone(), rest)
}

/// Whether a validation failure (400, message array) answered `seen`.
fn refused_as_invalid(seen: &Seen<'_>) -> Result<String, String> {
    match seen.envelope() {
        Some(e) if seen.status() == 400 && matches!(e.message, Message::List(_)) => {
            Ok(seen.describe())
        }
        _ => Err(format!(
            "{} (expected 400 with a message array)",
            seen.describe()
        )),
    }
}

/// Whether `value` is one the spec does not list for filter `field` of the list `seen` asked.
fn unknown_value(seen: &Seen<'_>, field: &str, value: &str) -> Option<bool> {
    let known = match field {
        "status" if seen.is(&LIST_PRODUCTS) => ProductStatus::from(value).is_known(),
        "status" if seen.is(&LIST_ORDERS) => OrderStatus::from(value).is_known(),
        "fulfillmentStatus" => FulfillmentStatus::from(value).is_known(),
        "paymentStatus" => PaymentStatus::from(value).is_known(),
        "decorationMethod" => DecorationMethod::from(value).is_known(),
        _ => return None,
    };
    Some(!known)
}

pub(crate) fn check(all: &[Seen<'_>], facts: &mut Facts) {
    for seen in all {
        let Some(operation) = seen.operation else {
            continue;
        };
        if operation.query.is_none() || seen.status() == 429 || seen.status() == 401 {
            continue;
        }
        let at = seen.at();
        let number = |name: &str| seen.param(name).and_then(|v| v.parse::<i64>().ok());
        let below = |bounds: store_api_raw::contract::Bounds, value: Option<i64>| {
            value.is_some_and(|v| v < i64::try_from(bounds.min.unwrap_or(1)).unwrap_or(1))
        };
        if below(PAGE_SIZE, number("limit")) || below(PAGE_NUMBER, number("page")) {
            facts.judge("page-limit-minimum", &at, refused_as_invalid(seen));
            continue;
        }
        if let (Some(max), Some(limit)) = (PAGE_SIZE.max, number("limit"))
            && u64::try_from(limit).is_ok_and(|limit| limit > max)
        {
            facts.judge(PAGE_SIZE_MAXIMUM.id, &at, refused_as_invalid(seen));
            continue;
        }
        let filters: Vec<(&str, Vec<&str>)> = seen
            .query
            .iter()
            .filter_map(|(key, value)| {
                let field = key.strip_prefix("filter[")?.strip_suffix(']')?;
                Some((field, value.split(',').filter(|v| !v.is_empty()).collect()))
            })
            .collect();
        let listed = if seen.status() == 200 {
            Some(page(seen))
        } else {
            None
        };
        match &listed {
            Some(Ok(page)) => facts.held(
                LIST_ENVELOPE.id,
                &at,
                format!(
                    "{} items of {}, page {} of {}",
                    page.items.len(),
                    page.total,
                    page.page,
                    page.limit
                ),
            ),
            Some(Err(seen_wrong)) => facts.differs(LIST_ENVELOPE.id, &at, seen_wrong.clone()),
            None => {}
        }
        for (field, values) in &filters {
            let unknown: Vec<&str> = values
                .iter()
                .copied()
                .filter(|value| unknown_value(seen, field, value) == Some(true))
                .collect();
            if unknown.is_empty() {
                continue;
            }
            let result = match &listed {
                Some(Ok(page)) => match page
                    .items
                    .iter()
                    .filter_map(|item| item[*field].as_str())
                    .find(|value| unknown.contains(value) || !values.contains(value))
                {
                    // Only the filter's field of its own items can tell; `decorationMethod` is not one.
                    Some(value) => Err(format!(
                        "filter[{field}]={} answered an item whose {field} is {value}",
                        values.join(",")
                    )),
                    None => Ok(format!(
                        "filter[{field}]={}: 200, {} items",
                        values.join(","),
                        page.items.len()
                    )),
                },
                _ => Err(format!(
                    "filter[{field}] with the unknown values {unknown:?}: {}",
                    seen.describe()
                )),
            };
            facts.judge("unknown-filter-values", &at, result);
        }
        let Some(Ok(page)) = listed else {
            continue;
        };
        filters_and_sorts(seen, &page, &filters, facts);
        external_ids(all, seen, &page, &filters, facts);
        past_end(all, seen, &page, facts);
    }
}

/// Every item carries one of its filter's values (for a field the items carry as a string), and items
/// are in the order of a single sort; equal values keep createdAt's order (the assumption).
fn filters_and_sorts(
    seen: &Seen<'_>,
    page: &Page<'_>,
    filters: &[(&str, Vec<&str>)],
    facts: &mut Facts,
) {
    let at = seen.at();
    for (field, values) in filters {
        if *field == "externalOrderId" {
            continue;
        }
        let other = page
            .items
            .iter()
            .filter_map(|item| item[*field].as_str())
            .find(|value| !values.contains(value));
        facts.judge(
            FILTERS_AND_SORTS.id,
            &at,
            match other {
                Some(value) => Err(format!(
                    "filter[{field}]={} answered an item whose {field} is {value}",
                    values.join(",")
                )),
                None => Ok(format!("filter[{field}]: {} items", page.items.len())),
            },
        );
    }
    let sorts: Vec<(&str, &str)> = seen
        .query
        .iter()
        .filter_map(|(key, value)| {
            Some((
                key.strip_prefix("sort[")?.strip_suffix(']')?,
                value.as_str(),
            ))
        })
        .collect();
    let [(field, direction)] = sorts.as_slice() else {
        return;
    };
    if *field == "createdAt" {
        return;
    }
    // Strings in byte order, as the spec's examples sort names. Two timestamps compare as text only
    // when written alike (of one length): `…00Z` and `…00.123Z` do not.
    let in_order = |a: &str, b: &str, direction: &str| {
        (a.len() != b.len() && (*field == "createdAt" || field.ends_with("At")))
            || if direction == "desc" { a >= b } else { a <= b }
    };
    let times_in_order = |a: &str, b: &str, direction: &str| {
        a.len() != b.len() || if direction == "desc" { a >= b } else { a <= b }
    };
    let created_direction = page.json["query"]["sort"]["createdAt"]
        .as_str()
        .unwrap_or("desc");
    let mut ties = 0;
    for (index, pair) in page.items.windows(2).enumerate() {
        let (Some(a), Some(b)) = (pair[0][*field].as_str(), pair[1][*field].as_str()) else {
            continue;
        };
        if !in_order(a, b, direction) {
            facts.differs(
                FILTERS_AND_SORTS.id,
                &at,
                format!(
                    "sort[{field}]={direction} answered {a:?} before {b:?} (items {index} and {})",
                    index + 1
                ),
            );
            return;
        }
        if a == b
            && let (Some(first), Some(second)) =
                (pair[0]["createdAt"].as_str(), pair[1]["createdAt"].as_str())
        {
            ties += 1;
            if !times_in_order(first, second, created_direction) {
                facts.differs("sort-order", &at, format!("two items whose {field} is {a:?} were not in createdAt {created_direction} order ({first}, then {second})"));
            }
        }
    }
    facts.held(
        FILTERS_AND_SORTS.id,
        &at,
        format!(
            "sort[{field}]={direction}: {} items in order",
            page.items.len()
        ),
    );
    if ties > 0 {
        facts.held(
            "sort-order",
            &at,
            format!("sort[{field}]={direction}, then createdAt {created_direction} ({ties} ties)"),
        );
    }
}

/// `filter[externalOrderId]=a,b` finds the orders of either id, every one the cassette saw created.
fn external_ids(
    all: &[Seen<'_>],
    seen: &Seen<'_>,
    page: &Page<'_>,
    filters: &[(&str, Vec<&str>)],
    facts: &mut Facts,
) {
    let Some((_, values)) = filters
        .iter()
        .find(|(field, _)| *field == "externalOrderId")
    else {
        return;
    };
    if values.len() < 2 {
        return;
    }
    let found: BTreeSet<&str> = page
        .items
        .iter()
        .filter_map(|item| item["externalOrderId"].as_str())
        .collect();
    let created: BTreeSet<&str> = all[..seen.index]
        .iter()
        .filter(|earlier| {
            earlier.operation.is_some_and(|op| op.creates)
                && earlier.status() == 201
                && earlier.store == seen.store
        })
        .filter_map(|earlier| earlier.answer_json()?["externalOrderId"].as_str())
        .filter(|id| values.contains(id))
        .collect();
    let whole = page.total as usize <= page.items.len();
    let result = if let Some(other) = found.iter().find(|id| !values.contains(id)) {
        Err(format!(
            "filter[externalOrderId]={} answered the order of {other}",
            values.join(",")
        ))
    } else if whole && let Some(missing) = created.iter().find(|id| !found.contains(*id)) {
        Err(format!(
            "filter[externalOrderId]={} did not find the order of {missing}, created earlier",
            values.join(",")
        ))
    } else {
        Ok(format!(
            "{} ids separated by commas found {} orders",
            values.len(),
            found.len()
        ))
    };
    facts.judge("external-id-filter-commas", &seen.at(), result);
}

/// An empty page past the last one reports the totals of the collection: those of another page of the
/// same collection and filters with no successful write between the two.
fn past_end(all: &[Seen<'_>], seen: &Seen<'_>, page: &Page<'_>, facts: &mut Facts) {
    if !page.items.is_empty() || page.page <= 1 {
        return;
    }
    let key = collection(seen);
    let written = |from: usize, to: usize| {
        all[from.min(to)..from.max(to)].iter().any(|other| {
            other.exchange.request.method != "GET" && (200..300).contains(&other.status())
        })
    };
    let reference = all.iter().find_map(|other| {
        if other.index == seen.index || other.status() != 200 || collection(other) != key {
            return None;
        }
        let other_page = page_of(other)?;
        (!other_page.0 && !written(other.index, seen.index)).then_some((other.index, other_page.1))
    });
    let Some((index, total)) = reference else {
        return;
    };
    if page.page <= total.div_ceil(page.limit.max(1)) {
        return;
    }
    facts.judge(
        "page-past-end",
        &seen.at(),
        if page.total == total {
            Ok(format!("page {}: 200, no items, totalItems {total}", page.page))
        } else {
            Err(format!(
                "page {} past the end answered totalItems {} where #{index} answered {total} for the same collection",
                page.page, page.total
            ))
        },
    );
}

/// (whether it is empty, its total) of a list page that has items.
fn page_of(seen: &Seen<'_>) -> Option<(bool, u64)> {
    let page = page(seen).ok()?;
    Some((page.items.is_empty(), page.total))
}
