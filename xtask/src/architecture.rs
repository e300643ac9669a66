//! The claims of `docs/ARCHITECTURE.md` a program can check (run by `cargo xtask imports`, and by
//! `xtask/tests/architecture.rs`):
//!
//! - every `lib.rs` and `mod.rs` of the crates in [`THIN_PACKAGES`] (the emulator) is thin: it holds
//!   only module declarations (`mod x;`, `pub mod x;`, never an inline body), `use` and `pub use`
//!   lines, docs and attributes;
//! - the table of each crate's normal dependencies among the workspace's crates (the one headed
//!   `| crate | its normal dependencies among the workspace's crates |`) names exactly what
//!   `cargo metadata` says, optional dependencies included, for every package of the workspace;
//! - the emulator's code map names exactly the imports between the files of `server/` (its lines that
//!   start with `server/` and the indented lines under them: `a → b, c` reads "a imports b and c");
//! - no package of the workspace has a build script: generation happens in `cargo xtask codegen` alone;
//! - a dependency one package owns ([`OWNED_DEPENDENCIES`]: the code generators are `xtask`'s, `redis`
//!   is `store-api-redis`'s) is a dependency of no other package, whatever its kind;
//! - outside the generated files and the tests, no string literal of a published crate but the emulator
//!   ([`ROUTE_SERVER`]) is a path naming a resource of the spec (`/orders`, `/catalog-products/…`):
//!   routes come from the generated request builders and the generated contract.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// The packages whose `lib.rs` and every `mod.rs` must only declare modules and re-export.
pub const THIN_PACKAGES: &[&str] = &["store-api-fixtures"];

/// The document checked, relative to the workspace root.
pub const DOCUMENT: &str = "docs/ARCHITECTURE.md";

/// A dependency only one package may have, of any kind: `(dependency, owner, whether packages that are
/// not published may have it too)`. The code generators are `xtask`'s (users of the raw crate never
/// build them); `redis` is `store-api-redis`'s (the other crates keep the traits and the in-process
/// defaults; the workspace's tests hold the real scripts to their model).
pub const OWNED_DEPENDENCIES: &[(&str, &str, bool)] = &[
    ("progenitor", "xtask", false),
    ("openapiv3", "xtask", false),
    ("redis", "store-api-redis", true),
];

/// The published package whose sources may write the spec's paths: the emulator, which serves them
/// (from the generated operations table) and has a control plane of its own beside them.
pub const ROUTE_SERVER: &str = "store-api-fixtures";

/// The header of the dependency table.
const TABLE_HEADER: &str = "| crate | its normal dependencies among the workspace's crates |";

/// Why a claim of the document does not hold, or could not be checked.
#[derive(Debug)]
pub enum ArchitectureError {
    /// A file could not be read.
    Io(PathBuf, std::io::Error),
    /// `cargo metadata` failed or did not say what it should.
    Metadata(String),
    /// The import graph could not be read.
    Imports(String),
    /// Claims that do not hold, one line each.
    Drift(Vec<String>),
}

impl fmt::Display for ArchitectureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(path, e) => write!(f, "{}: {e}", path.display()),
            Self::Metadata(e) => write!(f, "cargo metadata: {e}"),
            Self::Imports(e) => write!(f, "{e}"),
            Self::Drift(lines) => {
                writeln!(f, "{DOCUMENT} and the code disagree:")?;
                for line in lines {
                    writeln!(f, "  {line}")?;
                }
                write!(
                    f,
                    "fix the code or the text so that they agree again (see {DOCUMENT})"
                )
            }
        }
    }
}

impl std::error::Error for ArchitectureError {}

