//! How a live request is compared with a recorded one.
//!
//! The live request is first scrubbed of its key, like a recording. Then the values a recording cannot
//! hold as they were sent are variables rather than literals:
//!
//! - customer data, in a cassette that replaced it by placeholders: a placeholder matches a live value
//!   of the same field;
//! - fresh values the client makes on each run: `externalOrderId` and `orderedAt` (anywhere in a body)
//!   and the values of the `filter[externalOrderId]` query parameter.
//!
//! A variable binds one-to-one over a whole replay: the first live value seen where a recorded value
//! stands is bound to it, and from then on that recorded value matches only that live value, and that
//! live value only that recorded value. Answers carry the live values back where the recorded ones
//! stand ([`Bindings::restore`]). Empty strings and values that are not strings are compared as they
//! are.

use std::collections::HashMap;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::format::{RecordedBody, RecordedRequest};
use crate::redact::{Field, Keys, address_field, is_us, shipping_field, visit_customer_data};

/// The query parameter whose values are fresh external ids.
const EXTERNAL_ID_FILTER: &str = "filter[externalOrderId]";

/// What a variable stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Var {
    Customer(Field),
    ExternalOrderId,
    OrderedAt,
}

impl Var {
    /// The fresh value named by an object's key, if it names one.
    fn fresh(key: &str) -> Option<Var> {
        match key {
            "externalOrderId" => Some(Var::ExternalOrderId),
            "orderedAt" => Some(Var::OrderedAt),
            _ => None,
        }
    }
}

/// The one-to-one bindings of recorded values to live ones, per variable.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bindings {
    live_of: HashMap<(Var, String), String>,
    recorded_of: HashMap<(Var, String), String>,
}

impl Bindings {
    /// Binds `recorded` to `live` for `var`, unless either is bound to another value already.
    fn bind(&mut self, var: Var, recorded: &str, live: &str) -> bool {
        match (
            self.live_of.get(&(var, recorded.to_owned())),
            self.recorded_of.get(&(var, live.to_owned())),
        ) {
            (Some(bound), _) => bound == live,
            (None, Some(_)) => false,
            (None, None) => {
                self.live_of
                    .insert((var, recorded.to_owned()), live.to_owned());
                self.recorded_of
                    .insert((var, live.to_owned()), recorded.to_owned());
                true
            }
        }
    }

    fn live(&self, var: Var, recorded: &str) -> Option<&String> {
        self.live_of.get(&(var, recorded.to_owned()))
    }

    /// A recorded answer's body with the live values where recorded ones bound to them stand: in
    /// customer data, in `externalOrderId` and `orderedAt` fields, and (external ids of eight
    /// characters or more, too distinctive to be anything else) inside any text, such as a 409's
    /// message.
    pub(crate) fn restore(&self, value: &mut Value) {
        visit_customer_data(value, &mut |field, inner| {
            if let Value::String(text) = inner
                && let Some(live) = self.live(Var::Customer(field), text)
            {
                *text = live.clone();
            }
        });
        self.restore_fresh(value);
        let ids: Vec<(&String, &String)> = self
            .live_of
            .iter()
            .filter(|((var, recorded), live)| {
                *var == Var::ExternalOrderId && recorded.len() >= 8 && recorded != *live
            })
            .map(|((_, recorded), live)| (recorded, live))
            .collect();
        if !ids.is_empty() {
            crate::redact::visit_strings(value, &mut |text| {
                for (recorded, live) in &ids {
                    if text.contains(recorded.as_str()) {
                        *text = text.replace(recorded.as_str(), live);
                    }
                }
            });
        }
    }

    fn restore_fresh(&self, value: &mut Value) {
        match value {
            Value::Object(object) => {
                for (key, inner) in object.iter_mut() {
                    match (Var::fresh(key), &mut *inner) {
                        (Some(var), Value::String(text)) => {
                            if let Some(live) = self.live(var, text) {
                                *text = live.clone();
                            }
                        }
                        _ => self.restore_fresh(inner),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.restore_fresh(item)),
            _ => {}
        }
    }
}

/// A request in the form matching compares: method, path, decoded query pairs, body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shape {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub body: Option<ShapeBody>,
}

/// A body as matching compares it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ShapeBody {
    Json(Value),
    Text(String),
    /// A body kept as its digest (see [`canonical_digest`]).
    Digest(String),
}

