//! `cargo xtask growth`: proves that the growth the seed announces within an API version is a minor
//! change of every published library crate.
//!
//! The step copies the workspace twice into a temporary folder (the baseline, unmodified, and the grown
//! copy), applies to the grown copy's `spec/store-api.yaml` every kind of change the service may make
//! without a new version ([`grow`]: a value inserted in the MIDDLE of each open enumeration's list, a
//! webhook topic with its event, an optional field on every response object, an optional field on every
//! request object, a new endpoint with a new response type), regenerates the grown copy once with the
//! code generator of `cargo xtask codegen`, and runs `cargo semver-checks check-release` for each
//! published library crate against the baseline. Any item that requires a major version fails the step.
//!
//! cargo-semver-checks does not follow re-exports across crates: a type defined in `store-api-raw` and
//! re-exported by `store-api` is judged in `store-api-raw` alone. So a crate that re-exports items of
//! another workspace crate (`pub use other_crate::…` in its sources) is charged that crate's major items
//! too: the table's `re-exported` column, and the step fails on the total.
//!
//! The same step is what a team runs after its own regeneration, with `--baseline-root` pointing at the
//! checkout before it (see the crate README of `store-api-raw`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_norway::{Mapping, Value};

use crate::generator::{CodegenError, SPEC_PATH, snake};

/// The published library crates the step checks, in dependency order.
pub const CRATES: &[&str] = &[
    "store-api-raw",
    "store-api-rules",
    "store-api",
    "store-api-webhooks",
    "store-api-redis",
    "store-api-fixtures",
    "store-api-cassette",
    "store-api-conformance",
];

/// Name of every value, field, topic and operation the step adds (so they are easy to spot in a diff).
const GROWN: &str = "growth_probe";
/// The optional property added to every object of a response or a request.
const GROWN_FIELD: &str = "growthProbe";
/// The endpoints added: a list and a read by id of a new resource (the endpoint recipe of
/// docs/ARCHITECTURE.md, applied by the generator alone).
const GROWN_PATH: &str = "/stores/{storeId}/growth-probes/{growthProbeId}";
const GROWN_OPERATION: &str = "getGrowthProbe";
const GROWN_SCHEMA: &str = "GrowthProbe";
const GROWN_LIST_PATH: &str = "/stores/{storeId}/growth-probes";
const GROWN_LIST_OPERATION: &str = "listGrowthProbes";
const GROWN_LIST_SCHEMA: &str = "GrowthProbeList";

/// Written into the grown copy and compiled there: the raw layer offers the new endpoints' request
/// builders, and the ergonomic client lists, streams and reads the new resource, with no code of
/// its own for it.
const OFFERED_PROBE: &str = r#"//! Written by `cargo xtask growth`: the new list-and-get pair is offered by both layers.
#![allow(dead_code, missing_docs)]

use futures::TryStreamExt;
use store_api_raw::requests::{self, ListGrowthProbesQuery};
use store_api_raw::types::GrowthProbe;

fn raw() -> Result<(), requests::BuildError> {
    let base = "http://127.0.0.1:9/store-api/2026-08";
    requests::list_growth_probes(base, "store_1", &ListGrowthProbesQuery::new().limit(5))?;
    requests::get_growth_probe(base, "store_1", "gp_1")?;
    Ok(())
}

async fn ergonomic(client: store_api::Client) -> store_api::Result<()> {
    let probes = client.collection::<GrowthProbe>();
    let page = probes.list(&ListGrowthProbesQuery::new().limit(5)).await?;
    let all: Vec<GrowthProbe> = probes.stream(&ListGrowthProbesQuery::new()).try_collect().await?;
    let one = probes.get("gp_1").await?;
    let _ = (page.total_items, all.len(), one.id);
    Ok(())
}

#[test]
fn offered() {}
"#;

