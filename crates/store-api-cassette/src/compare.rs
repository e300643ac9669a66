//! The emulator (or any service) held to a recording: each recorded request is sent again, in the
//! recorded order, and the answer is compared with the recorded one in what the spec fixes — the
//! status, the headers that matter (present or not, their format, the burst in `X-RateLimit-Limit`),
//! the body's fields and their JSON types at any depth (error envelopes and the `message` string or
//! list included), and the list envelope's echo of the query. Values that differ between two runs of
//! the same requests (ids, timestamps, costs, counts: any string, number or boolean) are not reported,
//! with two exceptions that the spec or the two states fix:
//!
//! - a rate-limit header whose value is within the spec's bound on one side and not on the other
//!   (`X-RateLimit-Reset` counts at most the seconds the spec's bucket needs to refill,
//!   `X-RateLimit-Remaining` at most `X-RateLimit-Limit`; the bound is
//!   [`conformance`](crate::conformance)'s);
//! - a list's totals (`totalItems`, `totalPages`), once the two sides answered an earlier page of the
//!   same collection (the same path and filters; the page, its size and the sort aside) with the same
//!   `totalItems`: the two states agree on that collection, so a later page must report the same
//!   totals. A write answered with different statuses on the two sides forgets every such agreement
//!   (the states have parted); so does nothing else, so a recording of a service that others wrote to
//!   between two pages can show a difference there.
//!
//! An answer that depends on state the target lacks (a 404 for an id it never had, a 409 for an
//! external id it never saw, a rate limit on one side only) is reported as not comparable.
//!
//! Ids the recording's creations were given (`POST` answers' `id`) are replaced by the target's in the
//! later requests' paths, queries and bodies, so a recording of another service still follows its own
//! orders and artworks on the target.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use reqwest::Method;
use serde::Serialize;
use serde_json::Value;
use store_api_raw::contract::{Operation, VERSION_PREFIX, operation_at};

use crate::conformance::{media_type, out_of_bounds};
use crate::format::{Cassette, Exchange, RecordedBody};
use crate::record::ANSWER_HEADERS;

/// Headers compared by presence and format (values vary between runs, but for the burst): every
/// header a cassette keeps.
const COMPARED_HEADERS: &[&str] = ANSWER_HEADERS;

/// Integer headers: both sides must be non-negative integers or neither.
const INTEGER_HEADERS: &[&str] = &[
    "retry-after",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
];

/// What [`compare`] found, one entry per exchange of the cassette, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Comparison {
    /// One entry per exchange.
    pub exchanges: Vec<Compared>,
}

impl Comparison {
    /// Whether no exchange differs (not comparable ones do not count).
    pub fn is_same(&self) -> bool {
        !self
            .exchanges
            .iter()
            .any(|e| matches!(e.outcome, Outcome::Differs { .. }))
    }

    /// The indices of the exchanges that differ.
    pub fn differing(&self) -> Vec<usize> {
        self.exchanges
            .iter()
            .filter(|e| matches!(e.outcome, Outcome::Differs { .. }))
            .map(|e| e.exchange)
            .collect()
    }
}

/// One exchange compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Compared {
    /// Its index in the cassette, from 0.
    pub exchange: usize,
    /// The request's method.
    pub method: String,
    /// The request's path as recorded (with its query, if any).
    pub path: String,
    /// The recorded status.
    pub recorded: u16,
    /// The target's status, when it answered.
    pub target: Option<u16>,
    /// The verdict.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The verdict on one exchange (in JSON: `{"outcome": "differs", "what": [..]}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// The target answered as recorded, in everything the spec fixes.
    Same,
    /// The target answered otherwise.
    Differs {
        /// Each difference, readable (`field \`items[].trackingInfo\`: in the recording, not in the
        /// target's answer`).
        what: Vec<String>,
    },
    /// The answer depends on state or conditions the target does not share with the recording.
    NotComparable {
        /// Why.
        why: String,
    },
}

