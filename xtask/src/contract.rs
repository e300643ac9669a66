//! Generation of `crates/store-api-raw/src/contract.rs`: the facts of the spec that are not wire types.
//!
//! The operations table (id, method, path template, whether it creates, its list query rules), the
//! version prefix, the limits (page size, rate limit, body size) and the open enumerations with their
//! known values. The client and the emulator read these from the generated module, so a fact of the spec
//! is typed once, in `spec/store-api.yaml`. Facts OpenAPI cannot express come from `x-` extensions:
//! `x-rate-limit` (`burst`, `tokensPerSecond`) and `x-max-body-bytes` on a response of
//! `components/responses`, `x-enumDescriptions` beside an open enumeration's values (`crate::open_enum`),
//! and the assumptions by id: `x-assumption` (a map of id to text) beside any element and
//! `info.x-assumptions`.

use std::fmt::Write as _;

use serde_norway::{Mapping, Value};

use crate::generator::{CodegenError, snake};
use crate::open_enum::{KnownValues, known_values};

/// Generated file path relative to the workspace root.
pub const OUTPUT_PATH: &str = "crates/store-api-raw/src/contract.rs";

/// HTTP methods of a path item, in the order operations are listed.
pub(crate) const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Names of the schemas the spec writes as open enumerations (`crate::open_enum`), in the spec's
/// order: progenitor replaces each with the open enum generated here.
pub fn open_enum_names(spec_text: &str) -> Result<Vec<String>, CodegenError> {
    let spec = parse(spec_text)?;
    Ok(open_enums(&spec)?.into_iter().map(|e| e.name).collect())
}

/// The unformatted Rust source of the contract module (the caller formats it and adds the preamble).
pub fn generate(spec_text: &str) -> Result<String, CodegenError> {
    let spec = parse(spec_text)?;
    let mut out = String::new();
    header(&mut out);
    version(&spec, &mut out)?;
    limits(&spec, &mut out)?;
    operations(&spec, &mut out)?;
    assumptions(&spec, &mut out)?;
    enums(&spec, &mut out)?;
    Ok(out)
}

pub(crate) fn parse(spec_text: &str) -> Result<Value, CodegenError> {
    serde_norway::from_str(spec_text).map_err(|e| CodegenError::Spec(e.to_string()))
}

pub(crate) fn spec_error(message: impl Into<String>) -> CodegenError {
    CodegenError::Spec(message.into())
}

fn header(out: &mut String) {
    out.push_str(
        "//! The facts of the spec that are not wire types: operations, version prefix, limits, list query\n\
         //! rules, the answers each operation declares (status, headers, the body's shape) and the open\n\
         //! enumerations' known values. The client and the emulator use these values; nothing here is typed\n\
         //! by hand.\n\n\
         use std::time::Duration;\n\n\
         pub use crate::contract_shapes::{HeaderShape, ObjectShape, OpenEnumShape, OperationResponses, Property, ResponseShape, Shape};\n\
         pub use crate::contract_types::{Assumption, Bounds, HttpMethod, ListRules, Operation, OutOfBounds, QueryParam};\n\n",
    );
}

/// The version prefix of the spec's text (the path of `servers[0].url`), for tools that read the spec
/// at run time (the bench's Prism run) rather than the generated contract.
pub fn version_prefix(spec_text: &str) -> Result<String, CodegenError> {
    let spec: Value =
        serde_norway::from_str(spec_text).map_err(|e| CodegenError::Spec(e.to_string()))?;
    prefix_of(&spec).map(str::to_owned)
}

/// The path every server of `servers` shares (an error when there is none, or when they differ).
fn prefix_of(spec: &Value) -> Result<&str, CodegenError> {
    let urls: Vec<&str> = spec
        .get("servers")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .map(|server| {
            server
                .get("url")
                .and_then(Value::as_str)
                .ok_or_else(|| spec_error("a server has no url"))
        })
        .collect::<Result<_, _>>()?;
    let Some(first) = urls.first() else {
        return Err(spec_error("servers[0].url is missing"));
    };
    let prefix = server_path(first)?;
    for url in &urls[1..] {
        if server_path(url)? != prefix {
            return Err(spec_error(format!(
                "every server must end with the same version path: {url:?} does not end with {prefix:?}"
            )));
        }
    }
    Ok(prefix)
}

fn version(spec: &Value, out: &mut String) -> Result<(), CodegenError> {
    let version = str_at(spec, &["info", "version"])?;
    let prefix = prefix_of(spec)?;
    writeln!(
        out,
        "/// The API version (`info.version`).\npub const API_VERSION: &str = {version:?};\n\
         /// The path of `servers[0].url` after the origin: every operation's path is relative to it.\n\
         pub const VERSION_PREFIX: &str = {prefix:?};\n"
    )
    .ok();
    Ok(())
}

