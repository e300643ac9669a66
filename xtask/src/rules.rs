//! Generation of `crates/store-api-raw/src/rules.rs`: the spec's request-body rules as Rust checks.
//!
//! Every schema an operation of `paths` takes as its JSON request body (not the webhooks of `x-webhooks`,
//! which the service sends), and every schema those reference, becomes two checks reporting structured
//! failures (`store_api_raw::rule::RuleFailure`), one over JSON and one over the typed request:
//!
//! - over JSON, for the emulator, which must report every failing field at once: `required`, `type`,
//!   `minItems`, `minLength`/`maxLength`, `minimum` (+ `exclusiveMinimum`), `enum` (not for schemas
//!   marked `x-extensible-enum`, which may grow), `format: date-time`, `oneOf` and nested objects and
//!   arrays. An object's missing required fields come first, then its fields in key order.
//! - over the typed request, for the client's pre-flight check: only what the Rust type cannot hold
//!   (bounds on lengths, items and numbers, and the finiteness JSON numbers have but `f64` lacks), in
//!   the schema's declaration order, allocating nothing unless a rule fails.
//!
//! Any other schema keyword in a request body is an error here, so the checks can never silently cover
//! less than the spec says.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

use crate::codegen::CodegenError;

/// Generated file path relative to the workspace root.
pub const RULES_PATH: &str = "crates/store-api-raw/src/rules.rs";

/// Schema keywords the generator understands (documentation keywords included); anything else in a
/// request body schema is refused.
const KNOWN_KEYWORDS: &[&str] = &[
    "$ref",
    "type",
    "description",
    "required",
    "properties",
    "items",
    "minItems",
    "minLength",
    "maxLength",
    "minimum",
    "exclusiveMinimum",
    "enum",
    "x-extensible-enum",
    "format",
    "oneOf",
    "default",
    "example",
    "x-assumption",
];

/// The formatted Rust source of the rules module for the spec's YAML text.
pub fn generate(spec_text: &str) -> Result<String, CodegenError> {
    let code = source(spec_text)?;
    Ok(format!(
        "{}{}",
        crate::codegen::PREAMBLE,
        crate::codegen::rustfmt(&code)?
    ))
}

fn source(spec_text: &str) -> Result<String, CodegenError> {
    let spec: Value =
        serde_norway::from_str(spec_text).map_err(|e| CodegenError::Spec(e.to_string()))?;
    let schemas = spec
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .ok_or_else(|| CodegenError::Spec("no components/schemas object".into()))?;
    let generator = Generator {
        schemas: schemas.iter().map(|(k, v)| (k.as_str(), v)).collect(),
        declared: declaration_orders(spec_text)?,
    };
    let roots = request_bodies(&spec)?;
    let mut reachable = BTreeSet::new();
    for root in &roots {
        generator.collect(root, &mut reachable)?;
    }
    let mut code = String::from(HEADER);
    for root in &roots {
        let snake = snake_case(root);
        let _ = write!(
            code,
            "impl BodyRules for types::{root} {{\n\
             fn check(&self, out: &mut Vec<RuleFailure>) {{ typed_{snake}(self, &FieldPath::Root, out); }}\n\
             fn check_json(value: &Value) -> Vec<RuleFailure> {{\n\
             let mut out = Vec::new();\n\
             json_{snake}(value, &FieldPath::Root, \"{root}\", \"\", &mut out);\n\
             out\n}}\n}}\n\n"
        );
    }
    for name in &reachable {
        code.push_str(&generator.json_fn(name)?);
        if generator.schema(name)?.get("properties").is_some() {
            code.push_str(&generator.typed_fn(name)?);
        }
    }
    Ok(code)
}

const HEADER: &str = "//! The request-body rules of the spec as checks: generated from the schemas of the operations' JSON\n\
//! request bodies. See `crate::rule` for what they report and `store_api::validate::rule_message` for\n\
//! the service's wording.\n\n\
use serde_json::Value;\n\n\
use crate::rule::{AsF64, BodyRules, FieldPath, JsonType, Rule, RuleFailure, below_minimum, char_count, fail, is_date_time};\n\
use crate::types;\n\n";