/// Sends each request of `cassette`, in order, to the service `client` talks to (with the client's
/// key, through [`Client::request`](store_api::Client::request)), and compares each answer with the
/// recorded one.
///
/// Build `client` with [`RetryPolicy::never()`](store_api::RetryPolicy::never) for both policies:
/// a request the client retried would be one the recording did not send (a second `POST`), and a 429
/// or 5xx would be hidden behind the retry. The store a recorded path names is replaced by the
/// client's (`/stores/{storeId}/…`): a recording of the real service names the team's own store,
/// which the emulator does not hold, and the client's key is that of the client's store. A request body
/// is sent as JSON (`Content-Type: application/json`, as the client sends every body) whatever the
/// recording's `Content-Type` was, and one the cassette did not keep (over its size limit) is not
/// sent: that exchange is not comparable.
///
/// A recorded 401 is sent with the client's key, which the target accepts: not comparable. To
/// compare it, use [`compare_refused`].
pub async fn compare(cassette: &Cassette, client: &store_api::Client) -> Comparison {
    run(cassette, client, None).await
}

/// [`compare`], with the exchanges whose recorded answer is a 401 sent through `refused`: a client of
/// the same service and store (built as `client` is, with no retries) whose key the target refuses.
/// The recording's key is not kept, but the recorded 401 says it was refused; a refused key on the
/// target asks the same question (what a 401 for a known store carries).
pub async fn compare_refused(
    cassette: &Cassette,
    client: &store_api::Client,
    refused: &store_api::Client,
) -> Comparison {
    run(cassette, client, Some(refused)).await
}

async fn run(
    cassette: &Cassette,
    client: &store_api::Client,
    refused: Option<&store_api::Client>,
) -> Comparison {
    let mut ids = Ids::default();
    let mut lists = Lists::default();
    let mut report = Comparison::default();
    for (index, exchange) in cassette.exchanges.iter().enumerate() {
        let client = match refused {
            Some(refused) if exchange.answer.status == 401 => refused,
            _ => client,
        };
        let (target, outcome) = compare_one(index, exchange, client, &mut ids, &mut lists).await;
        let request = &exchange.request;
        report.exchanges.push(Compared {
            exchange: index,
            method: request.method.clone(),
            path: match &request.query {
                Some(query) => format!("{}?{query}", request.path),
                None => request.path.clone(),
            },
            recorded: exchange.answer.status,
            target,
            outcome,
        });
    }
    report
}

/// `path` with the store it names (the segment after `/stores/`) replaced by `store`.
fn in_store(path: &str, store: &str) -> String {
    const STORES: &str = "/stores/";
    let Some(at) = path.find(STORES).map(|at| at + STORES.len()) else {
        return path.to_owned();
    };
    let end = path[at..].find('/').map_or(path.len(), |end| at + end);
    format!("{}{store}{}", &path[..at], &path[end..])
}

/// The target's answer, as compared.
struct Answer {
    status: u16,
    headers: BTreeMap<String, String>,
    body: Option<Result<Value, String>>,
}

async fn compare_one(
    index: usize,
    exchange: &Exchange,
    client: &store_api::Client,
    ids: &mut Ids,
    lists: &mut Lists,
) -> (Option<u16>, Outcome) {
    let request = &exchange.request;
    let not_comparable = |why: String| (None, Outcome::NotComparable { why });
    let Ok(method) = Method::from_bytes(request.method.as_bytes()) else {
        return not_comparable(format!("{:?} is not an HTTP method", request.method));
    };
    let body = match &request.body {
        None => None,
        Some(RecordedBody::Json(value)) => Some(ids.in_json(value).to_string().into_bytes()),
        Some(RecordedBody::Text(text)) => Some(text.clone().into_bytes()),
        Some(RecordedBody::Omitted { bytes, .. }) => {
            return not_comparable(format!(
                "the request's body ({bytes} bytes) was not kept, so it cannot be sent again"
            ));
        }
    };
    // The recorded path is from the recording's origin; the client's base URL brings its own (a
    // recording through a proxy mounted under a path of its own is sent from the version prefix on).
    let path = request
        .path
        .find(VERSION_PREFIX)
        .map_or(request.path.as_str(), |at| &request.path[at..]);
    let mut target = ids.in_path(&in_store(path, client.store_id()));
    if let Some(query) = &request.query {
        target.push('?');
        target.push_str(&ids.in_query(query));
    }
    let collection = Lists::collection(&request.method, &target);
    let mut sent = client.request(method, &target);
    if let Some(body) = body {
        sent = sent.json_body(body);
    }
    let response = match sent.send().await {
        Ok(response) => response,
        Err(error) => {
            return (
                None,
                Outcome::Differs {
                    what: vec![format!("the target gave no answer: {error}")],
                },
            );
        }
    };
    let answer = Answer {
        status: response.status(),
        headers: response
            .headers()
            .iter()
            .filter(|(name, _)| COMPARED_HEADERS.contains(&name.as_str()))
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
            })
            .collect(),
        body: (!response.body().is_empty()).then(|| {
            serde_json::from_slice(response.body())
                .map_err(|_| String::from_utf8_lossy(response.body()).into_owned())
        }),
    };
    let operation = operation_at(&request.method, &request.path);
    ids.learn(exchange, &answer);
    let outcome = if answer.status == exchange.answer.status {
        let mut what = differences(exchange, &answer);
        if let (Some(collection), Some(Ok(target))) = (&collection, &answer.body)
            && let Some(RecordedBody::Json(recorded)) = &exchange.answer.body
        {
            lists.totals(index, collection, recorded, target, &mut what);
        }
        if what.is_empty() {
            Outcome::Same
        } else {
            Outcome::Differs { what }
        }
    } else {
        if request.method != "GET" {
            // The write changed one state and not the other (or both, otherwise).
            lists.agreed.clear();
        }
        match state_dependent(exchange, &answer, operation) {
            Some(why) => Outcome::NotComparable { why },
            None => Outcome::Differs {
                what: vec![format!(
                    "status {} recorded, {} from the target",
                    exchange.answer.status, answer.status
                )],
            },
        }
    };
    (Some(answer.status), outcome)
}

