//! `cargo xtask public-api [--check]`: the reviewed listing of every published library crate's public API.
//!
//! One text file per crate (`docs/public-api/<crate>.txt`), one line per public item reachable from the
//! crate's root, by path, with its kind and signature: every field, variant, method, trait impl (auto traits
//! included) and re-export. A change of surface therefore shows in the diff of a pull request, where a
//! reviewer sees it; `--check` (CI) fails when the committed listing is not what the code gives.
//!
//! The listing is read from rustdoc's JSON output (unstable, so `RUSTC_BOOTSTRAP=1`) with every feature of
//! the crate on, the surface cargo-semver-checks judges too. Items of another crate that the crate re-exports
//! are listed under the re-exporting path when rustdoc inlines them (it does for re-exports from other
//! crates), so `store-api`'s listing holds the `store-api-raw` types it hands its users.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use rustdoc_types::{
    Crate, GenericArg, GenericArgs, GenericBound, GenericParamDef, GenericParamDefKind, Generics,
    Id, Item, ItemEnum, StructKind, Term, TraitBoundModifier, Type, VariantKind, Visibility,
    WherePredicate,
};

/// Where the listings live, relative to the workspace root.
pub const OUTPUT_DIR: &str = "docs/public-api";

/// What `run` does with the listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Write the listings.
    Write,
    /// Compare with the committed listings and fail on any difference.
    Check,
}

/// Why the listing could not be made or is stale.
#[derive(Debug, thiserror::Error)]
pub enum PublicApiError {
    /// A command (cargo metadata, cargo rustdoc) could not run or failed.
    #[error("`{command}` failed: {detail}")]
    Command {
        /// The command line.
        command: String,
        /// What went wrong (its stderr, or the spawn error).
        detail: String,
    },
    /// A file could not be read or written.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// A JSON document did not parse.
    #[error("{0}: {1}")]
    Json(PathBuf, serde_json::Error),
    /// rustdoc writes another JSON format than the `rustdoc-types` this tool is built with.
    #[error(
        "{path}: rustdoc JSON format version {found}, this tool reads {expected}: set xtask's `rustdoc-types` \
         dependency to the release whose FORMAT_VERSION is {found} (its major version number)"
    )]
    FormatVersion {
        /// The JSON file.
        path: PathBuf,
        /// The format version in the file.
        found: u32,
        /// The format version `rustdoc-types` reads.
        expected: u32,
    },
    /// Public functions that take more than [`MAX_POSITIONAL`] arguments besides `self`.
    #[error(
        "public functions with more than {MAX_POSITIONAL} positional arguments (name them in a struct or a builder):\n{0}"
    )]
    ArgumentWall(String),
    /// The committed listings differ from the code.
    #[error(
        "the public API listing is stale:\n{0}\nrun `cargo xtask public-api` and commit {OUTPUT_DIR}/ (review the diff: it is the change of public API)"
    )]
    Stale(String),
}

/// A published library crate of the workspace.
#[derive(Debug, Clone)]
pub struct PublishedCrate {
    /// The package name (`store-api-raw`).
    pub package: String,
    /// The library target's name (`store_api_raw`), which names rustdoc's JSON file.
    pub lib: String,
}

/// The workspace's published crates that have a library target (a binary-only crate has no Rust API),
/// sorted by package name. `publish = false` crates (xtask, the tests) are left out.
pub fn published_libraries(root: &Path) -> Result<(Vec<PublishedCrate>, PathBuf), PublicApiError> {
    let output = run_command(Command::new(cargo()).current_dir(root).args([
        "metadata",
        "--no-deps",
        "--format-version",
        "1",
    ]))?;
    let metadata: serde_json::Value = serde_json::from_slice(&output)
        .map_err(|e| PublicApiError::Json(PathBuf::from("cargo metadata"), e))?;
    let target_dir = PathBuf::from(metadata["target_directory"].as_str().unwrap_or("target"));
    let mut crates = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        // `publish = false` is an empty list of registries.
        if package["publish"].as_array().is_some_and(Vec::is_empty) {
            continue;
        }
        let lib = package["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|target| {
                target["kind"]
                    .as_array()
                    .is_some_and(|kinds| kinds.iter().any(|k| k == "lib"))
            });
        if let (Some(package), Some(lib)) = (package["name"].as_str(), lib) {
            crates.push(PublishedCrate {
                package: package.to_owned(),
                lib: lib["name"].as_str().unwrap_or(package).replace('-', "_"),
            });
        }
    }
    crates.sort_by(|a, b| a.package.cmp(&b.package));
    Ok((crates, target_dir))
}

