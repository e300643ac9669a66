//! Reading and decoding request bodies: a size limit, then JSON, then the generated wire type, with
//! every failure a 4xx envelope whose message names the field path.

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use serde::de::DeserializeOwned;
use store_api::validate::{Violation, ViolationKind};

use super::MAX_BODY_BYTES;
use crate::error::ApiError;

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

/// Decodes JSON into a generated wire type. Malformed JSON (or invalid UTF-8) is one message; a body of
/// the wrong shape is a message array naming the field path, worded like the validator's messages.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    decode_with(bytes, None)
}

/// Decodes a Store API request body, first checking it against the spec's component schema `schema`, and
/// reports every failing field in one message array: the schema's findings together with `field_rules`
/// (the validator's context-free rules) whenever the body still decodes.
pub(crate) fn decode_request<T: DeserializeOwned>(
    bytes: &[u8],
    schema: &str,
    field_rules: impl Fn(&T) -> Vec<String>,
) -> Result<T, ApiError> {
    decode_with(bytes, Some((schema, &field_rules)))
}

type FieldRules<'a, T> = &'a dyn Fn(&T) -> Vec<String>;

fn decode_with<T: DeserializeOwned>(
    bytes: &[u8],
    schema: Option<(&str, FieldRules<'_, T>)>,
) -> Result<T, ApiError> {
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::BadRequest(format!("The request body is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::Invalid(vec![
            "The request body must be a JSON object".into(),
        ]));
    }
    // No request field of the spec is nullable, but serde reads `null` as an absent optional field.
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
    if let Some((schema, field_rules)) = schema {
        let mut problems = super::schema::check(schema, &value);
        if !problems.is_empty() {
            if let Ok(decoded) = serde_json::from_value::<T>(value) {
                for extra in field_rules(&decoded) {
                    if !problems.contains(&extra) {
                        problems.push(extra);
                    }
                }
            }
            return Err(ApiError::Invalid(problems));
        }
    }
    // The schema check passed (or there is none): serde's first error, if any, is all there is to say.
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = dotted(error.path());
        let inner = error.into_inner().to_string();
        ApiError::Invalid(vec![field_message(&path, &inner)])
    })
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

/// serde_path_to_error's path (`lineItems[0].quantity`) in the validator's form (`lineItems.0.quantity`).
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

/// A serde error as a field message. The generated types enforce the spec's constraints while decoding
/// (a missing required field, `quantity` of at least 1, non-empty strings), so those map onto the
/// validator's own kinds and read exactly as its messages do.
fn field_message(path: &str, error: &str) -> String {
    let join = |field: &str| {
        if path.is_empty() {
            field.to_owned()
        } else {
            format!("{path}.{field}")
        }
    };
    let (kind, at) = if let Some(field) = error
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
    {
        (Some(ViolationKind::MissingField), join(field))
    } else if path.ends_with("quantity") && error.starts_with("invalid value: integer") {
        // 0 or a negative number; a string or a fraction is a type error, reported as such.
        (Some(ViolationKind::QuantityBelowOne), path.to_owned())
    } else if path.ends_with("address.country")
        && (error.contains("shorter than") || error.contains("longer than"))
    {
        // The type checks only the length of a country code; any wrong length is not a code at all.
        (Some(ViolationKind::InvalidCountry), path.to_owned())
    } else if error.contains("shorter than")
        || error.contains("longer than 0")
        || error.contains("at least 1")
    {
        (Some(ViolationKind::EmptyString), path.to_owned())
    } else {
        (None, path.to_owned())
    };
    match kind {
        Some(kind) => Violation::new(kind, at, String::new()).message(),
        None if at.is_empty() => error.to_owned(),
        None => format!("{at} {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use store_api_raw::types::CreateOrderRequest;

    fn messages(body: &str) -> ApiError {
        decode::<CreateOrderRequest>(body.as_bytes()).unwrap_err()
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
                format!(r#"{{"lineItems":[{{"quantity":"x"}}],{address}}}"#),
                "lineItems.0.quantity invalid type",
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
            match messages(&body) {
                ApiError::Invalid(list) => {
                    assert!(list[0].starts_with(expected), "{body}: {list:?}")
                }
                other => panic!("{body}: {other:?}"),
            }
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
}
