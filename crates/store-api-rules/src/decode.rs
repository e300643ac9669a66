//! Decoding a JSON request body into its wire type, and turning a body that does not decode (a missing
//! field, a wrong type, an empty `lastName`, a quantity of 0) into the service's field-path messages.
//!
//! The one implementation behind the emulator's request bodies (`store-api-fixtures`, answering as the
//! service) and the CLI's order files (`store-api orders submit --file`). They read a body
//! differently, on purpose, and say which with [`Reading`]:
//!
//! - [`Reading::Service`] reads as the service does: the spec's rules for the body's schema (the
//!   generated [`BodyRules`] JSON checks) run on the JSON first, and every failing field is reported at
//!   once (the service's message array); a declared field sent as `null` is refused; a body that is not
//!   a JSON object is refused as such.
//! - [`Reading::Typed`] reads as the SDK's typed request does: serde decides (a `null` reads as an
//!   absent optional field, so a file's `"externalOrderId": null` is one the CLI fills in), and only its
//!   first failure is reported. That failure is worded by the spec's rule at the same path when the
//!   service words that rule as a [`ViolationKind`] (so it becomes a [`Violation`] the pre-flight check
//!   could have reported), and in serde's own words otherwise (a wrong type, which the CLI reports as a
//!   file that is not a create-order request). Rules the typed request does not enforce while decoding
//!   (an empty `lineItems`, a width of 0) are left to the pre-flight check that follows
//!   ([`validate_fields`](crate::validate_fields)).
//!
//! Either way, paths are the wire's, dotted (`lineItems.0.quantity`), and a missing field reads as the
//! service's `<path> should not be null or undefined`.

use serde::de::DeserializeOwned;
use store_api_raw::rule::{BodyRules, Rule, RuleFailure};

use crate::violation::{Violation, ViolationKind, rule_kind, rule_message, rule_violation};

/// How [`decode_body`] reads a body; see the [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reading {
    /// As the service reads it (the emulator): schema rules first, every failing field at once, `null`
    /// refused in declared fields, the body must be an object.
    Service,
    /// As the typed request reads it (the CLI's order files): serde's first failure only, worded by the
    /// spec's rule at its path where the service words that rule as a [`ViolationKind`].
    Typed,
}

/// One reason a body did not decode.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Failure {
    /// The body is JSON but not an object ([`Reading::Service`]).
    NotAnObject,
    /// A rule of the spec's request schema, worded by [`rule_message`].
    Rule(RuleFailure),
    /// A rule the spec cannot express (a caller's `field_rules`), or a missing field serde reported.
    Violation(Violation),
    /// serde refused the body at `path` and no rule of the spec says why: its own words.
    Serde {
        /// The dotted wire path (empty for the body itself).
        path: String,
        /// serde's message, for example ``invalid type: string "x", expected a nonzero u64``.
        error: String,
    },
}

impl Failure {
    /// The service's message: `<path> <constraint>` (see [`rule_message`] and
    /// [`Violation::message`]), or `<path> <serde's message>`.
    pub fn message(&self) -> String {
        match self {
            Failure::NotAnObject => "The request body must be a JSON object".to_owned(),
            Failure::Rule(failure) => rule_message(failure),
            Failure::Violation(violation) => violation.message(),
            Failure::Serde { path, error } if path.is_empty() => error.clone(),
            Failure::Serde { path, error } => format!("{path} {error}"),
        }
    }

    /// The failure as a [`Violation`], when the service words it as one of [`ViolationKind`]'s rules.
    pub fn violation(&self) -> Option<Violation> {
        match self {
            Failure::Rule(failure) => rule_violation(failure),
            Failure::Violation(violation) => Some(violation.clone()),
            Failure::NotAnObject | Failure::Serde { .. } => None,
        }
    }
}

