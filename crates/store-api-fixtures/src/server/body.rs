//! Reading and decoding request bodies: a size limit, then JSON, then the spec's generated rules, then
//! the generated wire type, with every failure a 4xx envelope whose message names the field path.

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use serde::de::DeserializeOwned;
use store_api_raw::rule::BodyRules;
use store_api_rules::Violation;
use store_api_rules::decode::{self, DecodeError, Failure, Reading};

use crate::deviation::{Deviation, Deviations};
use crate::error::ApiError;

/// Largest request body accepted (the seed does not show one; the spec's `x-max-body-bytes`, answered 413).
pub const MAX_BODY_BYTES: usize = store_api_raw::contract::MAX_BODY_BYTES;

/// How much of a body over the limit is read and thrown away before the 413 is sent.
const DRAIN_BYTES: usize = 16 * MAX_BODY_BYTES;

/// Reads the whole body, refusing more than [`MAX_BODY_BYTES`] with 413.
pub(crate) async fn read(body: Body) -> Result<Bytes, ApiError> {
    let mut stream = body.into_data_stream();
    let mut buffer = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|_| ApiError::BadRequest("The request body could not be read".into()))?;
        if buffer.len() + chunk.len() > MAX_BODY_BYTES {
            // A server that answers while the client is still sending closes a socket with unread data,
            // which resets the connection: the client sees a broken pipe instead of the 413. Reading the
            // rest (up to a bound) lets it finish sending and read the answer.
            let mut drained = buffer.len() + chunk.len();
            while drained <= DRAIN_BYTES
                && let Some(Ok(chunk)) = stream.next().await
            {
                drained += chunk.len();
            }
            return Err(ApiError::PayloadTooLarge);
        }
        buffer.extend_from_slice(&chunk);
    }
    Ok(buffer.freeze())
}

/// Decodes JSON into a wire type that has no schema in the spec (the emulator's control bodies).
/// Malformed JSON (or invalid UTF-8) is one message; a body of the wrong shape is one message naming
/// the field path (`store_api_rules::decode::deserialize`).
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value = object(bytes)?;
    // None of the control bodies' fields is nullable, and they have no schema to tell declared
    // fields from others: every `null` is refused.
    let mut nulls = Vec::new();
    null_paths(&value, &mut String::new(), &mut nulls);
    if !nulls.is_empty() {
        return Err(ApiError::Invalid(
            nulls
                .into_iter()
                .map(|path| format!("{path} must not be null"))
                .collect(),
        ));
    }
    decode::deserialize(value).map_err(|failure| ApiError::Invalid(vec![failure.message()]))
}

/// Decodes a Store API request body as the service reads it ([`Reading::Service`]): the spec's rules
/// for its schema first (the generated `BodyRules`), every failing field in one message array: the
/// schema's findings, then those of `field_rules` (the validator's context-free rules) that the
/// schema's do not already name, whenever the body still decodes.
///
/// With [`Deviation::NullFieldsAsAbsent`], every `null` member of an object is dropped first, so a
/// declared field sent as `null` reads as absent (the spec's `null-fields` assumption broken on purpose).
pub(crate) fn decode_request<T: DeserializeOwned + BodyRules>(
    bytes: &[u8],
    deviations: Deviations,
    field_rules: impl Fn(&T) -> Vec<Violation>,
) -> Result<T, ApiError> {
    let stripped;
    let bytes = if deviations.has(Deviation::NullFieldsAsAbsent)
        && let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(bytes)
    {
        drop_null_members(&mut value);
        // Re-encoding a value just parsed cannot fail.
        stripped = serde_json::to_vec(&value).unwrap_or_default();
        &stripped[..]
    } else {
        bytes
    };
    decode::decode_body(bytes, Reading::Service, field_rules).map_err(|error| match error {
        DecodeError::NotJson(e) => not_json(&e),
        DecodeError::Invalid(failures) => {
            ApiError::Invalid(failures.iter().map(Failure::message).collect())
        }
        // A kind of failure added later still answers 400 with its words.
        other => ApiError::BadRequest(other.to_string()),
    })
}

/// Removes every member whose value is `null` from the objects in `value`, at any depth.
fn drop_null_members(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(fields) => {
            fields.retain(|_, field| !field.is_null());
            fields.values_mut().for_each(drop_null_members);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_null_members),
        _ => {}
    }
}

/// The 400 of a body that is not JSON.
fn not_json(error: &serde_json::Error) -> ApiError {
    ApiError::BadRequest(format!("The request body is not valid JSON: {error}"))
}

/// Parses the body as a JSON object.
fn object(bytes: &[u8]) -> Result<serde_json::Value, ApiError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| not_json(&e))?;
    if !value.is_object() {
        return Err(ApiError::Invalid(vec![Failure::NotAnObject.message()]));
    }
    Ok(value)
}