/// The path of a server URL: the whole of a relative one (`/store-api/2026-08`), the part after
/// `scheme://host` of an absolute one (whose parts may be variables: `{scheme}://{host}:{port}/…`), or
/// after a leading `{origin}` variable. The path itself must be fixed (no variable).
fn server_path(url: &str) -> Result<&str, CodegenError> {
    let rest = if url.starts_with('/') {
        Some(url)
    } else if let Some((_, rest)) = url.split_once("://") {
        Some(rest.find('/').map_or("", |i| &rest[i..]))
    } else if let Some(after) = url.strip_prefix('{') {
        after.split_once('}').map(|(_, rest)| rest)
    } else {
        None
    };
    match rest {
        Some(path) if path.starts_with('/') && !path.contains('{') => {
            Ok(path.trim_end_matches('/'))
        }
        Some(path) if path.contains('{') => Err(spec_error(format!(
            "servers[0].url {url:?}: the version path must not hold a variable"
        ))),
        _ => Err(spec_error(format!(
            "servers[0].url {url:?} has no path after its origin"
        ))),
    }
}

fn limits(spec: &Value, out: &mut String) -> Result<(), CodegenError> {
    let limit = component_parameter(spec, "limit")?;
    let page = component_parameter(spec, "page")?;
    let limit_bounds = bounds(spec, limit)?;
    let (Some(default), Some(max)) = (limit_bounds.default, limit_bounds.max) else {
        return Err(spec_error(
            "the `limit` parameter needs a default and a maximum",
        ));
    };
    let rate = response_extension(spec, "x-rate-limit")?;
    let burst = u64_at(rate, "burst")?;
    let per_second = u64_at(rate, "tokensPerSecond")?;
    if burst == 0 || per_second == 0 || burst > u64::from(u32::MAX) || per_second > 1_000_000_000 {
        return Err(spec_error(
            "x-rate-limit needs a burst and tokensPerSecond of at least 1",
        ));
    }
    let body = response_extension(spec, "x-max-body-bytes")?
        .as_u64()
        .ok_or_else(|| spec_error("x-max-body-bytes must be a positive integer"))?;
    let page_bounds = bounds(spec, page)?;
    writeln!(
        out,
        "/// Bounds of the `page` query parameter of list operations.\n\
         pub const PAGE_NUMBER: Bounds = {page};\n\
         /// Bounds and default of the `limit` query parameter (page size) of list operations.\n\
         pub const PAGE_SIZE: Bounds = {size};\n\
         /// Page size when a list request sends no `limit`.\n\
         pub const PAGE_SIZE_DEFAULT: u64 = {default};\n\
         /// Largest page size the service accepts.\n\
         pub const PAGE_SIZE_MAX: u64 = {max};\n\
         /// Requests a store may make at once (`x-rate-limit.burst`).\n\
         pub const RATE_LIMIT_BURST: u32 = {burst};\n\
         /// Tokens the store's bucket regains per second (`x-rate-limit.tokensPerSecond`).\n\
         pub const RATE_LIMIT_PER_SECOND: u32 = {per_second};\n\
         /// Time between two tokens of the store's bucket.\n\
         pub const RATE_LIMIT_REFILL_INTERVAL: Duration = Duration::from_nanos({interval});\n\
         /// Largest request body the service accepts, in bytes (`x-max-body-bytes`).\n\
         pub const MAX_BODY_BYTES: usize = {body};\n",
        page = page_bounds.rust(),
        size = limit_bounds.rust(),
        interval = 1_000_000_000 / per_second,
    )
    .ok();
    Ok(())
}

/// The parameter of `components/parameters` with this `name`.
fn component_parameter<'a>(spec: &'a Value, name: &str) -> Result<&'a Value, CodegenError> {
    map_at(spec, &["components", "parameters"])?
        .values()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
        .ok_or_else(|| spec_error(format!("no component parameter named {name:?}")))
}

/// The value of an extension found on exactly one response of `components/responses`.
fn response_extension<'a>(spec: &'a Value, key: &str) -> Result<&'a Value, CodegenError> {
    let mut found = map_at(spec, &["components", "responses"])?
        .values()
        .filter_map(|response| response.get(key));
    match (found.next(), found.next()) {
        (Some(value), None) => Ok(value),
        (None, _) => Err(spec_error(format!(
            "no response in components/responses has {key}"
        ))),
        (Some(_), Some(_)) => Err(spec_error(format!(
            "{key} appears on more than one response"
        ))),
    }
}

/// Integer bounds of a parameter's schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct NumberBounds {
    min: Option<u64>,
    max: Option<u64>,
    default: Option<u64>,
}

impl NumberBounds {
    fn rust(&self) -> String {
        let option = |v: Option<u64>| v.map_or("None".to_owned(), |v| format!("Some({v})"));
        format!(
            "Bounds {{ min: {}, max: {}, default: {} }}",
            option(self.min),
            option(self.max),
            option(self.default)
        )
    }
}