/// Why the step failed.
#[derive(Debug)]
pub enum GrowthError {
    /// Copying or writing a file failed.
    Io(PathBuf, std::io::Error),
    /// The spec could not be read or grown (names what is missing).
    Spec(String),
    /// Regeneration of the grown copy failed.
    Codegen(CodegenError),
    /// cargo-semver-checks could not run at all.
    Tool(String),
    /// At least one crate has items that require a major version (the table says which).
    Major(String),
}

impl std::fmt::Display for GrowthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(path, e) => write!(f, "{}: {e}", path.display()),
            Self::Spec(e) => write!(f, "{SPEC_PATH}: {e}"),
            Self::Codegen(e) => write!(f, "regenerating the grown copy: {e}"),
            Self::Tool(e) => write!(f, "cargo-semver-checks: {e}"),
            Self::Major(table) => write!(
                f,
                "growth within the API version would need a major version:\n{table}"
            ),
        }
    }
}

impl std::error::Error for GrowthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(_, e) => Some(e),
            Self::Codegen(e) => Some(e),
            _ => None,
        }
    }
}

impl From<CodegenError> for GrowthError {
    fn from(e: CodegenError) -> Self {
        Self::Codegen(e)
    }
}

/// What cargo-semver-checks found in one crate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrateReport {
    /// Items of the crate's own API that require a major version (failures and major-level warnings).
    pub major: usize,
    /// The lints that reported major items, with their item counts.
    pub lints: BTreeMap<String, usize>,
    /// The workspace crates whose items this crate re-exports.
    pub reexports: Vec<String>,
}

/// Runs the step for the workspace at `root` and returns the table (an error holding it on a major item).
pub fn run(root: &Path) -> Result<String, GrowthError> {
    let started = std::time::Instant::now();
    let temp = std::env::temp_dir().join(format!("store-api-growth-{}", std::process::id()));
    let result = run_in(root, &temp);
    // A failed removal leaves a folder in the temp dir; the result matters more.
    let _ = std::fs::remove_dir_all(&temp);
    result.map(|table| format!("{table}\ngrowth checked in {:.0?}", started.elapsed()))
}

fn run_in(root: &Path, temp: &Path) -> Result<String, GrowthError> {
    let baseline = temp.join("baseline");
    let grown = temp.join("grown");
    copy_workspace(root, &baseline)?;
    copy_workspace(root, &grown)?;
    let spec_path = grown.join(SPEC_PATH);
    let spec =
        std::fs::read_to_string(&spec_path).map_err(|e| GrowthError::Io(spec_path.clone(), e))?;
    let (spec, changes) = grow(&spec)?;
    std::fs::write(&spec_path, spec).map_err(|e| GrowthError::Io(spec_path.clone(), e))?;
    println!("grown spec ({} changes):", changes.len());
    for change in &changes {
        println!("  - {change}");
    }
    let message = crate::codegen::run(&grown, crate::codegen::Mode::Write)?;
    println!("regenerated the grown copy: {message}");

    let target = target_dir(root);
    check_offered(&grown, &target)?;
    println!(
        "the grown copy offers {GROWN_LIST_OPERATION} and {GROWN_OPERATION} in store-api-raw and store-api"
    );
    let mut reports = BTreeMap::new();
    for name in CRATES {
        let mut report = semver_check(&grown, &baseline, &target, name)?;
        report.reexports = reexported_crates(&grown, name)?;
        reports.insert((*name).to_owned(), report);
    }
    let (table, failed) = table(&reports);
    if failed {
        Err(GrowthError::Major(table))
    } else {
        Ok(table)
    }
}

/// Where cargo-semver-checks builds: under the workspace's own target folder, so that CI's cache and
/// repeated local runs reuse the dependencies' builds (the copies live in a fresh temp folder each run).
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("growth")
}

