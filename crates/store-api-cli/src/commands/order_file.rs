//! Reading a create-order request from a file. A file that is JSON but breaks a constraint the typed
//! request enforces while decoding (an empty lastName, a quantity of 0, a missing field) is reported
//! like the pre-flight check and the service report it: the field path and the service's wording.

use std::path::Path;

use serde_path_to_error::{Path as FieldPath, Segment};
use store_api::NewOrder;
use store_api::validate::{Violation, ViolationKind};

use crate::error::CliError;

/// Reads and decodes the request in `path` (standard input for `-`).
pub fn read_order(path: &Path) -> Result<NewOrder, CliError> {
    let text = crate::input::read_text(path)?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| CliError::Usage(format!("{} is not JSON: {e}", path.display())))?;
    serde_path_to_error::deserialize(value).map_err(|error| {
        let field = dotted(error.path());
        let reason = error.into_inner().to_string();
        match violation(&field, &reason) {
            Some(violation) => CliError::Api(store_api::Error::Invalid {
                violations: vec![violation],
            }),
            None => CliError::Usage(format!(
                "{} is not a create-order request: {}{reason}",
                path.display(),
                if field.is_empty() {
                    String::new()
                } else {
                    format!("{field}: ")
                }
            )),
        }
    })
}

/// `lineItems[0].quantity` as the service writes it: `lineItems.0.quantity`.
fn dotted(path: &FieldPath) -> String {
    let parts: Vec<String> = path
        .iter()
        .filter_map(|segment| match segment {
            Segment::Seq { index } => Some(index.to_string()),
            Segment::Map { key } => Some(key.clone()),
            Segment::Enum { variant } => Some(variant.clone()),
            Segment::Unknown => None,
        })
        .collect();
    parts.join(".")
}

/// The service's violation for a decoding failure at `field`, when it is one the service reports.
fn violation(field: &str, reason: &str) -> Option<Violation> {
    if let Some(missing) = reason
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        let at = if field.is_empty() {
            missing.to_owned()
        } else {
            format!("{field}.{missing}")
        };
        return Some(Violation::new(ViolationKind::MissingField, at, ""));
    }
    let kind = if field.ends_with("quantity") && reason.starts_with("invalid value: integer") {
        ViolationKind::QuantityBelowOne
    } else if field.ends_with("address.country") && reason.contains("than") {
        ViolationKind::InvalidCountry
    } else if reason.contains("shorter than 1") {
        ViolationKind::EmptyString
    } else {
        return None;
    };
    Some(Violation::new(kind, field, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: &str, expected: &str) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("order.json");
        std::fs::write(&file, body).unwrap();
        let message = match read_order(&file) {
            Ok(_) => "ok".to_owned(),
            Err(CliError::Api(store_api::Error::Invalid { violations })) => {
                format!("invalid: {}", violations[0].message())
            }
            Err(CliError::Usage(text)) => format!("usage: {text}"),
            Err(other) => format!("other: {other}"),
        };
        assert!(message.contains(expected), "{body}: {message}");
    }

    #[test]
    fn decoding_failures_read_like_the_service() {
        let address = r#""shippingAddress":{"firstName":"A","lastName":"B","address":{"streetAddress":"1 Main","cityOrTown":"X","stateOrProvince":"NY","zipOrPostalCode":"1","country":"US"}}"#;
        check(
            &format!(r#"{{"lineItems":[{{"sku":"S","quantity":1}}],{address}}}"#),
            "ok",
        );
        check(
            &format!(r#"{{"lineItems":[{{"sku":"S","quantity":0}}],{address}}}"#),
            "invalid: lineItems.0.quantity must not be less than 1",
        );
        check(
            &format!(
                r#"{{"lineItems":[{{"sku":"S","quantity":1}}],{}}}"#,
                address.replace("\"B\"", "\"\"")
            ),
            "invalid: shippingAddress.lastName should not be empty",
        );
        check(
            r#"{"lineItems":[]}"#,
            "invalid: shippingAddress should not be null or undefined",
        );
        check(
            &format!(r#"{{"lineItems":[{{"sku":"S","quantity":"x"}}],{address}}}"#),
            "usage: ",
        );
        check("{", "usage: ");
        check("[1]", "usage: ");
    }
}
