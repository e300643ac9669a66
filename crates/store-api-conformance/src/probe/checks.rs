//! The probe: which requests it sends, in which order, and what each answer says about the facts.
//!
//! Every request is a `GET`; the probe never creates, changes or deletes anything. The expected values
//! (version, burst, refill rate, page bounds) come from the generated contract, and the assumptions'
//! texts from the spec through it.

use std::collections::BTreeMap;

use serde_json::Value;
use store_api_raw::contract::{
    API_VERSION, GET_ARTWORK, GET_CATALOG_PRODUCT, GET_ORDER, GET_PRODUCT, GET_STATUS, LIST_ORDERS,
    LIST_PRODUCTS, Operation, PAGE_SIZE, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, RATE_LIMIT_BURST,
};
use store_api_raw::conventions::{list_envelope, reset_reading};
use store_api_raw::types::{OrderList, ProductList};

use store_api::Client;

use super::wire::{Answer, Key, NotSent, Target, Wire};
use crate::report::{Evidence, Finding, Report, Verdict};
use crate::statements::{
    FILTERS_AND_SORTS, LIST_ENVELOPE, NOT_FOUND, PAGE_SIZE_MAXIMUM, RATE_LIMIT_HEADERS_SENT,
    STATUS, Statement, UNAUTHORIZED, UNSERVED_PATH,
};

/// A value no filter of the service knows.
const UNKNOWN_VALUE: &str = "doctor_unknown_value";
/// An id no resource has.
const NO_SUCH_ID: &str = "doctor_no_such_id";
/// A path under the store the API does not serve.
const UNSERVED: &str = "doctor-unserved-path";

/// The segment of `operation`'s route that names its collection (`products` in
/// `/stores/{storeId}/products/{productId}`).
fn collection(operation: &Operation) -> &'static str {
    let path: &'static str = operation.path;
    path.split('/')
        .filter(|part| !part.is_empty() && !part.starts_with('{'))
        .nth(1)
        .unwrap_or(path)
}

/// The rate-limit headers of one answer to the store.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    status: u16,
    limit: Option<u64>,
    remaining: Option<u64>,
    reset: Option<u64>,
}

impl Bucket {
    fn of(answer: &Answer) -> Bucket {
        Bucket {
            status: answer.status(),
            limit: answer.header_u64("x-ratelimit-limit"),
            remaining: answer.header_u64("x-ratelimit-remaining"),
            reset: answer.header_u64("x-ratelimit-reset"),
        }
    }

    fn complete(&self) -> bool {
        self.limit.is_some() && self.remaining.is_some() && self.reset.is_some()
    }
}

struct Probe<'c> {
    wire: Wire<'c>,
    stated: Vec<Finding>,
    assumed: BTreeMap<&'static str, Verdict>,
    /// The rate-limit headers of every answer, in order.
    buckets: Vec<Bucket>,
    /// Products read (none when no list was read), and the values among them the spec does not list.
    products_read: Option<usize>,
    unknown_in_products: Vec<String>,
}

/// Runs the whole probe.
pub(crate) async fn run(client: &Client, max_requests: u32) -> Report {
    let mut probe = Probe {
        wire: Wire::new(client, max_requests),
        stated: Vec::new(),
        assumed: BTreeMap::new(),
        buckets: Vec::new(),
        products_read: None,
        unknown_in_products: Vec::new(),
    };
    probe.status_and_keys().await;
    probe.lists().await;
    probe.not_found().await;
    probe.orders().await;
    probe.rate_limit();
    let verdict = match probe.products_read {
        Some(read) => known_values(read, "products", &mut probe.unknown_in_products),
        None => Verdict::not_checked("no products list was read"),
    };
    probe.assume("product-status-values", verdict);
    let evidence = Evidence::Probe {
        base_url: client.base_url().to_owned(),
        store_id: client.store_id().to_owned(),
        requests: probe.wire.sent,
        max_requests,
    };
    Report::new(evidence, probe.stated, |assumption| {
        probe
            .assumed
            .get(assumption.id)
            .cloned()
            .unwrap_or_else(|| Verdict::not_checked("not observable by a read-only probe"))
    })
}