/// Copies the workspace's sources (not `target`, `.git` or the CI tool folders).
fn copy_workspace(from: &Path, to: &Path) -> Result<(), GrowthError> {
    const SKIP: &[&str] = &["target", ".git", ".tools", "node_modules"];
    std::fs::create_dir_all(to).map_err(|e| GrowthError::Io(to.to_path_buf(), e))?;
    let entries = std::fs::read_dir(from).map_err(|e| GrowthError::Io(from.to_path_buf(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| GrowthError::Io(from.to_path_buf(), e))?;
        let name = entry.file_name();
        if SKIP.iter().any(|skip| name == *skip) {
            continue;
        }
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| GrowthError::Io(path.clone(), e))?;
        let destination = to.join(&name);
        if kind.is_dir() {
            copy_workspace(&path, &destination)?;
        } else if kind.is_file() {
            std::fs::copy(&path, &destination).map_err(|e| GrowthError::Io(path.clone(), e))?;
        }
    }
    Ok(())
}

/// The open enumerations [`grow`] adds a value to, in the middle of each.
const OPEN_ENUMS: [&str; 6] = [
    "DecorationMethod",
    "OrderStatus",
    "FulfillmentStatus",
    "PaymentStatus",
    "ProductStatus",
    "WebhookTopic",
];

/// The spec text with every change the service may make within the version applied, and a line per
/// change. Values are inserted in the middle of each list, where a positional order would move.
pub fn grow(spec_text: &str) -> Result<(String, Vec<String>), GrowthError> {
    let mut spec: Value =
        serde_norway::from_str(spec_text).map_err(|e| GrowthError::Spec(e.to_string()))?;
    let mut changes = Vec::new();

    // 1. A value in the middle of every open enumeration (decoration methods, order, fulfillment, payment
    //    and product statuses, webhook topics), and of the fulfillment ladder.
    let open = crate::contract::open_enum_names(spec_text)?;
    for name in OPEN_ENUMS {
        if !open.iter().any(|o| o == name) {
            return Err(GrowthError::Spec(format!(
                "`{name}` is not an open enumeration"
            )));
        }
    }
    for name in &open {
        let schema = schema_mut(&mut spec, name)?;
        let value = format!("{GROWN}_{}", snake(name));
        let at = insert_enum_value(schema, &value)
            .ok_or_else(|| GrowthError::Spec(format!("`{name}` has no list of values")))?;
        changes.push(format!("{name}: value `{value}` inserted at position {at}"));
        if let Some(ladder) = schema.get_mut("x-ladder").and_then(Value::as_sequence_mut) {
            let at = ladder.len() / 2;
            ladder.insert(at, Value::String(value.clone()));
            changes.push(format!(
                "{name}: `{value}` inserted in x-ladder at rung {at}"
            ));
        }
    }

    // 2. A webhook topic's event (the topic value itself is the `WebhookTopic` value above).
    let topic = format!("{GROWN}_webhook_topic");
    let webhooks = spec
        .get_mut("x-webhooks")
        .and_then(Value::as_mapping_mut)
        .ok_or_else(|| GrowthError::Spec("no `x-webhooks`".into()))?;
    let template = webhooks
        .values()
        .last()
        .cloned()
        .ok_or_else(|| GrowthError::Spec("`x-webhooks` is empty".into()))?;
    let mut event = template;
    if let Some(post) = event.get_mut("post").and_then(Value::as_mapping_mut) {
        post.insert("operationId".into(), "webhookGrowthProbe".into());
        post.insert("summary".into(), format!("Event {topic}").into());
    }
    webhooks.insert(topic.clone().into(), event);
    changes.push(format!("x-webhooks: event `{topic}`"));

    // 3. A list-and-get pair of a new resource.
    add_endpoint(&mut spec)?;
    changes.push(format!(
        "paths: `GET {GROWN_PATH}` ({GROWN_OPERATION}) answering a new schema `{GROWN_SCHEMA}`, \
         and `GET {GROWN_LIST_PATH}` ({GROWN_LIST_OPERATION}) answering pages of it"
    ));

    // 4. An optional field on every object a response (or a webhook event) carries, and on every
    //    object a request body carries.
    let responses = reachable(&spec, &response_roots(&spec));
    let requests = reachable(&spec, &request_roots(&spec));
    for (set, what) in [(&responses, "response"), (&requests, "request")] {
        let mut grown = Vec::new();
        for name in set {
            let schema = schema_mut(&mut spec, name)?;
            let added = add_optional_field(schema);
            if added > 0 {
                grown.push(name.clone());
            }
        }
        changes.push(format!(
            "optional `{GROWN_FIELD}` on every {what} object ({} schemas and their inline objects: {})",
            grown.len(),
            grown.join(", ")
        ));
    }

    let text = serde_norway::to_string(&spec).map_err(|e| GrowthError::Spec(e.to_string()))?;
    Ok((text, changes))
}

