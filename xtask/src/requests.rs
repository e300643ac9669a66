//! Generation of `crates/store-api-raw/src/requests.rs` from the spec: one request builder per
//! operation (its route, a typed query struct for its query parameters, its JSON body) that returns
//! the request, and the `ListQuery`/`GetById` impls generic code pages and reads with.
//!
//! progenitor and typify make the wire types; this generator makes the requests, so nothing
//! instantiates a client to build one. Its rules, from the spec alone:
//! - `filter[field]` with `x-filter-values: Schema` (or `string`) is a field `field` (snake case) of
//!   `Vec<Schema>` (or `Vec<String>`), sent joined with commas; a value with a comma is refused.
//! - `sort[field]` is `sort_field: Option<SortDirection>`; an integer parameter is `Option<u64>`
//!   checked against its `minimum`/`maximum`.
//! - Query parameters are sent in the order of their Rust names (what progenitor's calls did).
//! - A builder takes the base URL, the path parameters and the query or the body: at most three
//!   arguments; an operation that would need more is an error here.

use std::fmt::Write;

use serde_norway::Value;

use crate::contract::{METHODS, map_at, reference, resolve, spec_error};
use crate::generator::{CodegenError, generated_file, snake};

/// Generated file path relative to the workspace root.
pub const OUTPUT_PATH: &str = "crates/store-api-raw/src/requests.rs";

/// An operation, as the builders need it.
struct Op {
    id: String,
    method: String,
    path: String,
    summary: String,
    path_params: Vec<String>,
    query: Vec<QueryParam>,
    /// The request body's schema.
    body: Option<String>,
    /// The success answer's schema.
    answer: Option<String>,
}

struct QueryParam {
    wire: String,
    field: String,
    description: String,
    kind: Kind,
}

enum Kind {
    /// Comma-separated values of a schema, or strings.
    Filter(Option<String>),
    /// A `SortDirection`.
    Sort,
    /// An integer with bounds.
    Number {
        min: Option<u64>,
        max: Option<u64>,
        default: Option<u64>,
    },
}

/// The formatted source of the request builders.
pub fn generate(spec_text: &str) -> Result<String, CodegenError> {
    let spec = crate::contract::parse(spec_text)?;
    let ops = operations(&spec)?;
    let mut out = String::new();
    out.push_str(
        "//! The request of every operation of the spec, built without a client: the route, the query\n\
         //! (a typed struct per list, with the `filter[…]`/`sort[…]` encoding) and the JSON body. A\n\
         //! builder returns the [`Request`]; whoever sends it adds the key (`X-API-Key`, see\n\
         //! [`set_api_key`](crate::auth::set_api_key)) and sends it. Every argument the spec bounds\n\
         //! is checked first ([`BuildError`] names the parameter).\n\
         //!\n\
         //! ```\n\
         //! use store_api_raw::open::OrderStatus;\n\
         //! use store_api_raw::requests::{self, ListOrdersQuery};\n\
         //!\n\
         //! let query = ListOrdersQuery::new().status([OrderStatus::Pending, OrderStatus::OnHold]).limit(5);\n\
         //! let request = requests::list_orders(\"https://api.example/store-api/2026-08\", \"store_1\", &query)?;\n\
         //! assert_eq!(\n\
         //!     request.url.as_str(),\n\
         //!     \"https://api.example/store-api/2026-08/stores/store_1/orders?filter[status]=pending,on_hold&limit=5\"\n\
         //! );\n\
         //! # Ok::<(), requests::BuildError>(())\n\
         //! ```\n\n\
         pub use crate::request_kit::{\n\
         BuildError, GetById, ListPage, ListQuery, Listable, PageParts, Request,\n\
         };\n\
         use crate::request_kit::{QueryString, Segment, request, url};\n\n",
    );
    for op in &ops {
        if !op.query.is_empty() {
            query_struct(&mut out, op);
        }
        builder(&mut out, op)?;
        list_query_impl(&mut out, op);
        get_by_id_impl(&mut out, op);
    }
    listables(&spec, &ops, &mut out)?;
    generated_file(&out)
}