/// Checks the workspace at `root`: a summary, or every claim that does not hold.
pub fn check(root: &Path) -> Result<String, ArchitectureError> {
    let packages = workspace_packages(root)?;
    let mut drift = Vec::new();
    let mut thin = 0;
    for package in packages
        .iter()
        .filter(|p| THIN_PACKAGES.contains(&p.name.as_str()))
    {
        let src = package.dir.join("src");
        for file in thin_files(&src)? {
            let source = std::fs::read_to_string(&file)
                .map_err(|e| ArchitectureError::Io(file.clone(), e))?;
            let shown = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .display()
                .to_string();
            drift.extend(
                not_thin(&source)
                    .into_iter()
                    .map(|what| format!("{shown} is not thin: {what}")),
            );
            thin += 1;
        }
    }
    let path = root.join(DOCUMENT);
    let document =
        std::fs::read_to_string(&path).map_err(|e| ArchitectureError::Io(path.clone(), e))?;
    drift.extend(dependency_drift(&document, &packages));
    let server = server_imports(root)?;
    drift.extend(code_map_drift(&document, &server));
    drift.extend(build_script_drift(&packages));
    drift.extend(owned_dependency_drift(&packages));
    let spec_path = root.join(crate::generator::SPEC_PATH);
    let spec = std::fs::read_to_string(&spec_path)
        .map_err(|e| ArchitectureError::Io(spec_path.clone(), e))?;
    let segments = resource_segments(&spec).map_err(ArchitectureError::Imports)?;
    let (scanned, routes) = route_drift(root, &packages, &segments)?;
    drift.extend(routes);
    if drift.is_empty() {
        Ok(format!(
            "{DOCUMENT}: {thin} thin lib.rs/mod.rs files, the dependency table of {} packages, the {} imports of the emulator's server/, no build script, {} owned dependencies, no path of the spec's {} resources written by hand in {scanned} files: as the code",
            packages.len(),
            server.len(),
            OWNED_DEPENDENCIES.len(),
            segments.len()
        ))
    } else {
        Err(ArchitectureError::Drift(drift))
    }
}

/// A package of the workspace and its normal dependencies among the workspace's packages.
#[derive(Debug, Clone)]
pub struct Package {
    /// Its name.
    pub name: String,
    /// Its folder.
    pub dir: PathBuf,
    /// Its normal dependencies (optional ones included) that are packages of the workspace.
    pub workspace_deps: BTreeSet<String>,
    /// Every dependency it declares, of any kind (normal, build, dev), by name.
    pub dependencies: BTreeSet<String>,
    /// Whether it may be published (no `publish = false`).
    pub published: bool,
    /// Whether it has a build script (`build.rs`).
    pub build_script: bool,
}

/// Every package of the workspace at `root`, from `cargo metadata`.
pub fn workspace_packages(root: &Path) -> Result<Vec<Package>, ArchitectureError> {
    let metadata = crate::imports::cargo_metadata(root).map_err(ArchitectureError::Metadata)?;
    let raw = metadata["packages"].as_array().cloned().unwrap_or_default();
    let names: BTreeSet<String> = raw
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    let mut packages = Vec::new();
    for package in &raw {
        let (Some(name), Some(manifest)) =
            (package["name"].as_str(), package["manifest_path"].as_str())
        else {
            return Err(ArchitectureError::Metadata(
                "a package without name or manifest_path".into(),
            ));
        };
        let workspace_deps = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            // `kind` is null for a normal dependency ("dev", "build" otherwise).
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|d| names.contains(*d))
            .map(str::to_owned)
            .collect();
        let dependencies = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["name"].as_str())
            .map(str::to_owned)
            .collect();
        let build_script = package["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["kind"].as_array())
            .flatten()
            .any(|kind| kind.as_str() == Some("custom-build"));
        packages.push(Package {
            name: name.to_owned(),
            dir: Path::new(manifest)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            workspace_deps,
            dependencies,
            // `publish` is null when the package may go to any registry, `[]` for `publish = false`.
            published: !package["publish"]
                .as_array()
                .is_some_and(|registries| registries.is_empty()),
            build_script,
        });
    }
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(packages)
}

/// The folder of the emulator whose imports the code map lists file by file.
const SERVER_DIR: &str = "crates/store-api-fixtures/src/server";

