//! Every recorded answer checked against what the spec declares for its operation: the status code,
//! the body's fields at any depth (undeclared, of the wrong JSON type, missing though required), the
//! values of closed enumerations, and the headers' formats. The facts are the spec's, generated into
//! [`store_api_raw::contract::RESPONSES`]; the operation is found from the method and path as the
//! client finds it ([`store_api_raw::contract::operation_at`]).
//!
//! ```
//! use store_api_cassette::{Cassette, conformance};
//!
//! let cassette = Cassette::from_text(r#"{
//!   "format": "store-api-cassette/1", "apiVersion": "2026-08", "customerData": "redacted",
//!   "exchanges": [{
//!     "request": { "method": "GET", "path": "/store-api/2026-08/stores/s1/status" },
//!     "answer": { "status": 418, "headers": { "content-type": "application/json" },
//!                 "body": { "json": { "statusCode": 418, "message": "teapot" } } }
//!   }]
//! }"#)?;
//! let report = conformance(&cassette);
//! assert!(!report.conforms());
//! assert!(report.to_string().contains("→ 418: status not declared (the operation declares 200, 401, 429, 500)"));
//! # Ok::<(), store_api_cassette::CassetteError>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::Value;
use store_api_raw::contract::{
    ObjectShape, RATE_LIMIT_BURST, ResponseShape, Shape, operation_at,
    responses as declared_responses,
};

use store_api_raw::conventions::reset_reading;

use crate::format::{Cassette, Exchange, RecordedBody};

/// What [`conformance`] found: the answers that break the spec, and notes that do not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Conformance {
    /// Where an answer breaks the spec (empty: every answer conforms).
    pub findings: Vec<Nonconformity>,
    /// What is worth knowing but allowed: a value the spec lets grow that this version does not know,
    /// a request to no operation of the spec (its answer is not checked), a body too large to keep.
    pub notes: Vec<Nonconformity>,
}

impl Conformance {
    /// Whether every answer conforms (notes do not count).
    pub fn conforms(&self) -> bool {
        self.findings.is_empty()
    }
}

/// One thing an answer has that the spec does not declare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Nonconformity {
    /// The exchange's index in the cassette, from 0.
    pub exchange: usize,
    /// The request's method.
    pub method: String,
    /// The request's path (with its query, if any).
    pub path: String,
    /// The answer's status.
    pub status: u16,
    /// What is undeclared.
    pub what: Undeclared,
}

/// What an answer has that the spec does not declare. `at` is a path into the body
/// (`items[0].lineItems[1].sku`; empty for the body itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum Undeclared {
    /// The method and path reach no operation of the spec (a note: the answer is not checked).
    Operation,
    /// The operation does not declare this status.
    Status {
        /// The statuses it declares.
        declared: Vec<String>,
    },
    /// A field the schema does not declare.
    Field {
        /// Where.
        at: String,
        /// The schema that does not declare it, when it is a named one.
        schema: Option<String>,
    },
    /// A value of another JSON type than the schema's.
    Type {
        /// Where.
        at: String,
        /// What the schema declares.
        expected: String,
        /// The JSON type found.
        found: &'static str,
    },
    /// A value outside a closed enumeration.
    EnumValue {
        /// Where.
        at: String,
        /// The value.
        value: String,
        /// The values the spec allows.
        allowed: Vec<String>,
    },
    /// A value this version does not know of an enumeration the spec lets grow (a note).
    OpenEnumValue {
        /// Where.
        at: String,
        /// The value.
        value: String,
        /// The enumeration (`OrderStatus`).
        name: String,
    },
    /// A required field is missing.
    MissingField {
        /// Where the field should be.
        at: String,
    },
    /// A required header is missing.
    MissingHeader {
        /// The header, lower case.
        name: String,
    },
    /// A header whose value is not of its declared format.
    HeaderFormat {
        /// The header, lower case.
        name: String,
        /// Its value.
        value: String,
        /// The format the spec declares.
        expected: String,
    },
    /// The body's media type is not the declared one.
    ContentType {
        /// The `Content-Type` received, if any.
        found: Option<String>,
        /// The declared media type.
        expected: String,
    },
    /// The answer declares a body and none came.
    MissingBody,
    /// The answer declares a JSON body and what came is not JSON.
    NotJson,
    /// The body was too large to keep in the cassette and is not checked (a note).
    BodyOmitted,
}

