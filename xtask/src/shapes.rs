//! Generation of the declared answers of each operation into the contract module
//! (`contract::RESPONSES`, the `contract::shapes` module): status, media type, headers and the body's
//! schema reduced to what a recorded answer is checked against (`store_api_raw::contract::Shape`). A
//! named schema of `components/schemas` becomes one static (references to it point there, so a
//! recursive schema is fine); open enumerations are recognised by `crate::open_enum`'s spellings.

use std::fmt::Write as _;

use serde_norway::Value;

use crate::contract::{METHODS, map_at, parse, reference, resolve, screaming, spec_error};
use crate::generator::CodegenError;
use crate::open_enum::{KnownValues, known_values};

/// What the declared answers share, each emitted once: named schemas as statics, component headers
/// as constants.
#[derive(Default)]
struct Shapes {
    /// Named schemas: (schema name, definition once generated). `None` while being generated.
    schemas: Vec<(String, Option<String>)>,
    /// Component headers: (component name, header name as used, definition).
    headers: Vec<(String, String, String)>,
}

/// The unformatted source of the `shapes` module, `RESPONSES` and `responses()`, which the contract
/// module ends with.
pub fn generate(spec_text: &str) -> Result<String, CodegenError> {
    let spec = &parse(spec_text)?;
    let mut text = String::new();
    let out = &mut text;
    let mut shapes = Shapes::default();
    let mut table = String::new();
    for (path, item) in map_at(spec, &["paths"])? {
        let path = path
            .as_str()
            .ok_or_else(|| spec_error("a path is not a string"))?;
        for method in METHODS {
            let Some(operation) = item.get(*method) else {
                continue;
            };
            let id = operation
                .get("operationId")
                .and_then(Value::as_str)
                .ok_or_else(|| spec_error(format!("{method} {path} has no operationId")))?;
            let place = format!("{} {path}", method.to_ascii_uppercase());
            let mut answers = Vec::new();
            let responses = operation
                .get("responses")
                .and_then(Value::as_mapping)
                .ok_or_else(|| spec_error(format!("{place} declares no responses")))?;
            for (status, response) in responses {
                let status = match status {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return Err(spec_error(format!("{place}: a status is not a string"))),
                };
                answers.push(shapes.response(spec, &status, response, &place)?);
            }
            writeln!(
                table,
                "OperationResponses {{ operation: {id:?}, responses: &[{}] }},",
                answers.join(", ")
            )
            .ok();
        }
    }
    out.push_str(
        "/// The shapes of the spec's named schemas and headers, as the declared answers use them\n\
         /// ([`RESPONSES`]).\n\
         pub mod shapes {\n\
         use crate::contract_shapes::{\n\
         HeaderShape, ObjectShape, OpenEnumShape, OperationResponses, Property, ResponseShape, Shape,\n\
         };\n\n",
    );
    for (component, name, definition) in &shapes.headers {
        writeln!(
            out,
            "/// The `{name}` header (`components/headers/{component}`).\npub const {}: HeaderShape = {definition};\n",
            screaming(component)
        )
        .ok();
    }
    for (name, definition) in &shapes.schemas {
        let definition = definition
            .as_deref()
            .ok_or_else(|| spec_error(format!("schema {name} was left unfinished")))?;
        writeln!(
            out,
            "/// The `{name}` schema.\npub static {}: Shape = {definition};\n",
            screaming(name)
        )
        .ok();
    }
    writeln!(
        out,
        "/// The answers the spec declares for each operation, in the spec's order: status, media type,\n\
         /// headers and the body's shape.\n\
         pub static RESPONSES: &[OperationResponses] = &[\n{table}];\n\
         }}\n\n\
         pub use shapes::RESPONSES;\n\n\
         /// The answers the spec declares for the operation with this id (`listOrders` or `list_orders`).\n\
         pub fn responses(id: &str) -> Option<&'static OperationResponses> {{\n\
         let id = operation(id)?.id;\n\
         RESPONSES.iter().find(|r| r.operation == id)\n\
         }}\n"
    )
    .ok();
    Ok(text)
}