/// The imports between two files of the emulator's `server/` folder, by module name (`mod` for
/// `mod.rs`), read as `cargo xtask imports` reads them (the emulator's strict rule: a `mod.rs`
/// re-exporting a child imports it).
pub fn server_imports(root: &Path) -> Result<BTreeSet<(String, String)>, ArchitectureError> {
    let crates = crate::imports::workspace_crates(root)
        .map_err(|e| ArchitectureError::Imports(e.to_string()))?;
    let Some(lib) = crates
        .iter()
        .find(|c| c.package == "store-api-fixtures" && c.file.ends_with("src/lib.rs"))
    else {
        return Err(ArchitectureError::Metadata(
            "no library target of store-api-fixtures".into(),
        ));
    };
    let graph =
        crate::imports::Graph::read(root, lib, crate::imports::Rule::for_package(&lib.package))
            .map_err(|e| ArchitectureError::Imports(e.to_string()))?;
    let module = |file: &Path| -> Option<String> {
        let rest = file.strip_prefix(SERVER_DIR).ok()?;
        let name = rest.to_str()?.strip_suffix(".rs")?;
        (!name.contains('/')).then(|| name.to_owned())
    };
    Ok(graph
        .imports()
        .iter()
        .filter_map(|i| Some((module(&i.from)?, module(&i.to)?)))
        .filter(|(from, to)| from != to)
        .collect())
}

/// The imports the code map names in its `server/` lines.
fn code_map_server(document: &str) -> BTreeSet<(String, String)> {
    let mut edges = BTreeSet::new();
    let mut in_server = false;
    for line in document.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("server/") {
            in_server = true;
            add_chains(rest, &mut edges);
        } else if in_server && line.starts_with("    ") && trimmed.contains('→') {
            add_chains(trimmed, &mut edges);
        } else {
            in_server = false;
        }
    }
    edges
}

/// `a → b, c;  d → e` as edges a→b, a→c, d→e (each name of a part imports each name of the next);
/// words after a run of spaces that hold no arrow (the layer's label) are not modules.
fn add_chains(line: &str, edges: &mut BTreeSet<(String, String)>) {
    for segment in line.split(';') {
        let parts: Vec<Vec<String>> = segment
            .split('→')
            .map(|part| {
                part.split(',')
                    .filter_map(|name| name.split_whitespace().next().map(str::to_owned))
                    .collect()
            })
            .collect();
        for pair in parts.windows(2) {
            for from in &pair[0] {
                for to in &pair[1] {
                    edges.insert((from.clone(), to.clone()));
                }
            }
        }
    }
}

/// Where the code map's `server/` lines and the imports between `server/`'s files disagree.
pub fn code_map_drift(document: &str, imports: &BTreeSet<(String, String)>) -> Vec<String> {
    let documented = code_map_server(document);
    let mut drift = Vec::new();
    for (from, to) in imports.difference(&documented) {
        drift.push(format!(
            "server/{from} imports server/{to}, which the code map does not show"
        ));
    }
    for (from, to) in documented.difference(imports) {
        drift.push(format!(
            "the code map shows server/{from} → {to}, which is not an import"
        ));
    }
    drift
}

/// The packages with a build script, one line each.
pub fn build_script_drift(packages: &[Package]) -> Vec<String> {
    packages
        .iter()
        .filter(|p| p.build_script)
        .map(|p| {
            format!(
                "`{}` has a build script: code is generated by `cargo xtask codegen` alone, and checked in",
                p.name
            )
        })
        .collect()
}

/// The packages that depend on a dependency another package owns ([`OWNED_DEPENDENCIES`]), one line
/// each.
pub fn owned_dependency_drift(packages: &[Package]) -> Vec<String> {
    let mut drift = Vec::new();
    for &(dependency, owner, unpublished_too) in OWNED_DEPENDENCIES {
        for package in packages.iter().filter(|p| {
            p.name != owner
                && (p.published || !unpublished_too)
                && p.dependencies.contains(dependency)
        }) {
            let who = if unpublished_too {
                format!("of the published crates, only `{owner}`")
            } else {
                format!("only `{owner}`")
            };
            drift.push(format!(
                "`{}` depends on `{dependency}`: {who} may",
                package.name
            ));
        }
    }
    drift
}