/// Collects the dotted path of every `null` in `value`.
fn null_paths(value: &serde_json::Value, path: &mut String, out: &mut Vec<String>) {
    let mut visit = |segment: &str, child: &serde_json::Value, out: &mut Vec<String>| {
        let len = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(segment);
        null_paths(child, path, out);
        path.truncate(len);
    };
    match value {
        serde_json::Value::Null => out.push(path.clone()),
        serde_json::Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                visit(&index.to_string(), item, out);
            }
        }
        serde_json::Value::Object(fields) => {
            for (key, field) in fields {
                visit(key, field, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use store_api_raw::types::{CreateArtworkRequest, CreateOrderRequest};
    use store_api_rules::rule_message;

    fn order_messages(body: &str) -> ApiError {
        decode_request::<CreateOrderRequest>(body.as_bytes(), Deviations::default(), |_| Vec::new())
            .unwrap_err()
    }

    fn messages(body: &str) -> ApiError {
        decode::<CreateOrderRequest>(body.as_bytes()).unwrap_err()
    }

    /// The spec's rules broken by `value`, in the service's words.
    fn check(value: &serde_json::Value) -> Vec<String> {
        CreateOrderRequest::check_json(value)
            .iter()
            .map(rule_message)
            .collect()
    }

    #[test]
    fn shapes_are_reported_with_field_paths() {
        let address = r#""shippingAddress":{"firstName":"A","lastName":"B","address":{"streetAddress":"1 Main","cityOrTown":"X","stateOrProvince":"NY","zipOrPostalCode":"1","country":"US"}}"#;
        let cases = [
            (
                r#"{"lineItems":[]}"#.to_owned(),
                "shippingAddress should not be null or undefined",
            ),
            (
                format!(r#"{{"lineItems":[{{"quantity":0}}],{address}}}"#),
                "lineItems.0.quantity must not be less than 1",
            ),
            (
                address.replace("\"B\"", "\"\"").replace(
                    "\"shippingAddress\"",
                    "{\"lineItems\":[{\"quantity\":1}],\"shippingAddress\"",
                ) + "}",
                "shippingAddress.lastName should not be empty",
            ),
        ];
        for (body, expected) in cases {
            match order_messages(&body) {
                ApiError::Invalid(list) => {
                    assert!(list[0].starts_with(expected), "{body}: {list:?}")
                }
                other => panic!("{body}: {other:?}"),
            }
        }
        // Without the spec's rules (a control body), serde's error is reported with its path.
        let body = format!(r#"{{"lineItems":[{{"quantity":"x"}}],{address}}}"#);
        match messages(&body) {
            ApiError::Invalid(list) => assert!(
                list[0].starts_with("lineItems.0.quantity invalid type"),
                "{list:?}"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_json_and_non_objects_are_4xx() {
        assert!(matches!(messages("{"), ApiError::BadRequest(_)));
        assert!(matches!(messages("[1]"), ApiError::Invalid(_)));
        assert_eq!(
            messages(r#"{"externalOrderId":null,"lineItems":[{"quantity":1,"sku":null}]}"#),
            ApiError::Invalid(vec![
                "externalOrderId must not be null".into(),
                "lineItems.0.sku must not be null".into()
            ])
        );
        assert!(matches!(
            decode::<CreateOrderRequest>(b"\xff\xfe"),
            Err(ApiError::BadRequest(_))
        ));
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
        let problems = check(&order);
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
        assert_eq!(check(&order), Vec::<String>::new());
        assert!(
            CreateArtworkRequest::check_json(&json!({"name": "n", "image": {"url": "u"}}))
                .is_empty()
        );
    }

    #[test]
    fn with_the_null_fields_deviation_a_declared_null_reads_as_absent_and_nothing_else_changes() {
        let address = r#""shippingAddress":{"firstName":"A","lastName":"B","address":{"streetAddress":"1 Main","cityOrTown":"X","stateOrProvince":"NY","zipOrPostalCode":"1","country":"US"}}"#;
        let deviant = Deviations::default().with(Deviation::NullFieldsAsAbsent);
        let decode = |body: &str, deviations| {
            decode_request::<CreateOrderRequest>(
                body.as_bytes(),
                deviations,
                store_api_rules::validate_fields,
            )
        };
        let nulls = format!(
            r#"{{"externalOrderId":null,"lineItems":[{{"sku":"S","quantity":1,"productVariantId":null}}],{address}}}"#
        );
        assert_eq!(
            decode(&nulls, Deviations::default()).unwrap_err(),
            ApiError::Invalid(vec![
                "externalOrderId must not be null".into(),
                "lineItems.0.productVariantId must not be null".into(),
            ])
        );
        let read = decode(&nulls, deviant).unwrap();
        assert_eq!(read.external_order_id, None);
        assert_eq!(read.line_items[0].product_variant_id, None);
        // A required field sent as null is missing, as it would be absent.
        let body = format!(r#"{{"lineItems":null,{address}}}"#);
        assert_eq!(
            decode(&body, deviant).unwrap_err(),
            ApiError::Invalid(vec!["lineItems should not be null or undefined".into()])
        );
        // Bodies without nulls read the same either way.
        for body in [
            format!(r#"{{"lineItems":[{{"sku":"S","quantity":0}}],{address}}}"#),
            format!(r#"{{"externalOrderId":"","lineItems":[],{address}}}"#),
            "{".to_owned(),
            "[1]".to_owned(),
        ] {
            assert_eq!(
                format!("{:?}", decode(&body, deviant)),
                format!("{:?}", decode(&body, Deviations::default())),
                "{body}"
            );
        }
    }

    #[test]
    fn the_validators_findings_join_the_schemas_once() {
        // A width of 0 still decodes: both the schema and the validator refuse it, and it is listed once.
        let body = r#"{"lineItems":[{"quantity":1,"isCustom":true,"decorations":[{"decorationLocation":"front","decorationMethod":"embroidery","artworkId":"a","physicalWidth":0,"physicalHeight":1}]}],"shippingAddress":{"firstName":"A","lastName":"B","address":{"streetAddress":"1","cityOrTown":"X","stateOrProvince":"ZZ","zipOrPostalCode":"1","country":"US"}}}"#;
        let error = decode_request::<CreateOrderRequest>(
            body.as_bytes(),
            Deviations::default(),
            store_api_rules::validate_fields,
        )
        .unwrap_err();
        assert_eq!(
            error,
            ApiError::Invalid(vec![
                "lineItems.0.decorations.0.physicalWidth must be a positive number".into(),
                "shippingAddress.address.stateOrProvince must be an existing US state".into(),
            ])
        );
    }
}
