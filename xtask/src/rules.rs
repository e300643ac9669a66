//! Generation of `crates/store-api-raw/src/rules.rs`: the spec's request-body rules as Rust checks.
//!
//! Every schema an operation of `paths` takes as its JSON request body (not the webhooks of `x-webhooks`,
//! which the service sends), and every schema those reference, becomes two checks reporting structured
//! failures (`store_api_raw::rule::RuleFailure`), one over JSON and one over the typed request:
//!
//! - over JSON, for the emulator, which must report every failing field at once: `required`, `type`,
//!   `minItems`, `minLength`/`maxLength`, `minimum` (+ `exclusiveMinimum`), `enum` (an open enumeration,
//!   `crate::open_enum`, which may grow, is any string), `format: date-time`, `oneOf` and nested objects
//!   and arrays. An object's missing required fields come first, then its fields in key order.
//! - over the typed request, for the client's pre-flight check: only what the Rust type cannot hold
//!   (bounds on lengths, items and numbers, and the finiteness JSON numbers have but `f64` lacks), in
//!   the schema's declaration order, allocating nothing unless a rule fails.
//!
//! Any other schema keyword in a request body is an error here, so the checks can never silently cover
//! less than the spec says.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

use crate::generator::{CodegenError, generated_file, snake};
use crate::open_enum::known_values;

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
    "format",
    "oneOf",
    "default",
    "example",
    "x-assumption",
];

/// The formatted Rust source of the rules module for the spec's YAML text.
pub fn generate(spec_text: &str) -> Result<String, CodegenError> {
    generated_file(&source(spec_text)?)
}

fn source(spec_text: &str) -> Result<String, CodegenError> {
    let spec = parse(spec_text)?;
    let generator = Generator::new(&spec, spec_text)?;
    let roots = request_bodies(&spec)?;
    let reachable = generator.reachable(&roots)?;
    let mut functions = String::new();
    let mut typed_rules: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for name in &reachable {
        functions.push_str(&generator.json_fn(name)?);
        if generator.schema(name)?.get("properties").is_some() {
            let mut rules = Vec::new();
            functions.push_str(&generator.typed_fn(name, &mut rules)?);
            typed_rules.insert(name, rules);
        }
    }
    let mut code = String::from(HEADER);
    for root in &roots {
        let snake = snake_case(root);
        let mut below = BTreeSet::new();
        generator.collect(root, &mut below)?;
        let rules: Vec<&str> = below
            .iter()
            .filter_map(|name| typed_rules.get(name.as_str()))
            .flatten()
            .map(String::as_str)
            .collect();
        let _ = write!(
            code,
            "impl BodyRules for types::{root} {{\n\
             const TYPED_RULES: &'static [(Property, Rule)] = &[{}];\n\
             fn check(&self, out: &mut Vec<RuleFailure>) {{ typed_{snake}(self, &FieldPath::Root, out); }}\n\
             fn check_json(value: &Value) -> Vec<RuleFailure> {{\n\
             let mut out = Vec::new();\n\
             json_{snake}(value, Site::new(&FieldPath::Root, \"{root}\", \"\"), &mut out);\n\
             out\n}}\n}}\n\n",
            rules.join(", ")
        );
    }
    code.push_str(&functions);
    Ok(code)
}

const HEADER: &str = "//! The request-body rules of the spec as checks: generated from the schemas of the operations' JSON\n\
//! request bodies. See `crate::rule` for what they report and `store_api_rules::rule_message` for\n\
//! the service's wording.\n\n\
use serde_json::Value;\n\n\
// Every rule is a call into `crate::rule`; which of its helpers a spec needs varies.\n\
use crate::rule::*;\n\
use crate::types;\n\n";

fn parse(spec_text: &str) -> Result<Value, CodegenError> {
    serde_norway::from_str(spec_text).map_err(|e| CodegenError::Spec(e.to_string()))
}

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
    let mut out = snake(name);
    if syn::parse_str::<syn::Ident>(&out).is_err() {
        out.push('_');
    }
    out
}