fn bounds(spec: &Value, parameter: &Value) -> Result<NumberBounds, CodegenError> {
    let schema = resolve(spec, parameter.get("schema").unwrap_or(&Value::Null))?;
    let number = |key: &str| schema.get(key).and_then(Value::as_u64);
    Ok(NumberBounds {
        min: number("minimum"),
        max: number("maximum"),
        default: number("default"),
    })
}

/// One operation of `paths`.
struct Op {
    id: String,
    method: &'static str,
    path: String,
    /// Query rules, for operations with a `page` or `limit` parameter.
    list: Option<ListRules>,
}

/// A `filter[...]` or `sort[...]` parameter, as Rust.
struct Param {
    /// The constant of its `components/parameters` entry, when it is a reference to one.
    component: Option<String>,
    /// `QueryParam { .. }`.
    rust: String,
}

struct ListRules {
    filters: Vec<Param>,
    sorts: Vec<Param>,
    page: String,
    limit: String,
}

/// What the operations' rules share, emitted once: value lists of enum schemas and referenced
/// parameters, each as a constant.
#[derive(Default)]
struct Shared {
    constants: Vec<(String, String)>,
}

impl Shared {
    fn add(&mut self, name: &str, definition: String) {
        if !self.constants.iter().any(|(n, _)| n == name) {
            self.constants.push((name.to_owned(), definition));
        }
    }
}

fn operations(spec: &Value, out: &mut String) -> Result<(), CodegenError> {
    let mut ops = Vec::new();
    let mut shared = Shared::default();
    for (path, item) in map_at(spec, &["paths"])? {
        let path = path
            .as_str()
            .ok_or_else(|| spec_error("a path is not a string"))?;
        let common = item.get("parameters");
        for method in METHODS {
            let Some(operation) = item.get(*method) else {
                continue;
            };
            let id = operation
                .get("operationId")
                .and_then(Value::as_str)
                .ok_or_else(|| spec_error(format!("{method} {path} has no operationId")))?;
            let parameters: Vec<&Value> = [common, operation.get("parameters")]
                .into_iter()
                .flatten()
                .flat_map(|list| list.as_sequence().into_iter().flatten())
                .collect();
            ops.push(Op {
                id: id.to_owned(),
                method,
                path: path.to_owned(),
                list: list_rules(spec, &parameters, &mut shared)?,
            });
        }
    }
    for (_, definition) in &shared.constants {
        out.push_str(definition);
    }
    for op in &ops {
        if let Some(rules) = &op.list {
            let name = format!("{}_QUERY", screaming(&op.id));
            writeln!(
                out,
                "/// Query rules of `{id}`.\npub const {name}: ListRules = ListRules {{ filters: &[{filters}], sorts: &[{sorts}], page: {page}, limit: {limit} }};\n",
                id = op.id,
                filters = params_rust(&rules.filters),
                sorts = params_rust(&rules.sorts),
                page = rules.page,
                limit = rules.limit,
            )
            .ok();
        }
    }
    for op in &ops {
        let query = match op.list {
            Some(_) => format!("Some(&{}_QUERY)", screaming(&op.id)),
            None => "None".to_owned(),
        };
        writeln!(
            out,
            "/// `{method} {path}` (`{id}`).\npub const {name}: Operation = Operation {{ id: {id:?}, method_name: {snake:?}, method: HttpMethod::{variant}, path: {path:?}, creates: {creates}, query: {query} }};\n",
            name = screaming(&op.id),
            method = op.method.to_ascii_uppercase(),
            id = op.id,
            snake = snake(&op.id),
            variant = camel(op.method),
            path = op.path,
            creates = op.method == "post",
        )
        .ok();
    }
    out.push_str("/// Every operation of the spec, in the spec's order.\npub const OPERATIONS: &[Operation] = &[\n");
    for op in &ops {
        writeln!(out, "{},", screaming(&op.id)).ok();
    }
    out.push_str(
        "];\n\n\
         /// The operation with this id, in the spec's form (`getStatus`) or the generated method's (`get_status`).\n\
         pub fn operation(id: &str) -> Option<&'static Operation> {\n\
         OPERATIONS.iter().find(|op| op.id == id || op.method_name == id)\n\
         }\n\n\
         /// The operation a request of `method` to `path` reaches, or `None` (an unserved path, another\n\
         /// method). `path` is the URL's path from the origin (`/store-api/2026-08/stores/s1/orders`):\n\
         /// whatever precedes [`VERSION_PREFIX`] is skipped (a base URL may mount the API under a path of\n\
         /// its own), and a query after `?` is ignored.\n\
         pub fn operation_at(method: &str, path: &str) -> Option<&'static Operation> {\n\
         crate::contract_types::find_operation(OPERATIONS, VERSION_PREFIX, method, path)\n\
         }\n\n",
    );
    Ok(())
}