fn schema_mut<'a>(spec: &'a mut Value, name: &str) -> Result<&'a mut Value, GrowthError> {
    spec.get_mut("components")
        .and_then(|c| c.get_mut("schemas"))
        .and_then(|s| s.get_mut(name))
        .ok_or_else(|| GrowthError::Spec(format!("no schema `{name}`")))
}

/// Inserts `value` in the middle of the open enumeration's list (either spelling), with a description
/// line when the list has them; the position, or `None` when there is no list.
fn insert_enum_value(schema: &mut Value, value: &str) -> Option<usize> {
    let known: &mut Value = if schema.get("x-extensible-enum").is_some() {
        schema
    } else {
        schema
            .get_mut("anyOf")?
            .as_sequence_mut()?
            .iter_mut()
            .find(|member| member.get("enum").is_some())?
    };
    let key = if known.get("x-extensible-enum").is_some() {
        "x-extensible-enum"
    } else {
        "enum"
    };
    let list = known.get_mut(key)?.as_sequence_mut()?;
    let at = list.len() / 2;
    list.insert(at, Value::String(value.to_owned()));
    if let Some(descriptions) = known
        .get_mut("x-enumDescriptions")
        .and_then(Value::as_mapping_mut)
    {
        descriptions.insert(value.into(), "Added within the version.".into());
    }
    Some(at)
}

/// Adds a GET endpoint cloned from an existing single-resource read (its parameters, headers and error
/// responses), answering a new schema.
fn add_endpoint(spec: &mut Value) -> Result<(), GrowthError> {
    let paths = spec
        .get_mut("paths")
        .and_then(Value::as_mapping_mut)
        .ok_or_else(|| GrowthError::Spec("no `paths`".into()))?;
    let template = paths
        .iter()
        .find(|(path, item)| {
            path.as_str().is_some_and(|p| p.matches('{').count() == 2)
                && item.get("get").is_some()
                && item.get("post").is_none()
        })
        .map(|(_, item)| item.clone())
        .ok_or_else(|| {
            GrowthError::Spec("no single-resource GET to model an endpoint on".into())
        })?;
    let mut item = template;
    if let Some(parameters) = item.get_mut("parameters").and_then(Value::as_sequence_mut) {
        for parameter in parameters.iter_mut() {
            if parameter.get("in").and_then(Value::as_str) == Some("path")
                && parameter.get("$ref").is_none()
            {
                parameter["name"] = "growthProbeId".into();
                parameter["description"] = "Id of a growth probe.".into();
            }
        }
    }
    let get = item
        .get_mut("get")
        .ok_or_else(|| GrowthError::Spec("the template has no GET".into()))?;
    get["operationId"] = GROWN_OPERATION.into();
    get["summary"] = "Get one growth probe".into();
    get["description"] = "An endpoint added within the version.".into();
    let schema = get
        .get_mut("responses")
        .and_then(|r| r.get_mut("200"))
        .and_then(|r| r.get_mut("content"))
        .and_then(|c| c.get_mut("application/json"))
        .and_then(|c| c.get_mut("schema"))
        .ok_or_else(|| GrowthError::Spec("the template's 200 has no JSON schema".into()))?;
    *schema = serde_norway::from_str(&format!("$ref: \"#/components/schemas/{GROWN_SCHEMA}\""))
        .map_err(|e| GrowthError::Spec(e.to_string()))?;
    paths.insert(GROWN_PATH.into(), item);
    let schemas = spec
        .get_mut("components")
        .and_then(|c| c.get_mut("schemas"))
        .and_then(Value::as_mapping_mut)
        .ok_or_else(|| GrowthError::Spec("no `components.schemas`".into()))?;
    let schema: Value = serde_norway::from_str(
        "type: object\ndescription: A resource added within the version.\nrequired: [id]\nproperties:\n  id:\n    type: string\n",
    )
    .map_err(|e| GrowthError::Spec(e.to_string()))?;
    schemas.insert(GROWN_SCHEMA.into(), schema);
    let page: Value = serde_norway::from_str(&format!(
        "type: object\ndescription: A page of growth probes.\nproperties:\n  items:\n    type: array\n    items:\n      $ref: \"#/components/schemas/{GROWN_SCHEMA}\"\n  totalItems:\n    type: integer\n  totalPages:\n    type: integer\n  query:\n    $ref: \"#/components/schemas/ListQuery\"\n"
    ))
    .map_err(|e| GrowthError::Spec(e.to_string()))?;
    schemas.insert(GROWN_LIST_SCHEMA.into(), page);
    add_list_endpoint(spec)
}

