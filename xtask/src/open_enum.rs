//! How the spec writes an enumeration that may grow within the API version, so that generators other
//! than ours keep it open too. Two standard spellings are read, and give the same Rust type:
//!
//! - `anyOf` of the known values and any string (what the spec uses: openapi-python-client, for one,
//!   makes it `KnownX | str`, and TypeScript generators a union with `string`):
//!
//!   ```yaml
//!   anyOf:
//!     - title: KnownProductStatus
//!       type: string
//!       enum: [active, draft]
//!     - type: string
//!   ```
//! - the Zalando guidelines' `x-extensible-enum` listing the values over a plain string (every other tool
//!   sees a string):
//!
//!   ```yaml
//!   type: string
//!   x-extensible-enum: [active, draft]
//!   ```
//!
//! `x-enumDescriptions` (one line of documentation per value, Redocly's convention) sits beside the
//! values. A closed `enum` marked `x-extensible-enum: true`, which only this generator read as open,
//! is refused with the spellings to use instead.

use serde_json::Value;

use crate::generator::CodegenError;

/// The known values of an open enumeration, with the documentation line of each, in the spec's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownValues(pub Vec<(String, Option<String>)>);

/// The known values when `schema` (named `name`, for errors) is an open enumeration in either
/// spelling; `None` for any other schema; an error for an open enumeration written in a way other
/// generators read as closed, or without values.
pub fn known_values(name: &str, schema: &Value) -> Result<Option<KnownValues>, CodegenError> {
    let error = |what: &str| CodegenError::Spec(format!("{name}: {what}"));
    match schema.get("x-extensible-enum") {
        Some(Value::Array(values)) => {
            if schema.get("type").and_then(Value::as_str) != Some("string") {
                return Err(error("`x-extensible-enum` needs `type: string` beside it"));
            }
            if schema.get("enum").is_some() {
                return Err(error(
                    "an `enum` beside `x-extensible-enum` closes the value set for other generators; list the values in `x-extensible-enum` only",
                ));
            }
            return values_with_descriptions(values, schema)
                .map(Some)
                .map_err(|e| error(&e));
        }
        Some(_) => {
            return Err(error(
                "`x-extensible-enum: true` beside a closed `enum` is read as closed by every other generator; \
                 write `anyOf: [{type: string, enum: [...]}, {type: string}]`, or list the values in \
                 `x-extensible-enum` over `type: string`",
            ));
        }
        None => {}
    }
    let Some([first, second]) = schema
        .get("anyOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    else {
        return Ok(None);
    };
    let (known, any) = if first.get("enum").is_some() {
        (first, second)
    } else {
        (second, first)
    };
    let Some(values) = known.get("enum").and_then(Value::as_array) else {
        return Ok(None);
    };
    if !is_any_string(any) || !matches!(known.get("type"), None | Some(Value::String(_))) {
        return Ok(None);
    }
    if known
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t != "string")
    {
        return Err(error(
            "the known values of an open enumeration must be strings",
        ));
    }
    let descriptions = if known.get("x-enumDescriptions").is_some() {
        known
    } else {
        schema
    };
    values_with_descriptions(values, descriptions)
        .map(Some)
        .map_err(|e| error(&e))
}

/// Whether `schema` is a plain string with no constraint (documentation keywords aside).
fn is_any_string(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("string")
        && schema.as_object().is_some_and(|object| {
            object.keys().all(|key| {
                matches!(key.as_str(), "type" | "description" | "title") || key.starts_with("x-")
            })
        })
}

fn values_with_descriptions(values: &[Value], holder: &Value) -> Result<KnownValues, String> {
    let descriptions = holder.get("x-enumDescriptions");
    let values = values
        .iter()
        .map(|value| {
            let value = value
                .as_str()
                .ok_or_else(|| format!("the known value {value} is not a string"))?;
            let doc = descriptions
                .and_then(|d| d.get(value))
                .and_then(Value::as_str)
                .map(str::to_owned);
            Ok((value.to_owned(), doc))
        })
        .collect::<Result<Vec<_>, String>>()?;
    if values.is_empty() {
        return Err("an open enumeration needs at least one known value".to_owned());
    }
    Ok(KnownValues(values))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str) -> Result<Option<KnownValues>, String> {
        let schema: Value = serde_norway::from_str(yaml).map_err(|e| e.to_string())?;
        known_values("Status", &schema).map_err(|e| e.to_string())
    }

    fn values(pairs: &[(&str, Option<&str>)]) -> Option<KnownValues> {
        Some(KnownValues(
            pairs
                .iter()
                .map(|(v, d)| ((*v).to_owned(), d.map(str::to_owned)))
                .collect(),
        ))
    }

    #[test]
    fn both_spellings_give_the_same_values() {
        let expected = values(&[("active", Some("Live.")), ("draft", None)]);
        let any_of = "anyOf:\n  - title: KnownStatus\n    type: string\n    x-enumDescriptions: {active: Live.}\n    enum: [active, draft]\n  - type: string\n    description: Added later.\n";
        let reversed = "x-enumDescriptions: {active: Live.}\nanyOf:\n  - type: string\n  - enum: [active, draft]\n";
        let zalando = "type: string\nx-enumDescriptions: {active: Live.}\nx-extensible-enum: [active, draft]\n";
        for spelling in [any_of, reversed, zalando] {
            assert_eq!(read(spelling), Ok(expected.clone()), "{spelling}");
        }
    }

    #[test]
    fn other_schemas_are_not_open_enumerations() {
        for yaml in [
            "type: string\nenum: [asc, desc]\n",
            "type: string\n",
            "anyOf:\n  - type: string\n  - type: integer\n",
            "anyOf:\n  - enum: [a]\n  - type: string\n    pattern: '^x'\n",
            "anyOf:\n  - enum: [a]\n  - type: string\n  - type: integer\n",
        ] {
            assert_eq!(read(yaml), Ok(None), "{yaml}");
        }
    }

    #[test]
    fn spellings_other_generators_read_as_closed_are_refused() {
        for (yaml, says) in [
            (
                "type: string\nx-extensible-enum: true\nenum: [a]\n",
                "read as closed by every other generator",
            ),
            (
                "type: string\nx-extensible-enum: [a]\nenum: [a]\n",
                "closes the value set",
            ),
            ("x-extensible-enum: [a]\n", "needs `type: string`"),
            (
                "type: string\nx-extensible-enum: []\n",
                "at least one known value",
            ),
            ("type: string\nx-extensible-enum: [1]\n", "not a string"),
            (
                "anyOf:\n  - type: integer\n    enum: [1]\n  - type: string\n",
                "must be strings",
            ),
        ] {
            let error = read(yaml).expect_err(yaml);
            assert!(
                error.contains("Status: ") && error.contains(says),
                "{error}"
            );
        }
    }
}