fn list_rules(
    spec: &Value,
    parameters: &[&Value],
    shared: &mut Shared,
) -> Result<Option<ListRules>, CodegenError> {
    let mut query = Vec::new();
    for parameter in parameters {
        let resolved = resolve(spec, parameter)?;
        if resolved.get("in").and_then(Value::as_str) == Some("query") {
            query.push((*parameter, resolved));
        }
    }
    let named = |name: &str| {
        query
            .iter()
            .map(|(_, resolved)| *resolved)
            .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
    };
    let (page, limit) = (named("page"), named("limit"));
    if page.is_none() && limit.is_none() {
        return Ok(None);
    }
    let mut filters = Vec::new();
    let mut sorts = Vec::new();
    for (raw, parameter) in &query {
        let name = parameter.get("name").and_then(Value::as_str).unwrap_or("");
        let (target, field) = if let Some(field) = bracketed(name, "filter") {
            (&mut filters, field)
        } else if let Some(field) = bracketed(name, "sort") {
            (&mut sorts, field)
        } else {
            continue;
        };
        let schema = parameter.get("schema").unwrap_or(&Value::Null);
        let values = match (
            reference(schema, "#/components/schemas/"),
            enum_values(resolve(spec, schema)?),
        ) {
            (_, None) => "None".to_owned(),
            (Some(schema_name), Some(values)) => {
                let constant = format!("{}_VALUES", screaming(schema_name));
                shared.add(
                    &constant,
                    format!("/// The values of the `{schema_name}` schema.\npub const {constant}: &[&str] = &{values:?};\n\n"),
                );
                format!("Some({constant})")
            }
            (None, Some(values)) => format!("Some(&{values:?})"),
        };
        let rust = format!("QueryParam {{ field: {field:?}, values: {values} }}");
        let component = reference(raw, "#/components/parameters/").map(|component| {
            let constant = format!("{}_PARAM", screaming(component));
            shared.add(
                &constant,
                format!("/// The `{name}` parameter (`{component}`).\npub const {constant}: QueryParam = {rust};\n\n"),
            );
            constant
        });
        target.push(Param { component, rust });
    }
    // The operations' bounds are the shared `page` and `limit` parameters' unless they differ.
    let bounds_rust = |parameter: Option<&Value>, name: &str, constant: &str| {
        let own = parameter.map_or(Ok(NumberBounds::default()), |p| bounds(spec, p))?;
        let common = bounds(spec, component_parameter(spec, name)?)?;
        Ok::<_, CodegenError>(if own == common {
            constant.to_owned()
        } else {
            own.rust()
        })
    };
    Ok(Some(ListRules {
        filters,
        sorts,
        page: bounds_rust(page, "page", "PAGE_NUMBER")?,
        limit: bounds_rust(limit, "limit", "PAGE_SIZE")?,
    }))
}

/// The name a local `$ref` points to under `prefix`.
pub(crate) fn reference<'a>(value: &'a Value, prefix: &str) -> Option<&'a str> {
    value.get("$ref")?.as_str()?.strip_prefix(prefix)
}

fn bracketed<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    name.strip_prefix(prefix)?
        .strip_prefix('[')?
        .strip_suffix(']')
}

fn enum_values(schema: &Value) -> Option<Vec<String>> {
    schema.get("enum")?.as_sequence().map(|values| {
        values
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    })
}