/// Checks every answer of `cassette` against the spec.
pub fn conformance(cassette: &Cassette) -> Conformance {
    let mut report = Conformance::default();
    for (index, exchange) in cassette.exchanges.iter().enumerate() {
        let mut sink = Sink::default();
        check_exchange(exchange, &mut sink);
        let finding = |what| Nonconformity {
            exchange: index,
            method: exchange.request.method.clone(),
            path: match &exchange.request.query {
                Some(query) => format!("{}?{query}", exchange.request.path),
                None => exchange.request.path.clone(),
            },
            status: exchange.answer.status,
            what,
        };
        report
            .findings
            .extend(sink.findings.into_iter().map(finding));
        report.notes.extend(sink.notes.into_iter().map(finding));
    }
    report
}

#[derive(Default)]
struct Sink {
    findings: Vec<Undeclared>,
    notes: Vec<Undeclared>,
}

fn check_exchange(exchange: &Exchange, sink: &mut Sink) {
    let answer = &exchange.answer;
    let Some(operation) = operation_at(&exchange.request.method, &exchange.request.path) else {
        sink.notes.push(Undeclared::Operation);
        return;
    };
    let Some(declared) = declared_responses(operation.id) else {
        sink.notes.push(Undeclared::Operation);
        return;
    };
    let Some(response) = declared.response(answer.status) else {
        sink.findings.push(Undeclared::Status {
            declared: declared.statuses().map(str::to_owned).collect(),
        });
        return;
    };
    check_headers(response, &answer.headers, answer.body.is_some(), sink);
    let Some(shape) = response.body else {
        return;
    };
    match &answer.body {
        None => sink.findings.push(Undeclared::MissingBody),
        Some(RecordedBody::Omitted { .. }) => sink.notes.push(Undeclared::BodyOmitted),
        Some(RecordedBody::Text(_)) if is_json(response.content_type) => {
            sink.findings.push(Undeclared::NotJson)
        }
        Some(RecordedBody::Text(_)) => {}
        Some(RecordedBody::Json(value)) => check_value(value, shape, "", sink),
    }
}

fn is_json(media: Option<&str>) -> bool {
    media.is_some_and(|m| m == "application/json" || m.ends_with("+json"))
}

/// The media type of a `Content-Type` value, lower case, without its parameters.
pub(crate) fn media_type(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn check_headers(
    response: &ResponseShape,
    headers: &BTreeMap<String, String>,
    has_body: bool,
    sink: &mut Sink,
) {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    };
    if let Some(expected) = response.content_type.filter(|_| has_body) {
        let found = header("content-type");
        if found.map(media_type).as_deref() != Some(expected) {
            sink.findings.push(Undeclared::ContentType {
                found: found.map(str::to_owned),
                expected: expected.to_owned(),
            });
        }
    }
    for declared in response.headers {
        let Some(value) = header(declared.name) else {
            if declared.required {
                sink.findings.push(Undeclared::MissingHeader {
                    name: declared.name.to_owned(),
                });
            }
            continue;
        };
        let problem = match declared.shape {
            Shape::Integer | Shape::Number => {
                let number = value.trim().parse::<i64>().ok().or_else(|| {
                    matches!(declared.shape, Shape::Number)
                        .then(|| value.trim().parse::<f64>().ok().map(|n| n as i64))
                        .flatten()
                });
                match (number, declared.minimum) {
                    (None, _) => true,
                    (Some(n), Some(min)) => n < min,
                    (Some(_), None) => false,
                }
            }
            _ => false,
        };
        if problem {
            let kind = if matches!(declared.shape, Shape::Integer) {
                "an integer"
            } else {
                "a number"
            };
            sink.findings.push(Undeclared::HeaderFormat {
                name: declared.name.to_owned(),
                value: value.to_owned(),
                expected: match declared.minimum {
                    Some(min) => format!("{kind} of at least {min}"),
                    None => kind.to_owned(),
                },
            });
        }
    }
    sink.findings.extend(out_of_bounds(headers));
}