/// The component schemas the operations of `paths` take as JSON request bodies, sorted.
fn request_bodies(spec: &Value) -> Result<BTreeSet<String>, CodegenError> {
    let mut roots = BTreeSet::new();
    let paths = spec
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(|| CodegenError::Spec("no paths object".into()))?;
    for item in paths.values() {
        let Some(operations) = item.as_object() else {
            continue;
        };
        for operation in operations.values() {
            if let Some(body) = operation.pointer("/requestBody/content/application~1json/schema") {
                let name = ref_name(body).ok_or_else(|| {
                    CodegenError::Spec("a JSON request body schema must be a $ref".into())
                })?;
                roots.insert(name.to_owned());
            }
        }
    }
    Ok(roots)
}

fn ref_name(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
}

/// `CreateOrderRequest` → `create_order_request`, `isCustom` → `is_custom`; Rust keywords get a `_`
/// suffix, as typify names them.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    if syn::parse_str::<syn::Ident>(&out).is_err() {
        out.push('_');
    }
    out
}

fn type_variant(name: &str) -> Result<&'static str, CodegenError> {
    Ok(match name {
        "object" => "Object",
        "array" => "Array",
        "string" => "String",
        "integer" => "Integer",
        "number" => "Number",
        "boolean" => "Boolean",
        other => return Err(CodegenError::Spec(format!("unknown schema type {other:?}"))),
    })
}

/// A number bound as a Rust `f64` literal.
fn float(value: &Value) -> Result<String, CodegenError> {
    let n = value
        .as_f64()
        .ok_or_else(|| CodegenError::Spec(format!("bound {value} is not a number")))?;
    Ok(format!("{n:?}_f64"))
}

fn count(value: &Value) -> Result<u64, CodegenError> {
    value
        .as_u64()
        .ok_or_else(|| CodegenError::Spec(format!("bound {value} is not a count")))
}

/// `match value.as_x() { None => type failure, Some(binding) => inner }`, or just the type check when
/// there is nothing inside (or `binding` is unused).
fn shape(
    code: &mut String,
    value: &str,
    accessor: &str,
    predicate: &str,
    type_failure: &str,
    binding: &str,
    inner: &str,
) {
    if inner.is_empty() {
        let _ = writeln!(code, "if !{value}.{predicate}() {{ {type_failure} }}");
    } else if binding == "_" || !inner.contains(binding) {
        let _ = writeln!(
            code,
            "if !{value}.{predicate}() {{ {type_failure} }} else {{\n{inner}}}"
        );
    } else {
        let _ = writeln!(
            code,
            "match {value}.{accessor}() {{\nNone => {{ {type_failure} }}\nSome({binding}) => {{\n{inner}}}\n}}"
        );
    }
}

/// The JSON string literal of `text`, which is also a valid Rust string literal.
fn literal(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

struct Generator<'a> {
    schemas: BTreeMap<&'a str, &'a Value>,
    /// Each component schema's property names in the order the spec declares them (serde_json's map,
    /// without `preserve_order`, sorts them).
    declared: BTreeMap<String, Vec<String>>,
}

/// The property names of every component schema, in declaration order, read through YAML's own
/// (order-keeping) mapping.
fn declaration_orders(spec_text: &str) -> Result<BTreeMap<String, Vec<String>>, CodegenError> {
    let spec: serde_norway::Value =
        serde_norway::from_str(spec_text).map_err(|e| CodegenError::Spec(e.to_string()))?;
    let mut orders = BTreeMap::new();
    let schemas = spec
        .get("components")
        .and_then(|c| c.get("schemas"))
        .and_then(serde_norway::Value::as_mapping)
        .into_iter()
        .flatten();
    for (name, schema) in schemas {
        let names = schema
            .get("properties")
            .and_then(serde_norway::Value::as_mapping)
            .into_iter()
            .flatten()
            .filter_map(|(key, _)| key.as_str().map(str::to_owned))
            .collect();
        if let Some(name) = name.as_str() {
            orders.insert(name.to_owned(), names);
        }
    }
    Ok(orders)
}

/// Where generated code is: the expressions for the value, its path and the failure list, and the
/// property (component schema, property name) that states the rules being checked.
#[derive(Clone, Copy)]
struct At<'s> {
    value: &'s str,
    path: &'s str,
    component: &'s str,
    property: &'s str,
}