/// Adds a list endpoint cloned from an existing list without filters (its page, size and sort
/// parameters, headers and error responses), answering pages of the new schema.
fn add_list_endpoint(spec: &mut Value) -> Result<(), GrowthError> {
    let paths = spec
        .get_mut("paths")
        .and_then(Value::as_mapping_mut)
        .ok_or_else(|| GrowthError::Spec("no `paths`".into()))?;
    let mut item = paths
        .iter()
        .find(|(_, item)| {
            item.get("get")
                .and_then(|get| get.get("parameters"))
                .and_then(Value::as_sequence)
                .is_some_and(|parameters| {
                    let named = |name: &str| {
                        parameters.iter().any(|p| {
                            p.get("name").and_then(Value::as_str) == Some(name)
                                || p.get("$ref").and_then(Value::as_str)
                                    == Some(&format!("#/components/parameters/{name}"))
                        })
                    };
                    named("Page")
                        && !parameters.iter().any(|p| {
                            p.get("name")
                                .and_then(Value::as_str)
                                .is_some_and(|n| n.starts_with("filter["))
                        })
                })
        })
        .map(|(_, item)| item.clone())
        .ok_or_else(|| GrowthError::Spec("no list without filters to model a list on".into()))?;
    if let Some(mapping) = item.as_mapping_mut() {
        mapping.retain(|key, _| key.as_str() != Some("post"));
    }
    let get = item
        .get_mut("get")
        .ok_or_else(|| GrowthError::Spec("the list template has no GET".into()))?;
    get["operationId"] = GROWN_LIST_OPERATION.into();
    get["summary"] = "List growth probes".into();
    get["description"] = "An endpoint added within the version.".into();
    let schema = get
        .get_mut("responses")
        .and_then(|r| r.get_mut("200"))
        .and_then(|r| r.get_mut("content"))
        .and_then(|c| c.get_mut("application/json"))
        .and_then(|c| c.get_mut("schema"))
        .ok_or_else(|| GrowthError::Spec("the list template's 200 has no JSON schema".into()))?;
    *schema = serde_norway::from_str(&format!(
        "$ref: \"#/components/schemas/{GROWN_LIST_SCHEMA}\""
    ))
    .map_err(|e| GrowthError::Spec(e.to_string()))?;
    paths.insert(GROWN_LIST_PATH.into(), item);
    Ok(())
}