/// The rate-limit headers of `headers` whose integer value is past the bound the spec sets:
/// `X-RateLimit-Reset` over the seconds the spec's bucket needs to refill what was spent
/// (`store_api_raw::conventions::reset_reading`, beside the answer's own limit and remaining, or the
/// burst all spent when they are absent), `X-RateLimit-Remaining` over `X-RateLimit-Limit`. A header
/// that is absent or not a non-negative integer is not judged here (its format is).
pub(crate) fn out_of_bounds(headers: &BTreeMap<String, String>) -> Vec<Undeclared> {
    let integer = |name: &str| {
        headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .and_then(|(_, value)| Some((value.trim().parse::<u64>().ok()?, value.clone())))
    };
    let mut out = Vec::new();
    if let Some((reset, value)) = integer("x-ratelimit-reset") {
        let limit = integer("x-ratelimit-limit").map_or(u64::from(RATE_LIMIT_BURST), |(l, _)| l);
        let remaining = integer("x-ratelimit-remaining").map_or(0, |(r, _)| r);
        if let Err(reading) = reset_reading(limit, remaining, reset) {
            out.push(Undeclared::HeaderFormat {
                name: "x-ratelimit-reset".to_owned(),
                value,
                expected: format!("the seconds until the bucket is full again ({reading})"),
            });
        }
    }
    if let (Some((remaining, value)), Some((limit, _))) = (
        integer("x-ratelimit-remaining"),
        integer("x-ratelimit-limit"),
    ) && remaining > limit
    {
        out.push(Undeclared::HeaderFormat {
            name: "x-ratelimit-remaining".to_owned(),
            value,
            expected: format!("at most X-RateLimit-Limit ({limit})"),
        });
    }
    out
}

/// The JSON type of a value, as the findings name it.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn describe(shape: &Shape) -> String {
    match shape {
        Shape::Any => "any value".to_owned(),
        Shape::Boolean => "boolean".to_owned(),
        Shape::Integer => "integer".to_owned(),
        Shape::Number => "number".to_owned(),
        Shape::String | Shape::Enum(_) | Shape::OpenEnum(_) => "string".to_owned(),
        Shape::Array(items) => format!("array of {}", describe(items)),
        Shape::Object(object) => match object.name {
            Some(name) => format!("object ({name})"),
            None => "object".to_owned(),
        },
        Shape::OneOf(members) => members
            .iter()
            .map(|m| describe(m))
            .collect::<Vec<_>>()
            .join(" or "),
        Shape::Nullable(inner) => format!("{} or null", describe(inner)),
    }
}

