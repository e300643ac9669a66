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
//!   start with `server/` and the indented lines under them: `a → b, c` reads "a imports b and c").

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// The packages whose `lib.rs` and every `mod.rs` must only declare modules and re-export.
pub const THIN_PACKAGES: &[&str] = &["store-api-fixtures"];

/// The document checked, relative to the workspace root.
pub const DOCUMENT: &str = "docs/ARCHITECTURE.md";

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
    if drift.is_empty() {
        Ok(format!(
            "{DOCUMENT}: {thin} thin lib.rs/mod.rs files, the dependency table of {} packages, the {} imports of the emulator's server/: as the code",
            packages.len(),
            server.len()
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
        packages.push(Package {
            name: name.to_owned(),
            dir: Path::new(manifest)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            workspace_deps,
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
}