impl Shapes {
    /// `ResponseShape { .. }` of one declared answer.
    fn response(
        &mut self,
        spec: &Value,
        status: &str,
        response: &Value,
        place: &str,
    ) -> Result<String, CodegenError> {
        let place = format!("{place} › {status}");
        let response = resolve(spec, response)?;
        let (content_type, body) = match response.get("content").and_then(Value::as_mapping) {
            None => ("None".to_owned(), "None".to_owned()),
            Some(content) => {
                // JSON first when several media types are declared: it is what the body check reads.
                let chosen = content
                    .iter()
                    .find(|(k, _)| k.as_str().is_some_and(|k| k.contains("json")))
                    .or_else(|| content.iter().next());
                match chosen {
                    None => ("None".to_owned(), "None".to_owned()),
                    Some((media, entry)) => {
                        let media = media.as_str().unwrap_or_default();
                        let body = match entry.get("schema") {
                            Some(schema) => {
                                format!("Some({})", self.shape_ref(spec, schema, &place)?)
                            }
                            None => "None".to_owned(),
                        };
                        (format!("Some({media:?})"), body)
                    }
                }
            }
        };
        let mut headers = Vec::new();
        if let Some(declared) = response.get("headers").and_then(Value::as_mapping) {
            for (name, header) in declared {
                let name = name
                    .as_str()
                    .ok_or_else(|| spec_error(format!("{place}: a header name is not a string")))?;
                headers.push(self.header(spec, name, header, &place)?);
            }
        }
        Ok(format!(
            "ResponseShape {{ status: {status:?}, content_type: {content_type}, body: {body}, headers: &[{}] }}",
            headers.join(", ")
        ))
    }

    /// A header's constant (a component header) or its literal.
    fn header(
        &mut self,
        spec: &Value,
        name: &str,
        header: &Value,
        place: &str,
    ) -> Result<String, CodegenError> {
        let lower = name.to_ascii_lowercase();
        let resolved = resolve(spec, header)?;
        let schema = resolved.get("schema").unwrap_or(&Value::Null);
        let minimum = resolve(spec, schema)?
            .get("minimum")
            .and_then(Value::as_i64)
            .map_or("None".to_owned(), |m| format!("Some({m})"));
        let literal = format!(
            "HeaderShape {{ name: {lower:?}, required: {required}, shape: {shape}, minimum: {minimum} }}",
            required = resolved
                .get("required")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            shape = self.shape_ref(spec, schema, &format!("{place} › {name}"))?,
        );
        let Some(component) = reference(header, "#/components/headers/") else {
            return Ok(literal);
        };
        match self.headers.iter().find(|(c, _, _)| c == component) {
            Some((_, used, _)) if *used == lower => {}
            // The same component under another name: its literal, named as used here.
            Some(_) => return Ok(literal),
            None => self
                .headers
                .push((component.to_owned(), lower.clone(), literal)),
        }
        Ok(screaming(component))
    }

    /// An expression of type `&'static Shape` for `schema`.
    fn shape_ref(
        &mut self,
        spec: &Value,
        schema: &Value,
        place: &str,
    ) -> Result<String, CodegenError> {
        if let Some(name) = reference(schema, "#/components/schemas/") {
            self.named(spec, name)?;
            return Ok(format!("&{}", screaming(name)));
        }
        if schema.get("$ref").is_some() {
            return self.shape_ref(spec, resolve(spec, schema)?, place);
        }
        // `allOf: [$ref]` beside a description (the money fields) is the referenced schema.
        if let Some([only]) = schema
            .get("allOf")
            .and_then(Value::as_sequence)
            .map(Vec::as_slice)
            && schema.get("nullable").is_none()
        {
            return self.shape_ref(spec, only, place);
        }
        Ok(format!("&{}", self.shape_value(spec, schema, None, place)?))
    }