/// Why two different statuses say more about the two services' state than about their behaviour.
fn state_dependent(
    exchange: &Exchange,
    answer: &Answer,
    operation: Option<&Operation>,
) -> Option<String> {
    let (recorded, target) = (exchange.answer.status, answer.status);
    let either = |status: u16| recorded == status || target == status;
    let side = |status: u16| {
        if recorded == status {
            "the recording"
        } else {
            "the target"
        }
    };
    if either(429) {
        return Some(format!(
            "rate limited in {} only (429): that depends on the store's bucket, not on the request",
            side(429)
        ));
    }
    if either(401) {
        return Some(format!(
            "refused as unauthorized in {} only (401): the recording's key is not kept, the target got the client's",
            side(401)
        ));
    }
    if recorded >= 500 || target >= 500 {
        return Some(format!(
            "a service failure on one side only ({recorded} recorded, {target} from the target)"
        ));
    }
    let operation = operation?;
    // Every path names the store; a second parameter names a resource the two services may not share.
    let names_resource = operation.path.matches('{').count() > 1;
    if either(404) && names_resource {
        return Some(if target == 404 {
            "the target has no such resource (404); the recording's service had it".to_owned()
        } else {
            "the recording's service had no such resource (404); the target has it".to_owned()
        });
    }
    if operation.creates {
        let success = |status: u16| (200..300).contains(&status);
        if either(409) && (success(recorded) || success(target)) {
            return Some(
                "the external order id was already used on one side only (409): that depends on the orders each holds"
                    .to_owned(),
            );
        }
        // A business rule (a string message) reads the store's catalog, products and artworks; a
        // validation failure (a list of messages) reads the request alone.
        let business_rule = |status: u16, body: Option<&Value>| {
            status == 400
                && body
                    .and_then(|b| b.get("message"))
                    .is_some_and(Value::is_string)
        };
        let recorded_body = exchange.answer.body.as_ref().and_then(RecordedBody::json);
        let target_body = answer.body.as_ref().and_then(|b| b.as_ref().ok());
        if (business_rule(recorded, recorded_body) && success(target))
            || (business_rule(target, target_body) && success(recorded))
        {
            return Some(format!(
                "an ordering rule that reads the store's catalog, products or artworks refused it in {} only",
                side(400)
            ));
        }
    }
    None
}