/// Why a body did not decode.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not JSON (or not UTF-8).
    #[error("{0}")]
    NotJson(#[source] serde_json::Error),
    /// JSON that does not decode into the type: the failures, in the order the service reports them
    /// ([`Reading::Typed`]: one). Never empty.
    #[error("{}", .0.iter().map(Failure::message).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<Failure>),
}

/// Decodes `bytes` (a JSON body) into the request type `T`, reading it as `reading` says.
///
/// `field_rules` are the rules of `T` that need no store data and that the spec cannot express (for a
/// create-order request, [`validate_fields`](crate::validate_fields)); [`Reading::Service`] adds their
/// findings that the schema's do not already name (same path, same kind) when the schema's rules fail
/// but the body still decodes, so every failing field is reported at once. [`Reading::Typed`] does not
/// run them: its caller's pre-flight check does.
///
/// ```
/// use store_api_raw::types::CreateOrderRequest;
/// use store_api_rules::decode::{DecodeError, Reading, decode_body};
///
/// let body = br#"{"lineItems":[{"quantity":0}]}"#;
/// let Err(DecodeError::Invalid(failures)) =
///     decode_body::<CreateOrderRequest>(body, Reading::Service, |_| Vec::new())
/// else {
///     panic!("a quantity of 0 and no shippingAddress")
/// };
/// let messages: Vec<String> = failures.iter().map(|f| f.message()).collect();
/// assert!(messages.contains(&"lineItems.0.quantity must not be less than 1".to_owned()));
/// assert!(messages.contains(&"shippingAddress should not be null or undefined".to_owned()));
///
/// // The typed reading reports serde's first failure, as a violation where the service has one.
/// let Err(DecodeError::Invalid(failures)) =
///     decode_body::<CreateOrderRequest>(body, Reading::Typed, |_| Vec::new())
/// else {
///     panic!("a quantity of 0 and no shippingAddress")
/// };
/// assert_eq!(failures.len(), 1);
/// assert!(failures[0].violation().is_some());
/// ```
pub fn decode_body<T: DeserializeOwned + BodyRules>(
    bytes: &[u8],
    reading: Reading,
    field_rules: impl Fn(&T) -> Vec<Violation>,
) -> Result<T, DecodeError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(DecodeError::NotJson)?;
    match reading {
        Reading::Service => service(value, field_rules),
        Reading::Typed => typed(value),
    }
}

/// Decodes `value` with serde alone (a type the spec has no schema for, such as the emulator's control
/// bodies): the first failure, a missing field worded as the service words it, anything else in serde's
/// words with its dotted path.
pub fn deserialize<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, Failure> {
    serde_path_to_error::deserialize(value)
        .map_err(|error| serde_failure(dotted(error.path()), &error.into_inner().to_string(), &[]))
}

/// [`Reading::Service`].
fn service<T: DeserializeOwned + BodyRules>(
    value: serde_json::Value,
    field_rules: impl Fn(&T) -> Vec<Violation>,
) -> Result<T, DecodeError> {
    let invalid = |failures| Err(DecodeError::Invalid(failures));
    if !value.is_object() {
        return invalid(vec![Failure::NotAnObject]);
    }
    let failures = T::check_json(&value);
    // A declared field sent as `null` is all there is to say (serde would read it as absent); a `null`
    // in an unrecognized field is ignored like the field itself.
    let nulls: Vec<Failure> = failures
        .iter()
        .filter(|failure| failure.rule == Rule::NotNull)
        .cloned()
        .map(Failure::Rule)
        .collect();
    if !nulls.is_empty() {
        return invalid(nulls);
    }
    if failures.is_empty() {
        // A body that passes the schema's rules decodes; should serde still refuse it, say so plainly.
        return deserialize(value).map_err(|failure| DecodeError::Invalid(vec![failure]));
    }
    let mut found: Vec<(String, Option<ViolationKind>)> = failures
        .iter()
        .map(|failure| (failure.path.clone(), rule_kind(failure)))
        .collect();
    let mut out: Vec<Failure> = failures.into_iter().map(Failure::Rule).collect();
    if let Ok(decoded) = serde_json::from_value::<T>(value) {
        for extra in field_rules(&decoded) {
            let key = (extra.path.clone(), Some(extra.kind));
            if !found.contains(&key) {
                out.push(Failure::Violation(extra));
                found.push(key);
            }
        }
    }
    invalid(out)
}