fn operations(spec: &Value) -> Result<Vec<Op>, CodegenError> {
    let mut ops = Vec::new();
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
            let mut path_params = Vec::new();
            let mut query = Vec::new();
            let parameters = [item.get("parameters"), operation.get("parameters")]
                .into_iter()
                .flatten()
                .flat_map(|list| list.as_sequence().into_iter().flatten());
            for parameter in parameters {
                let parameter = resolve(spec, parameter)?;
                let name = parameter
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| spec_error(format!("{id}: a parameter has no name")))?;
                match parameter.get("in").and_then(Value::as_str) {
                    Some("path") => path_params.push(name.to_owned()),
                    Some("query") => query.push(query_param(spec, id, name, parameter)?),
                    _ => {}
                }
            }
            // progenitor's order: its parameters' Rust names (`filter_status`, `limit`, `sort_name`).
            query.sort_by_cached_key(|param| snake(&param.wire.replace('[', "_").replace(']', "")));
            let body = operation
                .get("requestBody")
                .and_then(|body| body.pointer_json("content/application~1json/schema"))
                .and_then(|schema| reference(schema, "#/components/schemas/"))
                .map(str::to_owned);
            let answer = success_schema(operation);
            ops.push(Op {
                id: id.to_owned(),
                method: method.to_ascii_uppercase(),
                path: path.to_owned(),
                summary: operation
                    .get("summary")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                path_params,
                query,
                body,
                answer,
            });
        }
    }
    Ok(ops)
}

/// A YAML value's descendant at a `/`-separated path (`~1` for `/` in a key, as in JSON pointers).
trait Pointer {
    fn pointer_json(&self, path: &str) -> Option<&Value>;
}

impl Pointer for Value {
    fn pointer_json(&self, path: &str) -> Option<&Value> {
        path.split('/')
            .try_fold(self, |value, key| value.get(key.replace("~1", "/")))
    }
}

/// The schema of the first 2xx answer's JSON body, when it is a reference.
fn success_schema(operation: &Value) -> Option<String> {
    let responses = operation.get("responses")?.as_mapping()?;
    responses
        .iter()
        .filter(|(status, _)| status.as_str().is_some_and(|s| s.starts_with('2')))
        .find_map(|(_, response)| {
            let schema = response.pointer_json("content/application~1json/schema")?;
            reference(schema, "#/components/schemas/").map(str::to_owned)
        })
}

fn query_param(
    spec: &Value,
    id: &str,
    name: &str,
    parameter: &Value,
) -> Result<QueryParam, CodegenError> {
    let description = parameter
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned();
    let schema = parameter.get("schema").unwrap_or(&Value::Null);
    let bracketed = |prefix: &str| {
        name.strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('['))
            .and_then(|rest| rest.strip_suffix(']'))
    };
    let (field, kind) = if let Some(field) = bracketed("filter") {
        let values = parameter
            .get("x-filter-values")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                spec_error(format!(
                    "{id}: {name} has no x-filter-values (a schema's name, or `string`)"
                ))
            })?;
        let values = match values {
            "string" => None,
            schema_name => {
                map_at(spec, &["components", "schemas"])?
                    .get(schema_name)
                    .ok_or_else(|| {
                        spec_error(format!(
                            "{id}: {name}'s x-filter-values names no schema: {schema_name}"
                        ))
                    })?;
                Some(schema_name.to_owned())
            }
        };
        (snake(field), Kind::Filter(values))
    } else if let Some(field) = bracketed("sort") {
        if reference(schema, "#/components/schemas/") != Some("SortDirection") {
            return Err(spec_error(format!("{id}: {name} is not a SortDirection")));
        }
        (format!("sort_{}", snake(field)), Kind::Sort)
    } else {
        let schema = resolve(spec, schema)?;
        if schema.get("type").and_then(Value::as_str) != Some("integer") {
            return Err(spec_error(format!(
                "{id}: the query parameter {name} is neither a filter, a sort nor an integer"
            )));
        }
        let number = |key: &str| schema.get(key).and_then(Value::as_u64);
        (
            snake(name),
            Kind::Number {
                min: number("minimum"),
                max: number("maximum"),
                default: number("default"),
            },
        )
    };
    Ok(QueryParam {
        wire: name.to_owned(),
        field,
        description,
        kind,
    })
}