/// Builds rustdoc JSON of every published library crate and writes (or checks) its listing.
pub fn run(root: &Path, mode: Mode) -> Result<String, PublicApiError> {
    let (crates, target_dir) = published_libraries(root)?;
    // Every crate first: a listing follows re-exports into the other crates of the workspace.
    let mut docs = HashMap::new();
    for krate in &crates {
        docs.insert(krate.lib.clone(), rustdoc_json(root, &target_dir, krate)?);
    }
    let mut summary = Vec::new();
    let mut stale = Vec::new();
    let mut walls = Vec::new();
    for krate in &crates {
        let Some(json) = docs.get(&krate.lib) else {
            continue;
        };
        let listing = render_crate(json, &krate.package, &docs);
        let path = root.join(OUTPUT_DIR).join(format!("{}.txt", krate.package));
        let items = listing.lines().filter(|l| !l.starts_with("# ")).count();
        walls.extend(argument_walls(&listing));
        match mode {
            Mode::Write => {
                std::fs::create_dir_all(root.join(OUTPUT_DIR))
                    .map_err(|e| PublicApiError::Io(root.join(OUTPUT_DIR), e))?;
                std::fs::write(&path, &listing).map_err(|e| PublicApiError::Io(path.clone(), e))?;
            }
            Mode::Check => {
                let committed = std::fs::read_to_string(&path).unwrap_or_default();
                if committed != listing {
                    stale.push(describe_difference(&path, &committed, &listing));
                }
            }
        }
        summary.push(format!("{}: {items} items", krate.package));
    }
    if !walls.is_empty() {
        return Err(PublicApiError::ArgumentWall(walls.join("\n")));
    }
    if !stale.is_empty() {
        return Err(PublicApiError::Stale(stale.join("\n")));
    }
    let verb = match mode {
        Mode::Write => "wrote",
        Mode::Check => "up to date:",
    };
    Ok(format!("{verb} {OUTPUT_DIR}/ ({})", summary.join(", ")))
}

/// The most positional arguments a public function takes besides `self` (issue 36: a call a person
/// reads never carries a wall of positional values).
pub const MAX_POSITIONAL: usize = 3;

/// The listing's functions that take more than [`MAX_POSITIONAL`] arguments besides `self`.
pub fn argument_walls(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter(|line| {
            let Some(at) = line.find("fn ") else {
                return false;
            };
            let rest = &line[at..];
            let Some(open) = rest.find('(') else {
                return false;
            };
            // The arguments: up to the parenthesis that closes the first one.
            let mut depth = 0usize;
            let mut arguments = Vec::new();
            let mut current = String::new();
            for ch in rest[open + 1..].chars() {
                match ch {
                    '(' | '<' | '[' => depth += 1,
                    ')' if depth == 0 => break,
                    ')' | '>' | ']' => depth = depth.saturating_sub(1),
                    ',' if depth == 0 => {
                        arguments.push(std::mem::take(&mut current));
                        continue;
                    }
                    _ => {}
                }
                current.push(ch);
            }
            arguments.push(current);
            let positional = arguments
                .iter()
                .map(|argument| argument.trim())
                .filter(|argument| !argument.is_empty())
                .filter(|argument| {
                    let plain = argument.trim_start_matches('&').trim_start();
                    let plain = plain.strip_prefix("mut ").unwrap_or(plain);
                    let plain = plain
                        .split_once(' ')
                        .filter(|(lifetime, _)| lifetime.starts_with('\''))
                        .map_or(plain, |(_, rest)| rest);
                    let plain = plain.strip_prefix("mut ").unwrap_or(plain);
                    !(plain == "self" || plain.starts_with("self:"))
                })
                .count();
            positional > MAX_POSITIONAL
        })
        .map(|line| format!("  {line}"))
        .collect()
}