    /// Makes sure the named schema has its static.
    fn named(&mut self, spec: &Value, name: &str) -> Result<(), CodegenError> {
        if self.schemas.iter().any(|(n, _)| n == name) {
            return Ok(());
        }
        let index = self.schemas.len();
        self.schemas.push((name.to_owned(), None));
        let schema = map_at(spec, &["components", "schemas"])?
            .get(name)
            .ok_or_else(|| spec_error(format!("unresolved schema {name}")))?;
        let value = self.shape_value(spec, schema, Some(name), name)?;
        self.schemas[index].1 = Some(value);
        Ok(())
    }

    /// An expression of type `Shape` for `schema` (named `name` when it is a component schema).
    fn shape_value(
        &mut self,
        spec: &Value,
        schema: &Value,
        name: Option<&str>,
        place: &str,
    ) -> Result<String, CodegenError> {
        if schema.get("$ref").is_some() {
            return Ok(format!(
                "Shape::OneOf(&[{}])",
                self.shape_ref(spec, schema, place)?
            ));
        }
        let json = serde_json::to_value(schema).map_err(|e| spec_error(format!("{place}: {e}")))?;
        if let Some(KnownValues(values)) = known_values(name.unwrap_or(place), &json)? {
            let known: Vec<&str> = values.iter().map(|(v, _)| v.as_str()).collect();
            let enum_name = name
                .or_else(|| schema.get("title").and_then(Value::as_str))
                .unwrap_or(place);
            return Ok(format!(
                "Shape::OpenEnum(&OpenEnumShape {{ name: {enum_name:?}, known: &{known:?} }})"
            ));
        }
        if schema.get("nullable").and_then(Value::as_bool) == Some(true) {
            let mut inner = schema.clone();
            if let Some(map) = inner.as_mapping_mut() {
                map.remove("nullable");
            }
            let inner = self.shape_value(spec, &inner, name, place)?;
            return Ok(format!("Shape::Nullable(&{inner})"));
        }
        for key in ["allOf", "oneOf", "anyOf"] {
            let Some(members) = schema.get(key).and_then(Value::as_sequence) else {
                continue;
            };
            if key == "allOf" && members.len() > 1 {
                return Err(spec_error(format!(
                    "{place}: an `allOf` of several schemas is not supported by the response shapes"
                )));
            }
            let refs = members
                .iter()
                .map(|member| self.shape_ref(spec, member, place))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(format!("Shape::OneOf(&[{}])", refs.join(", ")));
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_sequence) {
            let values: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
            return Ok(format!("Shape::Enum(&{values:?})"));
        }
        let kind = schema.get("type").and_then(Value::as_str);
        let has_object_keys =
            schema.get("properties").is_some() || schema.get("additionalProperties").is_some();
        Ok(match kind {
            Some("string") => "Shape::String".to_owned(),
            Some("integer") => "Shape::Integer".to_owned(),
            Some("number") => "Shape::Number".to_owned(),
            Some("boolean") => "Shape::Boolean".to_owned(),
            Some("array") => {
                let items = match schema.get("items") {
                    Some(items) => self.shape_ref(spec, items, &format!("{place}[]"))?,
                    None => "&Shape::Any".to_owned(),
                };
                format!("Shape::Array({items})")
            }
            Some("object") => self.object(spec, schema, name, place)?,
            None if has_object_keys => self.object(spec, schema, name, place)?,
            None => "Shape::Any".to_owned(),
            Some(other) => {
                return Err(spec_error(format!(
                    "{place}: type {other:?} is not an OpenAPI 3.0 type"
                )));
            }
        })
    }