fn child(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

fn check_value(value: &Value, shape: &Shape, at: &str, sink: &mut Sink) {
    let wrong = |sink: &mut Sink| {
        sink.findings.push(Undeclared::Type {
            at: at.to_owned(),
            expected: describe(shape),
            found: json_type(value),
        })
    };
    match (shape, value) {
        (Shape::Any, _) => {}
        (Shape::Nullable(_), Value::Null) => {}
        (Shape::Nullable(inner), _) => check_value(value, inner, at, sink),
        (Shape::Boolean, Value::Bool(_)) | (Shape::Number, Value::Number(_)) => {}
        (Shape::String, Value::String(_)) => {}
        (Shape::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => {}
        (Shape::Enum(allowed), Value::String(text)) => {
            if !allowed.contains(&text.as_str()) {
                sink.findings.push(Undeclared::EnumValue {
                    at: at.to_owned(),
                    value: text.clone(),
                    allowed: allowed.iter().map(|v| (*v).to_owned()).collect(),
                });
            }
        }
        (Shape::OpenEnum(open), Value::String(text)) => {
            if !open.known.contains(&text.as_str()) {
                sink.notes.push(Undeclared::OpenEnumValue {
                    at: at.to_owned(),
                    value: text.clone(),
                    name: open.name.to_owned(),
                });
            }
        }
        (Shape::Array(items), Value::Array(values)) => {
            for (index, item) in values.iter().enumerate() {
                check_value(item, items, &format!("{at}[{index}]"), sink);
            }
        }
        (Shape::Object(object), Value::Object(fields)) => check_object(object, fields, at, sink),
        (Shape::OneOf(members), _) => check_one_of(members, value, at, sink, wrong),
        _ => wrong(sink),
    }
}

fn check_object(
    object: &ObjectShape,
    fields: &serde_json::Map<String, Value>,
    at: &str,
    sink: &mut Sink,
) {
    for (key, value) in fields {
        let at = child(at, key);
        match (object.property(key), object.additional) {
            (Some(property), _) => check_value(value, property.shape, &at, sink),
            (None, Some(additional)) => check_value(value, additional, &at, sink),
            (None, None) => sink.findings.push(Undeclared::Field {
                at,
                schema: object.name.map(str::to_owned),
            }),
        }
    }
    for property in object.properties.iter().filter(|p| p.required) {
        if !fields.contains_key(property.name) {
            sink.findings.push(Undeclared::MissingField {
                at: child(at, property.name),
            });
        }
    }
}

/// A value of one of several shapes: the first it conforms to wins; when none does, the findings are
/// those of the one member of the value's JSON type (the precise ones), or a type finding.
fn check_one_of(
    members: &[&Shape],
    value: &Value,
    at: &str,
    sink: &mut Sink,
    wrong: impl Fn(&mut Sink),
) {
    let mut tries: Vec<Sink> = Vec::new();
    for member in members {
        let mut trial = Sink::default();
        check_value(value, member, at, &mut trial);
        if trial.findings.is_empty() {
            sink.notes.extend(trial.notes);
            return;
        }
        tries.push(trial);
    }
    let same_type: Vec<usize> = members
        .iter()
        .enumerate()
        .filter(|(_, m)| !tries_type_mismatch(m, value))
        .map(|(i, _)| i)
        .collect();
    match same_type.as_slice() {
        [only] => {
            let trial = tries.swap_remove(*only);
            sink.findings.extend(trial.findings);
            sink.notes.extend(trial.notes);
        }
        _ => wrong(sink),
    }
}

/// Whether `value` is of another JSON type than `shape` at its top.
fn tries_type_mismatch(shape: &Shape, value: &Value) -> bool {
    match (shape, value) {
        (Shape::Any, _) | (Shape::Nullable(_), Value::Null) => false,
        (Shape::Nullable(inner), _) => tries_type_mismatch(inner, value),
        (Shape::Boolean, Value::Bool(_)) | (Shape::Number, Value::Number(_)) => false,
        (Shape::Integer, Value::Number(_)) => false,
        (Shape::String | Shape::Enum(_) | Shape::OpenEnum(_), Value::String(_)) => false,
        (Shape::Array(_), Value::Array(_)) | (Shape::Object(_), Value::Object(_)) => false,
        (Shape::OneOf(members), _) => members.iter().all(|m| tries_type_mismatch(m, value)),
        _ => true,
    }
}

fn at_text(at: &str) -> String {
    if at.is_empty() {
        "the body".to_owned()
    } else {
        format!("`{at}`")
    }
}

impl fmt::Display for Undeclared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undeclared::Operation => {
                write!(f, "no operation of the spec; the answer is not checked")
            }
            Undeclared::Status { declared } => write!(
                f,
                "status not declared (the operation declares {})",
                declared.join(", ")
            ),
            Undeclared::Field { at, schema } => match schema {
                Some(schema) => write!(f, "field `{at}` is not declared by {schema}"),
                None => write!(f, "field `{at}` is not declared"),
            },
            Undeclared::Type {
                at,
                expected,
                found,
            } => write!(
                f,
                "{} is {found}, the spec declares {expected}",
                at_text(at)
            ),
            Undeclared::EnumValue { at, value, allowed } => write!(
                f,
                "{} is {value:?}, not one of {}",
                at_text(at),
                allowed.join(", ")
            ),
            Undeclared::OpenEnumValue { at, value, name } => write!(
                f,
                "{} is {value:?}, a value of {name} this version does not know (allowed: it may grow)",
                at_text(at)
            ),
            Undeclared::MissingField { at } => write!(f, "required field `{at}` is missing"),
            Undeclared::MissingHeader { name } => write!(f, "required header {name} is missing"),
            Undeclared::HeaderFormat {
                name,
                value,
                expected,
            } => write!(
                f,
                "header {name} is {value:?}, the spec declares {expected}"
            ),
            Undeclared::ContentType { found, expected } => match found {
                Some(found) => write!(f, "content-type is {found:?}, the spec declares {expected}"),
                None => write!(f, "no content-type, the spec declares {expected}"),
            },
            Undeclared::MissingBody => write!(f, "no body, the spec declares one"),
            Undeclared::NotJson => write!(f, "the body is not JSON, the spec declares JSON"),
            Undeclared::BodyOmitted => write!(f, "the body was not kept; it is not checked"),
        }
    }
}

