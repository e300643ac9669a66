//! Body validation driven by the spec itself: the request schemas of `spec/store-api.yaml`, embedded at
//! compile time from this crate's copy (`schemas.json`, written by `cargo xtask codegen` and held
//! identical to the spec by `cargo xtask codegen --check`; a published crate cannot read the workspace), checked against the JSON before it is decoded, so that every failing field is reported
//! in one message array (serde stops at the first) and the emulator enforces exactly what the spec says.
//!
//! Covers the JSON Schema subset the spec's request bodies use: `$ref`, `oneOf`, `type`, `required`,
//! `properties`, `items`, `minItems`, `minLength`, `maxLength`, `minimum` (+ `exclusiveMinimum`), `enum`
//! (not for enums marked `x-extensible-enum`, which may grow) and `format: date-time`.

use std::sync::OnceLock;

use serde_json::Value;
use store_api::validate::{Violation, ViolationKind};

/// The spec's `components/schemas`.
const SCHEMAS: &str = include_str!("schemas.json");

fn schemas() -> &'static Value {
    static PARSED: OnceLock<Value> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(SCHEMAS).unwrap_or(Value::Null))
}

/// Every way `value` breaks the named component schema, as field messages.
pub(crate) fn check(schema: &str, value: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(schema) = schemas().get(schema) {
        walk(schema, value, "", &mut problems);
    }
    problems
}

fn resolve(schema: &Value) -> &Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix("#/components/schemas/")
            .and_then(|name| schemas().get(name))
            .unwrap_or(&Value::Null),
        None => schema,
    }
}

fn field(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn say(path: &str, text: &str) -> String {
    if path.is_empty() {
        text.to_owned()
    } else {
        format!("{path} {text}")
    }
}

fn walk(schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>) {
    let schema = resolve(schema);
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let fits = options.iter().any(|option| {
            let mut inner = Vec::new();
            walk(option, value, path, &mut inner);
            inner.is_empty()
        });
        if !fits {
            problems.push(say(path, "does not have an accepted shape"));
        }
        return;
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => object(schema, value, path, problems),
        Some("array") => array(schema, value, path, problems),
        Some("string") => string(schema, value, path, problems),
        Some("integer") => number(schema, value, path, problems, true),
        Some("number") => number(schema, value, path, problems, false),
        Some("boolean") if !value.is_boolean() => {
            problems.push(say(path, "must be a boolean value"))
        }
        _ => {}
    }
}

fn object(schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(fields) = value.as_object() else {
        problems.push(say(path, "must be an object"));
        return;
    };
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(name) = name.as_str()
            && !fields.contains_key(name)
        {
            problems.push(
                Violation::new(
                    ViolationKind::MissingField,
                    field(path, name),
                    String::new(),
                )
                .message(),
            );
        }
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(child) = fields.get(name) {
                walk(property, child, &field(path, name), problems);
            }
        }
    }
}

fn array(schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(items) = value.as_array() else {
        problems.push(say(path, "must be an array"));
        return;
    };
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
        && (items.len() as u64) < min
    {
        problems.push(say(path, &format!("must contain at least {min} elements")));
    }
    if let Some(item_schema) = schema.get("items") {
        for (index, item) in items.iter().enumerate() {
            walk(
                item_schema,
                item,
                &field(path, &index.to_string()),
                problems,
            );
        }
    }
}

fn string(schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(text) = value.as_str() else {
        problems.push(say(path, "must be a string"));
        return;
    };
    let length = text.chars().count() as u64;
    let min = schema.get("minLength").and_then(Value::as_u64);
    let max = schema.get("maxLength").and_then(Value::as_u64);
    // A country code of the wrong length is not a code at all: the validator's own message says so.
    if path.ends_with("address.country")
        && (min.is_some_and(|m| length < m) || max.is_some_and(|m| length > m))
    {
        problems.push(
            Violation::new(
                ViolationKind::InvalidCountry,
                path.to_owned(),
                text.to_owned(),
            )
            .message(),
        );
        return;
    }
    if let Some(min) = min
        && length < min
    {
        problems.push(if min == 1 {
            Violation::new(ViolationKind::EmptyString, path.to_owned(), String::new()).message()
        } else {
            say(
                path,
                &format!("must be longer than or equal to {min} characters"),
            )
        });
    }
    if let Some(max) = max
        && length > max
    {
        problems.push(say(
            path,
            &format!("must be shorter than or equal to {max} characters"),
        ));
    }
    if schema.get("format").and_then(Value::as_str) == Some("date-time")
        && chrono::DateTime::parse_from_rfc3339(text).is_err()
    {
        problems.push(say(path, "must be a valid ISO 8601 date string"));
    }
    let extensible = schema.get("x-extensible-enum").and_then(Value::as_bool) == Some(true);
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !extensible
        && !allowed.iter().any(|a| a.as_str() == Some(text))
    {
        let names: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
        problems.push(say(
            path,
            &format!("must be one of the following values: {}", names.join(", ")),
        ));
    }
}