fn params_rust(params: &[Param]) -> String {
    params
        .iter()
        .map(|param| {
            param
                .component
                .clone()
                .unwrap_or_else(|| param.rust.clone())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One assumption: its id, the text where it is first stated, and every place it is stated.
struct Stated {
    id: String,
    text: String,
    places: Vec<String>,
}

/// Every `x-assumption` (beside an element) and `info.x-assumptions` entry, by id in the spec's order.
fn assumptions(spec: &Value, out: &mut String) -> Result<(), CodegenError> {
    let mut found: Vec<Stated> = Vec::new();
    collect_assumptions(spec, &mut Vec::new(), &mut found)?;
    if found.is_empty() {
        return Err(spec_error("the spec states no assumption (x-assumption)"));
    }
    out.push_str(
        "/// Every assumption the spec makes where the service's documentation says \"not shown\", by id, in the\n\
         /// spec's order.\n\
         pub const ASSUMPTIONS: &[Assumption] = &[\n",
    );
    for stated in &found {
        writeln!(
            out,
            "Assumption {{ id: {:?}, text: {:?}, stated_at: &{:?} }},",
            stated.id, stated.text, stated.places
        )
        .ok();
    }
    out.push_str(
        "];\n\n\
         /// The assumption with this id.\n\
         pub fn assumption(id: &str) -> Option<&'static Assumption> {\n\
         ASSUMPTIONS.iter().find(|assumption| assumption.id == id)\n\
         }\n\n",
    );
    Ok(())
}

fn collect_assumptions(
    value: &Value,
    at: &mut Vec<String>,
    found: &mut Vec<Stated>,
) -> Result<(), CodegenError> {
    match value {
        Value::Mapping(map) => {
            for (key, child) in map {
                let key = key.as_str().unwrap_or_default();
                if key == "x-assumption" || (key == "x-assumptions" && at.as_slice() == ["info"]) {
                    record_assumptions(child, &place(at), found)?;
                    continue;
                }
                at.push(key.to_owned());
                collect_assumptions(child, at, found)?;
                at.pop();
            }
        }
        Value::Sequence(items) => {
            for (index, item) in items.iter().enumerate() {
                let name = item.get("name").and_then(Value::as_str);
                at.push(name.map_or_else(|| index.to_string(), str::to_owned));
                collect_assumptions(item, at, found)?;
                at.pop();
            }
        }
        _ => {}
    }
    Ok(())
}

/// The entries of one `x-assumption` map (id → text) stated at `place`.
fn record_assumptions(
    entries: &Value,
    place: &str,
    found: &mut Vec<Stated>,
) -> Result<(), CodegenError> {
    let entries = entries.as_mapping().ok_or_else(|| {
        spec_error(format!(
            "the assumption at {place} needs an id: write `x-assumption: {{some-id: text}}`"
        ))
    })?;
    for (id, text) in entries {
        let (Some(id), Some(text)) = (id.as_str(), text.as_str()) else {
            return Err(spec_error(format!(
                "the assumptions at {place} must map ids to texts"
            )));
        };
        if id.is_empty()
            || !id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(spec_error(format!(
                "assumption id {id:?} at {place}: use lower-case letters, digits and `-`"
            )));
        }
        match found.iter_mut().find(|stated| stated.id == id) {
            Some(stated) => stated.places.push(place.to_owned()),
            None => found.push(Stated {
                id: id.to_owned(),
                text: text.trim().to_owned(),
                places: vec![place.to_owned()],
            }),
        }
    }
    Ok(())
}

/// A readable place in the spec: `GET /stores/{storeId}/products › filter[status]` for what is under
/// an operation, the keys joined otherwise (`components › parameters › Page`).
fn place(at: &[String]) -> String {
    match at {
        [root, path, method, rest @ ..] if root == "paths" || root == "x-webhooks" => {
            let head = if root == "paths" {
                format!("{} {path}", method.to_ascii_uppercase())
            } else {
                format!("webhook {path}")
            };
            let mut parts = vec![head];
            parts.extend(
                rest.iter()
                    .filter(|key| *key != "parameters" && *key != "properties")
                    .cloned(),
            );
            parts.join(" › ")
        }
        _ => at
            .iter()
            .filter(|key| *key != "properties")
            .cloned()
            .collect::<Vec<_>>()
            .join(" › "),
    }
}

/// An enumeration that may grow (`crate::open_enum`'s spellings).
struct OpenEnum {
    name: String,
    description: String,
    values: Vec<(String, Option<String>)>,
    /// `x-ladder`: the values whose order means something, lowest first (the fulfillment ladder).
    ladder: Option<Vec<String>>,
}

fn open_enums(spec: &Value) -> Result<Vec<OpenEnum>, CodegenError> {
    let mut found = Vec::new();
    for (name, schema) in map_at(spec, &["components", "schemas"])? {
        let name = name
            .as_str()
            .ok_or_else(|| spec_error("a schema name is not a string"))?;
        let json = serde_json::to_value(schema).map_err(|e| spec_error(format!("{name}: {e}")))?;
        let Some(KnownValues(values)) = known_values(name, &json)? else {
            continue;
        };
        found.push(OpenEnum {
            name: name.to_owned(),
            description: schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_owned(),
            ladder: ladder(name, schema, &values)?,
            values,
        });
    }
    Ok(found)
}

/// The schema's `x-ladder` (a list of some of its known values, lowest first), checked against the
/// values. The order of the ladder is stated apart from the list of values, so a value added anywhere in
/// the list (or to the ladder) does not change how the existing rungs compare.
fn ladder(
    name: &str,
    schema: &Value,
    values: &[(String, Option<String>)],
) -> Result<Option<Vec<String>>, CodegenError> {
    let Some(ladder) = schema.get("x-ladder") else {
        return Ok(None);
    };
    let list = ladder
        .as_sequence()
        .ok_or_else(|| spec_error(format!("{name}: `x-ladder` must be a list of its values")))?;
    let mut rungs: Vec<String> = Vec::new();
    for rung in list {
        let rung = rung
            .as_str()
            .ok_or_else(|| spec_error(format!("{name}: an `x-ladder` entry is not a string")))?;
        if !values.iter().any(|(value, _)| value == rung) {
            return Err(spec_error(format!(
                "{name}: `x-ladder` names `{rung}`, which is not one of its values"
            )));
        }
        if rungs.iter().any(|r| r == rung) {
            return Err(spec_error(format!(
                "{name}: `x-ladder` names `{rung}` twice"
            )));
        }
        rungs.push(rung.to_owned());
    }
    Ok(Some(rungs))
}

fn enums(spec: &Value, out: &mut String) -> Result<(), CodegenError> {
    out.push_str(
        "/// The enumerations the spec lets grow within the version (written as an `anyOf` of the known values\n\
         /// and any string, or as `x-extensible-enum` over a string), with their known values (re-exported\n\
         /// by [`crate::open`]).\n\
         pub mod open_enums {\n",
    );
    for open in open_enums(spec)? {
        // rustfmt leaves macro input alone: indent it here.
        out.push_str("crate::open_enum::open_enum! {\n");
        doc_lines(out, "    ", &open.description);
        writeln!(out, "    {} {{", open.name).ok();
        for (value, doc) in &open.values {
            let doc = doc.clone().unwrap_or_else(|| format!("`{value}`."));
            doc_lines(out, "        ", &doc);
            writeln!(out, "        {} => {value:?},", variant(value)).ok();
        }
        out.push_str("    }\n}\n\n");
        if let Some(ladder) = &open.ladder {
            ladder_impls(out, &open.name, ladder);
        }
    }
    out.push_str("}\n");
    Ok(())
}

/// `LADDER`, `rung()` and a `PartialOrd` by rung for an open enumeration with an `x-ladder`. Values off
/// the ladder (and unknown ones) compare only as equal to themselves: `partial_cmp` is `None`.
fn ladder_impls(out: &mut String, name: &str, ladder: &[String]) {
    let rungs: Vec<String> = ladder
        .iter()
        .map(|value| format!("{name}::{}", variant(value)))
        .collect();
    writeln!(
        out,
        "impl {name} {{\n\
         /// The values whose order means something, lowest first (the spec's `x-ladder`, stated apart from\n\
         /// the list of values: a value added within the version does not move the others).\n\
         pub const LADDER: &'static [{name}] = &[{rungs}];\n\n\
         /// Position on [`Self::LADDER`] (0 = its first rung); `None` for a value off the ladder or unknown.\n\
         pub fn rung(&self) -> Option<usize> {{\n\
         Self::LADDER.iter().position(|rung| rung == self)\n\
         }}\n\
         }}\n\n\
         /// Compares rungs of [`{name}::LADDER`]; a value off the ladder (or unknown) is comparable only\n\
         /// with itself.\n\
         impl ::std::cmp::PartialOrd for {name} {{\n\
         fn partial_cmp(&self, other: &Self) -> Option<::std::cmp::Ordering> {{\n\
         if self == other {{\n\
         return Some(::std::cmp::Ordering::Equal);\n\
         }}\n\
         match (self.rung(), other.rung()) {{\n\
         (Some(a), Some(b)) => a.partial_cmp(&b),\n\
         _ => None,\n\
         }}\n\
         }}\n\
         }}\n",
        rungs = rungs.join(", "),
    )
    .ok();
}

fn doc_lines(out: &mut String, indent: &str, text: &str) {
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            writeln!(out, "{indent}///").ok();
        } else {
            writeln!(out, "{indent}/// {line}").ok();
        }
    }
}