impl fmt::Display for Nonconformity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "#{} {} {} → {}: {}",
            self.exchange, self.method, self.path, self.status, self.what
        )
    }
}

impl fmt::Display for Conformance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.findings.is_empty() {
            writeln!(f, "every answer conforms to the spec")?;
        } else {
            writeln!(f, "{} finding(s) against the spec:", self.findings.len())?;
            for finding in &self.findings {
                writeln!(f, "  {finding}")?;
            }
        }
        if !self.notes.is_empty() {
            writeln!(f, "{} note(s):", self.notes.len())?;
            for note in &self.notes {
                writeln!(f, "  {note}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{CustomerData, RecordedAnswer, RecordedRequest};
    use serde_json::json;

    const ORDERS: &str = "/store-api/2026-08/stores/s1/orders";

    fn headers() -> BTreeMap<String, String> {
        [
            ("content-type", "application/json; charset=utf-8"),
            ("x-ratelimit-limit", "10"),
            ("x-ratelimit-remaining", "9"),
            ("x-ratelimit-reset", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    fn page() -> Value {
        json!({
            "items": [{
                "id": "ord_1", "status": "pending", "fulfillmentStatus": "pending", "paymentStatus": "due",
                "totalCost": 12.5, "totalQuantity": 2,
                "lineItems": [{"id": "li_1", "sku": "A", "quantity": 2, "unitCost": 6.25, "isCustom": false}],
                "shippingAddress": {"firstName": "A", "address": {"country": "US"}}
            }],
            "totalItems": 1, "startItem": 1, "endItem": 1, "totalPages": 1,
            "query": {"page": 1, "limit": 50, "filter": {"status": ["pending"]}, "sort": {"createdAt": "desc"}}
        })
    }

    fn cassette(status: u16, headers: BTreeMap<String, String>, body: Value) -> Cassette {
        let mut cassette = Cassette::new(CustomerData::Redacted);
        cassette.exchanges.push(Exchange {
            request: RecordedRequest {
                method: "GET".into(),
                path: ORDERS.into(),
                query: Some("filter[status]=pending".into()),
                headers: BTreeMap::new(),
                body: None,
            },
            answer: RecordedAnswer {
                status,
                headers,
                body: Some(RecordedBody::Json(body)),
            },
        });
        cassette
    }

    /// The one finding of a cassette whose one answer deviates once.
    fn only_finding(cassette: &Cassette) -> Undeclared {
        let report = conformance(cassette);
        assert_eq!(report.findings.len(), 1, "{report}");
        let finding = &report.findings[0];
        assert_eq!(
            (finding.exchange, finding.method.as_str()),
            (0, "GET"),
            "{report}"
        );
        assert_eq!(finding.path, format!("{ORDERS}?filter[status]=pending"));
        finding.what.clone()
    }

    #[test]
    fn a_declared_answer_conforms() {
        let report = conformance(&cassette(200, headers(), page()));
        assert!(report.conforms() && report.notes.is_empty(), "{report}");
        assert_eq!(report.to_string(), "every answer conforms to the spec\n");
        let error = json!({"statusCode": 400, "error": "Bad Request", "message": ["limit must not be greater than 100"]});
        assert!(conformance(&cassette(400, headers(), error)).conforms());
        // 429s omit `error`.
        let mut limited = headers();
        limited.insert("retry-after".into(), "1".into());
        let body = json!({"statusCode": 429, "message": "Too Many Requests"});
        assert!(conformance(&cassette(429, limited, body)).conforms());
    }

    #[test]
    fn an_extra_field_is_reported_at_its_depth() {
        let mut body = page();
        body["items"][0]["lineItems"][0]["giftWrap"] = json!(true);
        assert_eq!(
            only_finding(&cassette(200, headers(), body)),
            Undeclared::Field {
                at: "items[0].lineItems[0].giftWrap".into(),
                schema: Some("OrderLineItem".into())
            }
        );
    }

    #[test]
    fn a_wrong_type_is_reported() {
        let mut body = page();
        body["totalItems"] = json!("1");
        let what = only_finding(&cassette(200, headers(), body));
        assert_eq!(
            what,
            Undeclared::Type {
                at: "totalItems".into(),
                expected: "integer".into(),
                found: "string"
            }
        );
        let mut body = page();
        body["items"][0]["shippingAddress"]["address"] = json!(null);
        assert_eq!(
            only_finding(&cassette(200, headers(), body)).to_string(),
            "`items[0].shippingAddress.address` is null, the spec declares object (Address)"
        );
        let error = json!({"statusCode": 400, "error": "Bad Request", "message": 7});
        assert_eq!(
            only_finding(&cassette(400, headers(), error)).to_string(),
            "`message` is integer, the spec declares string or array of string"
        );
        let error = json!({"statusCode": 400, "error": "Bad Request", "message": ["a", 7]});
        assert_eq!(
            only_finding(&cassette(400, headers(), error)).to_string(),
            "`message[1]` is integer, the spec declares string"
        );
    }

    #[test]
    fn an_undeclared_status_is_reported() {
        let body = json!({"statusCode": 418, "message": "teapot"});
        let report = conformance(&cassette(418, headers(), body));
        assert_eq!(report.findings.len(), 1, "{report}");
        assert_eq!(
            report.findings[0].to_string(),
            format!(
                "#0 GET {ORDERS}?filter[status]=pending → 418: status not declared (the operation declares 200, 400, 401, 429, 500)"
            )
        );
    }

    #[test]
    fn header_formats_are_checked() {
        let mut bad = headers();
        bad.insert("x-ratelimit-remaining".into(), "many".into());
        assert_eq!(
            only_finding(&cassette(200, bad, page())),
            Undeclared::HeaderFormat {
                name: "x-ratelimit-remaining".into(),
                value: "many".into(),
                expected: "an integer of at least 0".into()
            }
        );
        let mut negative = headers();
        negative.insert("x-ratelimit-reset".into(), "-1".into());
        assert!(matches!(
            only_finding(&cassette(200, negative, page())),
            Undeclared::HeaderFormat { name, .. } if name == "x-ratelimit-reset"
        ));
        // The bounds: a reset past the bucket's refill time (a Unix time), more remaining than the burst.
        let mut unix = headers();
        unix.insert("x-ratelimit-reset".into(), "1785542400".into());
        assert_eq!(
            only_finding(&cassette(200, unix, page())),
            Undeclared::HeaderFormat {
                name: "x-ratelimit-reset".into(),
                value: "1785542400".into(),
                expected: "the seconds until the bucket is full again (X-RateLimit-Reset 1785542400 \
                    with 1 of 10 tokens spent (the bucket fills again within 2 s): it looks like a Unix time in seconds)"
                    .into()
            }
        );
        let mut full = headers();
        full.insert("x-ratelimit-remaining".into(), "0".into());
        full.insert("x-ratelimit-reset".into(), "5".into());
        assert!(conformance(&cassette(200, full, page())).conforms());
        let mut over = headers();
        over.insert("x-ratelimit-remaining".into(), "11".into());
        assert_eq!(
            only_finding(&cassette(200, over, page())),
            Undeclared::HeaderFormat {
                name: "x-ratelimit-remaining".into(),
                value: "11".into(),
                expected: "at most X-RateLimit-Limit (10)".into()
            }
        );
        let mut limited = headers();
        limited.insert("retry-after".into(), "1.5".into());
        let body = json!({"statusCode": 429, "message": "Too Many Requests"});
        assert!(matches!(
            only_finding(&cassette(429, limited, body.clone())),
            Undeclared::HeaderFormat { name, .. } if name == "retry-after"
        ));
        assert_eq!(
            only_finding(&cassette(429, headers(), body)),
            Undeclared::MissingHeader {
                name: "retry-after".into()
            }
        );
        let mut html = headers();
        html.insert("content-type".into(), "text/html".into());
        assert_eq!(
            only_finding(&cassette(200, html, page())),
            Undeclared::ContentType {
                found: Some("text/html".into()),
                expected: "application/json".into()
            }
        );
        let mut missing = headers();
        missing.remove("x-ratelimit-limit");
        assert_eq!(
            only_finding(&cassette(200, missing.clone(), page())),
            Undeclared::MissingHeader {
                name: "x-ratelimit-limit".into()
            }
        );
        // Optional on a 401 (a keyless request has no bucket).
        let body =
            json!({"statusCode": 401, "error": "Unauthorized", "message": "Invalid API key"});
        let mut bare = BTreeMap::new();
        bare.insert("content-type".to_owned(), "application/json".to_owned());
        assert!(conformance(&cassette(401, bare, body)).conforms());
    }

    #[test]
    fn closed_enumerations_are_violations_and_open_ones_notes() {
        let mut body = page();
        body["query"]["sort"]["createdAt"] = json!("up");
        assert_eq!(
            only_finding(&cassette(200, headers(), body)),
            Undeclared::EnumValue {
                at: "query.sort.createdAt".into(),
                value: "up".into(),
                allowed: vec!["asc".into(), "desc".into()]
            }
        );
        let mut body = page();
        body["items"][0]["status"] = json!("teleported");
        let report = conformance(&cassette(200, headers(), body));
        assert!(report.conforms(), "{report}");
        assert_eq!(
            report
                .notes
                .iter()
                .map(|n| n.what.clone())
                .collect::<Vec<_>>(),
            [Undeclared::OpenEnumValue {
                at: "items[0].status".into(),
                value: "teleported".into(),
                name: "OrderStatus".into()
            }]
        );
    }

    #[test]
    fn a_missing_required_field_is_reported() {
        let mut body = page();
        body["items"][0]["lineItems"][0]
            .as_object_mut()
            .unwrap()
            .remove("id");
        assert_eq!(
            only_finding(&cassette(200, headers(), body)),
            Undeclared::MissingField {
                at: "items[0].lineItems[0].id".into()
            }
        );
    }

    #[test]
    fn a_path_of_no_operation_is_a_note() {
        let mut cassette = cassette(404, headers(), json!({}));
        cassette.exchanges[0].request.path = "/store-api/2026-08/stores/s1/nowhere".into();
        let report = conformance(&cassette);
        assert!(report.conforms());
        assert_eq!(report.notes[0].what, Undeclared::Operation);
    }
}