/// Compiles [`OFFERED_PROBE`] in the grown copy: the new endpoints reach the raw and the ergonomic
/// layers from the spec and the generator alone.
fn check_offered(grown: &Path, target: &Path) -> Result<(), GrowthError> {
    let path = grown.join("crates/store-api/tests/growth_offered.rs");
    std::fs::write(&path, OFFERED_PROBE).map_err(|e| GrowthError::Io(path.clone(), e))?;
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(grown)
        .args([
            "check",
            "--quiet",
            "-p",
            "store-api",
            "--test",
            "growth_offered",
        ])
        .arg("--target-dir")
        .arg(target.join("offered"))
        .output()
        .map_err(|e| GrowthError::Tool(format!("cargo check: {e}")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(GrowthError::Spec(format!(
            "the grown copy does not offer the new list-and-get pair in both layers:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )))
    }
}

/// The component schemas named by `$ref` in the JSON bodies of every response (operations' own and
/// `components.responses`) and of every webhook event (what a receiver decodes).
fn response_roots(spec: &Value) -> Vec<&Value> {
    let mut roots = Vec::new();
    for item in mapping_values(spec.get("paths")) {
        for operation in mapping_values(Some(item)) {
            for response in mapping_values(operation.get("responses")) {
                roots.push(response);
            }
        }
    }
    roots.extend(mapping_values(
        spec.get("components").and_then(|c| c.get("responses")),
    ));
    for item in mapping_values(spec.get("x-webhooks")) {
        for operation in mapping_values(Some(item)) {
            roots.extend(operation.get("requestBody"));
        }
    }
    roots
}

/// The request bodies of every operation of `paths`.
fn request_roots(spec: &Value) -> Vec<&Value> {
    mapping_values(spec.get("paths"))
        .flat_map(|item| mapping_values(Some(item)))
        .filter_map(|operation| operation.get("requestBody"))
        .collect()
}

fn mapping_values(value: Option<&Value>) -> impl Iterator<Item = &Value> {
    value
        .and_then(Value::as_mapping)
        .into_iter()
        .flat_map(Mapping::values)
}

/// The component schemas `roots` name, directly or through other schemas.
fn reachable(spec: &Value, roots: &[&Value]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut pending: Vec<&Value> = roots.to_vec();
    while let Some(value) = pending.pop() {
        match value {
            Value::Mapping(map) => {
                for (key, child) in map {
                    if key.as_str() == Some("$ref")
                        && let Some(name) = child
                            .as_str()
                            .and_then(|r| r.strip_prefix("#/components/schemas/"))
                    {
                        if !found.iter().any(|f| f == name) {
                            found.push(name.to_owned());
                            if let Some(schema) = spec
                                .get("components")
                                .and_then(|c| c.get("schemas"))
                                .and_then(|s| s.get(name))
                            {
                                pending.push(schema);
                            }
                        }
                    } else {
                        pending.push(child);
                    }
                }
            }
            Value::Sequence(list) => pending.extend(list),
            _ => {}
        }
    }
    found.sort();
    found
}

/// Adds the optional property to `schema` and to every inline object schema inside it (nested
/// properties, items, `allOf`/`anyOf`/`oneOf` members); the number of objects grown.
fn add_optional_field(schema: &mut Value) -> usize {
    let mut added = 0;
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_mapping_mut) {
        for property in properties.values_mut() {
            added += add_optional_field(property);
        }
        if !properties.contains_key(GROWN_FIELD) {
            let field: Value = serde_norway::from_str(
                "type: string\ndescription: An optional field added within the version.\n",
            )
            .unwrap_or(Value::Null);
            properties.insert(GROWN_FIELD.into(), field);
            added += 1;
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = schema.get_mut(key) {
            added += add_optional_field(child);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(members) = schema.get_mut(key).and_then(Value::as_sequence_mut) {
            for member in members {
                added += add_optional_field(member);
            }
        }
    }
    added
}

/// The command that runs cargo-semver-checks: `$SEMVER_CHECKS` (the binary's path, as CI installs it
/// into a cached folder), else `cargo semver-checks` from `PATH`.
fn semver_checks() -> Command {
    match std::env::var_os("SEMVER_CHECKS") {
        Some(binary) => {
            let mut command = Command::new(binary);
            command.arg("semver-checks");
            command
        }
        None => {
            let mut command =
                Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
            command.arg("semver-checks");
            command
        }
    }
}

fn semver_check(
    grown: &Path,
    baseline: &Path,
    target: &Path,
    name: &str,
) -> Result<CrateReport, GrowthError> {
    let output = semver_checks()
        .arg("check-release")
        .arg("--manifest-path")
        .arg(grown.join("Cargo.toml"))
        .args(["-p", name])
        .arg("--baseline-root")
        .arg(baseline)
        // Growth must be at most a minor change: the versions are equal, so say which release it is.
        .args(["--release-type", "minor", "--color", "never"])
        .env("CARGO_TARGET_DIR", target)
        .current_dir(grown)
        .output()
        .map_err(|e| {
            GrowthError::Tool(format!(
                "could not start it ({e}); install it (`cargo install --locked cargo-semver-checks`) or set SEMVER_CHECKS to its path"
            ))
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    print!("{stdout}");
    eprint!("{stderr}");
    let report = parse_report(&format!("{stdout}\n{stderr}"));
    // A failing exit with no major item parsed is the tool failing (a build error, a bad flag), not a verdict.
    if !output.status.success() && report.major == 0 {
        return Err(GrowthError::Tool(format!(
            "check-release -p {name} failed without a semver verdict ({})",
            output.status
        )));
    }
    Ok(report)
}

/// Reads cargo-semver-checks' human output: each `--- failure LINT: … ---` or `--- warning LINT: … ---`
/// block is followed by a `Failed in:` list of items. The run says `--release-type minor`, so the tool
/// reports only what a minor release may not contain: every listed item is a major item (lints that
/// need only a minor version pass in a minor release).
pub fn parse_report(text: &str) -> CrateReport {
    let mut report = CrateReport::default();
    let mut lint: Option<String> = None;
    let mut in_items = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed
            .strip_prefix("--- failure ")
            .or_else(|| trimmed.strip_prefix("--- warning "))
        {
            lint = Some(rest.split(':').next().unwrap_or(rest).trim().to_owned());
            in_items = false;
        } else if trimmed.starts_with("Failed in:") {
            in_items = lint.is_some();
        } else if in_items {
            if trimmed.is_empty() || trimmed.starts_with("Summary") {
                in_items = false;
            } else if let Some(name) = &lint {
                report.major += 1;
                *report.lints.entry(name.clone()).or_default() += 1;
            }
        }
    }
    report
}

/// The workspace crates whose items `name` re-exports (`pub use store_api_raw::…` and the like in its
/// sources): cargo-semver-checks judges those items in their own crate only.
fn reexported_crates(root: &Path, name: &str) -> Result<Vec<String>, GrowthError> {
    let source = root.join("crates").join(name).join("src");
    let mut text = String::new();
    read_sources(&source, &mut text)?;
    Ok(CRATES
        .iter()
        .filter(|other| **other != name)
        .filter(|other| {
            let ident = other.replace('-', "_");
            text.lines().any(|line| {
                let line = line.trim_start();
                line.starts_with(&format!("pub use {ident}::"))
                    || line.starts_with(&format!("pub use ::{ident}::"))
            })
        })
        .map(|other| (*other).to_owned())
        .collect())
}

fn read_sources(dir: &Path, out: &mut String) -> Result<(), GrowthError> {
    let entries = std::fs::read_dir(dir).map_err(|e| GrowthError::Io(dir.to_path_buf(), e))?;
    for entry in entries {
        let path = entry
            .map_err(|e| GrowthError::Io(dir.to_path_buf(), e))?
            .path();
        if path.is_dir() {
            read_sources(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push_str(
                &std::fs::read_to_string(&path).map_err(|e| GrowthError::Io(path.clone(), e))?,
            );
            out.push('\n');
        }
    }
    Ok(())
}

/// The per-crate table, and whether any crate has a major item of its own or through its re-exports.
pub fn table(reports: &BTreeMap<String, CrateReport>) -> (String, bool) {
    let mut out = String::new();
    let mut failed = false;
    writeln!(
        out,
        "{:<20} {:>6} {:>12} {:>6}  lints",
        "crate", "major", "re-exported", "total"
    )
    .ok();
    for name in CRATES {
        let Some(report) = reports.get(*name) else {
            continue;
        };
        // Transitive: store-api-fixtures re-exports store-api, which re-exports store-api-raw.
        let inherited: usize = inherited(reports, name, &mut Vec::new());
        let total = report.major + inherited;
        failed |= total > 0;
        let lints: Vec<String> = report
            .lints
            .iter()
            .map(|(lint, n)| format!("{lint} ×{n}"))
            .collect();
        let via = if report.reexports.is_empty() {
            String::new()
        } else {
            format!(" (re-exports {})", report.reexports.join(", "))
        };
        writeln!(
            out,
            "{:<20} {:>6} {:>12} {:>6}  {}{via}",
            name,
            report.major,
            inherited,
            total,
            if lints.is_empty() {
                "-".to_owned()
            } else {
                lints.join(", ")
            }
        )
        .ok();
    }
    (out, failed)
}

fn inherited(reports: &BTreeMap<String, CrateReport>, name: &str, seen: &mut Vec<String>) -> usize {
    let Some(report) = reports.get(name) else {
        return 0;
    };
    let mut sum = 0;
    for other in &report.reexports {
        if seen.contains(other) {
            continue;
        }
        seen.push(other.clone());
        if let Some(o) = reports.get(other) {
            sum += o.major + inherited(reports, other, seen);
        }
    }
    sum
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn every_announced_change_is_applied_in_the_middle_of_lists() {
        let spec = std::fs::read_to_string(crate::workspace_root().join(SPEC_PATH)).unwrap();
        let (grown, changes) = grow(&spec).unwrap();
        let text = changes.join("\n");
        for name in OPEN_ENUMS {
            assert!(text.contains(&format!("{name}: value")), "{text}");
        }
        assert!(text.contains("x-webhooks: event"), "{text}");
        assert!(text.contains(GROWN_OPERATION), "{text}");
        assert!(text.contains("every response object"), "{text}");
        assert!(text.contains("every request object"), "{text}");
        // No value lands at either end of a list.
        assert!(!changes.iter().any(|c| c.contains("position 0")), "{text}");
        // The grown spec still generates.
        crate::codegen::generate(&grown).unwrap();
    }

    #[test]
    fn the_report_counts_major_items_per_lint() {
        let text = "\
--- failure constructible_struct_adds_field: externally-constructible struct adds field ---

Description:
A pub struct constructible with a struct literal has a new pub field. Existing struct literals must be updated to include the new field.
        ref: https://doc.rust-lang.org/reference/expressions/struct-expr.html
       impl: https://github.com/obi1kenobi/cargo-semver-checks/tree/v0.51.0/src/lints/constructible_struct_adds_field.ron

Failed in:
  field Order.growth_probe in /tmp/x/generated.rs:800
  field Product.growth_probe in /tmp/x/generated.rs:900

     Summary semver requires new major version: 1 major and 0 minor checks failed
";
        let report = parse_report(text);
        assert_eq!(report.major, 2);
        assert_eq!(
            report.lints.get("constructible_struct_adds_field"),
            Some(&2)
        );
    }
}