fn number(schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>, integer: bool) {
    let Some(n) = value.as_f64() else {
        problems.push(say(
            path,
            if integer {
                "must be an integer number"
            } else {
                "must be a number"
            },
        ));
        return;
    };
    if integer && !(value.is_i64() || value.is_u64()) {
        problems.push(say(path, "must be an integer number"));
        return;
    }
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
        let exclusive = schema.get("exclusiveMinimum").and_then(Value::as_bool) == Some(true);
        if exclusive && n <= min {
            // Sizes must be positive: the validator's own wording for the same rule.
            problems.push(if min == 0.0 {
                Violation::new(
                    ViolationKind::NonPositiveSize,
                    path.to_owned(),
                    n.to_string(),
                )
                .message()
            } else {
                say(path, &format!("must be greater than {min}"))
            });
        } else if !exclusive && n < min {
            let kind = if path.ends_with("quantity") && min == 1.0 {
                Some(ViolationKind::QuantityBelowOne)
            } else if min == 0.0 {
                Some(ViolationKind::NegativeOffset)
            } else {
                None
            };
            problems.push(match kind {
                Some(kind) => Violation::new(kind, path.to_owned(), String::new()).message(),
                None => say(path, &format!("must not be less than {min}")),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_spec_is_embedded_with_its_request_schemas() {
        for name in [
            "CreateOrderRequest",
            "LineItemInput",
            "Decoration",
            "CreateArtworkRequest",
        ] {
            assert!(schemas().get(name).is_some(), "{name}");
        }
    }

    #[test]
    fn every_failing_field_is_reported_at_once() {
        let order = json!({
            "externalOrderId": "",
            "orderedAt": "yesterday",
            "lineItems": [
                {"quantity": 0, "sku": 7},
                {"isCustom": "yes", "quantity": 1.5, "decorations": [{"decorationLocation": "front", "physicalWidth": 0}]}
            ],
            "shippingAddress": {"lastName": "", "address": {"country": "USA"}}
        });
        let problems = check("CreateOrderRequest", &order);
        for expected in [
            "externalOrderId should not be empty",
            "orderedAt must be a valid ISO 8601 date string",
            "lineItems.0.quantity must not be less than 1",
            "lineItems.0.sku must be a string",
            "lineItems.1.isCustom must be a boolean value",
            "lineItems.1.quantity must be an integer number",
            "lineItems.1.decorations.0.decorationMethod should not be null or undefined",
            "lineItems.1.decorations.0.physicalWidth must be a positive number",
            "shippingAddress.firstName should not be null or undefined",
            "shippingAddress.lastName should not be empty",
            "shippingAddress.address.streetAddress should not be null or undefined",
            "shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code",
        ] {
            assert!(
                problems.iter().any(|p| p == expected),
                "missing {expected:?} in {problems:#?}"
            );
        }
    }

    #[test]
    fn a_valid_body_and_unknown_fields_pass_and_growing_enums_are_open() {
        let order = json!({
            "lineItems": [{"isCustom": true, "catalogProductVariantId": "cv", "quantity": 1, "extra": [1],
                "decorations": [{"decorationLocation": "front", "decorationMethod": "holographic_foil",
                    "artworkId": "a", "physicalWidth": 1, "physicalHeight": 2}]}],
            "shippingAddress": {"firstName": "", "lastName": "L", "address": {"streetAddress": "s",
                "cityOrTown": "c", "stateOrProvince": "", "zipOrPostalCode": "", "country": "DE"}}
        });
        assert_eq!(check("CreateOrderRequest", &order), Vec::<String>::new());
    }
}