impl<'a> Generator<'a> {
    fn schema(&self, name: &str) -> Result<&'a Value, CodegenError> {
        self.schemas
            .get(name)
            .copied()
            .ok_or_else(|| CodegenError::Spec(format!("$ref to a missing schema {name:?}")))
    }

    /// Adds `name` and every schema it references to `out`, refusing keywords it cannot check.
    fn collect(&self, name: &str, out: &mut BTreeSet<String>) -> Result<(), CodegenError> {
        if !out.insert(name.to_owned()) {
            return Ok(());
        }
        self.collect_inline(self.schema(name)?, name, out)
    }

    fn collect_inline(
        &self,
        schema: &Value,
        context: &str,
        out: &mut BTreeSet<String>,
    ) -> Result<(), CodegenError> {
        if let Some(name) = ref_name(schema) {
            return self.collect(name, out);
        }
        let object = schema
            .as_object()
            .ok_or_else(|| CodegenError::Spec(format!("{context}: a schema must be an object")))?;
        for key in object.keys() {
            if !KNOWN_KEYWORDS.contains(&key.as_str()) {
                return Err(CodegenError::Spec(format!(
                    "{context}: request body keyword {key:?} has no generated check"
                )));
            }
        }
        for child in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|p| p.values())
            .chain(schema.get("items"))
            .chain(
                schema
                    .get("oneOf")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            )
        {
            self.collect_inline(child, context, out)?;
        }
        Ok(())
    }

    /// `fn json_<name>`: the JSON check of a component schema, its rules stated by the property it is
    /// reached through.
    fn json_fn(&self, name: &str) -> Result<String, CodegenError> {
        let mut body = String::new();
        let mut counter = 0;
        self.json_checks(
            self.schema(name)?,
            At {
                value: "value",
                path: "path",
                component: name,
                property: "",
            },
            "out",
            name,
            &mut counter,
            &mut body,
        )?;
        let params = if body.contains(", schema, property, ") {
            "schema: &'static str, property: &'static str"
        } else {
            "_schema: &'static str, _property: &'static str"
        };
        Ok(format!(
            "fn json_{}(value: &Value, path: &FieldPath<'_>, {params}, out: &mut Vec<RuleFailure>) {{\n{body}}}\n\n",
            snake_case(name)
        ))
    }

    /// The JSON checks of `schema` at `at`; `component` is the schema whose properties are being walked.
    #[allow(clippy::too_many_arguments)]
    fn json_checks(
        &self,
        schema: &Value,
        at: At<'_>,
        out: &str,
        component: &str,
        counter: &mut usize,
        code: &mut String,
    ) -> Result<(), CodegenError> {
        // Inside a component's own function the stating property comes from the caller.
        let (stating_schema, stating_property) = if at.property.is_empty() {
            ("schema".to_owned(), "property".to_owned())
        } else {
            (literal(at.component), literal(at.property))
        };
        let fail = |rule: &str| {
            format!(
                "fail({out}, {}, {stating_schema}, {stating_property}, {rule});\n",
                at.path
            )
        };
        if let Some(target) = ref_name(schema) {
            self.schema(target)?;
            let _ = writeln!(
                code,
                "json_{}({}, {}, {stating_schema}, {stating_property}, {out});",
                snake_case(target),
                at.value,
                at.path
            );
            return Ok(());
        }
        if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
            let mut alternatives = Vec::new();
            for option in options {
                *counter += 1;
                let inner = format!("inner_{counter}");
                let mut block = format!("{{ let {inner} = &mut Vec::new();\n");
                self.json_checks(option, at, &inner, component, counter, &mut block)?;
                let _ = write!(block, "{inner}.is_empty() }}");
                alternatives.push(block);
            }
            let _ = writeln!(
                code,
                "if !({}) {{ {} }}",
                alternatives.join(" || "),
                fail("Rule::OneOf")
            );
            return Ok(());
        }
        let Some(kind) = schema.get("type").and_then(Value::as_str) else {
            return Ok(());
        };
        let type_failure = fail(&format!("Rule::Type(JsonType::{})", type_variant(kind)?));
        let v = at.value;
        match kind {
            "object" => {
                *counter += 1;
                let fields = format!("fields_{counter}");
                let mut inner = String::new();
                for name in schema
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    let _ = writeln!(
                        inner,
                        "if !{fields}.contains_key({name}) {{ fail({out}, &{}.field({name}), {}, {name}, Rule::Required); }}",
                        at.path.trim_start_matches('&'),
                        literal(component),
                        name = literal(name)
                    );
                }
                // Key order: the order the emulator has always listed its findings in.
                let properties: BTreeMap<&String, &Value> = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .collect();
                for (name, property) in properties {
                    *counter += 1;
                    let child = format!("child_{counter}");
                    let child_path = format!("path_{counter}");
                    let mut checks = String::new();
                    self.json_checks(
                        property,
                        At {
                            value: &child,
                            path: &format!("&{child_path}"),
                            component,
                            property: name,
                        },
                        out,
                        component,
                        counter,
                        &mut checks,
                    )?;
                    if !checks.is_empty() {
                        let _ = writeln!(
                            inner,
                            "if let Some({child}) = {fields}.get({name}) {{\nlet {child_path} = {}.field({name});\n{checks}}}",
                            at.path.trim_start_matches('&'),
                            name = literal(name)
                        );
                    }
                }
                shape(
                    code,
                    v,
                    "as_object",
                    "is_object",
                    &type_failure,
                    &fields,
                    &inner,
                );
            }
            "array" => {
                *counter += 1;
                let items = format!("items_{counter}");
                let mut inner = String::new();
                if let Some(min) = schema.get("minItems") {
                    let min = count(min)?;
                    let _ = writeln!(
                        inner,
                        "if ({items}.len() as u64) < {min} {{ {} }}",
                        fail(&format!("Rule::MinItems({min})"))
                    );
                }
                if let Some(item_schema) = schema.get("items") {
                    *counter += 1;
                    let item = format!("item_{counter}");
                    let item_path = format!("path_{counter}");
                    let mut checks = String::new();
                    self.json_checks(
                        item_schema,
                        At {
                            value: &item,
                            path: &format!("&{item_path}"),
                            ..at
                        },
                        out,
                        component,
                        counter,
                        &mut checks,
                    )?;
                    if !checks.is_empty() {
                        let _ = writeln!(
                            inner,
                            "for (index, {item}) in {items}.iter().enumerate() {{\nlet {item_path} = {}.index(index);\n{checks}}}",
                            at.path.trim_start_matches('&')
                        );
                    }
                }
                shape(
                    code,
                    v,
                    "as_array",
                    "is_array",
                    &type_failure,
                    &items,
                    &inner,
                );
            }
            "string" => {
                *counter += 1;
                let text = format!("text_{counter}");
                let mut inner = String::new();
                let length = format!("length_{counter}");
                let min = schema.get("minLength").map(count).transpose()?;
                let max = schema.get("maxLength").map(count).transpose()?;
                if min.is_some() || max.is_some() {
                    let _ = writeln!(inner, "let {length} = char_count({text});");
                }
                if let Some(min) = min {
                    let _ = writeln!(
                        inner,
                        "if {length} < {min} {{ {} }}",
                        fail(&format!("Rule::MinLength({min})"))
                    );
                }
                if let Some(max) = max {
                    let _ = writeln!(
                        inner,
                        "if {length} > {max} {{ {} }}",
                        fail(&format!("Rule::MaxLength({max})"))
                    );
                }
                // Other formats (uri, email...) are documentation: the service does not check them.
                if schema.get("format").and_then(Value::as_str) == Some("date-time") {
                    let _ = writeln!(
                        inner,
                        "if !is_date_time({text}) {{ {} }}",
                        fail("Rule::DateTime")
                    );
                }
                let extensible =
                    schema.get("x-extensible-enum").and_then(Value::as_bool) == Some(true);
                if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
                    && !extensible
                {
                    let names = allowed
                        .iter()
                        .map(|a| {
                            a.as_str().map(literal).ok_or_else(|| {
                                CodegenError::Spec(format!("enum value {a} is not a string"))
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    let _ = writeln!(
                        inner,
                        "if !matches!({text}, {}) {{ {} }}",
                        names.join(" | "),
                        fail(&format!("Rule::Enum(&[{}])", names.join(", ")))
                    );
                }
                shape(code, v, "as_str", "is_string", &type_failure, &text, &inner);
            }
            "integer" | "number" => {
                *counter += 1;
                let n = format!("n_{counter}");
                let minimum = self.minimum_check(schema, &n, &fail)?;
                let mut inner = String::new();
                if kind == "integer" {
                    let _ = write!(
                        inner,
                        "if !({v}.is_i64() || {v}.is_u64()) {{ {type_failure} }}"
                    );
                    if let Some(check) = &minimum {
                        let _ = write!(inner, " else {check}");
                    }
                    inner.push('\n');
                } else if let Some(check) = &minimum {
                    inner.push_str(check);
                }
                let binding = if minimum.is_some() { n.as_str() } else { "_" };
                shape(
                    code,
                    v,
                    "as_f64",
                    "is_number",
                    &type_failure,
                    binding,
                    &inner,
                );
            }
            "boolean" => {
                let _ = writeln!(code, "if !{v}.is_boolean() {{ {type_failure} }}");
            }
            _ => {}
        }
        Ok(())
    }

    /// `if below_minimum(n, ..) { fail }` for a schema with `minimum`.
    fn minimum_check(
        &self,
        schema: &Value,
        n: &str,
        fail: &dyn Fn(&str) -> String,
    ) -> Result<Option<String>, CodegenError> {
        let Some(min) = schema.get("minimum") else {
            return Ok(None);
        };
        let min = float(min)?;
        let exclusive = schema.get("exclusiveMinimum").and_then(Value::as_bool) == Some(true);
        Ok(Some(format!(
            "if below_minimum({n}, {min}, {exclusive}) {{ {} }}\n",
            fail(&format!(
                "Rule::Minimum {{ min: {min}, exclusive: {exclusive} }}"
            ))
        )))
    }

    /// `fn typed_<name>`: the checks over the generated Rust type of an object schema, in declaration
    /// order, of the rules the type does not enforce itself.
    fn typed_fn(&self, name: &str) -> Result<String, CodegenError> {
        let schema = self.schema(name)?;
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let properties = schema.get("properties").and_then(Value::as_object);
        let mut body = String::new();
        let mut counter = 0;
        for property in self.declared.get(name).into_iter().flatten() {
            let Some(property_schema) = properties.and_then(|p| p.get(property)) else {
                continue;
            };
            counter += 1;
            let field = format!("field_{counter}");
            let path = format!("path_{counter}");
            let mut checks = String::new();
            let resolved = match ref_name(property_schema) {
                Some(target) => self.schema(target)?,
                None => property_schema,
            };
            self.typed_checks(
                property_schema,
                At {
                    value: &field,
                    path: &format!("&{path}"),
                    component: name,
                    property,
                },
                &mut counter,
                &mut checks,
            )?;
            if checks.is_empty() {
                continue;
            }
            // typify's shapes: a property that is neither required nor defaulted is an `Option`, except
            // arrays, which default to empty.
            let optional = !required.contains(&property.as_str())
                && property_schema.get("default").is_none()
                && resolved.get("type").and_then(Value::as_str) != Some("array");
            let ident = snake_case(property);
            let binding = if optional {
                format!("if let Some({field}) = &value.{ident} {{\n")
            } else {
                format!("{{ let {field} = &value.{ident};\n")
            };
            let _ = writeln!(
                body,
                "{binding}let {path} = path.field({});\n{checks}}}",
                literal(property)
            );
        }
        let (value, path, out) = if body.is_empty() {
            ("_value", "_path", "_out")
        } else {
            ("value", "path", "out")
        };
        Ok(format!(
            "fn typed_{}({value}: &types::{name}, {path}: &FieldPath<'_>, {out}: &mut Vec<RuleFailure>) {{\n{body}}}\n\n",
            snake_case(name)
        ))
    }

    /// The typed checks of one property (or array item) at `at`.
    fn typed_checks(
        &self,
        schema: &Value,
        at: At<'_>,
        counter: &mut usize,
        code: &mut String,
    ) -> Result<(), CodegenError> {
        let fail = |rule: &str| {
            format!(
                "fail(out, {}, {}, {}, {rule});\n",
                at.path,
                literal(at.component),
                literal(at.property)
            )
        };
        let v = at.value;
        if let Some(target) = ref_name(schema) {
            let target_schema = self.schema(target)?;
            if target_schema.get("properties").is_some() {
                let _ = writeln!(code, "typed_{}({v}, {}, out);", snake_case(target), at.path);
                return Ok(());
            }
            return self.typed_checks(target_schema, at, counter, code);
        }
        // A union is a Rust enum: which alternative it is, the type says.
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => {
                let min = schema.get("minLength").map(count).transpose()?;
                let max = schema.get("maxLength").map(count).transpose()?;
                if min.is_some() || max.is_some() {
                    *counter += 1;
                    let length = format!("length_{counter}");
                    let _ = writeln!(code, "let {length} = char_count({v});");
                    if let Some(min) = min {
                        let _ = writeln!(
                            code,
                            "if {length} < {min} {{ {} }}",
                            fail(&format!("Rule::MinLength({min})"))
                        );
                    }
                    if let Some(max) = max {
                        let _ = writeln!(
                            code,
                            "if {length} > {max} {{ {} }}",
                            fail(&format!("Rule::MaxLength({max})"))
                        );
                    }
                }
            }
            Some(kind @ ("integer" | "number")) => {
                *counter += 1;
                let n = format!("n_{counter}");
                let minimum = self.minimum_check(schema, &n, &fail)?;
                if kind == "number" {
                    let _ = write!(
                        code,
                        "let {n} = AsF64::as_f64({v});\nif !{n}.is_finite() {{ {} }}",
                        fail("Rule::Finite")
                    );
                    if let Some(check) = &minimum {
                        let _ = write!(code, " else {check}");
                    }
                    code.push('\n');
                } else if let Some(check) = &minimum {
                    let _ = write!(code, "let {n} = AsF64::as_f64({v});\n{check}");
                }
            }
            Some("array") => {
                if let Some(min) = schema.get("minItems") {
                    let min = count(min)?;
                    let _ = writeln!(
                        code,
                        "if ({v}.len() as u64) < {min} {{ {} }}",
                        fail(&format!("Rule::MinItems({min})"))
                    );
                }
                if let Some(item_schema) = schema.get("items") {
                    *counter += 1;
                    let item = format!("item_{counter}");
                    let item_path = format!("path_{counter}");
                    let mut checks = String::new();
                    self.typed_checks(
                        item_schema,
                        At {
                            value: &item,
                            path: &format!("&{item_path}"),
                            ..at
                        },
                        counter,
                        &mut checks,
                    )?;
                    if !checks.is_empty() {
                        let _ = writeln!(
                            code,
                            "for (index, {item}) in {v}.iter().enumerate() {{\nlet {item_path} = {}.index(index);\n{checks}}}",
                            at.path.trim_start_matches('&')
                        );
                    }
                }
            }
            Some("object") if schema.get("properties").is_some() => {
                return Err(CodegenError::Spec(format!(
                    "{}.{}: an inline object in a request body needs a $ref to a component schema",
                    at.component, at.property
                )));
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn spec() -> String {
        std::fs::read_to_string(crate::workspace_root().join(crate::codegen::SPEC_PATH)).unwrap()
    }

    #[test]
    fn names_are_typifys() {
        assert_eq!(snake_case("CreateOrderRequest"), "create_order_request");
        assert_eq!(snake_case("isCustom"), "is_custom");
        assert_eq!(snake_case("type"), "type_");
    }

    #[test]
    fn checked_in_rules_match_the_spec() {
        let checked_in = std::fs::read_to_string(crate::workspace_root().join(RULES_PATH)).unwrap();
        assert!(
            generate(&spec()).unwrap() == checked_in,
            "run `cargo xtask codegen`"
        );
    }

    #[test]
    fn a_changed_bound_or_a_new_required_field_changes_the_checks() {
        let spec = spec();
        let before = source(&spec).unwrap();
        let fewer = spec.replacen("minItems: 1", "minItems: 2", 1);
        assert_ne!(fewer, spec);
        let after = source(&fewer).unwrap();
        assert!(!before.contains("Rule::MinItems(2)") && after.contains("Rule::MinItems(2)"));

        let required = spec.replacen(
            "required: [lineItems, shippingAddress]",
            "required: [lineItems, shippingAddress, orderedAt]",
            1,
        );
        assert_ne!(required, spec);
        assert!(
            source(&required)
                .unwrap()
                .contains("\"orderedAt\", Rule::Required)")
        );
    }

    #[test]
    fn a_keyword_without_a_check_is_refused() {
        let spec = spec().replacen(
            "          minLength: 2\n          maxLength: 2\n",
            "          minLength: 2\n          maxLength: 2\n          pattern: \"^[A-Z]{2}$\"\n",
            1,
        );
        let error = source(&spec).unwrap_err();
        assert!(error.to_string().contains("\"pattern\""), "{error}");
    }
}