/// Refuses a `type` the checks do not know.
fn type_known(name: &str) -> Result<(), CodegenError> {
    Err(CodegenError::Spec(format!("unknown schema type {name:?}")))
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

impl<'a> Generator<'a> {
    fn new(spec: &'a Value, spec_text: &str) -> Result<Generator<'a>, CodegenError> {
        let schemas = spec
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .ok_or_else(|| CodegenError::Spec("no components/schemas object".into()))?;
        Ok(Generator {
            schemas: schemas.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            declared: declaration_orders(spec_text)?,
        })
    }

    /// `roots` and every schema they reference.
    fn reachable(&self, roots: &BTreeSet<String>) -> Result<BTreeSet<String>, CodegenError> {
        let mut reachable = BTreeSet::new();
        for root in roots {
            self.collect(root, &mut reachable)?;
        }
        Ok(reachable)
    }
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
        // Any string: its spelling (`anyOf`) is not a constraint to check.
        if known_values(context, schema)?.is_some() {
            return Ok(());
        }
        let object = schema
            .as_object()
            .ok_or_else(|| CodegenError::Spec(format!("{context}: a schema must be an object")))?;
        for key in object.keys() {
            // `x-` extensions annotate (descriptions, assumptions); they never constrain a value.
            if !KNOWN_KEYWORDS.contains(&key.as_str()) && !key.starts_with("x-") {
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
    /// reached through (`site`), plus one function per `oneOf` alternative inside it.
    fn json_fn(&self, name: &str) -> Result<String, CodegenError> {
        let mut emitter = Emitter {
            component: name,
            counter: 0,
            extra: Vec::new(),
            property: String::new(),
            typed_rules: Vec::new(),
        };
        let body = emitter.json(self, self.schema(name)?, "value", "site")?;
        let mut code = format!(
            "fn json_{}(value: &Value, site: Site<'_>, out: &mut Vec<RuleFailure>) {{\n{body}}}\n\n",
            snake_case(name)
        );
        for extra in emitter.extra {
            code.push_str(&extra);
        }
        Ok(code)
    }

    /// `fn typed_<name>`: the checks over the generated Rust type of an object schema, in declaration
    /// order, of the rules the type does not enforce itself.
    fn typed_fn(&self, name: &str, rules: &mut Vec<String>) -> Result<String, CodegenError> {
        let schema = self.schema(name)?;
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let properties = schema.get("properties").and_then(Value::as_object);
        let mut emitter = Emitter {
            component: name,
            counter: 0,
            extra: Vec::new(),
            property: String::new(),
            typed_rules: Vec::new(),
        };
        let mut body = String::new();
        for property in self.declared.get(name).into_iter().flatten() {
            let Some(property_schema) = properties.and_then(|p| p.get(property)) else {
                continue;
            };
            let n = emitter.next();
            let (field, site) = (format!("field_{n}"), format!("site_{n}"));
            emitter.property = property.clone();
            let checks = emitter.typed(self, property_schema, &field, &site)?;
            if checks.is_empty() {
                continue;
            }
            let resolved = match ref_name(property_schema) {
                Some(target) => self.schema(target)?,
                None => property_schema,
            };
            // typify's shapes: a property that is neither required nor defaulted is an `Option`, except
            // arrays, which default to empty.
            let optional = !required.contains(&property.as_str())
                && property_schema.get("default").is_none()
                && resolved.get("type").and_then(Value::as_str) != Some("array");
            let ident = snake_case(property);
            let open = if optional {
                format!("if let Some({field}) = &value.{ident} {{")
            } else {
                format!("{{ let {field} = &value.{ident};")
            };
            let _ = writeln!(
                body,
                "{open}\n{}{checks}}}",
                emitter.site(&site, "path", property)
            );
        }
        rules.append(&mut emitter.typed_rules);
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
}

/// Writes the checks of one component schema: calls to the hand-written rules of
/// `store_api_raw::rule` with the spec's bounds, and the walk over fields and items.
struct Emitter<'n> {
    /// The component schema whose properties are walked (states `required` and its properties' rules).
    component: &'n str,
    /// Makes binding names unique.
    counter: usize,
    /// Functions for `oneOf` alternatives, written after the component's own.
    extra: Vec<String>,
    /// The property whose typed checks are being written.
    property: String,
    /// `(Property, Rule)` of every typed check written.
    typed_rules: Vec<String>,
}

impl Emitter<'_> {
    /// Records that the typed checks can report `rule` for the current property.
    fn typed_rule(&mut self, rule: String) {
        self.typed_rules.push(format!(
            "(Property {{ schema: {}, name: {} }}, {rule})",
            literal(self.component),
            literal(&self.property)
        ));
    }

    fn next(&mut self) -> usize {
        self.counter += 1;
        self.counter
    }

    /// `let path_n = <parent>.field(name); let site_n = Site::new(&path_n, component, name);`
    fn site(&self, site: &str, parent_path: &str, property: &str) -> String {
        let path = site.replacen("site_", "path_", 1);
        format!(
            "let {path} = {parent_path}.field({name});\nlet {site} = Site::new(&{path}, {}, {name});\n",
            literal(self.component),
            name = literal(property)
        )
    }

    /// The JSON checks of `schema` for the value `value` at the site `site`.
    fn json(
        &mut self,
        generator: &Generator<'_>,
        schema: &Value,
        value: &str,
        site: &str,
    ) -> Result<String, CodegenError> {
        let mut code = String::new();
        if let Some(target) = ref_name(schema) {
            generator.schema(target)?;
            let _ = writeln!(code, "json_{}({value}, {site}, out);", snake_case(target));
            return Ok(code);
        }
        if known_values(self.component, schema)?.is_some() {
            let _ = writeln!(
                code,
                "json_string({value}, {site}, StringRules::default(), out);"
            );
            return Ok(code);
        }
        if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
            let mut names = Vec::new();
            for option in options {
                let name = format!("json_{}_option_{}", snake_case(self.component), self.next());
                let body = self.json(generator, option, "value", "site")?;
                self.extra.push(format!(
                    "fn {name}(value: &Value, site: Site<'_>, out: &mut Vec<RuleFailure>) {{\n{body}}}\n\n"
                ));
                names.push(name);
            }
            let _ = writeln!(
                code,
                "json_one_of({value}, {site}, &[{}], out);",
                names.join(", ")
            );
            return Ok(code);
        }
        let Some(kind) = schema.get("type").and_then(Value::as_str) else {
            return Ok(code);
        };
        match kind {
            "object" => {
                let required = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|name| {
                        name.as_str().map(literal).ok_or_else(|| {
                            CodegenError::Spec(format!("required name {name} is not a string"))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let fields = format!("fields_{}", self.next());
                let mut inner = String::new();
                // Key order: the order the emulator has always listed its findings in.
                let properties: BTreeMap<&String, &Value> = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .collect();
                for (name, property) in properties {
                    let n = self.next();
                    let (child, child_site) = (format!("child_{n}"), format!("site_{n}"));
                    let checks = self.json(generator, property, &child, &child_site)?;
                    if !checks.is_empty() {
                        let _ = writeln!(
                            inner,
                            "if let Some({child}) = {fields}.get({}) {{\n{}{checks}}}",
                            literal(name),
                            self.site(&child_site, &format!("{site}.path"), name)
                        );
                    }
                }
                let call = format!(
                    "json_object({value}, {site}, {}, &[{}], out)",
                    literal(self.component),
                    required.join(", ")
                );
                if inner.is_empty() {
                    let _ = writeln!(code, "{call};");
                } else if value == "value" {
                    // The function's own value: nothing follows, so a wrong type ends the check.
                    let _ = writeln!(
                        code,
                        "let Some({fields}) = {call} else {{ return; }};\n{inner}"
                    );
                } else {
                    let _ = writeln!(code, "if let Some({fields}) = {call} {{\n{inner}}}");
                }
            }
            "array" => {
                let min = schema.get("minItems").map(count).transpose()?;
                let n = self.next();
                let (items, item, item_site) = (
                    format!("items_{n}"),
                    format!("item_{n}"),
                    format!("site_{n}"),
                );
                let checks = match schema.get("items") {
                    Some(item_schema) => self.json(generator, item_schema, &item, &item_site)?,
                    None => String::new(),
                };
                let call = format!("json_array({value}, {site}, {min:?}, out)");
                if checks.is_empty() {
                    let _ = writeln!(code, "{call};");
                } else {
                    let _ = writeln!(
                        code,
                        "if let Some({items}) = {call} {{\nfor (index, {item}) in {items}.iter().enumerate() {{\n{}{checks}}}\n}}",
                        item_site_binding(&item_site, site)
                    );
                }
            }
            "string" => {
                let mut rules = Vec::new();
                if let Some(min) = schema.get("minLength") {
                    rules.push(format!("min_length: Some({})", count(min)?));
                }
                if let Some(max) = schema.get("maxLength") {
                    rules.push(format!("max_length: Some({})", count(max)?));
                }
                // Other formats (uri, email...) are documentation: the service does not check them.
                if schema.get("format").and_then(Value::as_str) == Some("date-time") {
                    rules.push("date_time: true".to_owned());
                }
                if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
                    let names = allowed
                        .iter()
                        .map(|a| {
                            a.as_str().map(literal).ok_or_else(|| {
                                CodegenError::Spec(format!("enum value {a} is not a string"))
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    rules.push(format!("allowed: Some(&[{}])", names.join(", ")));
                }
                let rules = if rules.is_empty() {
                    "StringRules::default()".to_owned()
                } else {
                    format!(
                        "StringRules {{ {}, ..StringRules::default() }}",
                        rules.join(", ")
                    )
                };
                let _ = writeln!(code, "json_string({value}, {site}, {rules}, out);");
            }
            "integer" | "number" => {
                let _ = writeln!(
                    code,
                    "json_number({value}, {site}, {}, {}, out);",
                    kind == "integer",
                    minimum(schema)?
                );
            }
            "boolean" => {
                let _ = writeln!(code, "json_boolean({value}, {site}, out);");
            }
            other => {
                type_known(other)?;
            }
        }
        Ok(code)
    }

    /// The typed checks of one property (or array item) `value` at the site `site`.
    fn typed(
        &mut self,
        generator: &Generator<'_>,
        schema: &Value,
        value: &str,
        site: &str,
    ) -> Result<String, CodegenError> {
        let mut code = String::new();
        if let Some(target) = ref_name(schema) {
            let target_schema = generator.schema(target)?;
            if target_schema.get("properties").is_some() {
                let _ = writeln!(
                    code,
                    "typed_{}({value}, {site}.path, out);",
                    snake_case(target)
                );
                return Ok(code);
            }
            return self.typed(generator, target_schema, value, site);
        }
        // A `oneOf` is a Rust enum: which alternative a value is, its type says.
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => {
                let min = schema.get("minLength").map(count).transpose()?;
                let max = schema.get("maxLength").map(count).transpose()?;
                if min.is_some() || max.is_some() {
                    let _ = writeln!(code, "length({value}, {site}, {min:?}, {max:?}, out);");
                }
                if let Some(min) = min {
                    self.typed_rule(format!("Rule::MinLength({min})"));
                }
                if let Some(max) = max {
                    self.typed_rule(format!("Rule::MaxLength({max})"));
                }
            }
            Some("number") => {
                let _ = writeln!(
                    code,
                    "number(AsF64::as_f64({value}), {site}, {}, out);",
                    minimum(schema)?
                );
                self.typed_rule("Rule::Finite".to_owned());
                if let Some(rule) = minimum_rule(schema)? {
                    self.typed_rule(rule);
                }
            }
            Some("integer") if schema.get("minimum").is_some() => {
                let _ = writeln!(
                    code,
                    "minimum(AsF64::as_f64({value}), {site}, {}, out);",
                    minimum(schema)?
                );
                if let Some(rule) = minimum_rule(schema)? {
                    self.typed_rule(rule);
                }
            }
            Some("array") => {
                if let Some(min) = schema.get("minItems") {
                    let _ = writeln!(
                        code,
                        "min_items({value}.len(), {site}, Some({}), out);",
                        count(min)?
                    );
                    self.typed_rule(format!("Rule::MinItems({})", count(min)?));
                }
                if let Some(item_schema) = schema.get("items") {
                    let n = self.next();
                    let (item, item_site) = (format!("item_{n}"), format!("site_{n}"));
                    let checks = self.typed(generator, item_schema, &item, &item_site)?;
                    if !checks.is_empty() {
                        let _ = writeln!(
                            code,
                            "for (index, {item}) in {value}.iter().enumerate() {{\n{}{checks}}}",
                            item_site_binding(&item_site, site)
                        );
                    }
                }
            }
            Some("object") if schema.get("properties").is_some() => {
                return Err(CodegenError::Spec(format!(
                    "{}: an inline object in a request body needs a $ref to a component schema",
                    self.component
                )));
            }
            _ => {}
        }
        Ok(code)
    }
}

/// `let path_n = <site>.path.index(index); let site_n = Site { path: &path_n, ..<site> };`
fn item_site_binding(item_site: &str, site: &str) -> String {
    let path = item_site.replacen("site_", "path_", 1);
    format!(
        "let {path} = {site}.path.index(index);\nlet {item_site} = Site {{ path: &{path}, ..{site} }};\n"
    )
}

/// `Some(Minimum { .. })` or `None` for a schema's `minimum` and `exclusiveMinimum`.
fn minimum(schema: &Value) -> Result<String, CodegenError> {
    Ok(bound(schema)?.map_or_else(
        || "None".to_owned(),
        |(min, exclusive)| format!("Some(Minimum {{ min: {min}, exclusive: {exclusive} }})"),
    ))
}

/// `Rule::Minimum { .. }` for a schema with `minimum`.
fn minimum_rule(schema: &Value) -> Result<Option<String>, CodegenError> {
    Ok(bound(schema)?
        .map(|(min, exclusive)| format!("Rule::Minimum {{ min: {min}, exclusive: {exclusive} }}")))
}

/// A schema's `minimum` (as a Rust literal) and `exclusiveMinimum`.
fn bound(schema: &Value) -> Result<Option<(String, bool)>, CodegenError> {
    let Some(min) = schema.get("minimum") else {
        return Ok(None);
    };
    let exclusive = schema.get("exclusiveMinimum").and_then(Value::as_bool) == Some(true);
    Ok(Some((float(min)?, exclusive)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn spec() -> String {
        std::fs::read_to_string(crate::workspace_root().join(crate::generator::SPEC_PATH)).unwrap()
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
        let min_items = |code: &str| -> Vec<String> {
            code.lines()
                .filter(|line| line.starts_with("min_items(") || line.contains("json_array("))
                .filter(|line| !line.contains(", None, out)"))
                .map(str::to_owned)
                .collect()
        };
        assert!(
            min_items(&before)
                .iter()
                .all(|line| line.contains("Some(1)"))
        );
        assert!(
            min_items(&after)
                .iter()
                .all(|line| line.contains("Some(2)"))
        );
        assert_eq!(min_items(&after).len(), 2, "the JSON and the typed check");

        let required = spec.replacen(
            "required: [lineItems, shippingAddress]",
            "required: [lineItems, shippingAddress, orderedAt]",
            1,
        );
        assert_ne!(required, spec);
        assert!(
            source(&required)
                .unwrap()
                .contains("\"shippingAddress\", \"orderedAt\"]")
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