/// What differs between two answers of the same status.
fn differences(exchange: &Exchange, answer: &Answer) -> Vec<String> {
    let mut what = Vec::new();
    compare_headers(&exchange.answer.headers, &answer.headers, &mut what);
    match (&exchange.answer.body, &answer.body) {
        (None, None) | (Some(RecordedBody::Omitted { .. }), _) => {}
        (None, Some(_)) => what.push("the body: none recorded, one from the target".to_owned()),
        (Some(_), None) => what.push("the body: recorded, none from the target".to_owned()),
        (Some(RecordedBody::Json(_)), Some(Err(_))) => {
            what.push("the body: JSON recorded, not JSON from the target".to_owned())
        }
        (Some(RecordedBody::Text(_)), Some(Ok(_))) => {
            what.push("the body: not JSON recorded, JSON from the target".to_owned())
        }
        (Some(RecordedBody::Text(_)), Some(Err(_))) => {}
        (Some(RecordedBody::Json(recorded)), Some(Ok(target))) => {
            Outline::of(recorded).compare("", &Outline::of(target), &mut what);
            compare_query_echo(recorded, target, &mut what);
        }
    }
    what
}

fn compare_headers(
    recorded: &BTreeMap<String, String>,
    target: &BTreeMap<String, String>,
    what: &mut Vec<String>,
) {
    let get = |headers: &BTreeMap<String, String>, name: &str| {
        headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.trim().to_owned())
    };
    for name in COMPARED_HEADERS {
        match (get(recorded, name), get(target, name)) {
            (None, None) => {}
            (Some(_), None) => {
                what.push(format!("header {name}: recorded, not sent by the target"))
            }
            (None, Some(_)) => {
                what.push(format!("header {name}: sent by the target, not recorded"))
            }
            (Some(a), Some(b)) => {
                if *name == "content-type" && media_type(&a) != media_type(&b) {
                    what.push(format!(
                        "header {name}: {a:?} recorded, {b:?} from the target"
                    ));
                }
                if INTEGER_HEADERS.contains(name) {
                    let (x, y) = (a.parse::<u64>().ok(), b.parse::<u64>().ok());
                    if x.is_some() != y.is_some() {
                        what.push(format!(
                            "header {name}: {a:?} recorded, {b:?} from the target (a non-negative integer on one side only)"
                        ));
                    } else if *name == "x-ratelimit-limit" && x != y {
                        // The burst is the spec's, not a count that moves.
                        what.push(format!("header {name}: {a} recorded, {b} from the target"));
                    }
                }
            }
        }
    }
    // Values vary, but the spec bounds some: within the bound on one side only is a difference.
    let (ours, theirs) = (out_of_bounds(recorded), out_of_bounds(target));
    for finding in &ours {
        if !theirs.iter().any(|t| same_header(t, finding)) {
            what.push(format!("in the recording only: {finding}"));
        }
    }
    for finding in &theirs {
        if !ours.iter().any(|o| same_header(o, finding)) {
            what.push(format!("in the target's answer only: {finding}"));
        }
    }
}

/// Whether two findings of [`out_of_bounds`] are about the same header.
fn same_header(a: &crate::conformance::Undeclared, b: &crate::conformance::Undeclared) -> bool {
    use crate::conformance::Undeclared::HeaderFormat;
    matches!((a, b), (HeaderFormat { name: x, .. }, HeaderFormat { name: y, .. }) if x == y)
}

/// The collections whose `totalItems` the recording and the target agreed on: the collection (see
/// [`Lists::collection`]) and the exchange where they did.
#[derive(Debug, Default)]
struct Lists {
    agreed: BTreeMap<String, (usize, Value)>,
}

impl Lists {
    /// A `GET`'s collection: its path and its query without the page, the page size and the sort,
    /// which do not change the totals.
    fn collection(method: &str, target: &str) -> Option<String> {
        if method != "GET" {
            return None;
        }
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let mut filters: Vec<&str> = query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .filter(|pair| {
                let key = pair.split_once('=').map_or(*pair, |(key, _)| key);
                key != "page" && key != "limit" && !key.starts_with("sort")
            })
            .collect();
        filters.sort_unstable();
        Some(format!("{path}?{}", filters.join("&")))
    }

    /// Compares the totals of a list answered on both sides, when an earlier page of the same
    /// collection showed the two states agree on it; then remembers whether they agree now.
    fn totals(
        &mut self,
        index: usize,
        collection: &str,
        recorded: &Value,
        target: &Value,
        what: &mut Vec<String>,
    ) {
        // A list envelope (a page past the end may have no `items`, it always has its totals).
        let is_list = |v: &Value| v.get("totalItems").is_some();
        if !is_list(recorded) || !is_list(target) {
            return;
        }
        let (ours, theirs) = (recorded.get("totalItems"), target.get("totalItems"));
        if let Some((at, total)) = self.agreed.get(collection) {
            for field in ["totalItems", "totalPages"] {
                let (a, b) = (recorded.get(field), target.get(field));
                if let (Some(a), Some(b)) = (a, b)
                    && a != b
                {
                    what.push(format!(
                        "the list's {field}: {a} recorded, {b} from the target, where both \
                         answered totalItems {total} for the same collection at #{at}"
                    ));
                }
            }
        }
        match (ours, theirs) {
            (Some(a), Some(b)) if a == b => {
                self.agreed
                    .insert(collection.to_owned(), (index, a.clone()));
            }
            _ => {
                self.agreed.remove(collection);
            }
        }
    }
}