/// [`Reading::Typed`].
fn typed<T: DeserializeOwned + BodyRules>(value: serde_json::Value) -> Result<T, DecodeError> {
    serde_path_to_error::deserialize(&value).map_err(|error| {
        let path = dotted(error.path());
        let reason = error.into_inner().to_string();
        // The spec's rules say, in the service's words, why the typed request refused this path.
        let rules = T::check_json(&value);
        DecodeError::Invalid(vec![serde_failure(path, &reason, &rules)])
    })
}

/// serde's failure `error` at `path`: the first of `rules` failing at that path when the service words
/// it as a [`ViolationKind`], else a missing field as [`ViolationKind::MissingField`], else serde's words.
fn serde_failure(path: String, error: &str, rules: &[RuleFailure]) -> Failure {
    if let Some(rule) = rules
        .iter()
        .find(|rule| rule.path == path && rule_kind(rule).is_some())
    {
        return Failure::Rule(rule.clone());
    }
    if let Some(field) = error
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        let at = if path.is_empty() {
            field.to_owned()
        } else {
            format!("{path}.{field}")
        };
        return Failure::Violation(Violation::new(ViolationKind::MissingField, at, ""));
    }
    Failure::Serde {
        path,
        error: error.to_owned(),
    }
}

/// serde_path_to_error's path (`lineItems[0].quantity`) in the service's form (`lineItems.0.quantity`).
fn dotted(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        let part = match segment {
            serde_path_to_error::Segment::Seq { index } => index.to_string(),
            serde_path_to_error::Segment::Map { key } => key.clone(),
            serde_path_to_error::Segment::Enum { variant } => variant.clone(),
            serde_path_to_error::Segment::Unknown => continue,
        };
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(&part);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use store_api_raw::types::CreateOrderRequest;

    use super::*;

    const ADDRESS: &str = r#""shippingAddress":{"firstName":"A","lastName":"B","address":{"streetAddress":"1 Main","cityOrTown":"X","stateOrProvince":"NY","zipOrPostalCode":"1","country":"US"}}"#;

    /// What the typed reading reports for `body`: `ok`, `violation: <message>` or `serde: <path>: <error>`.
    fn typed(body: &str) -> String {
        match decode_body::<CreateOrderRequest>(body.as_bytes(), Reading::Typed, |_| Vec::new()) {
            Ok(_) => "ok".to_owned(),
            Err(DecodeError::NotJson(_)) => "not json".to_owned(),
            Err(DecodeError::Invalid(failures)) => {
                assert_eq!(failures.len(), 1, "{failures:?}");
                match (&failures[0], failures[0].violation()) {
                    (_, Some(violation)) => format!("violation: {}", violation.message()),
                    (Failure::Serde { path, error }, None) => format!("serde: {path}: {error}"),
                    (other, None) => panic!("{other:?}"),
                }
            }
        }
    }

    // The cases the CLI's own mapping of serde's messages handled before it used this module (a quantity
    // below 1, a country of the wrong length, an empty string, a missing field), and what it left to serde.
    #[test]
    fn the_typed_reading_words_serdes_first_failure_by_the_rule_at_its_path() {
        let item = |quantity: &str| {
            format!(r#"{{"lineItems":[{{"sku":"S","quantity":{quantity}}}],{ADDRESS}}}"#)
        };
        assert_eq!(typed(&item("1")), "ok");
        for (quantity, expected) in [
            (
                "0",
                "violation: lineItems.0.quantity must not be less than 1",
            ),
            (
                "-3",
                "violation: lineItems.0.quantity must not be less than 1",
            ),
            (
                "\"x\"",
                "serde: lineItems.0.quantity: invalid type: string \"x\"",
            ),
            (
                "1.5",
                "serde: lineItems.0.quantity: invalid type: floating point `1.5`",
            ),
            ("null", "serde: lineItems.0.quantity: invalid type: null"),
        ] {
            assert!(
                typed(&item(quantity)).starts_with(expected),
                "{quantity}: {}",
                typed(&item(quantity))
            );
        }
        let address = |from: &str, to: &str| {
            format!(
                r#"{{"lineItems":[{{"sku":"S","quantity":1}}],{}}}"#,
                ADDRESS.replace(from, to)
            )
        };
        assert_eq!(
            typed(&address("\"B\"", "\"\"")),
            "violation: shippingAddress.lastName should not be empty"
        );
        assert_eq!(
            typed(&address("\"1 Main\"", "\"\"")),
            "violation: shippingAddress.address.streetAddress should not be empty"
        );
        for country in ["\"USA\"", "\"U\""] {
            assert_eq!(
                typed(&address("\"US\"", country)),
                "violation: shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code"
            );
        }
        assert!(
            typed(&address("\"US\"", "12"))
                .starts_with("serde: shippingAddress.address.country: invalid type")
        );
        // A lower-case code decodes: the pre-flight check refuses it (validate_fields), not the decoding.
        assert_eq!(typed(&address("\"US\"", "\"us\"")), "ok");
        assert_eq!(
            typed(&address("\"firstName\":\"A\",", "")),
            "violation: shippingAddress.firstName should not be null or undefined"
        );
        assert_eq!(
            typed(r#"{"lineItems":[]}"#),
            "violation: shippingAddress should not be null or undefined"
        );
        // `null` is an absent optional field, and an empty list is left to the pre-flight check.
        assert_eq!(
            typed(&format!(
                r#"{{"externalOrderId":null,"lineItems":[],{ADDRESS}}}"#
            )),
            "ok"
        );
        // serde reads an array as the struct's fields in order: its own words, no rule's.
        assert!(typed("[1]").starts_with("serde: "), "{}", typed("[1]"));
        assert_eq!(typed("{"), "not json");
    }

    #[test]
    fn the_service_reading_reports_every_failing_field_and_nulls_alone() {
        let messages = |body: &str| match decode_body::<CreateOrderRequest>(
            body.as_bytes(),
            Reading::Service,
            crate::validate_fields,
        ) {
            Err(DecodeError::Invalid(failures)) => {
                failures.iter().map(Failure::message).collect::<Vec<_>>()
            }
            other => panic!("{body}: {other:?}"),
        };
        assert_eq!(messages("[1]"), ["The request body must be a JSON object"]);
        assert_eq!(
            messages(r#"{"externalOrderId":null,"lineItems":[{"quantity":0}]}"#),
            ["externalOrderId must not be null"]
        );
        let width_and_state = ADDRESS.replace("\"NY\"", "\"ZZ\"");
        assert_eq!(
            messages(&format!(
                r#"{{"lineItems":[{{"quantity":1,"isCustom":true,"decorations":[{{"decorationLocation":"front","decorationMethod":"embroidery","artworkId":"a","physicalWidth":0,"physicalHeight":1}}]}}],{width_and_state}}}"#
            )),
            [
                "lineItems.0.decorations.0.physicalWidth must be a positive number",
                "shippingAddress.address.stateOrProvince must be an existing US state",
            ]
        );
    }

    #[test]
    fn serde_alone_words_a_missing_field_as_the_service() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Control {
            inner: Inner,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Inner {
            ms: u64,
        }
        let failure = deserialize::<Control>(serde_json::json!({"inner": {}})).unwrap_err();
        assert_eq!(
            failure.message(),
            "inner.ms should not be null or undefined"
        );
        let failure =
            deserialize::<Control>(serde_json::json!({"inner": {"ms": "x"}})).unwrap_err();
        assert_eq!(
            failure.message(),
            "inner.ms invalid type: string \"x\", expected u64"
        );
    }
}
