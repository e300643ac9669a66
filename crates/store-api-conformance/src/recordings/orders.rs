//! How request bodies are validated, and in which order: the facts only a request with a body shows
//! (null fields, empty ids, the field rules the spec assumes, the 409 against body validation and
//! the ordering rules). Whether a body is valid is decided by `store_api_rules::decode` reading it as
//! the service does ([`Reading::Service`]), the same decoding the emulator answers with: there is one
//! implementation of each rule, and this module only compares its verdict with the recorded answer.

use std::collections::BTreeSet;

use serde_json::Value;
use store_api_raw::contract::{CREATE_ARTWORK, CREATE_ORDER};
use store_api_raw::rule::Rule;
use store_api_raw::types::{CreateArtworkRequest, CreateOrderRequest};
use store_api_rules::ViolationKind;
use store_api_rules::decode::{DecodeError, Failure, Reading, decode_body};

use super::exchange::{Message, Seen};
use super::facts::Facts;

/// What the rules say of a body.
struct Oracle {
    /// Every failure, with its path and the service's message (empty: the body is valid).
    failures: Vec<(String, String)>,
    /// Whether the failures are declared fields sent as `null`, which are reported alone.
    nulls: bool,
}

/// The rules' verdict on `bytes` as a `T`: the decoding as the service reads it, then, for a body that
/// decodes, the field rules of `field_rules` that are body validation (the emulator's `validate_order`
/// runs them first, before the ordering rules).
fn oracle<T>(
    bytes: &[u8],
    field_rules: impl Fn(&T) -> Vec<store_api_rules::Violation>,
) -> Option<Oracle>
where
    T: serde::de::DeserializeOwned + store_api_raw::rule::BodyRules,
{
    match decode_body::<T>(bytes, Reading::Service, &field_rules) {
        Ok(request) => Some(Oracle {
            failures: field_rules(&request)
                .into_iter()
                .filter(store_api_rules::Violation::is_field_validation)
                .map(|violation| (violation.path.clone(), violation.message()))
                .collect(),
            nulls: false,
        }),
        Err(DecodeError::Invalid(failures)) => Some(Oracle {
            nulls: failures.iter().any(
                |failure| matches!(failure, Failure::Rule(rule) if rule.rule == Rule::NotNull),
            ),
            failures: failures
                .iter()
                .map(|failure| (path_of(failure), failure.message()))
                .collect(),
        }),
        // Not JSON: a refusal of its own kind, which no fact here is about.
        Err(_) => None,
    }
}

fn path_of(failure: &Failure) -> String {
    match failure {
        Failure::Rule(rule) => rule.path.clone(),
        Failure::Violation(violation) => violation.path.clone(),
        Failure::Serde { path, .. } => path.clone(),
        _ => String::new(),
    }
}

/// The path a message of the service names (the text before its first space).
fn message_path(message: &str) -> &str {
    message.split(' ').next().unwrap_or_default()
}

/// A field rule the spec assumes: the paths it concerns and whether a body shows it.
struct FieldFact {
    id: &'static str,
    path: fn(&str) -> bool,
    shown_by: fn(&Value) -> bool,
}

fn segments(path: &str) -> Vec<&str> {
    path.split('.').collect()
}

fn line_items(body: &Value) -> impl Iterator<Item = &Value> {
    body["lineItems"].as_array().into_iter().flatten()
}

fn country(body: &Value) -> Option<&str> {
    body["shippingAddress"]["address"]["country"].as_str()
}

const ID_FIELDS: [&str; 3] = ["productVariantId", "sku", "catalogProductVariantId"];