/// The list envelope's `query` echoes the request with its defaults applied: a function of the
/// request alone, so its values are compared.
fn compare_query_echo(recorded: &Value, target: &Value, what: &mut Vec<String>) {
    let (Some(a), Some(b)) = (recorded.get("query"), target.get("query")) else {
        return;
    };
    if a.is_object() && b.is_object() && recorded.get("items").is_some() && a != b {
        what.push(format!(
            "the list's query echo: {a} recorded, {b} from the target"
        ));
    }
}

/// The structure of a JSON value with its values left out: the JSON types seen at each place, the
/// fields seen in objects, and the items of every list merged into one outline (so the number and
/// order of items, which depend on state, do not matter).
#[derive(Debug, Default)]
struct Outline {
    kinds: BTreeSet<&'static str>,
    fields: BTreeMap<String, Outline>,
    items: Option<Box<Outline>>,
}

impl Outline {
    fn of(value: &Value) -> Outline {
        let mut outline = Outline::default();
        outline.merge(value);
        outline
    }

    fn merge(&mut self, value: &Value) {
        // Integer or not is a value (a cost of 12 or 12.5): both are numbers here.
        self.kinds.insert(match value {
            Value::Number(_) => "number",
            other => crate::conformance::json_type(other),
        });
        match value {
            Value::Object(fields) => {
                for (key, value) in fields {
                    self.fields.entry(key.clone()).or_default().merge(value);
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.items.get_or_insert_default().merge(item);
                }
            }
            _ => {}
        }
    }

    fn compare(&self, at: &str, target: &Outline, what: &mut Vec<String>) {
        let place = if at.is_empty() {
            "the body".to_owned()
        } else {
            format!("`{at}`")
        };
        if self.kinds != target.kinds {
            let list =
                |kinds: &BTreeSet<&str>| kinds.iter().copied().collect::<Vec<_>>().join(" or ");
            what.push(format!(
                "{place}: {} recorded, {} from the target",
                list(&self.kinds),
                list(&target.kinds)
            ));
        }
        for (key, outline) in &self.fields {
            let field = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            match target.fields.get(key) {
                Some(theirs) => outline.compare(&field, theirs, what),
                None => what.push(format!(
                    "field `{field}`: recorded, not in the target's answer"
                )),
            }
        }
        for key in target
            .fields
            .keys()
            .filter(|k| !self.fields.contains_key(*k))
        {
            let field = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            what.push(format!(
                "field `{field}`: in the target's answer, not recorded"
            ));
        }
        // An empty list on either side says nothing about its items.
        if let (Some(ours), Some(theirs)) = (&self.items, &target.items) {
            ours.compare(&format!("{at}[]"), theirs, what);
        }
    }
}

/// The ids the recording's creations got, mapped to the ids the target gave the same creations.
#[derive(Debug, Default)]
struct Ids {
    map: BTreeMap<String, String>,
}

impl Ids {
    /// After a creation answered on both sides, its recorded id stands for the target's.
    fn learn(&mut self, exchange: &Exchange, answer: &Answer) {
        let success = |status: u16| (200..300).contains(&status);
        if exchange.request.method != "POST"
            || !success(exchange.answer.status)
            || !success(answer.status)
        {
            return;
        }
        let recorded = exchange.answer.body.as_ref().and_then(RecordedBody::json);
        let target = answer.body.as_ref().and_then(|b| b.as_ref().ok());
        if let (Some(Value::String(a)), Some(Value::String(b))) = (
            recorded.and_then(|v| v.get("id")),
            target.and_then(|v| v.get("id")),
        ) && a != b
            && !a.is_empty()
        {
            self.map.insert(a.clone(), b.clone());
        }
    }