impl Probe<'_> {
    /// An answer to judge; a 429 (other traffic emptied the store's bucket) is none: nothing was
    /// processed, so it says nothing about the fact asked.
    async fn get(&mut self, target: Target<'_>, key: Key) -> Result<Answer, NotSent> {
        let answer = self.wire.get(target, key).await?;
        self.buckets.push(Bucket::of(&answer));
        if answer.status() == 429 {
            return Err(NotSent::Failed(
                "429: the store's rate limit was reached (by other traffic too); run it again later"
                    .to_owned(),
            ));
        }
        Ok(answer)
    }

    fn state(&mut self, statement: &Statement, verdict: Verdict) {
        match self
            .stated
            .iter_mut()
            .find(|finding| finding.id == statement.id)
        {
            Some(finding) => finding.verdict = finding.verdict.clone().and(verdict),
            None => self.stated.push(Finding {
                id: statement.id,
                says: statement.says,
                verdict,
            }),
        }
    }

    fn assume(&mut self, id: &'static str, verdict: Verdict) {
        let verdict = match self.assumed.remove(id) {
            Some(earlier) => earlier.and(verdict),
            None => verdict,
        };
        self.assumed.insert(id, verdict);
    }

    /// `GET /status` with the key, then a copy of it with a wrong key, then a path the API does not serve.
    async fn status_and_keys(&mut self) {
        let store_id = self.wire.store_id().to_owned();
        let verdict = match self.get(Target::new(&GET_STATUS, &[], ""), Key::Own).await {
            Ok(answer) => {
                let json = answer.json().unwrap_or(Value::Null);
                let seen = (
                    json["status"].as_str(),
                    json["version"].as_str(),
                    json["store"]["id"].as_str(),
                );
                if answer.status() == 200
                    && seen == (Some("ok"), Some(API_VERSION), Some(&*store_id))
                {
                    Verdict::held_seeing(format!("version {API_VERSION}, store {store_id}"))
                } else {
                    Verdict::differs(answer.describe())
                }
            }
            Err(not_sent) => Verdict::not_checked(not_sent.why()),
        };
        self.state(&STATUS, verdict);

        let verdict = match self
            .get(Target::new(&GET_STATUS, &[], ""), Key::Wrong)
            .await
        {
            Ok(answer) => match envelope(&answer, 401) {
                Ok(seen) if seen.error.as_deref() == Some("Unauthorized") => {
                    Verdict::held_seeing(format!("401 {}", seen.message))
                }
                _ => Verdict::differs(answer.describe()),
            },
            Err(not_sent) => Verdict::not_checked(not_sent.why()),
        };
        self.state(&UNAUTHORIZED, verdict);

        let verdict = match self.get(Target::unserved(UNSERVED), Key::Own).await {
            Ok(answer) => {
                let expected = format!("{:?}", format!("Cannot GET {}", answer.path));
                match envelope(&answer, 404) {
                    Ok(seen) if seen.message == expected => {
                        Verdict::held_seeing(format!("404 {}", seen.message))
                    }
                    _ => {
                        Verdict::differs(format!("{} (expected 404 {expected})", answer.describe()))
                    }
                }
            }
            Err(not_sent) => Verdict::not_checked(not_sent.why()),
        };
        self.state(&UNSERVED_PATH, verdict);
    }

    /// The products list: its envelope and page arithmetic, a page past the end, the page-size bounds,
    /// a filter with a sort, and a filter value no status has.
    async fn lists(&mut self) {
        let mut total = Err(Verdict::not_checked("the first page was not read"));
        for page in [1_u64, 2] {
            let query = format!("limit=2&page={page}");
            let verdict = match self
                .get(Target::new(&LIST_PRODUCTS, &[], &query), Key::Own)
                .await
            {
                Ok(answer) => match page_of(&answer, page, 2) {
                    Ok(list) => {
                        if page == 1 {
                            total = Ok(list.total);
                        }
                        self.unknown_product_statuses(&answer);
                        Verdict::held_seeing(format!(
                            "{} products in {} pages of 2",
                            list.total, list.pages
                        ))
                    }
                    Err(seen) => Verdict::differs(format!("page {page} of 2: {seen}")),
                },
                Err(not_sent) => Verdict::not_checked(not_sent.why()),
            };
            if page == 1 && total.is_err() {
                total = Err(verdict.clone());
            }
            self.state(&LIST_ENVELOPE, verdict);
        }

        match total {
            // Without the first page's totals there is no page past the end to ask for.
            Err(Verdict::NotChecked { why }) => {
                self.assume("page-past-end", Verdict::not_checked(why))
            }
            Err(_) => self.assume(
                "page-past-end",
                Verdict::not_checked("the first page did not read as a list"),
            ),
            Ok(total) => {
                let past = total.div_ceil(2) + 1;
                let query = format!("limit=2&page={past}");
                let verdict = match self
                    .get(Target::new(&LIST_PRODUCTS, &[], &query), Key::Own)
                    .await
                {
                    Ok(answer) => {
                        empty_page(&answer, past, 2, total, &format!("page {past} (limit 2)"))
                    }
                    Err(not_sent) => Verdict::not_checked(not_sent.why()),
                };
                self.assume("page-past-end", verdict);
            }
        }

        let query = format!("limit={}", PAGE_SIZE_MAX + 1);
        let verdict = self.validation_failure(&query).await;
        self.state(&PAGE_SIZE_MAXIMUM, verdict);
        let below = PAGE_SIZE.min.unwrap_or(1).saturating_sub(1);
        let verdict = self.validation_failure(&format!("limit={below}")).await;
        self.assume("page-limit-minimum", verdict);

        let query = format!("filter[status]=active&sort[name]=asc&limit={PAGE_SIZE_MAX}");
        match self
            .get(Target::new(&LIST_PRODUCTS, &[], &query), Key::Own)
            .await
        {
            Ok(answer) => {
                let (stated, sort_order) = filtered_and_sorted(&answer);
                self.state(&FILTERS_AND_SORTS, stated);
                self.assume("sort-order", sort_order);
            }
            Err(not_sent) => {
                self.state(&FILTERS_AND_SORTS, Verdict::not_checked(not_sent.why()));
            }
        }

        let query = format!("filter[status]={UNKNOWN_VALUE}");
        let verdict = match self
            .get(Target::new(&LIST_PRODUCTS, &[], &query), Key::Own)
            .await
        {
            Ok(answer) => empty_page(&answer, 1, PAGE_SIZE_DEFAULT, 0, &query),
            Err(not_sent) => Verdict::not_checked(not_sent.why()),
        };
        self.assume("unknown-filter-values", verdict);
    }

    /// `GET /products?{query}` must be refused as a validation failure: 400 with a message array.
    async fn validation_failure(&mut self, query: &str) -> Verdict {
        match self
            .get(Target::new(&LIST_PRODUCTS, &[], query), Key::Own)
            .await
        {
            Ok(answer) => match envelope(&answer, 400) {
                Ok(seen) if seen.array => {
                    Verdict::held_seeing(format!("{query}: 400 {}", seen.message))
                }
                _ => Verdict::differs(format!("{query}: {}", answer.describe())),
            },
            Err(not_sent) => Verdict::not_checked(not_sent.why()),
        }
    }

    /// A nonexistent id of each resource.
    async fn not_found(&mut self) {
        let mut verdict = Verdict::not_checked("no resource probed");
        let mut messages = Vec::new();
        for operation in [&GET_PRODUCT, &GET_ORDER, &GET_ARTWORK, &GET_CATALOG_PRODUCT] {
            // The collection's segment (`products`), as the findings name it.
            let resource = collection(operation);
            let one = match self
                .get(Target::new(operation, &[NO_SUCH_ID], ""), Key::Own)
                .await
            {
                Ok(answer) => match envelope(&answer, 404) {
                    Ok(seen) if seen.error.as_deref() == Some("Not Found") && !seen.array => {
                        messages.push(format!("{resource} {}", seen.message));
                        Verdict::held()
                    }
                    _ => {
                        Verdict::differs(format!("{resource}/{NO_SUCH_ID}: {}", answer.describe()))
                    }
                },
                Err(not_sent) => Verdict::not_checked(not_sent.why()),
            };
            verdict = verdict.and(one);
        }
        if let Verdict::Held { .. } = verdict {
            verdict = Verdict::held_seeing(format!("404 {}", messages.join("; ")));
        }
        self.state(&NOT_FOUND, verdict);
    }

    /// The orders: values the spec does not list, and a filter on two external ids at once.
    async fn orders(&mut self) {
        let query = format!("limit={PAGE_SIZE_MAX}");
        let answer = match self
            .get(Target::new(&LIST_ORDERS, &[], &query), Key::Own)
            .await
        {
            Ok(answer) => answer,
            Err(not_sent) => {
                self.assume("order-status-values", Verdict::not_checked(not_sent.why()));
                self.assume(
                    "external-id-filter-commas",
                    Verdict::not_checked(not_sent.why()),
                );
                return;
            }
        };
        let orders = match serde_json::from_slice::<OrderList>(answer.body()) {
            Ok(list) if answer.status() == 200 => list.items,
            _ => {
                let seen = format!("the orders list: {}", answer.describe());
                self.assume("order-status-values", Verdict::differs(seen.clone()));
                self.assume("external-id-filter-commas", Verdict::not_checked(seen));
                return;
            }
        };
        let mut unknown = Vec::new();
        for order in &orders {
            let values = [
                order
                    .status
                    .as_ref()
                    .filter(|v| !v.is_known())
                    .map(|v| format!("status {v}")),
                order
                    .fulfillment_status
                    .as_ref()
                    .filter(|v| !v.is_known())
                    .map(|v| format!("fulfillmentStatus {v}")),
                order
                    .payment_status
                    .as_ref()
                    .filter(|v| !v.is_known())
                    .map(|v| format!("paymentStatus {v}")),
            ];
            unknown.extend(values.into_iter().flatten());
        }
        self.assume(
            "order-status-values",
            known_values(orders.len(), "orders", &mut unknown),
        );

        let external: Vec<&str> = orders
            .iter()
            .filter_map(|order| order.external_order_id.as_deref())
            .filter(|id| !id.is_empty() && !id.contains(','))
            .collect();
        let [first, second, ..] = external.as_slice() else {
            self.assume(
                "external-id-filter-commas",
                Verdict::not_checked("the store has fewer than two orders with an external id"),
            );
            return;
        };
        let (first, second) = ((*first).to_owned(), (*second).to_owned());
        let query = format!("filter[externalOrderId]={first},{second}");
        let verdict = match self
            .get(Target::new(&LIST_ORDERS, &[], &query), Key::Own)
            .await
        {
            Ok(answer) => match serde_json::from_slice::<OrderList>(answer.body()) {
                Ok(list) if answer.status() == 200 => {
                    let mut found: Vec<&str> = list
                        .items
                        .iter()
                        .filter_map(|order| order.external_order_id.as_deref())
                        .collect();
                    found.sort_unstable();
                    found.dedup();
                    let mut expected = [first.as_str(), second.as_str()];
                    expected.sort_unstable();
                    if found == expected {
                        Verdict::held_seeing(
                            "two external ids separated by a comma found both orders",
                        )
                    } else {
                        Verdict::differs(format!(
                            "filter[externalOrderId]={first},{second} found {found:?}"
                        ))
                    }
                }
                _ => Verdict::differs(answer.describe()),
            },
            Err(not_sent) => Verdict::not_checked(not_sent.why()),
        };
        self.assume("external-id-filter-commas", verdict);
    }

    /// Product statuses the spec does not list, in a products page.
    fn unknown_product_statuses(&mut self, answer: &Answer) {
        let Ok(list) = serde_json::from_slice::<ProductList>(answer.body()) else {
            return;
        };
        *self.products_read.get_or_insert(0) += list.items.len();
        self.unknown_in_products.extend(
            list.items
                .iter()
                .filter_map(|product| product.status.as_ref())
                .filter(|status| !status.is_known())
                .map(|status| format!("status {status}")),
        );
    }

    /// The rate-limit headers of every answer: present, the burst as the limit, the reset in seconds, and
    /// on the 401 and the unserved path's 404 too, without the 401 spending a token.
    fn rate_limit(&mut self) {
        let answers: Vec<Bucket> = self.buckets.clone();
        let verdict = if answers.is_empty() {
            Verdict::not_checked("no answer")
        } else {
            let missing: Vec<u16> = answers
                .iter()
                .filter(|b| (200..300).contains(&b.status) && !b.complete())
                .map(|b| b.status)
                .collect();
            if missing.is_empty() {
                Verdict::held()
            } else {
                Verdict::differs(format!("answers without all three headers: {missing:?}"))
            }
        };
        self.state(&RATE_LIMIT_HEADERS_SENT, verdict);

        let limits: Vec<u64> = answers.iter().filter_map(|b| b.limit).collect();
        let verdict = match limits
            .iter()
            .find(|limit| **limit != u64::from(RATE_LIMIT_BURST))
        {
            _ if limits.is_empty() => Verdict::not_checked("no answer carried X-RateLimit-Limit"),
            Some(limit) => Verdict::differs(format!(
                "X-RateLimit-Limit {limit} (the spec's burst is {RATE_LIMIT_BURST})"
            )),
            None => Verdict::held_seeing(format!("X-RateLimit-Limit {RATE_LIMIT_BURST}")),
        };
        self.assume("rate-limit-limit", verdict);

        let verdict = reset_verdict(&answers);
        self.assume("rate-limit-reset", verdict);

        // The 401 follows the status request; the 404 of the unserved path follows the 401.
        let verdict = match answers.as_slice() {
            [before, refused, unserved, ..] if refused.status == 401 && unserved.status == 404 => {
                if !refused.complete() {
                    Verdict::differs("the 401 for a wrong key carried no X-RateLimit headers")
                } else if !unserved.complete() {
                    Verdict::differs("the 404 of an unserved path carried no X-RateLimit headers")
                } else if refused.remaining < before.remaining {
                    Verdict::differs(format!(
                        "the 401 spent a token: X-RateLimit-Remaining {:?} after {:?}",
                        refused.remaining, before.remaining
                    ))
                } else {
                    Verdict::held_seeing(
                        "on the 401 and on the unserved path's 404; the 401 spent no token",
                    )
                }
            }
            _ => Verdict::not_checked("the 401 and the unserved path's 404 were not both answered"),
        };
        self.assume("rate-limit-headers", verdict);
    }
}