const ORDER_FACTS: &[FieldFact] = &[
    FieldFact {
        id: "empty-ids",
        path: |path| matches!(segments(path)[..], ["lineItems", _, field] if ID_FIELDS.contains(&field)),
        shown_by: |body| {
            line_items(body).any(|item| ID_FIELDS.iter().any(|field| item[*field] == ""))
        },
    },
    FieldFact {
        id: "us-states",
        path: |path| path == "shippingAddress.address.stateOrProvince",
        shown_by: |body| {
            country(body) == Some("US")
                && body["shippingAddress"]["address"]["stateOrProvince"]
                    .as_str()
                    .is_some_and(|state| !state.is_empty())
        },
    },
    FieldFact {
        id: "country-codes",
        path: |path| path == "shippingAddress.address.country",
        shown_by: |body| country(body).is_some(),
    },
    FieldFact {
        id: "external-id-not-empty",
        path: |path| path == "externalOrderId",
        shown_by: |body| body["externalOrderId"].is_string(),
    },
    FieldFact {
        id: "line-items-not-empty",
        path: |path| path == "lineItems",
        shown_by: |body| body["lineItems"].is_array(),
    },
    FieldFact {
        id: "design-size-positive",
        path: |path| {
            matches!(
                segments(path)[..],
                [
                    "lineItems",
                    _,
                    "decorations",
                    _,
                    "physicalWidth" | "physicalHeight"
                ]
            )
        },
        shown_by: |body| {
            line_items(body).any(|item| {
                item["decorations"]
                    .as_array()
                    .is_some_and(|d| !d.is_empty())
            })
        },
    },
    FieldFact {
        id: "email-format",
        path: |path| path == "shippingAddress.email",
        shown_by: |body| body["shippingAddress"]["email"].is_string(),
    },
    FieldFact {
        id: "address-not-empty",
        path: |path| path == "shippingAddress.address.streetAddress",
        shown_by: |body| body["shippingAddress"]["address"]["streetAddress"].is_string(),
    },
    FieldFact {
        id: "first-name-required",
        path: |path| path == "shippingAddress.firstName",
        shown_by: |body| body["shippingAddress"].is_object(),
    },
];

const ARTWORK_FACTS: &[FieldFact] = &[
    FieldFact {
        id: "artwork-name-required",
        path: |path| path == "name",
        shown_by: |body| body.get("name").is_none(),
    },
    FieldFact {
        id: "artwork-name-bounds",
        path: |path| path == "name",
        shown_by: |body| body["name"].is_string(),
    },
];

/// Judges `fact` on one exchange: the failures the rules find at its paths must be in the answer's
/// message array; where they find none, the answer must not name those paths.
fn field_fact(fact: &FieldFact, seen: &Seen<'_>, body: &Value, oracle: &Oracle, facts: &mut Facts) {
    if !(fact.shown_by)(body) {
        return;
    }
    let status = seen.status();
    let listed: Vec<String> = seen
        .envelope()
        .and_then(|e| e.message.list().map(<[String]>::to_vec))
        .filter(|_| status == 400)
        .unwrap_or_default();
    let expected: Vec<&str> = oracle
        .failures
        .iter()
        .filter(|(path, _)| (fact.path)(path))
        .map(|(_, message)| message.as_str())
        .collect();
    let result = if expected.is_empty() {
        match listed
            .iter()
            .find(|message| (fact.path)(message_path(message)))
        {
            Some(message) => Err(format!(
                "refused as a validation failure ({message:?}) where the spec finds nothing wrong there"
            )),
            None => Ok(format!("{} (nothing wrong there)", seen.describe())),
        }
    } else {
        match expected
            .iter()
            .find(|message| !listed.iter().any(|m| m == *message))
        {
            Some(missing) => Err(format!(
                "{} where the spec refuses it as a validation failure: {missing:?}",
                seen.describe()
            )),
            None => Ok(format!("400 {expected:?}")),
        }
    };
    facts.judge(fact.id, &seen.at(), result);
}

/// The paths whose value a cassette recorded with customer data redacted may hold as a placeholder
/// of another validity than the value sent (a US state that did not exist becomes one that does):
/// no verdict rests on them there.
pub(crate) const REDACTED_VALIDITY: &[&str] = &["shippingAddress.address.stateOrProvince"];