/// `listOrders` → `ListOrders`.
fn pascal(id: &str) -> String {
    let mut chars = id.chars();
    chars
        .next()
        .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

fn query_name(op: &Op) -> String {
    format!("{}Query", pascal(&op.id))
}

fn option_rust(value: Option<u64>) -> String {
    value.map_or("None".to_owned(), |v| format!("Some({v})"))
}

fn doc(out: &mut String, indent: &str, text: &str) {
    for line in text.lines() {
        if line.is_empty() {
            writeln!(out, "{indent}///").ok();
        } else {
            writeln!(out, "{indent}/// {line}").ok();
        }
    }
}

fn query_struct(out: &mut String, op: &Op) {
    let name = query_name(op);
    let fn_name = snake(&op.id);
    writeln!(
        out,
        "/// The query of [`{fn_name}`] (`{id}`, `{method} {path}`). Every parameter is optional:\n\
         /// [`{name}::new`] sets none (the service's defaults); each method below sets one.\n\
         #[derive(Debug, Clone, Default, PartialEq)]\n\
         #[non_exhaustive]\n\
         #[must_use]\n\
         pub struct {name} {{",
        id = op.id,
        method = op.method,
        path = op.path,
    )
    .ok();
    for param in &op.query {
        doc(
            out,
            "    ",
            &format!("`{}`: {}", param.wire, param.description),
        );
        let ty = match &param.kind {
            Kind::Filter(Some(schema)) => format!("Vec<crate::open::{schema}>"),
            Kind::Filter(None) => "Vec<String>".to_owned(),
            Kind::Sort => "Option<crate::types::SortDirection>".to_owned(),
            Kind::Number { .. } => "Option<u64>".to_owned(),
        };
        writeln!(out, "    pub {}: {ty},", param.field).ok();
    }
    writeln!(
        out,
        "}}\n\nimpl {name} {{\n    /// No parameter set: the service's defaults.\n    pub fn new() -> Self {{\n        Self::default()\n    }}\n"
    )
    .ok();
    for param in &op.query {
        let field = &param.field;
        let wire = &param.wire;
        match &param.kind {
            Kind::Filter(Some(schema)) => writeln!(
                out,
                "    /// Adds values to `{wire}` (an item matches any of them).\n    pub fn {field}(mut self, values: impl IntoIterator<Item = crate::open::{schema}>) -> Self {{\n        self.{field}.extend(values);\n        self\n    }}\n"
            ),
            Kind::Filter(None) => writeln!(
                out,
                "    /// Adds values to `{wire}` (an item matches any of them; a value cannot contain a comma).\n    pub fn {field}<S: Into<String>>(mut self, values: impl IntoIterator<Item = S>) -> Self {{\n        self.{field}.extend(values.into_iter().map(Into::into));\n        self\n    }}\n"
            ),
            Kind::Sort => writeln!(
                out,
                "    /// Sets `{wire}`.\n    pub fn {field}(mut self, direction: crate::types::SortDirection) -> Self {{\n        self.{field} = Some(direction);\n        self\n    }}\n"
            ),
            Kind::Number { min, max, .. } => writeln!(
                out,
                "    /// Sets `{wire}` ({bounds}, checked when the request is built).\n    pub fn {field}(mut self, value: u64) -> Self {{\n        self.{field} = Some(value);\n        self\n    }}\n",
                bounds = match (min, max) {
                    (Some(min), Some(max)) => format!("{min} to {max}"),
                    (Some(min), None) => format!("at least {min}"),
                    (None, Some(max)) => format!("at most {max}"),
                    (None, None) => "any value".to_owned(),
                }
            ),
        }
        .ok();
    }
    writeln!(
        out,
        "    /// The query string, without its `?` (empty when nothing is set): filters' values joined\n    /// with commas, brackets and commas literal, the parameters in a fixed order.\n    pub fn to_query_string(&self) -> Result<String, BuildError> {{\n        #[allow(unused_mut)]\n        let mut query = QueryString::default();"
    )
    .ok();
    for param in &op.query {
        let field = &param.field;
        let wire = &param.wire;
        match &param.kind {
            Kind::Filter(Some(_)) => writeln!(
                out,
                "        query.list({wire:?}, self.{field}.iter().map(|value| value.as_str()))?;"
            ),
            Kind::Filter(None) => writeln!(
                out,
                "        query.list({wire:?}, self.{field}.iter().map(String::as_str))?;"
            ),
            Kind::Sort => writeln!(
                out,
                "        query.value({wire:?}, self.{field}.as_ref().map(ToString::to_string).as_deref());"
            ),
            Kind::Number { min, max, default } => writeln!(
                out,
                "        query.bounded({wire:?}, self.{field}, crate::contract::Bounds {{ min: {}, max: {}, default: {} }})?;",
                option_rust(*min),
                option_rust(*max),
                option_rust(*default)
            ),
        }
        .ok();
    }
    writeln!(out, "        Ok(query.finish())\n    }}\n}}\n").ok();
}

fn builder(out: &mut String, op: &Op) -> Result<(), CodegenError> {
    let fn_name = snake(&op.id);
    let mut args = vec!["base_url: &str".to_owned()];
    for param in &op.path_params {
        args.push(format!("{}: &str", snake(param)));
    }
    let (query, body) = match (&op.body, op.query.is_empty()) {
        (Some(_), false) => {
            return Err(spec_error(format!(
                "{}: a body and a query; the request builders take one or the other",
                op.id
            )));
        }
        (Some(schema), true) => {
            args.push(format!("body: &crate::types::{schema}"));
            ("\"\"".to_owned(), "Some(body)".to_owned())
        }
        (None, false) => {
            args.push(format!("query: &{}", query_name(op)));
            (
                "&query.to_query_string()?".to_owned(),
                "None::<&()>".to_owned(),
            )
        }
        (None, true) => ("\"\"".to_owned(), "None::<&()>".to_owned()),
    };
    if args.len() > 3 {
        return Err(spec_error(format!(
            "{}: its builder would take {} arguments; at most three (give it a request struct)",
            op.id,
            args.len()
        )));
    }
    let segments: Vec<String> = op
        .path
        .split('/')
        .filter(|segment| !segment.is_empty())
        .map(
            |segment| match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(param) => format!("Segment::Param({param:?}, {})", snake(param)),
                None => format!("Segment::Literal({segment:?})"),
            },
        )
        .collect();
    let answer = op
        .answer
        .as_ref()
        .map(|schema| format!(" Answered with a [`{schema}`](crate::types::{schema})."))
        .unwrap_or_default();
    writeln!(
        out,
        "/// `{method} {path}` (`{id}`): {summary}.{answer}\n\
         ///\n\
         /// `base_url` ends with the version prefix (`https://host/store-api/2026-08`).\n\
         pub fn {fn_name}({args}) -> Result<Request, BuildError> {{\n\
         let url = url(base_url, &[{segments}])?;\n\
         request(&crate::contract::{constant}, url, {query}, {body})\n\
         }}\n",
        method = op.method,
        path = op.path,
        id = op.id,
        constant = crate::contract::screaming(&op.id),
        summary = op.summary.trim_end_matches('.'),
        args = args.join(", "),
        segments = segments.join(", "),
    )
    .ok();
    Ok(())
}