    fn token(&self, token: &str) -> String {
        self.map
            .get(token)
            .cloned()
            .unwrap_or_else(|| token.to_owned())
    }

    fn in_path(&self, path: &str) -> String {
        path.split('/')
            .map(|s| self.token(s))
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Values of `key=a,b` pairs, one by one.
    fn in_query(&self, query: &str) -> String {
        if self.map.is_empty() {
            return query.to_owned();
        }
        query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, values)) => format!(
                    "{key}={}",
                    values
                        .split(',')
                        .map(|v| self.token(v))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                None => pair.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("&")
    }

    fn in_json(&self, value: &Value) -> Value {
        match value {
            Value::String(text) if self.map.contains_key(text) => Value::String(self.token(text)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.in_json(v)).collect()),
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), self.in_json(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Same => write!(f, "same"),
            Outcome::Differs { what } => {
                write!(f, "differs")?;
                for line in what {
                    write!(f, "\n      {line}")?;
                }
                Ok(())
            }
            Outcome::NotComparable { why } => write!(f, "not comparable: {why}"),
        }
    }
}

impl fmt::Display for Compared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = self
            .target
            .map_or("no answer".to_owned(), |status| status.to_string());
        write!(
            f,
            "#{} {} {} (recorded {}, target {target}): {}",
            self.exchange, self.method, self.path, self.recorded, self.outcome
        )
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |which: fn(&Outcome) -> bool| {
            self.exchanges.iter().filter(|e| which(&e.outcome)).count()
        };
        writeln!(
            f,
            "{} exchange(s): {} same, {} differ, {} not comparable",
            self.exchanges.len(),
            count(|o| matches!(o, Outcome::Same)),
            count(|o| matches!(o, Outcome::Differs { .. })),
            count(|o| matches!(o, Outcome::NotComparable { .. })),
        )?;
        for exchange in &self.exchanges {
            writeln!(f, "  {exchange}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{RecordedAnswer, RecordedRequest};
    use serde_json::json;

    fn exchange(method: &str, status: u16, body: Value) -> Exchange {
        Exchange {
            request: RecordedRequest {
                method: method.into(),
                path: "/store-api/2026-08/stores/s1/orders".into(),
                query: None,
                headers: BTreeMap::new(),
                body: None,
            },
            answer: RecordedAnswer {
                status,
                headers: BTreeMap::from([
                    (
                        "content-type".into(),
                        "application/json; charset=utf-8".into(),
                    ),
                    ("x-ratelimit-limit".into(), "10".into()),
                    ("x-ratelimit-remaining".into(), "7".into()),
                ]),
                body: Some(RecordedBody::Json(body)),
            },
        }
    }

    fn answer(status: u16, headers: &[(&str, &str)], body: Value) -> Answer {
        Answer {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: Some(Ok(body)),
        }
    }

    const HEADERS: &[(&str, &str)] = &[
        ("content-type", "application/json"),
        ("x-ratelimit-limit", "10"),
        ("x-ratelimit-remaining", "3"),
    ];

    #[test]
    fn values_that_vary_are_not_differences_and_shapes_are() {
        let recorded = exchange(
            "GET",
            200,
            json!({"items": [{"id": "a", "totalCost": 12, "status": "pending"}], "totalItems": 1,
                   "query": {"page": 1, "limit": 50}}),
        );
        let same = answer(
            200,
            HEADERS,
            json!({"items": [{"id": "b", "totalCost": 12.5, "status": "fulfilled"}, {"id": "c"}],
                   "totalItems": 2, "query": {"page": 1, "limit": 50}}),
        );
        assert_eq!(differences(&recorded, &same), Vec::<String>::new());
        let other = answer(
            200,
            &[
                ("content-type", "application/json"),
                ("x-ratelimit-limit", "10"),
                ("x-ratelimit-remaining", "soon"),
            ],
            json!({"items": [{"id": "b", "totalCost": "12", "status": "x", "giftWrap": true}], "totalItems": 2,
                   "query": {"page": 1, "limit": 20}}),
        );
        assert_eq!(
            differences(&recorded, &other),
            [
                "header x-ratelimit-remaining: \"7\" recorded, \"soon\" from the target (a non-negative integer on one side only)",
                "`items[].totalCost`: number recorded, string from the target",
                "field `items[].giftWrap`: in the target's answer, not recorded",
                "the list's query echo: {\"limit\":50,\"page\":1} recorded, {\"limit\":20,\"page\":1} from the target",
            ]
        );
        // An empty list says nothing about its items.
        let empty = answer(
            200,
            HEADERS,
            json!({"items": [], "totalItems": 0, "query": {"page": 1, "limit": 50}}),
        );
        assert_eq!(differences(&recorded, &empty), Vec::<String>::new());
    }

    #[test]
    fn error_envelopes_are_compared_by_shape() {
        let recorded = exchange(
            "POST",
            400,
            json!({"statusCode": 400, "error": "Bad Request", "message": ["lineItems must not be empty"]}),
        );
        let string = answer(
            400,
            HEADERS,
            json!({"statusCode": 400, "error": "Bad Request", "message": "Variant not found"}),
        );
        assert_eq!(
            differences(&recorded, &string),
            ["`message`: array recorded, string from the target"]
        );
        let no_error = answer(400, HEADERS, json!({"statusCode": 400, "message": ["x"]}));
        assert_eq!(
            differences(&recorded, &no_error),
            ["field `error`: recorded, not in the target's answer"]
        );
        let bare = answer(
            400,
            &[("content-type", "text/plain")],
            json!({"statusCode": 400, "error": "Bad Request", "message": ["x"]}),
        );
        assert_eq!(
            differences(&recorded, &bare),
            [
                "header content-type: \"application/json; charset=utf-8\" recorded, \"text/plain\" from the target",
                "header x-ratelimit-limit: recorded, not sent by the target",
                "header x-ratelimit-remaining: recorded, not sent by the target",
            ]
        );
    }

    #[test]
    fn statuses_that_depend_on_state_are_not_comparable() {
        let orders = operation_at("POST", "/store-api/2026-08/stores/s1/orders");
        let order = operation_at("GET", "/store-api/2026-08/stores/s1/orders/o1");
        let list = operation_at("GET", "/store-api/2026-08/stores/s1/orders");
        let created = exchange("POST", 201, json!({"id": "o1"}));
        let cases = [
            (&created, 409, orders, Some("409")),
            (&created, 429, orders, Some("429")),
            (&created, 500, orders, Some("failure")),
            (
                &exchange("GET", 200, json!({"id": "o1"})),
                404,
                order,
                Some("no such resource"),
            ),
            (&exchange("GET", 200, json!({})), 404, list, None),
            (&exchange("GET", 200, json!({})), 400, list, None),
        ];
        for (recorded, status, operation, says) in cases {
            let business = json!({"statusCode": status, "message": "Order not found"});
            let why = state_dependent(recorded, &answer(status, HEADERS, business), operation);
            match says {
                Some(says) => assert!(
                    why.as_deref().is_some_and(|w| w.contains(says)),
                    "{status}: {why:?}"
                ),
                None => assert_eq!(why, None, "{status}"),
            }
        }
        // A business rule (string message) reads state; a validation failure (a list) does not.
        let rule = answer(
            400,
            HEADERS,
            json!({"statusCode": 400, "message": "Variant not found"}),
        );
        assert!(state_dependent(&created, &rule, orders).is_some());
        let invalid = answer(
            400,
            HEADERS,
            json!({"statusCode": 400, "message": ["quantity must be at least 1"]}),
        );
        assert_eq!(state_dependent(&created, &invalid, orders), None);
    }

    #[test]
    fn a_recorded_path_is_sent_to_the_clients_store() {
        let orders = "/store-api/2026-08/stores/st_real_42/orders/ord_1";
        assert_eq!(
            in_store(orders, "store_alpha"),
            "/store-api/2026-08/stores/store_alpha/orders/ord_1"
        );
        assert_eq!(
            in_store("/store-api/2026-08/stores/st_real_42", "store_alpha"),
            "/store-api/2026-08/stores/store_alpha"
        );
        assert_eq!(
            in_store("/store-api/2026-08/status", "s"),
            "/store-api/2026-08/status"
        );
    }

    #[test]
    fn a_header_within_the_specs_bound_on_one_side_only_differs() {
        let with = |reset: &str, remaining: &str| {
            [
                ("x-ratelimit-limit", "10"),
                ("x-ratelimit-remaining", remaining),
                ("x-ratelimit-reset", reset),
            ]
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<String, String>>()
        };
        let mut what = Vec::new();
        // Values vary within the bounds: not reported.
        compare_headers(&with("0", "9"), &with("5", "0"), &mut what);
        assert_eq!(what, Vec::<String>::new());
        // A Unix time in the recording, seconds from the target.
        compare_headers(&with("1785542400", "9"), &with("1", "9"), &mut what);
        assert_eq!(
            what,
            [
                "in the recording only: header x-ratelimit-reset is \"1785542400\", the spec declares the seconds until the bucket is full again (X-RateLimit-Reset 1785542400 with 1 of 10 tokens spent (the bucket fills again within 2 s): it looks like a Unix time in seconds)"
            ]
        );
        what.clear();
        compare_headers(&with("1", "9"), &with("1", "12"), &mut what);
        assert_eq!(
            what,
            [
                "in the target's answer only: header x-ratelimit-remaining is \"12\", the spec declares at most X-RateLimit-Limit (10)"
            ]
        );
        // Out of bounds on both sides: the same, as far as the spec goes.
        what.clear();
        compare_headers(&with("99999", "9"), &with("88888", "9"), &mut what);
        assert_eq!(what, Vec::<String>::new());
    }

    #[test]
    fn totals_are_compared_once_an_earlier_page_of_the_collection_agreed() {
        let page =
            |total: u64| json!({"items": [], "totalItems": total, "totalPages": total.div_ceil(2)});
        let products = "/store-api/2026-08/stores/s1/products";
        let collection =
            |query: &str| Lists::collection("GET", &format!("{products}?{query}")).unwrap();
        assert_eq!(
            collection("limit=2&page=1"),
            collection("page=7&limit=2&sort[name]=asc")
        );
        assert_ne!(
            collection("limit=2"),
            collection("filter[status]=active&limit=2")
        );
        assert_eq!(Lists::collection("POST", products), None);

        let mut lists = Lists::default();
        let mut what = Vec::new();
        // The first page: totals are state, never compared on their own.
        lists.totals(
            2,
            &collection("limit=2&page=1"),
            &page(10),
            &page(10),
            &mut what,
        );
        lists.totals(
            3,
            &collection("filter[status]=draft"),
            &page(0),
            &page(4),
            &mut what,
        );
        assert_eq!(what, Vec::<String>::new());
        // A later page of the collection they agreed on: its totals must agree too.
        lists.totals(
            4,
            &collection("limit=2&page=7"),
            &page(0),
            &page(10),
            &mut what,
        );
        assert_eq!(
            what,
            [
                "the list's totalItems: 0 recorded, 10 from the target, where both answered totalItems 10 for the same collection at #2",
                "the list's totalPages: 0 recorded, 5 from the target, where both answered totalItems 10 for the same collection at #2",
            ]
        );
        // Where they did not agree, later pages stay unreported.
        what.clear();
        lists.totals(
            5,
            &collection("filter[status]=draft&page=2"),
            &page(0),
            &page(4),
            &mut what,
        );
        assert_eq!(what, Vec::<String>::new());
        // Agreement forgotten: nothing reported.
        lists.totals(6, &collection("limit=5"), &page(10), &page(10), &mut what);
        lists.agreed.clear();
        lists.totals(
            7,
            &collection("limit=5&page=3"),
            &page(0),
            &page(10),
            &mut what,
        );
        assert_eq!(what, Vec::<String>::new());
    }

    #[test]
    fn ids_of_recorded_creations_are_replaced_by_the_targets() {
        let mut ids = Ids::default();
        let created = exchange("POST", 201, json!({"id": "ord_real"}));
        ids.learn(&created, &answer(201, HEADERS, json!({"id": "ord_emu"})));
        assert_eq!(
            ids.in_path("/store-api/2026-08/stores/s1/orders/ord_real"),
            "/store-api/2026-08/stores/s1/orders/ord_emu"
        );
        assert_eq!(
            ids.in_query("filter[id]=x,ord_real&limit=5"),
            "filter[id]=x,ord_emu&limit=5"
        );
        assert_eq!(
            ids.in_json(&json!({"a": ["ord_real", "ord_realx"]})),
            json!({"a": ["ord_emu", "ord_realx"]})
        );
        // A refused creation teaches nothing.
        let mut none = Ids::default();
        none.learn(&created, &answer(400, HEADERS, json!({"id": "x"})));
        assert!(none.map.is_empty());
    }
}