/// The literal segments of the spec's paths after the store's part (`orders`, `catalog-products`,
/// `status`, …): every segment after a path's first parameter that is not a parameter itself.
pub fn resource_segments(spec: &str) -> Result<BTreeSet<String>, String> {
    let value: serde_norway::Value = serde_norway::from_str(spec)
        .map_err(|e| format!("{}: {e}", crate::generator::SPEC_PATH))?;
    let paths = value
        .get("paths")
        .and_then(serde_norway::Value::as_mapping)
        .ok_or_else(|| format!("{}: no `paths`", crate::generator::SPEC_PATH))?;
    let mut segments = BTreeSet::new();
    for path in paths.keys().filter_map(serde_norway::Value::as_str) {
        segments.extend(
            path.split('/')
                .skip_while(|s| !s.starts_with('{'))
                .filter(|s| !s.is_empty() && !s.starts_with('{'))
                .map(str::to_owned),
        );
    }
    Ok(segments)
}

/// Whether `text` (a string literal's value) is a path naming a resource of the spec: `/segment`
/// followed by its end, `/`, `?` or `#`. Text with whitespace is prose (`GET /status answers`), not
/// a path.
pub fn names_a_resource(text: &str, segments: &BTreeSet<String>) -> bool {
    if text.chars().any(char::is_whitespace) {
        return false;
    }
    segments.iter().any(|segment| {
        let needle = format!("/{segment}");
        text.match_indices(&needle).any(|(at, _)| {
            text[at + needle.len()..]
                .chars()
                .next()
                .is_none_or(|c| matches!(c, '/' | '?' | '#'))
        })
    })
}

/// What [`literals`] finds in a file.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Literals {
    /// The string literals outside tests and attributes, with their lines.
    pub strings: Vec<(usize, String)>,
    /// The modules declared test-only without a body (`#[cfg(test)] mod tests;`): their files are
    /// tests too.
    pub test_modules: Vec<String>,
}

/// The string literals of `source` (in code and in macros' arguments) outside its tests (an item
/// under `#[cfg(test)]`, `#[test]` or `#[tokio::test]`) and outside attributes (doc comments
/// included).
pub fn literals(source: &str) -> Result<Literals, String> {
    let tokens: TokenStream = source
        .parse()
        .map_err(|e: proc_macro2::LexError| e.to_string())?;
    let mut found = Literals::default();
    scan_literals(tokens, &mut found);
    Ok(found)
}

fn scan_literals(tokens: TokenStream, found: &mut Literals) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    let mut test_item = false;
    while i < tokens.len() {
        // An attribute, `#[…]` or `#![…]`: skipped, and remembered when it makes the item a test.
        if let TokenTree::Punct(hash) = &tokens[i]
            && hash.as_char() == '#'
        {
            let inner =
                matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!');
            let at = i + 1 + usize::from(inner);
            if let Some(TokenTree::Group(group)) = tokens.get(at)
                && group.delimiter() == Delimiter::Bracket
            {
                test_item |= !inner && is_test_attribute(&group.stream());
                i = at + 1;
                continue;
            }
        }
        if test_item {
            // The test item, up to its `;` or its `{…}` body.
            let start = i;
            while let Some(token) = tokens.get(i) {
                i += 1;
                match token {
                    TokenTree::Punct(p) if p.as_char() == ';' => break,
                    TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => break,
                    _ => {}
                }
            }
            if let [
                ..,
                TokenTree::Ident(keyword),
                TokenTree::Ident(name),
                TokenTree::Punct(end),
            ] = &tokens[start..i]
                && keyword == "mod"
                && end.as_char() == ';'
            {
                found.test_modules.push(name.to_string());
            }
            test_item = false;
            continue;
        }
        match &tokens[i] {
            TokenTree::Literal(literal) => {
                if let syn::Lit::Str(text) = syn::Lit::new(literal.clone()) {
                    found
                        .strings
                        .push((literal.span().start().line, text.value()));
                }
            }
            TokenTree::Group(group) => scan_literals(group.stream(), found),
            _ => {}
        }
        i += 1;
    }
}

