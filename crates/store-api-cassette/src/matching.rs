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
use store_api_raw::contract::VERSION_PREFIX;

use crate::format::{RecordedBody, RecordedRequest};
use crate::redact::{
    Field, Keys, Scope, bind_people, find_tokens, hide_people, mask_people, visit_customer_data,
};

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
        visit_customer_data(value, &mut |field, inner| match inner {
            Value::String(text) => {
                if let Some(live) = self.live(Var::Customer(field), text) {
                    *text = live.clone();
                }
            }
            Value::Number(number) => {
                if let Some(live) = self.live(Var::Customer(field), &number.to_string()) {
                    *inner = serde_json::from_str(live).unwrap_or(Value::Null);
                }
            }
            _ => {}
        });
        self.restore_fresh(value);
        // Emails and phone numbers recorded as placeholders in any other text.
        crate::redact::visit_strings(value, &mut |text| {
            let tokens = find_tokens(text, None, true);
            for token in tokens.iter().rev() {
                let field = token.shape.field().unwrap_or(Field::Other);
                if let Some(live) = self.live(Var::Customer(field), &token.text) {
                    text.replace_range(token.range.clone(), live);
                }
            }
        });
        // A message that quoted a value was recorded quoting its placeholder (`redact_answer`).
        if let Some(message) = value.get_mut("message") {
            for ((var, placeholder), live) in &self.live_of {
                if matches!(var, Var::Customer(field) if *field != Field::UsState)
                    && placeholder.chars().count() >= 3
                {
                    crate::redact::visit_strings(message, &mut |text| {
                        if text.contains(placeholder.as_str()) {
                            *text = crate::redact::replace_words(text, placeholder, live);
                        }
                    });
                }
            }
        }
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
            path: from_version_prefix(&request.path).to_owned(),
            query: pairs(request.query.as_deref()),
            body: request.body.as_ref().map(|body| match body {
                RecordedBody::Json(json) => ShapeBody::Json(json.clone()),
                RecordedBody::Text(text) => ShapeBody::Text(text.clone()),
                RecordedBody::Omitted { sha256, .. } => ShapeBody::Digest(sha256.clone()),
            }),
        }
    }

    /// The text a diff shows: one line per query parameter, the body pretty; a JSON body is written
    /// no further than [`RENDERED_BODY`] bytes (a diff compares less than that), so that rendering a
    /// request of megabytes costs no more than rendering a small one.
    pub(crate) fn render(&self) -> String {
        let mut text = format!("{} {}\n", self.method, self.path);
        for (name, value) in &self.query {
            text.push_str(&format!("  ?{name}={value}\n"));
        }
        match &self.body {
            None => {}
            Some(ShapeBody::Json(json)) => {
                let mut written = Bounded(Vec::new());
                let cut = serde_json::to_writer_pretty(&mut written, json).is_err();
                text.push_str(&String::from_utf8_lossy(&written.0));
                text.push('\n');
                if cut {
                    text.push_str("(the body goes on; the rest is not shown)\n");
                }
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

/// How much of a JSON body [`Shape::render`] writes.
const RENDERED_BODY: usize = 2 * crate::diff::MAX_DIFF_BYTES;

/// A writer that takes [`RENDERED_BODY`] bytes and then fails, which stops a serializer.
struct Bounded(Vec<u8>);

impl std::io::Write for Bounded {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let room = RENDERED_BODY.saturating_sub(self.0.len());
        if room == 0 {
            return Err(std::io::Error::other("rendered enough"));
        }
        let taken = room.min(bytes.len());
        self.0.extend_from_slice(&bytes[..taken]);
        Ok(taken)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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
    /// A body that is not text, or one longer than the service takes (never parsed): its digest
    /// ([`unparsed_digest`]).
    Digest(String),
}

impl Live {
    /// `method`, `path_and_query` and `body`, with every occurrence of `keys` scrubbed.
    pub(crate) fn new(method: &str, path_and_query: &str, body: &[u8], keys: &Keys) -> Live {
        let (path, query) = split_path(path_and_query);
        let query = query.map(|query| keys.scrub(query));
        let body = if body.is_empty() {
            LiveBody::None
        } else if body.len() > store_api_raw::contract::MAX_BODY_BYTES {
            // The size first: a body the service would refuse is digested as the recording
            // digested it, never parsed.
            LiveBody::Digest(unparsed_digest(body, keys))
        } else if let Ok(mut json) = serde_json::from_slice::<Value>(body) {
            keys.scrub_json(&mut json);
            LiveBody::Json(json)
        } else {
            match std::str::from_utf8(body) {
                Ok(text) => LiveBody::Text(keys.scrub(text)),
                Err(_) => LiveBody::Digest(sha256_hex(body)),
            }
        };
        Live {
            method: method.to_ascii_uppercase(),
            path: from_version_prefix(&keys.scrub(path)).to_owned(),
            query: pairs(query.as_deref()),
            body,
        }
    }

    /// Whether this is a read (`GET`, `HEAD`): reads may be answered out of the recorded order.
    pub(crate) fn is_read(&self) -> bool {
        self.method == "GET" || self.method == "HEAD"
    }

    /// The method, upper case.
    pub(crate) fn method(&self) -> &str {
        &self.method
    }

    /// The path, from the version prefix on, the key scrubbed (as sent otherwise: not decoded).
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The query's pairs, decoded, the key scrubbed.
    pub(crate) fn query(&self) -> &[(String, String)] {
        &self.query
    }

    /// Whether `recorded` has this request's method and path: no request matches one that has not
    /// (what [`Live::against`] returns keeps both), so this is checked first.
    pub(crate) fn same_route(&self, recorded: &Shape) -> bool {
        self.method == recorded.method
            && (self.path == recorded.path
                || mask_people(&self.path) == mask_people(&recorded.path))
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
                    let recorded = recorded.query.get(at);
                    return (
                        text(
                            name,
                            recorded.map(|(name, _)| name.as_str()),
                            redacted,
                            bindings,
                        ),
                        text(
                            value,
                            recorded.map(|(_, value)| value.as_str()),
                            redacted,
                            bindings,
                        ),
                    );
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
                Scope::Plain,
                redacted,
                bindings,
            ))),
            LiveBody::Text(text) if matches!(recorded.body, Some(ShapeBody::Digest(_))) => {
                Some(ShapeBody::Digest(sha256_hex(text.as_bytes())))
            }
            LiveBody::Text(live) => Some(ShapeBody::Text(match &recorded.body {
                Some(ShapeBody::Text(recorded)) => text(live, Some(recorded), redacted, bindings),
                _ => text(live, None, redacted, bindings),
            })),
            LiveBody::Digest(digest) => Some(ShapeBody::Digest(digest.clone())),
        };
        Shape {
            method: self.method.clone(),
            path: text(&self.path, Some(&recorded.path), redacted, bindings),
            query,
            body,
        }
    }
}