/// `direct_to_garment` → `DirectToGarment`, `liquid_3d` → `Liquid3d`; a leading digit gets a `V`.
pub fn variant(wire: &str) -> String {
    let name = camel(wire);
    if name.starts_with(|c: char| c.is_ascii_digit()) || name.is_empty() {
        format!("V{name}")
    } else {
        name
    }
}

fn camel(text: &str) -> String {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

pub(crate) fn screaming(id: &str) -> String {
    snake(id).to_ascii_uppercase()
}

/// Follows a local `$ref` (`#/components/...`).
pub(crate) fn resolve<'a>(spec: &'a Value, value: &'a Value) -> Result<&'a Value, CodegenError> {
    let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
        return Ok(value);
    };
    let path = reference
        .strip_prefix("#/")
        .ok_or_else(|| spec_error(format!("only local references are supported: {reference}")))?;
    let mut target = spec;
    for key in path.split('/') {
        target = target
            .get(key)
            .ok_or_else(|| spec_error(format!("unresolved reference {reference}")))?;
    }
    resolve(spec, target)
}

fn value_at<'a>(spec: &'a Value, keys: &[&str]) -> Result<&'a Value, CodegenError> {
    keys.iter().try_fold(spec, |value, key| {
        value
            .get(*key)
            .ok_or_else(|| spec_error(format!("no {}", keys.join("/"))))
    })
}

pub(crate) fn map_at<'a>(spec: &'a Value, keys: &[&str]) -> Result<&'a Mapping, CodegenError> {
    value_at(spec, keys)?
        .as_mapping()
        .ok_or_else(|| spec_error(format!("{} is not a map", keys.join("/"))))
}