pub(crate) fn check(all: &[Seen<'_>], redacted: bool, facts: &mut Facts) {
    // External ids of the orders created so far, by store.
    let mut created: BTreeSet<(Option<String>, String)> = BTreeSet::new();
    for seen in all {
        let status = seen.status();
        // A 401, 413 or 429 was refused before the body was read; a 5xx says nothing of it.
        let judged = (200..300).contains(&status) || status == 400 || status == 409;
        if seen.is(&CREATE_ARTWORK) {
            artwork(seen, facts);
            if judged
                && let (Some(body), Some(bytes)) = (seen.request_json(), seen.request_bytes())
                && let Some(oracle) = oracle::<CreateArtworkRequest>(&bytes, |_| Vec::new())
            {
                body_facts(ARTWORK_FACTS, seen, body, &oracle, redacted, facts);
            }
            continue;
        }
        if !seen.is(&CREATE_ORDER) {
            continue;
        }
        if judged
            && let (Some(body), Some(bytes)) = (seen.request_json(), seen.request_bytes())
            && let Some(oracle) =
                oracle::<CreateOrderRequest>(&bytes, store_api_rules::validate_fields)
        {
            body_facts(ORDER_FACTS, seen, body, &oracle, redacted, facts);
            check_order(seen, body, &oracle, &created, redacted, facts);
        }
        if status == 201 {
            created_order(seen, facts);
            if let Some(external) = seen
                .answer_json()
                .and_then(|order| order["externalOrderId"].as_str())
            {
                created.insert((seen.store.clone(), external.to_owned()));
            }
        }
    }
}

/// The null-fields fact, then (for a body without nulls, which are reported alone) every field fact.
fn body_facts(
    field_facts: &[FieldFact],
    seen: &Seen<'_>,
    body: &Value,
    oracle: &Oracle,
    redacted: bool,
    facts: &mut Facts,
) {
    // A 409 answered before the body was judged is the order of checks' fact, not a field's.
    if seen.status() == 409 {
        return;
    }
    if oracle.nulls {
        let listed = seen
            .envelope()
            .and_then(|e| e.message.list().map(<[String]>::to_vec));
        let expected: Vec<&str> = oracle.failures.iter().map(|(_, m)| m.as_str()).collect();
        let result = match listed {
            Some(listed)
                if seen.status() == 400
                    && expected.iter().all(|m| listed.iter().any(|l| l == m)) =>
            {
                Ok(format!("400 {expected:?}"))
            }
            _ => Err(format!(
                "{} where the spec refuses a declared field sent as null: {expected:?}",
                seen.describe()
            )),
        };
        facts.judge("null-fields", &seen.at(), result);
        return;
    }
    for fact in field_facts {
        if redacted && REDACTED_VALIDITY.iter().any(|path| (fact.path)(path)) {
            continue;
        }
        field_fact(fact, seen, body, oracle, facts);
    }
}

/// Body validation first (every failing field, as a message array), then a reused `externalOrderId`
/// (409), then the ordering rules (the first violation, as a string).
fn check_order(
    seen: &Seen<'_>,
    body: &Value,
    oracle: &Oracle,
    created: &BTreeSet<(Option<String>, String)>,
    redacted: bool,
    facts: &mut Facts,
) {
    const ID: &str = "create-order-check-order";
    if oracle.nulls {
        return;
    }
    // A refusal naming only placeholders' fields says nothing the rules can weigh.
    if redacted
        && let Some(list) = seen
            .envelope()
            .and_then(|e| e.message.list().map(<[String]>::to_vec))
        && !list.is_empty()
        && list
            .iter()
            .all(|message| REDACTED_VALIDITY.contains(&message_path(message)))
    {
        return;
    }
    let at = seen.at();
    let status = seen.status();
    let message = seen.envelope().map(|e| e.message);
    let reused = body["externalOrderId"]
        .as_str()
        .filter(|external| created.contains(&(seen.store.clone(), (*external).to_owned())));
    if !oracle.failures.is_empty() {
        match (status, &message) {
            (409, _) => facts.differs(
                ID,
                &at,
                format!(
                    "{}: a body with {} failing field(s) was answered 409 for its reused externalOrderId, before body validation",
                    seen.describe(),
                    oracle.failures.len()
                ),
            ),
            (400, Some(Message::Text(_))) => facts.differs(
                ID,
                &at,
                format!("{}: an ordering rule was reported before body validation", seen.describe()),
            ),
            (400, Some(Message::List(list))) => facts.held(
                ID,
                &at,
                match reused {
                    Some(external) => format!("an invalid body with the reused externalOrderId {external}: 400 with {} messages", list.len()),
                    None => format!("an invalid body: 400 with {} messages", list.len()),
                },
            ),
            _ => {}
        }
        return;
    }
    // An empty id is its own fact (it counts as absent): a service that refuses it says nothing here.
    if line_items(body).any(|item| ID_FIELDS.iter().any(|field| item[*field] == "")) {
        return;
    }
    match (status, &message, reused) {
        (409, _, Some(external)) => facts.held(ID, &at, format!("a valid body with the reused externalOrderId {external}: 409")),
        (400, Some(Message::Text(text)), Some(external)) => facts.differs(
            ID,
            &at,
            format!("400 {text:?}: an ordering rule was reported before the 409 of the reused externalOrderId {external}"),
        ),
        (201, _, Some(external)) => facts.differs(
            ID,
            &at,
            format!("201: a second order was created with the reused externalOrderId {external}"),
        ),
        (400, Some(Message::Text(text)), None) => facts.held(ID, &at, format!("a valid body breaking an ordering rule: 400 {text:?}")),
        // A field the rules find nothing wrong with is its own fact's; an ordering rule's message in
        // an array is this one's.
        (400, Some(Message::List(list)), _) if list.iter().any(|m| ordering_rule(m)) => facts.differs(
            ID,
            &at,
            format!("400 {list:?}: an ordering rule reported as a message array (the spec reports only the first, as a string)"),
        ),
        _ => {}
    }
}

/// Whether `message` is one of an ordering rule (not body validation), by the service's wording.
fn ordering_rule(message: &str) -> bool {
    ViolationKind::ALL
        .iter()
        .filter(|kind| !kind.is_field_validation())
        .any(|kind| message.starts_with(kind.prefix()))
}

/// The created order: `orderedAt` defaults to the creation time, and a custom item returns its
/// blank's ids.
fn created_order(seen: &Seen<'_>, facts: &mut Facts) {
    let (Some(order), Some(body)) = (seen.answer_json(), seen.request_json()) else {
        return;
    };
    let at = seen.at();
    // An answer without the address says nothing of how it was kept.
    if order["shippingAddress"].is_object() {
        let mut changed = Vec::new();
        changed_text(
            "shippingAddress",
            &body["shippingAddress"],
            &order["shippingAddress"],
            &mut changed,
        );
        facts.judge(
            "address-as-sent",
            &at,
            if changed.is_empty() {
                Ok("the shippingAddress answered is the one sent".to_owned())
            } else {
                Err(format!(
                    "the shippingAddress answered is not the one sent: {}",
                    changed.join("; ")
                ))
            },
        );
    }
    if body.get("orderedAt").is_none()
        && let (Some(ordered), Some(created)) =
            (order["orderedAt"].as_str(), order["createdAt"].as_str())
    {
        facts.judge(
            "ordered-at-default",
            &at,
            if ordered == created {
                Ok(format!(
                    "no orderedAt sent: orderedAt {ordered}, its creation time"
                ))
            } else {
                Err(format!(
                    "no orderedAt sent: orderedAt {ordered}, created {created}"
                ))
            },
        );
    }
    for (index, item) in order["lineItems"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if item["isCustom"] != true {
            continue;
        }
        let missing: Vec<&str> = ["catalogProductId", "catalogProductVariantId"]
            .into_iter()
            .filter(|field| !item[*field].is_string())
            .collect();
        facts.judge(
            "custom-item-fields",
            &at,
            if missing.is_empty() {
                Ok(format!("line item {index} returns its blank's ids"))
            } else {
                Err(format!(
                    "custom line item {index} returned without {}",
                    missing.join(", ")
                ))
            },
        );
    }
}

/// Where the text `sent` holds is answered otherwise in `answered` (an empty string sent may be
/// answered absent: the service omits empty fields).
fn changed_text(path: &str, sent: &Value, answered: &Value, changed: &mut Vec<String>) {
    match sent {
        Value::Object(fields) => {
            for (key, value) in fields {
                changed_text(
                    &format!("{path}.{key}"),
                    value,
                    &answered[key.as_str()],
                    changed,
                );
            }
        }
        Value::String(text) if text.is_empty() && answered.is_null() => {}
        Value::String(text) if answered.as_str() != Some(text) => {
            changed.push(format!("{path} sent {text:?}, answered {answered}"));
        }
        _ => {}
    }
}

/// A created artwork is answered 201.
fn artwork(seen: &Seen<'_>, facts: &mut Facts) {
    let status = seen.status();
    if !(200..300).contains(&status) {
        return;
    }
    facts.judge(
        "artwork-created-201",
        &seen.at(),
        if status == 201 {
            Ok("201".to_owned())
        } else {
            Err(format!("an artwork was created with {status}"))
        },
    );
}