impl Shape {
    /// The shape of a recorded request.
    pub(crate) fn recorded(request: &RecordedRequest) -> Shape {
        Shape {
            method: request.method.clone(),
            path: request.path.clone(),
            query: pairs(request.query.as_deref()),
            body: request.body.as_ref().map(|body| match body {
                RecordedBody::Json(json) => ShapeBody::Json(json.clone()),
                RecordedBody::Text(text) => ShapeBody::Text(text.clone()),
                RecordedBody::Omitted { sha256, .. } => ShapeBody::Digest(sha256.clone()),
                // A body of a later format version: never equal to a live one.
                #[allow(unreachable_patterns)]
                _ => ShapeBody::Digest(String::new()),
            }),
        }
    }

    /// The text a diff shows: one line per query parameter, the body pretty.
    pub(crate) fn render(&self) -> String {
        let mut text = format!("{} {}\n", self.method, self.path);
        for (name, value) in &self.query {
            text.push_str(&format!("  ?{name}={value}\n"));
        }
        match &self.body {
            None => {}
            Some(ShapeBody::Json(json)) => {
                text.push_str(&serde_json::to_string_pretty(json).unwrap_or_default());
                text.push('\n');
            }
            Some(ShapeBody::Text(body)) => {
                text.push_str(body);
                text.push('\n');
            }
            Some(ShapeBody::Digest(digest)) => {
                text.push_str(&format!("(a body of SHA-256 {digest})\n"));
            }
        }
        text
    }
}

/// A live request, its key scrubbed: what is compared with each candidate.
#[derive(Debug, Clone)]
pub(crate) struct Live {
    method: String,
    path: String,
    query: Vec<(String, String)>,
    body: LiveBody,
}

#[derive(Debug, Clone)]
enum LiveBody {
    None,
    Json(Value),
    Text(String),
    Bytes(Vec<u8>),
}

impl Live {
    /// `method`, `path_and_query` and `body`, with every occurrence of `keys` scrubbed.
    pub(crate) fn new(method: &str, path_and_query: &str, body: &[u8], keys: &Keys) -> Live {
        let (path, query) = crate::record::split_path(path_and_query);
        let query = query.map(|query| keys.scrub(query));
        let body = if body.is_empty() {
            LiveBody::None
        } else if let Ok(mut json) = serde_json::from_slice::<Value>(body) {
            keys.scrub_json(&mut json);
            LiveBody::Json(json)
        } else {
            match std::str::from_utf8(body) {
                Ok(text) => LiveBody::Text(keys.scrub(text)),
                Err(_) => LiveBody::Bytes(body.to_vec()),
            }
        };
        Live {
            method: method.to_ascii_uppercase(),
            path: keys.scrub(path),
            query: pairs(query.as_deref()),
            body,
        }
    }

    /// Whether this is a read (`GET`, `HEAD`): reads may be answered out of the recorded order.
    pub(crate) fn is_read(&self) -> bool {
        self.method == "GET" || self.method == "HEAD"
    }