/// A few lines that say what differs, for the CI log.
fn describe_difference(path: &Path, committed: &str, generated: &str) -> String {
    let old: HashSet<&str> = committed.lines().collect();
    let new: HashSet<&str> = generated.lines().collect();
    let mut lines = vec![format!("  {}:", path.display())];
    let removed: BTreeSet<&str> = old.difference(&new).copied().collect();
    let added: BTreeSet<&str> = new.difference(&old).copied().collect();
    for (sign, set) in [("-", &removed), ("+", &added)] {
        for line in set.iter().take(10) {
            lines.push(format!("    {sign} {line}"));
        }
        if set.len() > 10 {
            lines.push(format!("    {sign} … and {} more", set.len() - 10));
        }
    }
    lines.join("\n")
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn run_command(command: &mut Command) -> Result<Vec<u8>, PublicApiError> {
    let line = format!("{command:?}");
    let output = command.output().map_err(|e| PublicApiError::Command {
        command: line.clone(),
        detail: e.to_string(),
    })?;
    if !output.status.success() {
        return Err(PublicApiError::Command {
            command: line,
            detail: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(output.stdout)
}

/// Builds and parses the rustdoc JSON of one crate, every feature on.
fn rustdoc_json(
    root: &Path,
    target_dir: &Path,
    krate: &PublishedCrate,
) -> Result<Crate, PublicApiError> {
    run_command(
        Command::new(cargo())
            .current_dir(root)
            // rustdoc's JSON output is unstable; the toolchain is the stable one CI uses.
            .env("RUSTC_BOOTSTRAP", "1")
            .args([
                "rustdoc",
                "--quiet",
                "--lib",
                "--all-features",
                "-p",
                &krate.package,
            ])
            .args(["--", "-Z", "unstable-options", "--output-format", "json"]),
    )?;
    let path = target_dir.join("doc").join(format!("{}.json", krate.lib));
    let text = std::fs::read_to_string(&path).map_err(|e| PublicApiError::Io(path.clone(), e))?;
    // The version first, so that a newer format says what to do instead of failing to parse.
    #[derive(serde::Deserialize)]
    struct Version {
        format_version: u32,
    }
    let version: Version =
        serde_json::from_str(&text).map_err(|e| PublicApiError::Json(path.clone(), e))?;
    if version.format_version != rustdoc_types::FORMAT_VERSION {
        return Err(PublicApiError::FormatVersion {
            path,
            found: version.format_version,
            expected: rustdoc_types::FORMAT_VERSION,
        });
    }
    serde_json::from_str(&text).map_err(|e| PublicApiError::Json(path, e))
}

/// The listing of one crate: a header, then one sorted line per public item. `workspace` holds the rustdoc
/// JSON of the other crates by library name: an item re-exported from one of them is listed in full under
/// the re-exporting path, since that is where this crate's users reach it.
pub fn render_crate(krate: &Crate, package: &str, workspace: &HashMap<String, Crate>) -> String {
    let mut lister = Lister {
        krate,
        workspace,
        lines: BTreeSet::new(),
        visited: HashSet::new(),
    };
    if let Some(root) = krate.index.get(&krate.root) {
        let name = root
            .name
            .clone()
            .unwrap_or_else(|| package.replace('-', "_"));
        lister.item(root, &name, 0);
    }
    let mut text = format!(
        "# The public API of {package} (every feature on), one line per item.\n\
         # Generated by `cargo xtask public-api` from rustdoc JSON; do not edit. CI fails when it is stale.\n"
    );
    for line in &lister.lines {
        text.push_str(line);
        text.push('\n');
    }
    text
}

struct Lister<'a> {
    /// The crate whose JSON the item being listed comes from.
    krate: &'a Crate,
    workspace: &'a HashMap<String, Crate>,
    lines: BTreeSet<String>,
    /// (item, path) pairs already listed: glob re-exports can form cycles.
    visited: HashSet<(Id, String)>,
}

impl<'a> Lister<'a> {
    fn item(&mut self, item: &Item, path: &str, depth: usize) {
        // Re-export chains and cycles end here; no real path is this deep.
        if depth > 32 || !self.visited.insert((item.id, path.to_owned())) {
            return;
        }
        let deprecated = if item.deprecation.is_some() {
            " #[deprecated]"
        } else {
            ""
        };
        let non_exhaustive = if item
            .attrs
            .iter()
            .any(|a| matches!(a, rustdoc_types::Attribute::NonExhaustive))
        {
            "#[non_exhaustive] "
        } else {
            ""
        };
        match &item.inner {
            ItemEnum::Module(module) => {
                self.push(format!("pub mod {path}{deprecated}"));
                for id in &module.items {
                    self.child(id, path, depth);
                }
            }
            ItemEnum::Use(use_) => self.reexport(use_, path, depth),
            ItemEnum::Struct(strukt) => {
                let generics = self.generics(&strukt.generics);
                let shape = match &strukt.kind {
                    StructKind::Unit => ";".to_owned(),
                    StructKind::Tuple(fields) => self.tuple_shape(fields, "pub "),
                    StructKind::Plain {
                        fields,
                        has_stripped_fields,
                    } => self.named_shape(fields, *has_stripped_fields, path),
                };
                let where_ = self.where_clause(&strukt.generics);
                self.push(format!(
                    "{non_exhaustive}pub struct {path}{generics}{where_}{shape}{deprecated}"
                ));
                self.impls(&strukt.impls, path);
            }
            ItemEnum::Union(union) => {
                let generics = self.generics(&union.generics);
                for id in &union.fields {
                    self.field(id, path);
                }
                self.push(format!("pub union {path}{generics}{deprecated}"));
                self.impls(&union.impls, path);
            }
            ItemEnum::Enum(enum_) => {
                let generics = self.generics(&enum_.generics);
                let where_ = self.where_clause(&enum_.generics);
                self.push(format!(
                    "{non_exhaustive}pub enum {path}{generics}{where_}{deprecated}"
                ));
                // The variants' order is part of the API: derived `PartialOrd`/`Ord` compare by it.
                for (position, id) in enum_.variants.iter().enumerate() {
                    if let Some(variant) = self.krate.index.get(id) {
                        self.variant(variant, path, position);
                    }
                }
                self.impls(&enum_.impls, path);
            }
            ItemEnum::Function(function) => {
                let signature = self.function(&path_name(path), function);
                self.push(format!(
                    "pub {}{deprecated}",
                    signature.replacen(
                        &format!("fn {}", path_name(path)),
                        &format!("fn {path}"),
                        1
                    )
                ));
            }
            ItemEnum::Trait(trait_) => {
                let generics = self.generics(&trait_.generics);
                let bounds = if trait_.bounds.is_empty() {
                    String::new()
                } else {
                    format!(": {}", self.bounds(&trait_.bounds))
                };
                let unsafe_ = if trait_.is_unsafe { "unsafe " } else { "" };
                let where_ = self.where_clause(&trait_.generics);
                self.push(format!(
                    "pub {unsafe_}trait {path}{generics}{bounds}{where_}{deprecated}"
                ));
                for id in &trait_.items {
                    if let Some(member) = self.krate.index.get(id) {
                        self.member(member, path, "");
                    }
                }
            }
            ItemEnum::TraitAlias(_) => self.push(format!("pub trait {path} = …{deprecated}")),
            ItemEnum::TypeAlias(alias) => {
                let generics = self.generics(&alias.generics);
                self.push(format!(
                    "pub type {path}{generics} = {}{deprecated}",
                    self.ty(&alias.type_)
                ));
            }
            ItemEnum::Constant { type_, .. } => {
                self.push(format!("pub const {path}: {}{deprecated}", self.ty(type_)));
            }
            ItemEnum::Static(static_) => {
                let mut_ = if static_.is_mutable { "mut " } else { "" };
                self.push(format!(
                    "pub static {mut_}{path}: {}{deprecated}",
                    self.ty(&static_.type_)
                ));
            }
            ItemEnum::Macro(_) => self.push(format!("pub macro {path}!{deprecated}")),
            ItemEnum::ProcMacro(_) => self.push(format!("pub proc-macro {path}{deprecated}")),
            ItemEnum::ExternType => self.push(format!("pub extern type {path}")),
            ItemEnum::ExternCrate { .. }
            | ItemEnum::StructField(_)
            | ItemEnum::Variant(_)
            | ItemEnum::Impl(_)
            | ItemEnum::Primitive(_)
            | ItemEnum::AssocConst { .. }
            | ItemEnum::AssocType { .. } => {}
        }
    }

    fn push(&mut self, line: String) {
        self.lines.insert(line);
    }

    fn child(&mut self, id: &Id, parent: &str, depth: usize) {
        let Some(child) = self.krate.index.get(id) else {
            return;
        };
        match &child.inner {
            ItemEnum::Use(_) => self.item(child, parent, depth + 1),
            _ => {
                if let Some(name) = &child.name {
                    self.item(child, &format!("{parent}::{name}"), depth + 1);
                }
            }
        }
    }

    /// `pub use`: the target listed under the re-exporting path when rustdoc has it, else the use itself.
    fn reexport(&mut self, use_: &rustdoc_types::Use, parent: &str, depth: usize) {
        let target = use_.id.as_ref().and_then(|id| self.krate.index.get(id));
        if use_.is_glob {
            match target.map(|t| &t.inner) {
                Some(ItemEnum::Module(module)) => {
                    for id in &module.items {
                        self.child(id, parent, depth);
                    }
                }
                Some(ItemEnum::Enum(enum_)) => {
                    for id in &enum_.variants {
                        if let Some(variant) = self.krate.index.get(id) {
                            self.push(format!(
                                "pub use {parent}::{} = {}::{}",
                                variant.name.as_deref().unwrap_or("_"),
                                use_.source,
                                variant.name.as_deref().unwrap_or("_")
                            ));
                        }
                    }
                }
                _ => self.push(format!("pub use {parent}::* = {}::*", use_.source)),
            }
            return;
        }
        let path = format!("{parent}::{}", use_.name);
        if let Some(target) = target {
            self.item(target, &path, depth + 1);
        } else if let Some((other, target)) = use_.id.as_ref().and_then(|id| self.in_workspace(id))
        {
            let this = self.krate;
            self.krate = other;
            self.item(target, &path, depth + 1);
            self.krate = this;
        } else {
            self.push(format!("pub use {path} = {}", use_.source));
        }
    }

    /// The item of another workspace crate that `id` (an external path of the current crate) names.
    fn in_workspace(&self, id: &Id) -> Option<(&'a Crate, &'a Item)> {
        let summary = self.krate.paths.get(id)?;
        let crate_name = &self.krate.external_crates.get(&summary.crate_id)?.name;
        let other = self.workspace.get(crate_name)?;
        let (id, _) = other
            .paths
            .iter()
            .find(|(_, s)| s.crate_id == 0 && s.path == summary.path && s.kind == summary.kind)?;
        Some((other, other.index.get(id)?))
    }

    fn field(&mut self, id: &Id, parent: &str) {
        if let Some(Item {
            name: Some(name),
            inner: ItemEnum::StructField(ty),
            ..
        }) = self.krate.index.get(id)
        {
            let ty = self.ty(ty);
            self.push(format!("pub {parent}::{name}: {ty}"));
        }
    }

    /// The fields of a tuple struct or variant, `(pub u32, _)`: `_` for a hidden one; `visibility` is
    /// `"pub "` for a struct's fields (a variant's have none to write).
    fn tuple_shape(&self, fields: &[Option<Id>], visibility: &str) -> String {
        let fields: Vec<String> = fields
            .iter()
            .map(
                |f| match f.as_ref().and_then(|id| self.krate.index.get(id)) {
                    Some(Item {
                        inner: ItemEnum::StructField(ty),
                        ..
                    }) => format!("{visibility}{}", self.ty(ty)),
                    _ => "_".to_owned(),
                },
            )
            .collect();
        format!("({})", fields.join(", "))
    }

    /// A struct's or variant's named fields: each pushed as a line of its own under `path`, and the shape,
    /// ` { .. }` or ` { private fields }`.
    fn named_shape(&mut self, fields: &[Id], has_stripped_fields: bool, path: &str) -> String {
        for id in fields {
            self.field(id, path);
        }
        if has_stripped_fields {
            " { private fields }"
        } else {
            " { .. }"
        }
        .to_owned()
    }

    fn variant(&mut self, variant: &Item, parent: &str, position: usize) {
        let ItemEnum::Variant(inner) = &variant.inner else {
            return;
        };
        let name = variant.name.as_deref().unwrap_or("_");
        let path = format!("{parent}::{name}");
        let shape = match &inner.kind {
            VariantKind::Plain => String::new(),
            VariantKind::Tuple(fields) => self.tuple_shape(fields, ""),
            VariantKind::Struct {
                fields,
                has_stripped_fields,
            } => self.named_shape(fields, *has_stripped_fields, &path),
        };
        let discriminant = inner
            .discriminant
            .as_ref()
            .map(|d| format!(" = {}", d.value))
            .unwrap_or_default();
        self.push(format!(
            "pub variant {path}{shape}{discriminant} (#{position})"
        ));
    }

    /// Inherent methods and constants (public ones) and the trait impls of a type (derived and auto traits
    /// included: removing one breaks dependents); blanket impls (`From<T> for T`, …) are left out.
    fn impls(&mut self, impls: &[Id], path: &str) {
        for id in impls {
            let Some(Item {
                inner: ItemEnum::Impl(impl_),
                ..
            }) = self.krate.index.get(id)
            else {
                continue;
            };
            if impl_.blanket_impl.is_some() {
                continue;
            }
            match &impl_.trait_ {
                Some(trait_) => {
                    let generics = self.generics(&impl_.generics);
                    let not = if impl_.is_negative { "!" } else { "" };
                    let unsafe_ = if impl_.is_unsafe { "unsafe " } else { "" };
                    let where_ = self.where_clause(&impl_.generics);
                    self.push(format!(
                        "{unsafe_}impl{generics} {not}{} for {}{where_}",
                        self.path(trait_),
                        self.ty(&impl_.for_)
                    ));
                }
                None => {
                    let where_ = self.where_clause(&impl_.generics);
                    for member in &impl_.items {
                        if let Some(member) = self.krate.index.get(member)
                            && member.visibility == Visibility::Public
                        {
                            self.member(member, path, &where_);
                        }
                    }
                }
            }
        }
    }

    /// A method, associated constant or associated type of a type or trait.
    fn member(&mut self, member: &Item, parent: &str, impl_where: &str) {
        let Some(name) = &member.name else { return };
        let path = format!("{parent}::{name}");
        let line = match &member.inner {
            ItemEnum::Function(function) => {
                let signature = self.function(name, function);
                let provided = if function.has_body { "" } else { " (required)" };
                format!(
                    "pub {}{impl_where}{provided}",
                    signature.replacen(&format!("fn {name}"), &format!("fn {path}"), 1)
                )
            }
            ItemEnum::AssocConst { type_, .. } => format!("pub const {path}: {}", self.ty(type_)),
            ItemEnum::AssocType { bounds, type_, .. } => {
                let bounds = if bounds.is_empty() {
                    String::new()
                } else {
                    format!(": {}", self.bounds(bounds))
                };
                let default = type_
                    .as_ref()
                    .map(|t| format!(" = {}", self.ty(t)))
                    .unwrap_or_default();
                format!("pub type {path}{bounds}{default}")
            }
            _ => return,
        };
        let deprecated = if member.deprecation.is_some() {
            " #[deprecated]"
        } else {
            ""
        };
        self.push(format!("{line}{deprecated}"));
    }

    fn function(&self, name: &str, function: &rustdoc_types::Function) -> String {
        let header = &function.header;
        let mut qualifiers = String::new();
        if header.is_const {
            qualifiers.push_str("const ");
        }
        if header.is_async {
            qualifiers.push_str("async ");
        }
        if header.is_unsafe {
            qualifiers.push_str("unsafe ");
        }
        let inputs: Vec<String> = function
            .sig
            .inputs
            .iter()
            .map(|(arg, ty)| match (arg.as_str(), ty) {
                ("self", Type::Generic(s)) if s == "Self" => "self".to_owned(),
                (
                    "self",
                    Type::BorrowedRef {
                        is_mutable,
                        type_,
                        lifetime,
                    },
                ) if matches!(type_.as_ref(), Type::Generic(s) if s == "Self") => {
                    let lifetime = lifetime
                        .as_ref()
                        .map(|l| format!("{l} "))
                        .unwrap_or_default();
                    format!("&{lifetime}{}self", if *is_mutable { "mut " } else { "" })
                }
                _ => format!("{arg}: {}", self.ty(ty)),
            })
            .collect();
        let output = function
            .sig
            .output
            .as_ref()
            .map(|t| format!(" -> {}", self.ty(t)))
            .unwrap_or_default();
        format!(
            "{qualifiers}fn {name}{}({}){output}{}",
            self.generics(&function.generics),
            inputs.join(", "),
            self.where_clause(&function.generics)
        )
    }

    /// `<T: Bound, 'a>`; `impl Trait` arguments are shown in place, not here.
    fn generics(&self, generics: &Generics) -> String {
        let params: Vec<String> = generics
            .params
            .iter()
            .filter(|p| {
                !matches!(
                    p.kind,
                    GenericParamDefKind::Type {
                        is_synthetic: true,
                        ..
                    }
                )
            })
            .map(|p| self.param(p))
            .collect();
        if params.is_empty() {
            String::new()
        } else {
            format!("<{}>", params.join(", "))
        }
    }

    fn param(&self, param: &GenericParamDef) -> String {
        match &param.kind {
            GenericParamDefKind::Lifetime { outlives } if outlives.is_empty() => param.name.clone(),
            GenericParamDefKind::Lifetime { outlives } => {
                format!("{}: {}", param.name, outlives.join(" + "))
            }
            GenericParamDefKind::Type {
                bounds, default, ..
            } => {
                let mut text = param.name.clone();
                if !bounds.is_empty() {
                    text.push_str(&format!(": {}", self.bounds(bounds)));
                }
                if let Some(default) = default {
                    text.push_str(&format!(" = {}", self.ty(default)));
                }
                text
            }
            GenericParamDefKind::Const { type_, default } => {
                let default = default
                    .as_ref()
                    .map(|d| format!(" = {d}"))
                    .unwrap_or_default();
                format!("const {}: {}{default}", param.name, self.ty(type_))
            }
        }
    }

    fn where_clause(&self, generics: &Generics) -> String {
        let predicates: Vec<String> = generics
            .where_predicates
            .iter()
            .map(|p| match p {
                WherePredicate::BoundPredicate { type_, bounds, .. } => {
                    format!("{}: {}", self.ty(type_), self.bounds(bounds))
                }
                WherePredicate::LifetimePredicate { lifetime, outlives } => {
                    format!("{lifetime}: {}", outlives.join(" + "))
                }
                WherePredicate::EqPredicate { lhs, rhs } => {
                    format!("{} == {}", self.ty(lhs), self.term(rhs))
                }
            })
            .collect();
        if predicates.is_empty() {
            String::new()
        } else {
            format!(" where {}", predicates.join(", "))
        }
    }

    fn bounds(&self, bounds: &[GenericBound]) -> String {
        bounds
            .iter()
            .map(|b| match b {
                GenericBound::TraitBound {
                    trait_, modifier, ..
                } => {
                    let modifier = match modifier {
                        TraitBoundModifier::None => "",
                        TraitBoundModifier::Maybe => "?",
                        TraitBoundModifier::MaybeConst => "~const ",
                    };
                    format!("{modifier}{}", self.path(trait_))
                }
                GenericBound::Outlives(lifetime) => lifetime.clone(),
                GenericBound::Use(args) => {
                    let args: Vec<String> = args
                        .iter()
                        .map(|a| match a {
                            rustdoc_types::PreciseCapturingArg::Lifetime(l) => l.clone(),
                            rustdoc_types::PreciseCapturingArg::Param(p) => p.clone(),
                        })
                        .collect();
                    format!("use<{}>", args.join(", "))
                }
            })
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// A path by its full name where rustdoc knows it (`core::option::Option`), so the listing does not
    /// depend on how the source spelled it.
    fn path(&self, path: &rustdoc_types::Path) -> String {
        let name = self
            .krate
            .paths
            .get(&path.id)
            .map(|summary| summary.path.join("::"))
            .unwrap_or_else(|| path.path.clone());
        format!(
            "{name}{}",
            path.args
                .as_deref()
                .map(|a| self.args(a))
                .unwrap_or_default()
        )
    }

    fn args(&self, args: &GenericArgs) -> String {
        match args {
            GenericArgs::AngleBracketed { args, constraints } => {
                let mut parts: Vec<String> = args
                    .iter()
                    .map(|a| match a {
                        GenericArg::Lifetime(l) => l.clone(),
                        GenericArg::Type(t) => self.ty(t),
                        GenericArg::Const(c) => c.expr.clone(),
                        GenericArg::Infer => "_".to_owned(),
                    })
                    .collect();
                for constraint in constraints {
                    let args = constraint
                        .args
                        .as_deref()
                        .map(|a| self.args(a))
                        .unwrap_or_default();
                    parts.push(match &constraint.binding {
                        rustdoc_types::AssocItemConstraintKind::Equality(term) => {
                            format!("{}{args} = {}", constraint.name, self.term(term))
                        }
                        rustdoc_types::AssocItemConstraintKind::Constraint(bounds) => {
                            format!("{}{args}: {}", constraint.name, self.bounds(bounds))
                        }
                    });
                }
                if parts.is_empty() {
                    String::new()
                } else {
                    format!("<{}>", parts.join(", "))
                }
            }
            GenericArgs::Parenthesized { inputs, output } => {
                let inputs: Vec<String> = inputs.iter().map(|t| self.ty(t)).collect();
                let output = output
                    .as_ref()
                    .map(|t| format!(" -> {}", self.ty(t)))
                    .unwrap_or_default();
                format!("({}){output}", inputs.join(", "))
            }
            GenericArgs::ReturnTypeNotation => "(..)".to_owned(),
        }
    }

    fn term(&self, term: &Term) -> String {
        match term {
            Term::Type(t) => self.ty(t),
            Term::Constant(c) => c.expr.clone(),
        }
    }

    fn ty(&self, ty: &Type) -> String {
        match ty {
            Type::ResolvedPath(path) => self.path(path),
            Type::DynTrait(dyn_) => {
                let mut parts: Vec<String> =
                    dyn_.traits.iter().map(|t| self.path(&t.trait_)).collect();
                if let Some(lifetime) = &dyn_.lifetime {
                    parts.push(lifetime.clone());
                }
                format!("dyn {}", parts.join(" + "))
            }
            Type::Generic(name) | Type::Primitive(name) => name.clone(),
            Type::FunctionPointer(pointer) => {
                let inputs: Vec<String> =
                    pointer.sig.inputs.iter().map(|(_, t)| self.ty(t)).collect();
                let output = pointer
                    .sig
                    .output
                    .as_ref()
                    .map(|t| format!(" -> {}", self.ty(t)))
                    .unwrap_or_default();
                format!("fn({}){output}", inputs.join(", "))
            }
            Type::Tuple(types) => {
                let types: Vec<String> = types.iter().map(|t| self.ty(t)).collect();
                format!("({})", types.join(", "))
            }
            Type::Slice(inner) => format!("[{}]", self.ty(inner)),
            Type::Array { type_, len } => format!("[{}; {len}]", self.ty(type_)),
            Type::Pat { type_, .. } => self.ty(type_),
            Type::ImplTrait(bounds) => format!("impl {}", self.bounds(bounds)),
            Type::Infer => "_".to_owned(),
            Type::RawPointer { is_mutable, type_ } => {
                format!(
                    "*{} {}",
                    if *is_mutable { "mut" } else { "const" },
                    self.ty(type_)
                )
            }
            Type::BorrowedRef {
                lifetime,
                is_mutable,
                type_,
            } => {
                let lifetime = lifetime
                    .as_ref()
                    .map(|l| format!("{l} "))
                    .unwrap_or_default();
                format!(
                    "&{lifetime}{}{}",
                    if *is_mutable { "mut " } else { "" },
                    self.ty(type_)
                )
            }
            Type::QualifiedPath {
                name,
                args,
                self_type,
                trait_,
            } => {
                let args = args.as_deref().map(|a| self.args(a)).unwrap_or_default();
                match trait_ {
                    Some(trait_) => format!(
                        "<{} as {}>::{name}{args}",
                        self.ty(self_type),
                        self.path(trait_)
                    ),
                    None => format!("{}::{name}{args}", self.ty(self_type)),
                }
            }
        }
    }
}

/// The last segment of a path.
fn path_name(path: &str) -> String {
    path.rsplit("::").next().unwrap_or(path).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_of_four_positional_arguments_is_a_wall_and_self_does_not_count() {
        let listing = "\
pub fn a::f(x: u32, y: u32, z: u32) -> u32
pub fn a::T::m(&self, x: u32, y: u32, z: core::option::Option<(u32, u32)>) -> u32
pub fn a::T::n(&'a mut self, x: u32, y: alloc::vec::Vec<u32, A>, z: u32)
pub fn a::g(x: u32, y: u32, z: u32, w: u32) -> u32
pub struct a::T";
        assert_eq!(
            argument_walls(listing),
            ["  pub fn a::g(x: u32, y: u32, z: u32, w: u32) -> u32"]
        );
    }
}