fn str_at<'a>(spec: &'a Value, keys: &[&str]) -> Result<&'a str, CodegenError> {
    value_at(spec, keys)?
        .as_str()
        .ok_or_else(|| spec_error(format!("{} is not a string", keys.join("/"))))
}

fn u64_at(value: &Value, key: &str) -> Result<u64, CodegenError> {
    value
        .get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| spec_error(format!("{key} must be a non-negative integer")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> String {
        std::fs::read_to_string(crate::workspace_root().join(crate::generator::SPEC_PATH))
            .unwrap_or_default()
    }

    fn generated(spec: &str) -> String {
        generate(spec).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Applies `from` → `to` to the workspace's spec: before, no line of `expected` is generated; after,
    /// every one is.
    fn check(from: &str, to: &str, expected: &[&str]) {
        let spec = spec();
        let edited = spec.replacen(from, to, 1);
        assert_ne!(spec, edited, "the edit must apply: {from:?}");
        let (before, after) = (generated(&spec), generated(&edited));
        for fact in expected {
            assert!(!before.contains(fact), "already there: {fact}");
            assert!(after.contains(fact), "missing {fact} in\n{after}");
        }
    }

    #[test]
    fn the_checked_in_spec_gives_its_facts() {
        let out = generated(&spec());
        for fact in [
            "pub const VERSION_PREFIX: &str = \"/store-api/2026-08\";",
            "pub const PAGE_SIZE_MAX: u64 = 100;",
            "pub const PAGE_SIZE_DEFAULT: u64 = 50;",
            "pub const RATE_LIMIT_BURST: u32 = 10;",
            "Duration::from_nanos(500000000)",
            "pub const MAX_BODY_BYTES: usize = 1048576;",
            "id: \"listCatalogProducts\", method_name: \"list_catalog_products\", method: HttpMethod::Get, path: \"/stores/{storeId}/catalog-products\", creates: false",
            "id: \"createOrder\", method_name: \"create_order\", method: HttpMethod::Post, path: \"/stores/{storeId}/orders\", creates: true, query: None",
            "QueryParam { field: \"externalOrderId\", values: None }",
            "pub const SORT_DIRECTION_VALUES: &[&str] = &[\"asc\", \"desc\"];",
            "pub const SORT_UPDATED_AT_PARAM: QueryParam = QueryParam { field: \"updatedAt\", values: Some(SORT_DIRECTION_VALUES) };",
            "page: PAGE_NUMBER, limit: PAGE_SIZE",
            "Liquid3d => \"liquid_3d\",",
        ] {
            assert!(out.contains(fact), "missing {fact}");
        }
        assert_eq!(out.matches(": Operation = Operation {").count(), 11);
        assert_eq!(
            open_enum_names(&spec()).unwrap_or_default(),
            [
                "DecorationMethod",
                "ProductStatus",
                "OrderStatus",
                "FulfillmentStatus",
                "PaymentStatus",
                "WebhookTopic"
            ]
        );
    }

    #[test]
    fn spec_edits_change_the_generated_facts() {
        check(
            "            - liquid_3d\n",
            "            - liquid_3d\n            - emboss\n",
            &["Emboss => \"emboss\","],
        );
        check(
            "      enum: [asc, desc]\n",
            "      x-extensible-enum: [asc, desc]\n",
            &["    SortDirection {", "Asc => \"asc\","],
        );
        check(
            "  /stores/{storeId}/orders/{orderId}:\n",
            "  /stores/{storeId}/orders/{orderId}/cancel:\n    post:\n      operationId: cancelOrder\n      responses:\n        \"200\":\n          description: Canceled.\n  /stores/{storeId}/orders/{orderId}:\n",
            &[
                "id: \"cancelOrder\", method_name: \"cancel_order\", method: HttpMethod::Post, path: \"/stores/{storeId}/orders/{orderId}/cancel\", creates: true",
            ],
        );
        check(
            "        maximum: 100\n        default: 50\n",
            "        maximum: 250\n        default: 25\n",
            &[
                "pub const PAGE_SIZE_MAX: u64 = 250;",
                "pub const PAGE_SIZE_DEFAULT: u64 = 25;",
            ],
        );
        check(
            "        burst: 10\n        tokensPerSecond: 2\n",
            "        burst: 20\n        tokensPerSecond: 4\n",
            &[
                "pub const RATE_LIMIT_BURST: u32 = 20;",
                "Duration::from_nanos(250000000)",
            ],
        );
        check(
            "x-max-body-bytes: 1048576",
            "x-max-body-bytes: 2097152",
            &["pub const MAX_BODY_BYTES: usize = 2097152;"],
        );
        check(
            "/store-api/2026-08\"",
            "/store-api/2027-01\"",
            &["pub const VERSION_PREFIX: &str = \"/store-api/2027-01\";"],
        );
        check(
            "        - name: filter[externalOrderId]\n",
            "        - name: filter[name]\n          in: query\n          schema:\n            type: string\n        - name: filter[externalOrderId]\n",
            &["QueryParam { field: \"name\", values: None }"],
        );
    }

    #[test]
    fn open_enums_are_the_schemas_written_open() {
        let edited = spec().replacen(
            "      enum: [asc, desc]\n",
            "      anyOf:\n        - enum: [asc, desc]\n        - type: string\n",
            1,
        );
        let names = open_enum_names(&edited).unwrap_or_default();
        assert!(names.contains(&"SortDirection".to_owned()), "{names:?}");
        let closed = spec().replacen(
            "      enum: [asc, desc]\n",
            "      x-extensible-enum: true\n      enum: [asc, desc]\n",
            1,
        );
        let error = open_enum_names(&closed).err().map(|e| e.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.contains("SortDirection: `x-extensible-enum: true`")),
            "{error:?}"
        );
    }

    #[test]
    fn assumptions_are_listed_by_id_with_every_place_they_are_stated() {
        let out = generated(&spec());
        for fact in [
            "Assumption { id: \"rate-limit-reset\", text: \"`X-RateLimit-Reset` is the number of whole seconds (rounded up) until the store's bucket is full again (0 when full).\", stated_at: &[\"info\", \"components › headers › XRateLimitReset\"] },",
            "\"GET /stores/{storeId}/products › filter[status]\"",
            "\"webhook products_create\"",
            "\"components › schemas › Order › orderedAt\"",
        ] {
            assert!(out.contains(fact), "missing {fact}");
        }
        check(
            "      description: Sort direction.\n",
            "      description: Sort direction.\n      x-assumption:\n        sort-values: Only two.\n",
            &[
                "Assumption { id: \"sort-values\", text: \"Only two.\", stated_at: &[\"components › schemas › SortDirection\"] },",
            ],
        );
        for (edit, says) in [
            ("      x-assumption: Only two.\n", "needs an id"),
            (
                "      x-assumption:\n        Sort_Values: Only two.\n",
                "lower-case letters",
            ),
            (
                "      x-assumption:\n        sort-values: [1]\n",
                "map ids to texts",
            ),
        ] {
            let edited = spec().replacen(
                "      description: Sort direction.\n",
                &format!("      description: Sort direction.\n{edit}"),
                1,
            );
            let error = generate(&edited)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                error.contains("components › schemas › SortDirection") && error.contains(says),
                "{error}"
            );
        }
    }

    /// The ladder's order comes from `x-ladder`, not from the place of a value in the list: a value
    /// inserted in the middle of the list leaves the generated ladder as it was.
    #[test]
    fn a_value_inserted_in_the_list_leaves_the_ladder_alone() {
        let ladder = |out: &str| {
            let start = out.find("pub const LADDER").expect("a ladder");
            out[start..start + out[start..].find("];").expect("its end")].to_owned()
        };
        let before = generated(&spec());
        let list =
            "enum: [pending, production_requested, sent_to_production, in_production, fulfilled]";
        let grown = spec().replacen(
            list,
            "enum: [pending, production_requested, quality_check, sent_to_production, in_production, fulfilled]",
            1,
        );
        assert_ne!(grown, spec());
        let after = generated(&grown);
        assert!(after.contains("QualityCheck => \"quality_check\""));
        assert_eq!(ladder(&after), ladder(&before));
        assert!(
            ladder(&before).contains(
                "FulfillmentStatus::Pending,\n        FulfillmentStatus::ProductionRequested,"
            ) || ladder(&before)
                .contains("FulfillmentStatus::Pending, FulfillmentStatus::ProductionRequested,")
        );

        let wrong = spec().replacen("x-ladder: [pending,", "x-ladder: [lost,", 1);
        let error = generate(&wrong)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("FulfillmentStatus: `x-ladder` names `lost`"),
            "{error}"
        );
    }

    #[test]
    fn missing_extensions_are_errors() {
        let spec = spec().replacen("x-max-body-bytes: 1048576", "x-other: 1", 1);
        let error = generate(&spec)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("x-max-body-bytes"), "{error}");
    }

    #[test]
    fn names() {
        assert_eq!(variant("direct_to_garment"), "DirectToGarment");
        assert_eq!(variant("liquid_3d"), "Liquid3d");
        assert_eq!(variant("3d"), "V3d");
        assert_eq!(snake("listCatalogProducts"), "list_catalog_products");
        for url in [
            "{scheme}://{host}:{port}/store-api/2026-08",
            "/store-api/2026-08",
            "{origin}/store-api/2026-08",
            "https://api.example.com/store-api/2026-08/",
        ] {
            assert_eq!(server_path(url).ok(), Some("/store-api/2026-08"), "{url}");
        }
        assert!(server_path("https://h").is_err());
        assert!(server_path("{scheme}://{host}").is_err());
        assert!(server_path("https://h/{version}").is_err());
    }
}