/// `test`, `cfg(test)`, `cfg(all(test, …))`, `tokio::test(…)`.
fn is_test_attribute(tokens: &TokenStream) -> bool {
    let text: String = tokens
        .to_string()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    text == "test"
        || text == "cfg(test)"
        || text.starts_with("cfg(all(test,")
        || text.starts_with("tokio::test")
}

/// The paths naming a resource of the spec written in the sources (`src/`, outside tests and the
/// generated files) of every published package but [`ROUTE_SERVER`]: how many files were read, and
/// one line per such literal.
fn route_drift(
    root: &Path,
    packages: &[Package],
    segments: &BTreeSet<String>,
) -> Result<(usize, Vec<String>), ArchitectureError> {
    let mut scanned = 0;
    let mut drift = Vec::new();
    for package in packages
        .iter()
        .filter(|p| p.published && p.name != ROUTE_SERVER)
    {
        let mut files = Vec::new();
        rust_files(&package.dir.join("src"), &mut files)?;
        let mut read = BTreeMap::new();
        let mut tests = BTreeSet::new();
        for file in files {
            let source = std::fs::read_to_string(&file)
                .map_err(|e| ArchitectureError::Io(file.clone(), e))?;
            if source.starts_with("// @generated") {
                continue;
            }
            let shown = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .display()
                .to_string();
            let found = literals(&source)
                .map_err(|e| ArchitectureError::Imports(format!("{shown}: {e}")))?;
            let children = module_dir(&file);
            tests.extend(found.test_modules.iter().map(|m| children.join(m)));
            read.insert(file, (shown, found.strings));
        }
        for (file, (shown, strings)) in read {
            let mut module = file.with_extension("");
            if module.ends_with("mod") {
                module.pop();
            }
            if tests.iter().any(|test| module.starts_with(test)) {
                continue;
            }
            scanned += 1;
            for (line, text) in strings
                .iter()
                .filter(|(_, text)| names_a_resource(text, segments))
            {
                drift.push(format!(
                    "{shown}:{line} writes the path {text:?} by hand: build it with `store_api_raw::requests`, or read the route from `store_api_raw::contract`"
                ));
            }
        }
    }
    Ok((scanned, drift))
}