/// `X-RateLimit-Reset` of each answer against the time the bucket needs to fill again: the tokens
/// missing (limit − remaining) at the spec's refill rate, in whole seconds rounded up, give or take a
/// second for a token refilled between the two readings.
fn reset_verdict(answers: &[Bucket]) -> Verdict {
    let mut checked = 0;
    let mut largest = 0;
    for bucket in answers {
        let (Some(limit), Some(remaining), Some(reset)) =
            (bucket.limit, bucket.remaining, bucket.reset)
        else {
            continue;
        };
        if let Err(seen) = reset_reading(limit, remaining, reset) {
            return Verdict::differs(seen);
        }
        checked += 1;
        largest = largest.max(reset);
    }
    if checked == 0 {
        Verdict::not_checked("no answer carried all three X-RateLimit headers")
    } else {
        Verdict::held_seeing(format!(
            "seconds to a full bucket, at most {largest} in {checked} answers"
        ))
    }
}

/// The verdict on a growing enumeration's values: held either way (values the spec does not list are
/// read as unknown, as it assumes), noting any seen.
fn known_values(items: usize, what: &str, unknown: &mut Vec<String>) -> Verdict {
    if unknown.is_empty() {
        return Verdict::held_seeing(format!(
            "{items} {what} read; every value one the spec lists"
        ));
    }
    unknown.sort();
    unknown.dedup();
    Verdict::held_seeing(format!(
        "{items} {what} read; values the spec does not list, read as unknown: {}",
        unknown.join(", ")
    ))
}