/// `impl ListQuery` for a list whose only path parameter is the store's.
fn list_query_impl(out: &mut String, op: &Op) {
    let has = |field: &str| op.query.iter().any(|param| param.field == field);
    let (Some(answer), true, true, 1) =
        (&op.answer, has("page"), has("limit"), op.path_params.len())
    else {
        return;
    };
    writeln!(
        out,
        "impl ListQuery for {name} {{\n\
         type Page = crate::types::{answer};\n\
         const OPERATION: &'static crate::contract::Operation = &crate::contract::{constant};\n\n\
         fn request(&self, base_url: &str, store_id: &str) -> Result<Request, BuildError> {{\n\
         {fn_name}(base_url, store_id, self)\n\
         }}\n\n\
         fn page_number(&self) -> Option<u64> {{\n\
         self.page\n\
         }}\n\n\
         fn page_size(&self) -> Option<u64> {{\n\
         self.limit\n\
         }}\n\n\
         fn at_page(mut self, page: u64, size: u64) -> Self {{\n\
         self.page = Some(page);\n\
         self.limit = Some(self.limit.unwrap_or(size));\n\
         self\n\
         }}\n\
         }}\n",
        name = query_name(op),
        constant = snake(&op.id).to_ascii_uppercase(),
        fn_name = snake(&op.id),
    )
    .ok();
}

/// `impl GetById` for the answer of a `GET` of one item of the store by one id.
fn get_by_id_impl(out: &mut String, op: &Op) {
    let (Some(answer), true) = (&op.answer, is_get_by_id(op)) else {
        return;
    };
    writeln!(
        out,
        "impl GetById for crate::types::{answer} {{\n\
         const OPERATION: &'static crate::contract::Operation = &crate::contract::{constant};\n\n\
         fn request(base_url: &str, store_id: &str, id: &str) -> Result<Request, BuildError> {{\n\
         {fn_name}(base_url, store_id, id)\n\
         }}\n\n\
         fn id(&self) -> &str {{\n\
         &self.id\n\
         }}\n\
         }}\n",
        constant = snake(&op.id).to_ascii_uppercase(),
        fn_name = snake(&op.id),
    )
    .ok();
}