    fn object(
        &mut self,
        spec: &Value,
        schema: &Value,
        name: Option<&str>,
        place: &str,
    ) -> Result<String, CodegenError> {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut properties = Vec::new();
        if let Some(declared) = schema.get("properties").and_then(Value::as_mapping) {
            for (property, property_schema) in declared {
                let property = property.as_str().ok_or_else(|| {
                    spec_error(format!("{place}: a property name is not a string"))
                })?;
                let shape =
                    self.shape_ref(spec, property_schema, &format!("{place}.{property}"))?;
                properties.push(format!(
                    "Property {{ name: {property:?}, required: {}, shape: {shape} }}",
                    required.contains(&property)
                ));
            }
        }
        let additional = match schema.get("additionalProperties") {
            None | Some(Value::Bool(false)) => "None".to_owned(),
            Some(Value::Bool(true)) => "Some(&Shape::Any)".to_owned(),
            Some(values) => format!(
                "Some({})",
                self.shape_ref(spec, values, &format!("{place}.*"))?
            ),
        };
        Ok(format!(
            "Shape::Object(&ObjectShape {{ name: {name}, properties: &[{}], additional: {additional} }})",
            properties.join(", "),
            name = name.map_or("None".to_owned(), |n| format!("Some({n:?})")),
        ))
    }
}

#[cfg(test)]
mod tests {
    fn spec() -> String {
        std::fs::read_to_string(crate::workspace_root().join(crate::generator::SPEC_PATH))
            .unwrap_or_default()
    }

    fn generated(spec: &str) -> String {
        super::generate(spec).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_declared_answers_come_from_the_spec() {
        let out = generated(&spec());
        for fact in [
            "OperationResponses { operation: \"getStatus\", responses: &[ResponseShape { status: \"200\", content_type: Some(\"application/json\"), body: Some(&STATUS_RESULT), headers: &[X_RATE_LIMIT_LIMIT, X_RATE_LIMIT_REMAINING, X_RATE_LIMIT_RESET] }",
            "pub const RETRY_AFTER: HeaderShape = HeaderShape { name: \"retry-after\", required: true, shape: &Shape::Integer, minimum: Some(0) };",
            "pub static ERROR_MESSAGE: Shape = Shape::OneOf(&[&Shape::String, &Shape::Array(&Shape::String)]);",
            "Property { name: \"statusCode\", required: true, shape: &Shape::Integer }",
            "pub static SORT_DIRECTION: Shape = Shape::Enum(&[\"asc\", \"desc\"]);",
            "pub static ORDER_STATUS: Shape = Shape::OpenEnum(&OpenEnumShape { name: \"OrderStatus\", known: &[\"pending\",",
            "Property { name: \"sort\", required: false, shape: &Shape::Object(&ObjectShape { name: None, properties: &[], additional: Some(&SORT_DIRECTION) }) }",
            // `allOf: [$ref: Money]` is the money schema itself.
            "Property { name: \"totalCost\", required: false, shape: &MONEY }",
        ] {
            assert!(out.contains(fact), "missing {fact}");
        }
        assert_eq!(out.matches("OperationResponses { operation:").count(), 11);
    }

    #[test]
    fn spec_edits_change_the_declared_answers() {
        let spec = spec();
        let edited = spec
            .replacen(
                "        name:\n          type: string\n          description: Human-readable order name.\n",
                "        name:\n          type: string\n          description: Human-readable order name.\n        giftNote:\n          type: boolean\n",
                1,
            )
            .replacen("        \"409\":\n          $ref: \"#/components/responses/Conflict\"\n", "        \"409\":\n          $ref: \"#/components/responses/Conflict\"\n        \"418\":\n          description: Teapot.\n", 1);
        assert_ne!(edited, spec);
        let out = generated(&edited);
        assert!(
            out.contains(
                "Property { name: \"giftNote\", required: false, shape: &Shape::Boolean }"
            )
        );
        assert!(out.contains(
            "ResponseShape { status: \"418\", content_type: None, body: None, headers: &[] }"
        ));
        let several = spec.replacen(
            "          allOf:\n            - $ref: \"#/components/schemas/Money\"\n          description: What the provider bills",
            "          allOf:\n            - $ref: \"#/components/schemas/Money\"\n            - type: number\n          description: What the provider bills",
            1,
        );
        assert_ne!(several, spec);
        let error = super::generate(&several)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("allOf"), "{error}");
    }
}