/// What an error answer carried.
struct Envelope {
    error: Option<String>,
    /// The message as JSON (a quoted string, or an array).
    message: String,
    array: bool,
}

/// The error envelope of `answer`, which must have `status`: `statusCode` equal to it, a string
/// `error` (absent only on a 429), and a string or string-array `message`.
fn envelope(answer: &Answer, status: u16) -> Result<Envelope, String> {
    if answer.status() != status {
        return Err(format!("status {}", answer.status()));
    }
    let json = answer.json().ok_or("not JSON")?;
    if json["statusCode"].as_u64() != Some(u64::from(status)) {
        return Err("statusCode differs".to_owned());
    }
    let array = match &json["message"] {
        Value::String(_) => false,
        Value::Array(items) if items.iter().all(Value::is_string) => true,
        _ => return Err("no message".to_owned()),
    };
    Ok(Envelope {
        error: json["error"].as_str().map(str::to_owned),
        message: json["message"].to_string(),
        array,
    })
}

/// A list page's counts.
struct ListPage {
    total: u64,
    pages: u64,
    count: u64,
}

/// Checks the list envelope of `answer` for page `page` of `limit`: the fields, the page arithmetic
/// and the query echo.
fn page_of(answer: &Answer, page: u64, limit: u64) -> Result<ListPage, String> {
    if answer.status() != 200 {
        return Err(answer.describe());
    }
    let json = answer.json().ok_or("not JSON")?;
    let envelope = list_envelope(&json)?;
    if (envelope.page, envelope.limit) != (page, limit) {
        return Err(format!("query echoed {}", json["query"]));
    }
    Ok(ListPage {
        total: envelope.total,
        pages: envelope.pages,
        count: envelope.items.len() as u64,
    })
}