    /// `METHOD /path`, for messages.
    pub(crate) fn line(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// This request as compared with `recorded`: its variables replaced by the recorded values they
    /// bind to (binding them in `bindings` when they are new), and customer data that matches no
    /// placeholder shown redacted. Equal to `recorded` exactly when the request matches it.
    pub(crate) fn against(
        &self,
        recorded: &Shape,
        redacted: bool,
        bindings: &mut Bindings,
    ) -> Shape {
        let query = self
            .query
            .iter()
            .enumerate()
            .map(|(at, (name, value))| {
                if name != EXTERNAL_ID_FILTER {
                    return (name.clone(), value.clone());
                }
                let recorded_values: Vec<&str> = recorded
                    .query
                    .get(at)
                    .filter(|(recorded_name, _)| recorded_name == name)
                    .map(|(_, recorded)| recorded.split(',').collect())
                    .unwrap_or_default();
                let values: Vec<String> = value
                    .split(',')
                    .enumerate()
                    .map(|(index, live)| {
                        fresh(
                            Var::ExternalOrderId,
                            live,
                            recorded_values.get(index).copied(),
                            bindings,
                        )
                    })
                    .collect();
                (name.clone(), values.join(","))
            })
            .collect();
        let recorded_json = match &recorded.body {
            Some(ShapeBody::Json(json)) => Some(json),
            _ => None,
        };
        let body = match &self.body {
            LiveBody::None => None,
            LiveBody::Json(json) if matches!(recorded.body, Some(ShapeBody::Digest(_))) => {
                Some(ShapeBody::Digest(canonical_digest(json, redacted)))
            }
            LiveBody::Json(json) => Some(ShapeBody::Json(normalize(
                json,
                recorded_json,
                Context::Plain,
                redacted,
                bindings,
            ))),
            LiveBody::Text(text) if matches!(recorded.body, Some(ShapeBody::Digest(_))) => {
                Some(ShapeBody::Digest(sha256_hex(text.as_bytes())))
            }
            LiveBody::Text(text) => Some(ShapeBody::Text(text.clone())),
            LiveBody::Bytes(bytes) => Some(ShapeBody::Digest(sha256_hex(bytes))),
        };
        Shape {
            method: self.method.clone(),
            path: self.path.clone(),
            query,
            body,
        }
    }
}

/// Where in a body a value stands.
#[derive(Debug, Clone, Copy)]
enum Context {
    Plain,
    ShippingAddress,
    Address { us: bool },
}

/// `live` as compared with `recorded` (see [`Live::against`]).
fn normalize(
    live: &Value,
    recorded: Option<&Value>,
    context: Context,
    redacted: bool,
    bindings: &mut Bindings,
) -> Value {
    match live {
        Value::Object(object) => {
            let mut out = Map::new();
            for (key, inner) in object {
                let recorded = recorded.and_then(|recorded| recorded.get(key));
                let value = match context {
                    Context::Plain => match (key.as_str(), Var::fresh(key)) {
                        ("shippingAddress", _) => normalize(
                            inner,
                            recorded,
                            Context::ShippingAddress,
                            redacted,
                            bindings,
                        ),
                        (_, Some(var)) => match inner {
                            Value::String(live) => Value::String(fresh(
                                var,
                                live,
                                recorded.and_then(Value::as_str),
                                bindings,
                            )),
                            _ => inner.clone(),
                        },
                        _ => normalize(inner, recorded, Context::Plain, redacted, bindings),
                    },
                    Context::ShippingAddress => {
                        if let Some(field) = shipping_field(key) {
                            customer(field, key, inner, recorded, redacted, bindings)
                        } else if let (true, Value::Object(address)) = (key == "address", inner) {
                            let us = is_us(address);
                            normalize(inner, recorded, Context::Address { us }, redacted, bindings)
                        } else {
                            normalize(inner, recorded, Context::Plain, redacted, bindings)
                        }
                    }
                    Context::Address { us } => match address_field(key, us) {
                        Some(field) => customer(field, key, inner, recorded, redacted, bindings),
                        None => normalize(inner, recorded, Context::Plain, redacted, bindings),
                    },
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(at, item)| {
                    let recorded = recorded.and_then(|recorded| recorded.get(at));
                    normalize(item, recorded, Context::Plain, redacted, bindings)
                })
                .collect(),
        ),
        _ => live.clone(),
    }
}

/// A field of customer data: the placeholder it binds to, or a redacted marker that matches nothing.
fn customer(
    field: Field,
    key: &str,
    live: &Value,
    recorded: Option<&Value>,
    redacted: bool,
    bindings: &mut Bindings,
) -> Value {
    let Value::String(text) = live else {
        return live.clone();
    };
    if !redacted || text.is_empty() {
        return live.clone();
    }
    match recorded.and_then(Value::as_str) {
        Some(placeholder)
            if !placeholder.is_empty()
                && bindings.bind(Var::Customer(field), placeholder, text) =>
        {
            Value::String(placeholder.to_owned())
        }
        // Never shown: the diff says only that this field's value is not the recorded one's.
        _ => Value::String(format!("<{key}: redacted, matches no placeholder here>")),
    }
}

/// A fresh value: the recorded value it binds to, or itself.
fn fresh(var: Var, live: &str, recorded: Option<&str>, bindings: &mut Bindings) -> String {
    match recorded {
        Some(recorded)
            if !live.is_empty() && !recorded.is_empty() && bindings.bind(var, recorded, live) =>
        {
            recorded.to_owned()
        }
        _ => live.to_owned(),
    }
}

/// The decoded `name=value` pairs of a query string, in order.
fn pairs(query: Option<&str>) -> Vec<(String, String)> {
    query
        .map(|query| {
            url::form_urlencoded::parse(query.as_bytes())
                .map(|(name, value)| (name.into_owned(), value.into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// The digest a body too large to keep is recorded and matched by: the SHA-256 of its compact JSON
/// with every variable (customer data when `redacted`, fresh values) replaced by its field's name,
/// so that the digest depends on neither.
pub(crate) fn canonical_digest(json: &Value, redacted: bool) -> String {
    let mut canonical = json.clone();
    if redacted {
        visit_customer_data(&mut canonical, &mut |_, inner| {
            if inner.as_str().is_some_and(|text| !text.is_empty()) {
                *inner = Value::String("<customer data>".into());
            }
        });
    }
    mask_fresh(&mut canonical);
    sha256_hex(canonical.to_string().as_bytes())
}

fn mask_fresh(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object.iter_mut() {
                match Var::fresh(key) {
                    Some(_) if inner.is_string() => *inner = Value::String(format!("<{key}>")),
                    _ => mask_fresh(inner),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_fresh),
        _ => {}
    }
}

/// The SHA-256 of `bytes`, lower-case hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn recorded(body: Value, query: Option<&str>) -> Shape {
        Shape {
            method: "POST".into(),
            path: "/orders".into(),
            query: pairs(query),
            body: Some(ShapeBody::Json(body)),
        }
    }

    #[test]
    fn placeholders_and_fresh_values_bind_one_to_one() {
        let keys = Keys::default();
        let shape = recorded(
            json!({"externalOrderId": "rec-1", "shippingAddress": {"firstName": "Firstname1", "lastName": "Firstname1x"}}),
            None,
        );
        let live = Live::new(
            "post",
            "/orders",
            json!({"externalOrderId": "live-1", "shippingAddress": {"firstName": "Ada", "lastName": "L"}})
                .to_string()
                .as_bytes(),
            &keys,
        );
        let mut bindings = Bindings::default();
        assert_eq!(live.against(&shape, true, &mut bindings), shape);
        // Another live id where rec-1 stands no longer matches.
        let other = Live::new(
            "POST",
            "/orders",
            json!({"externalOrderId": "live-2", "shippingAddress": {"firstName": "Ada", "lastName": "L"}})
                .to_string()
                .as_bytes(),
            &keys,
        );
        assert_ne!(other.against(&shape, true, &mut bindings.clone()), shape);
        // Kept customer data is compared as it is.
        assert_ne!(live.against(&shape, false, &mut Bindings::default()), shape);

        let mut answer = json!({"items": [{"externalOrderId": "rec-1", "shippingAddress": {"firstName": "Firstname1"}}]});
        bindings.restore(&mut answer);
        assert_eq!(
            answer,
            json!({"items": [{"externalOrderId": "live-1", "shippingAddress": {"firstName": "Ada"}}]})
        );
    }

    #[test]
    fn the_external_id_filter_is_a_fresh_value() {
        let keys = Keys::default();
        let mut shape = recorded(
            json!(null),
            Some("filter%5BexternalOrderId%5D=rec-1&limit=1"),
        );
        shape.body = None;
        shape.method = "GET".into();
        let live = Live::new(
            "GET",
            "/orders?filter%5BexternalOrderId%5D=live-1&limit=1",
            b"",
            &keys,
        );
        let mut bindings = Bindings::default();
        assert_eq!(live.against(&shape, true, &mut bindings), shape);
        assert_eq!(
            bindings
                .live(Var::ExternalOrderId, "rec-1")
                .map(String::as_str),
            Some("live-1")
        );
    }

    #[test]
    fn a_digest_ignores_variables() {
        let one = json!({"externalOrderId": "a", "shippingAddress": {"firstName": "Ada"}, "n": 1});
        let two = json!({"externalOrderId": "b", "shippingAddress": {"firstName": "Bob"}, "n": 1});
        assert_eq!(canonical_digest(&one, true), canonical_digest(&two, true));
        assert_ne!(canonical_digest(&one, false), canonical_digest(&two, false));
    }
}