/// Whether `op` is a list [`list_query_impl`] implements `ListQuery` for.
fn is_list(op: &Op) -> bool {
    let has = |field: &str| op.query.iter().any(|param| param.field == field);
    op.answer.is_some() && has("page") && has("limit") && op.path_params.len() == 1
}

/// Whether `op` is a read [`get_by_id_impl`] implements `GetById` for.
fn is_get_by_id(op: &Op) -> bool {
    op.answer.is_some() && op.method == "GET" && op.path_params.len() == 2 && op.query.is_empty()
}

/// `impl ListPage` for every list's page schema, and `impl Listable` for every item type that has a
/// list and a read by id.
fn listables(spec: &Value, ops: &[Op], out: &mut String) -> Result<(), CodegenError> {
    let schemas = map_at(spec, &["components", "schemas"])?;
    for op in ops.iter().filter(|op| is_list(op)) {
        let Some(page) = &op.answer else { continue };
        let item = schemas
            .get(page.as_str())
            .and_then(|schema| schema.get("properties"))
            .and_then(|properties| properties.get("items"))
            .and_then(|items| items.get("items"))
            .and_then(|item| reference(item, "#/components/schemas/"))
            .ok_or_else(|| {
                spec_error(format!(
                    "{}: its page {page} has no `items` array of a schema",
                    op.id
                ))
            })?;
        writeln!(
            out,
            "impl ListPage for crate::types::{page} {{\n\
             type Item = crate::types::{item};\n\n\
             fn into_parts(self) -> PageParts<crate::types::{item}> {{\n\
             PageParts {{ items: self.items, total_items: self.total_items, total_pages: self.total_pages, query: self.query }}\n\
             }}\n\
             }}\n"
        )
        .ok();
        let read = ops
            .iter()
            .filter(|other| is_get_by_id(other))
            .any(|other| other.answer.as_deref() == Some(item));
        if read {
            writeln!(
                out,
                "impl Listable for crate::types::{item} {{\n\
                 type Query = {query};\n\
                 }}\n",
                query = query_name(op),
            )
            .ok();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> String {
        std::fs::read_to_string(crate::workspace_root().join(crate::generator::SPEC_PATH))
            .unwrap_or_default()
    }

    #[test]
    fn every_operation_gets_a_builder_of_at_most_three_arguments() {
        let code = generate(&spec()).unwrap();
        let code = code.split_whitespace().collect::<Vec<_>>().join(" ");
        for expected in [
            "pub fn get_status(base_url: &str, store_id: &str)",
            "pub fn list_orders( base_url: &str, store_id: &str, query: &ListOrdersQuery, )",
            "pub fn create_order( base_url: &str, store_id: &str, body: &crate::types::CreateOrderRequest, )",
            "impl ListQuery for ListOrdersQuery",
            "impl GetById for crate::types::Order",
            "pub status: Vec<crate::open::OrderStatus>,",
            "pub external_order_id: Vec<String>,",
            "pub sort_updated_at: Option<crate::types::SortDirection>,",
        ] {
            assert!(code.contains(expected), "missing {expected:?}");
        }
    }

    #[test]
    fn a_filter_without_its_values_is_refused() {
        let without = spec().replacen("x-filter-values: OrderStatus", "", 1);
        let error = generate(&without).unwrap_err().to_string();
        assert!(
            error.contains("filter[status] has no x-filter-values"),
            "{error}"
        );
    }

    #[test]
    fn a_builder_of_four_arguments_is_refused() {
        let op = Op {
            id: "replaceLineItem".into(),
            method: "PUT".into(),
            path: "/stores/{storeId}/orders/{orderId}/line-items/{lineItemId}".into(),
            summary: String::new(),
            path_params: vec!["storeId".into(), "orderId".into(), "lineItemId".into()],
            query: Vec::new(),
            body: Some("LineItemInput".into()),
            answer: None,
        };
        let error = builder(&mut String::new(), &op).unwrap_err().to_string();
        assert!(error.contains("5 arguments; at most three"), "{error}");
    }
}