/// `answer` must be page `page` of `limit`, without items, reporting `total` items in all.
fn empty_page(answer: &Answer, page: u64, limit: u64, total: u64, asked: &str) -> Verdict {
    match page_of(answer, page, limit) {
        Ok(list) if list.count == 0 && list.total == total => {
            Verdict::held_seeing(format!("{asked}: 200, no items, totalItems {total}"))
        }
        Ok(list) => Verdict::differs(format!(
            "{asked} answered {} items and totalItems {} (expected no items and totalItems {total})",
            list.count, list.total
        )),
        Err(seen) => Verdict::differs(format!("{asked}: {seen}")),
    }
}

/// The filter-and-sort answer: every item active and the names in order (the statement), and equal
/// names ordered by createdAt, newest first (the assumption on sort order).
fn filtered_and_sorted(answer: &Answer) -> (Verdict, Verdict) {
    let list = match serde_json::from_slice::<ProductList>(answer.body()) {
        Ok(list) if answer.status() == 200 => list,
        _ => {
            return (
                Verdict::differs(answer.describe()),
                Verdict::not_checked("no list"),
            );
        }
    };
    let query = answer
        .json()
        .map(|json| json["query"].clone())
        .unwrap_or(Value::Null);
    let echoed = query["filter"]["status"] == serde_json::json!(["active"])
        && query["sort"]["name"] == "asc"
        && query["sort"]["createdAt"].is_string();
    let inactive = list
        .items
        .iter()
        .filter(|p| p.status.as_ref().map(|s| s.as_str()) != Some("active"))
        .count();
    let names: Vec<&str> = list
        .items
        .iter()
        .map(|p| p.name.as_deref().unwrap_or(""))
        .collect();
    let sorted = names.windows(2).all(|pair| pair[0] <= pair[1]);
    let stated = if !echoed {
        Verdict::differs(format!("the query echoed {query}"))
    } else if inactive > 0 {
        Verdict::differs(format!(
            "filter[status]=active answered {inactive} products of another status"
        ))
    } else if !sorted {
        Verdict::differs(format!("sort[name]=asc answered the names {names:?}"))
    } else {
        Verdict::held_seeing(format!("{} active products, by name", names.len()))
    };
    let mut ties = 0;
    let mut out_of_order = false;
    for pair in list.items.windows(2) {
        if pair[0].name == pair[1].name {
            ties += 1;
            out_of_order |= pair[0].created_at < pair[1].created_at;
        }
    }
    let sort_order = if !sorted {
        Verdict::not_checked("the names were not in order")
    } else if out_of_order {
        Verdict::differs("products of one name were not newest first (createdAt, the last sort)")
    } else if ties == 0 {
        Verdict::held_seeing(
            "sorted by name; no two names alike, so createdAt as the tiebreak was not seen",
        )
    } else {
        Verdict::held_seeing(format!(
            "sorted by name, then createdAt newest first ({ties} ties)"
        ))
    };
    (stated, sort_order)
}