/// A text outside customer data (a path, a query's name or value, a string of a body) as compared
/// with `recorded`: the recorded text when they differ only in emails and phone numbers bound to
/// its placeholders; otherwise itself, its emails and phone numbers hidden (in a redacted cassette).
fn text(live: &str, recorded: Option<&str>, redacted: bool, bindings: &mut Bindings) -> String {
    if !redacted || recorded == Some(live) {
        return live.to_owned();
    }
    if let Some(recorded) = recorded {
        let mut trial = bindings.clone();
        let bind = &mut |field, placeholder: &str, live: &str| {
            trial.bind(Var::Customer(field), placeholder, live)
        };
        if bind_people(live, recorded, bind) {
            *bindings = trial;
            return recorded.to_owned();
        }
    }
    hide_people(live)
}

/// `live` as compared with `recorded` (see [`Live::against`]), standing in `scope`.
fn normalize(
    live: &Value,
    recorded: Option<&Value>,
    scope: Scope,
    redacted: bool,
    bindings: &mut Bindings,
) -> Value {
    // A cassette that kept customer data holds it as it was sent: compared as it is.
    let scope = if redacted { scope } else { Scope::Plain };
    match live {
        Value::Object(object) => {
            let mut out = Map::new();
            for (key, inner) in object {
                let recorded_object = recorded.and_then(Value::as_object);
                let key = object_key(key, recorded_object, redacted, bindings);
                let recorded = recorded_object.and_then(|recorded| recorded.get(&key));
                let member = scope.member(&key, object);
                let value = match (member, Var::fresh(&key), inner) {
                    (Scope::Plain, Some(var), Value::String(live)) => {
                        Value::String(fresh(var, live, recorded.and_then(Value::as_str), bindings))
                    }
                    (Scope::Plain, Some(_), _) => inner.clone(),
                    _ => normalize(inner, recorded, member, redacted, bindings),
                };
                out.insert(key, value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(at, item)| {
                    let recorded = recorded.and_then(|recorded| recorded.get(at));
                    normalize(item, recorded, scope.item(), redacted, bindings)
                })
                .collect(),
        ),
        Value::String(live) => match scope {
            Scope::Plain => Value::String(text(
                live,
                recorded.and_then(Value::as_str),
                redacted,
                bindings,
            )),
            Scope::Customer(field) => customer(field.of_value(live), live, recorded, bindings),
            Scope::Kept => Value::String(live.clone()),
        },
        Value::Number(number) if matches!(scope, Scope::Customer(_)) => {
            match recorded.filter(|recorded| recorded.is_number()) {
                Some(placeholder)
                    if bindings.bind(
                        Var::Customer(Field::Number),
                        &placeholder.to_string(),
                        &number.to_string(),
                    ) =>
                {
                    placeholder.clone()
                }
                _ => Value::String("<number: redacted, matches no placeholder here>".into()),
            }
        }
        _ => live.clone(),
    }
}

/// An object's key as compared with the keys of `recorded`: itself when the recorded object has it,
/// or the recorded key it matches but for emails and phone numbers.
fn object_key(
    key: &str,
    recorded: Option<&Map<String, Value>>,
    redacted: bool,
    bindings: &mut Bindings,
) -> String {
    let Some(recorded) = recorded.filter(|recorded| redacted && !recorded.contains_key(key)) else {
        return key.to_owned();
    };
    for candidate in recorded.keys() {
        let matched = text(key, Some(candidate), redacted, bindings);
        if matched == *candidate {
            return matched;
        }
    }
    hide_people(key)
}

/// A string of customer data of `field`: the placeholder it binds to, or a redacted marker that
/// matches nothing. An empty string stays empty.
fn customer(field: Field, live: &str, recorded: Option<&Value>, bindings: &mut Bindings) -> Value {
    if live.is_empty() {
        return Value::String(String::new());
    }
    match recorded.and_then(Value::as_str) {
        Some(placeholder)
            if !placeholder.is_empty()
                && bindings.bind(Var::Customer(field), placeholder, live) =>
        {
            Value::String(placeholder.to_owned())
        }
        // Never shown: the diff says only that this value is not the recorded one's.
        _ => Value::String(format!(
            "<{field:?}: redacted, matches no placeholder here>"
        )),
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

/// `path` from the API's version prefix on (`/store-api/2026-08/...`), whatever the base URL's path
/// before it was (a service or proxy mounted under a path of its own): what matching compares.
fn from_version_prefix(path: &str) -> &str {
    path.find(VERSION_PREFIX).map_or(path, |at| &path[at..])
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

/// The digest of a body that is not parsed: of its text with the key scrubbed, or of its bytes when
/// it is not text. The replay digests a live body so too ((below)).
pub(crate) fn unparsed_digest(bytes: &[u8], keys: &crate::redact::Keys) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => sha256_hex(keys.scrub(text).as_bytes()),
        Err(_) => sha256_hex(bytes),
    }
}

/// The digest a body too large to keep is recorded and matched by: the SHA-256 of its compact JSON
/// with every variable (customer data when `redacted`, fresh values) replaced by its field's name,
/// so that the digest depends on neither.
pub(crate) fn canonical_digest(json: &Value, redacted: bool) -> String {
    let mut canonical = json.clone();
    if redacted {
        visit_customer_data(&mut canonical, &mut |_, inner| {
            if inner.as_str().is_none_or(|text| !text.is_empty()) {
                *inner = Value::String("<customer data>".into());
            }
        });
        crate::redact::visit_strings(&mut canonical, &mut |text| *text = mask_people(text));
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

/// `path_and_query` split at its `?`; an empty query is none.
pub(crate) fn split_path(path_and_query: &str) -> (&str, Option<&str>) {
    match path_and_query.split_once('?') {
        Some((path, query)) => (path, Some(query).filter(|query| !query.is_empty())),
        None => (path_and_query, None),
    }
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

        let mut message = json!({"message": ["firstName Firstname1 is not Firstname12"]});
        bindings.restore(&mut message);
        assert_eq!(message["message"][0], "firstName Ada is not Firstname12");
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
    fn paths_are_compared_from_the_version_prefix_on() {
        let shape = Shape {
            method: "GET".into(),
            path: from_version_prefix("/mounted/store-api/2026-08/stores/s/status").into(),
            query: Vec::new(),
            body: None,
        };
        let live = Live::new(
            "GET",
            "/store-api/2026-08/stores/s/status",
            b"",
            &Keys::default(),
        );
        assert_eq!(live.against(&shape, true, &mut Bindings::default()), shape);
    }

    #[test]
    fn a_digest_ignores_variables() {
        let one = json!({"externalOrderId": "a", "shippingAddress": {"firstName": "Ada"}, "n": 1});
        let two = json!({"externalOrderId": "b", "shippingAddress": {"firstName": "Bob"}, "n": 1});
        assert_eq!(canonical_digest(&one, true), canonical_digest(&two, true));
        assert_ne!(canonical_digest(&one, false), canonical_digest(&two, false));
    }
}