/// The folder of the files of `file`'s child modules (`a/` for `a.rs`, the file's own folder for
/// `lib.rs`, `main.rs` and `mod.rs`).
fn module_dir(file: &Path) -> PathBuf {
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("lib" | "main" | "mod") | None => dir,
        Some(stem) => dir.join(stem),
    }
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ArchitectureError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| ArchitectureError::Io(dir.to_path_buf(), e))?;
    let mut paths = Vec::new();
    for entry in entries {
        paths.push(
            entry
                .map_err(|e| ArchitectureError::Io(dir.to_path_buf(), e))?
                .path(),
        );
    }
    paths.sort();
    for path in paths {
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// `src/lib.rs` and every `mod.rs` under `src`.
fn thin_files(src: &Path) -> Result<Vec<PathBuf>, ArchitectureError> {
    let mut files = vec![src.join("lib.rs")];
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| ArchitectureError::Io(dir.clone(), e))?;
        for entry in entries {
            let path = entry
                .map_err(|e| ArchitectureError::Io(dir.clone(), e))?
                .path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "mod.rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// What keeps `source` from being thin (declarations, `use` lines, docs and attributes only): one
/// entry per offending item, with its line; empty when it is thin.
pub fn not_thin(source: &str) -> Vec<String> {
    let file = match syn::parse_file(source) {
        Ok(file) => file,
        Err(e) => return vec![format!("does not parse: {e}")],
    };
    let mut found = Vec::new();
    for item in &file.items {
        let line = syn::spanned::Spanned::span(item).start().line;
        let what = match item {
            syn::Item::Use(_) => continue,
            syn::Item::Mod(m) if m.content.is_none() => continue,
            syn::Item::Mod(m) => format!("an inline module `{}`", m.ident),
            syn::Item::Fn(f) => format!("a function `{}`", f.sig.ident),
            syn::Item::Const(c) => format!("a const `{}`", c.ident),
            syn::Item::Static(s) => format!("a static `{}`", s.ident),
            syn::Item::Struct(s) => format!("a struct `{}`", s.ident),
            syn::Item::Enum(e) => format!("an enum `{}`", e.ident),
            syn::Item::Trait(t) => format!("a trait `{}`", t.ident),
            syn::Item::Type(t) => format!("a type alias `{}`", t.ident),
            syn::Item::Impl(_) => "an impl block".to_owned(),
            syn::Item::Macro(_) => "a macro invocation".to_owned(),
            _ => "an item that is neither a declaration nor a `use`".to_owned(),
        };
        found.push(format!("line {line}: {what}"));
    }
    found
}

/// Where the document's dependency table and the packages disagree, one line each.
pub fn dependency_drift(document: &str, packages: &[Package]) -> Vec<String> {
    let names: BTreeSet<&str> = packages.iter().map(|p| p.name.as_str()).collect();
    let Some(table) = dependency_table(document, &names) else {
        return vec![format!("no table headed `{TABLE_HEADER}`")];
    };
    let mut drift = Vec::new();
    for package in packages {
        let Some(documented) = table.get(&package.name) else {
            drift.push(format!(
                "the dependency table has no row for `{}`",
                package.name
            ));
            continue;
        };
        let missing: Vec<&String> = package.workspace_deps.difference(documented).collect();
        let extra: Vec<&String> = documented.difference(&package.workspace_deps).collect();
        if !missing.is_empty() {
            drift.push(format!(
                "`{}` depends on {missing:?}, which its row does not name",
                package.name
            ));
        }
        if !extra.is_empty() {
            drift.push(format!(
                "`{}`'s row names {extra:?}, which are not its normal dependencies",
                package.name
            ));
        }
    }
    for name in table.keys().filter(|n| !names.contains(n.as_str())) {
        drift.push(format!(
            "the dependency table has a row for `{name}`, not a package"
        ));
    }
    drift
}

/// The table's rows: the package (the first backquoted word of the first cell) and the packages its
/// second cell names in backquotes (other backquoted words, such as feature names, are not packages).
fn dependency_table(
    document: &str,
    names: &BTreeSet<&str>,
) -> Option<BTreeMap<String, BTreeSet<String>>> {
    let mut lines = document.lines().skip_while(|l| l.trim() != TABLE_HEADER);
    lines.next()?;
    let mut table = BTreeMap::new();
    for line in lines.skip(1) {
        let line = line.trim();
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').collect();
        let (Some(first), Some(second)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Some(package) = backquoted(first).into_iter().next() else {
            continue;
        };
        let deps = backquoted(second)
            .into_iter()
            .filter(|w| names.contains(w.as_str()))
            .collect();
        table.insert(package, deps);
    }
    Some(table)
}

fn backquoted(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_uses_docs_and_attributes_are_thin() {
        let source = "//! Docs.\n#![allow(dead_code)]\nmod a;\n#[cfg(test)]\npub mod b;\npub(crate) mod c;\n\
                      use a::X;\npub use b::{Y, Z as W};\npub(crate) use c::*;\n";
        assert_eq!(not_thin(source), Vec::<String>::new());
    }

    #[test]
    fn code_in_a_mod_rs_is_named_with_its_line() {
        let source = "mod a;\npub const P: &str = \"x\";\nfn f() {}\n#[cfg(test)]\nmod tests { fn t() {} }\n";
        assert_eq!(
            not_thin(source),
            [
                "line 2: a const `P`",
                "line 3: a function `f`",
                "line 4: an inline module `tests`",
            ]
        );
    }

    #[test]
    fn the_code_map_must_name_every_import_of_server() {
        let document = "```\n state   a → b\n server/    mod → router → gate, auth;  gate → faults      HTTP\n            faults → access\n control → x\n```\n";
        let edge = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        let imports: BTreeSet<_> = [
            edge("mod", "router"),
            edge("router", "gate"),
            edge("router", "auth"),
            edge("gate", "faults"),
            edge("faults", "connection"),
        ]
        .into();
        assert_eq!(
            code_map_drift(document, &imports),
            [
                "server/faults imports server/connection, which the code map does not show",
                "the code map shows server/faults → access, which is not an import",
            ]
        );
    }

    fn package(name: &str, deps: &[&str]) -> Package {
        Package {
            name: name.into(),
            dir: PathBuf::new(),
            workspace_deps: deps.iter().map(|d| (*d).to_owned()).collect(),
            dependencies: deps.iter().map(|d| (*d).to_owned()).collect(),
            published: true,
            build_script: false,
        }
    }

    #[test]
    fn the_dependency_table_must_name_exactly_each_packages_dependencies() {
        let document = format!(
            "# A\n\n{TABLE_HEADER}\n|---|---|\n| `a` | none |\n| `b` | `a` (feature `x`) |\n| `c` | `a` |\n\nText.\n"
        );
        let packages = [
            package("a", &[]),
            package("b", &["a"]),
            package("c", &["a", "b"]),
            package("d", &[]),
        ];
        assert_eq!(
            dependency_drift(&document, &packages),
            [
                "`c` depends on [\"b\"], which its row does not name",
                "the dependency table has no row for `d`",
            ]
        );
        assert_eq!(
            dependency_drift(&document, &packages[..2]),
            ["the dependency table has a row for `c`, not a package"]
        );
    }

    #[test]
    fn a_build_script_anywhere_is_named() {
        let mut with = package("b", &[]);
        with.build_script = true;
        assert_eq!(
            build_script_drift(&[package("a", &[]), with]),
            [
                "`b` has a build script: code is generated by `cargo xtask codegen` alone, and checked in"
            ]
        );
    }

    #[test]
    fn an_owned_dependency_is_its_owners_alone() {
        let mut tests = package("tests", &["progenitor-client", "redis"]);
        tests.published = false;
        let mut bench = package("bench", &["progenitor"]);
        bench.published = false;
        let packages = [
            package("xtask", &["progenitor", "openapiv3"]),
            package("raw", &["serde", "openapiv3"]),
            package("store-api-redis", &["redis"]),
            package("store-api", &["redis"]),
            tests,
            bench,
        ];
        assert_eq!(
            owned_dependency_drift(&packages),
            [
                "`bench` depends on `progenitor`: only `xtask` may",
                "`raw` depends on `openapiv3`: only `xtask` may",
                "`store-api` depends on `redis`: of the published crates, only `store-api-redis` may",
            ]
        );
    }

    #[test]
    fn the_resources_are_the_segments_after_the_store() {
        let spec = "paths:\n  /stores/{storeId}/status:\n    get: {}\n  /stores/{storeId}/catalog-products/{id}:\n    get: {}\n  /stores/{storeId}/orders/{orderId}/line-items:\n    get: {}\n";
        let segments = resource_segments(spec).unwrap();
        assert_eq!(
            segments.iter().map(String::as_str).collect::<Vec<_>>(),
            ["catalog-products", "line-items", "orders", "status"]
        );
        for path in [
            "/orders",
            "{base}/orders/{id}",
            "/store-api/2026-08/stores/s/status",
            "/orders?limit=5",
        ] {
            assert!(names_a_resource(path, &segments), "{path}");
        }
        for text in [
            "GET /status answers 200",
            "/stores/",
            "/orders-archive",
            "orders",
            "/products",
        ] {
            assert!(!names_a_resource(text, &segments), "{text}");
        }
    }

    #[test]
    fn literals_of_tests_and_attributes_are_not_read() {
        let source = r#"//! Docs with "/orders".
/// `/orders` in a doc comment.
#[doc = "/orders"]
pub fn path(base: &str) -> String {
    format!("{base}/orders")
}
#[cfg(test)]
mod tests;
#[cfg(test)]
mod inline {
    const P: &str = "/orders";
}
#[test]
fn t() { let _ = "/status"; }
#[tokio::test(flavor = "current_thread")]
async fn u() { let _ = "/status"; }
#[cfg(not(test))]
const Q: &str = "/artworks";
"#;
        let found = literals(source).unwrap();
        assert_eq!(
            found.strings,
            [
                (5, "{base}/orders".to_owned()),
                (18, "/artworks".to_owned())
            ]
        );
        assert_eq!(found.test_modules, ["tests"]);
    }
}
