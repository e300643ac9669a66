//! The file-level import graph of every crate of the workspace, and its cycles (`cargo xtask imports`).
//!
//! A file imports another when it names a module of that file in a path: a `use` line of any kind
//! (`use`, `pub use`, `pub(crate) use`, groups such as `use crate::{a, b::c}`, `self` inside a group,
//! globs) or a path anywhere else, macro arguments included (`crate::foo::bar()`, `super::x`,
//! `child::f()`). A path is followed from `crate`, `self`, `super` or a child module's name down the
//! module tree as far as its segments name modules; the file of the last module reached is the one
//! imported, so `crate::Item` (an item of the crate root, or re-exported there) imports `lib.rs`.
//! Declaring a module (`mod x;`) is not an import. Under [`Rule::Strict`] (the emulator's) a parent's
//! re-exports of its children are imports, so a child importing from a parent that re-exports it is a
//! cycle; under [`Rule::Contained`] (every other crate's) a module's paths into its own descendants do
//! not count. Paths into other crates are not followed. Each target (library, binary, test, bench, example) is
//! one crate, read from its root file the way rustc finds its modules (`#[path]` included).
//!
//! The same check holds the packages to the same rule one level up: no dependency cycle between the
//! workspace's packages ([`dependency_cycles`]), counting every dependency a manifest declares: normal,
//! build and dev-dependencies, optional ones included (a feature turns them on, and the workspace's
//! build unifies features). A package's dev-dependency on itself that turns on features (its tests'
//! feature toggle, as `store-api-redis`'s `testing`) is allowed; any other dependency on itself is a cycle.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// Why the graph could not be built, or the cycles it has.
#[derive(Debug)]
pub enum ImportsError {
    /// A file could not be read.
    Io(PathBuf, std::io::Error),
    /// A file is not valid Rust tokens.
    Lex(PathBuf, String),
    /// `cargo metadata` failed or did not say what it should.
    Metadata(String),
    /// Import cycles between files, and dependency cycles between packages.
    Cycles {
        /// Between the files of one crate.
        files: Vec<Cycle>,
        /// Between the packages of the workspace.
        packages: Vec<DependencyCycle>,
    },
}

impl fmt::Display for ImportsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(path, e) => write!(f, "{}: {e}", path.display()),
            Self::Lex(path, e) => write!(f, "{}: {e}", path.display()),
            Self::Metadata(e) => write!(f, "cargo metadata: {e}"),
            Self::Cycles { files, packages } => {
                if !files.is_empty() {
                    writeln!(f, "{} file-level import cycle(s):", files.len())?;
                    for cycle in files {
                        write!(f, "{cycle}")?;
                    }
                    write!(
                        f,
                        "each file may import only files that do not import it back, directly or through others: move what both need into a module below them"
                    )?;
                }
                if !files.is_empty() && !packages.is_empty() {
                    writeln!(f)?;
                }
                if !packages.is_empty() {
                    writeln!(
                        f,
                        "{} dependency cycle(s) between the workspace's packages (normal, build and dev-dependencies, optional ones included):",
                        packages.len()
                    )?;
                    for cycle in packages {
                        write!(f, "{cycle}")?;
                    }
                    write!(f, "{DEPENDENCY_RULE}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ImportsError {}

/// One import: the file, the line and the path that names the other file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The importing file, relative to the workspace root.
    pub from: PathBuf,
    /// The imported file, relative to the workspace root.
    pub to: PathBuf,
    /// The line of the path in `from`.
    pub line: usize,
    /// The path as written (`crate::server::faults::canonical_operation`).
    pub path: String,
}

/// A cycle of imports inside one crate, each import naming the next file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// The crate (package and target).
    pub krate: String,
    /// The imports, the last one leading back to the first file.
    pub imports: Vec<Import>,
}

impl Cycle {
    /// The files of the cycle, the first repeated at the end: `a.rs → b.rs → a.rs`.
    pub fn files(&self) -> Vec<&Path> {
        let mut files: Vec<&Path> = self.imports.iter().map(|i| i.from.as_path()).collect();
        if let Some(first) = self.imports.first() {
            files.push(&first.from);
        }
        files
    }
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files: Vec<String> = self
            .files()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        writeln!(f, "  {}: {}", self.krate, files.join(" → "))?;
        for import in &self.imports {
            writeln!(
                f,
                "    {}:{} {} (→ {})",
                import.from.display(),
                import.line,
                import.path,
                import.to.display()
            )?;
        }
        Ok(())
    }
}

/// One crate to read: a name for messages and its root file.
#[derive(Debug, Clone)]
pub struct CrateRoot {
    /// The package.
    pub package: String,
    /// `package (kind name)`.
    pub name: String,
    /// The root file (`src/lib.rs`, `tests/it/main.rs`).
    pub file: PathBuf,
}

/// Checks every crate of the workspace at `root`, and the dependencies between its packages: a
/// summary, or every cycle.
pub fn check(root: &Path) -> Result<String, ImportsError> {
    let crates = workspace_crates(root)?;
    let mut cycles = Vec::new();
    let mut files = 0;
    for krate in &crates {
        let graph = Graph::read(root, krate, Rule::for_package(&krate.package))?;
        files += graph.files.len();
        cycles.extend(graph.cycles());
    }
    let metadata = cargo_metadata(root).map_err(ImportsError::Metadata)?;
    let dependencies = workspace_dependencies(&metadata)?;
    let package_cycles = dependency_cycles(&dependencies);
    if cycles.is_empty() && package_cycles.is_empty() {
        let packages = metadata["packages"].as_array().map_or(0, Vec::len);
        let toggles: Vec<&str> = dependencies
            .iter()
            .filter(|d| d.is_feature_toggle())
            .map(|d| d.from.as_str())
            .collect();
        Ok(format!(
            "no file-level import cycle in {} crates ({files} files); no dependency cycle between {packages} packages ({} dependencies among them, dev and optional ones included; allowed as feature toggles: the dev-dependency on itself of {})",
            crates.len(),
            dependencies.len() - toggles.len(),
            if toggles.is_empty() {
                "none".to_owned()
            } else {
                toggles.join(", ")
            }
        ))
    } else {
        Err(ImportsError::Cycles {
            files: cycles,
            packages: package_cycles,
        })
    }
}

/// What a dependency cycle breaks, and how to mend it (the end of the error's text).
pub const DEPENDENCY_RULE: &str = "a package may depend only on packages that do not depend on it, directly or through others, not even as a dev-dependency or an optional one: move the tests, benches or examples that need both into a package above them (the workspace's `tests/` or `examples/`). A package's dev-dependency on itself that turns on features (a feature toggle for its own tests and benches) is allowed; any other dependency of a package on itself is a cycle";

/// A dependency of a package of the workspace on a package of the workspace, as its manifest declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// The package that declares it.
    pub from: String,
    /// The package depended on.
    pub to: String,
    /// `normal`, `dev` or `build`.
    pub kind: String,
    /// Whether a feature of `from` turns it on.
    pub optional: bool,
    /// The features of `to` it turns on.
    pub features: Vec<String>,
}

impl Dependency {
    /// A dev-dependency of a package on itself that turns features on: how a package's own tests and
    /// benches get a feature (`store-api-redis`'s `testing`). It names no other package, so no cycle
    /// runs through it; the check allows it.
    pub fn is_feature_toggle(&self) -> bool {
        self.from == self.to && self.kind == "dev" && !self.features.is_empty()
    }
}

impl fmt::Display for Dependency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} → {} ({}", self.from, self.to, self.kind)?;
        if self.optional {
            write!(f, ", optional")?;
        }
        if !self.features.is_empty() {
            write!(f, ", features {}", self.features.join(", "))?;
        }
        write!(f, ")")
    }
}

/// A cycle of dependencies between packages, each leading to the package of the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependencyCycle {
    /// The dependencies, the last one leading back to the first package.
    pub dependencies: Vec<Dependency>,
}

impl fmt::Display for DependencyCycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut packages: Vec<&str> = self.dependencies.iter().map(|d| d.from.as_str()).collect();
        if let Some(first) = self.dependencies.first() {
            packages.push(&first.from);
        }
        writeln!(f, "  {}", packages.join(" → "))?;
        for dependency in &self.dependencies {
            writeln!(f, "    {dependency}")?;
        }
        Ok(())
    }
}

/// Every dependency between the workspace's packages that `metadata` (`cargo metadata --no-deps`)
/// lists: of every kind, optional ones included, in the order of the packages and their manifests.
pub fn workspace_dependencies(
    metadata: &serde_json::Value,
) -> Result<Vec<Dependency>, ImportsError> {
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let names: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut dependencies = Vec::new();
    for package in &packages {
        let Some(from) = package["name"].as_str() else {
            return Err(ImportsError::Metadata("a package without a name".into()));
        };
        for dependency in package["dependencies"].as_array().into_iter().flatten() {
            let Some(to) = dependency["name"].as_str().filter(|n| names.contains(n)) else {
                continue;
            };
            dependencies.push(Dependency {
                from: from.to_owned(),
                to: to.to_owned(),
                // `kind` is null for a normal dependency.
                kind: dependency["kind"].as_str().unwrap_or("normal").to_owned(),
                optional: dependency["optional"].as_bool().unwrap_or(false),
                features: dependency["features"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f.as_str().map(str::to_owned))
                    .collect(),
            });
        }
    }
    Ok(dependencies)
}

/// The cycles of `dependencies` (feature toggles left out): through every package caught in one, the
/// shortest way back to it, each cycle once, starting from its first package by name.
pub fn dependency_cycles(dependencies: &[Dependency]) -> Vec<DependencyCycle> {
    let names: Vec<&str> = dependencies
        .iter()
        .flat_map(|d| [d.from.as_str(), d.to.as_str()])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let index = |name: &str| names.binary_search(&name).unwrap_or(0);
    let counted: Vec<&Dependency> = dependencies
        .iter()
        .filter(|d| !d.is_feature_toggle())
        .collect();
    let mut edges: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for dependency in &counted {
        edges
            .entry(index(&dependency.from))
            .or_default()
            .insert(index(&dependency.to));
    }
    let mut found: Vec<Vec<usize>> = Vec::new();
    for set in strongly_connected(names.len(), &edges) {
        let looped = |v: &usize| edges.get(v).is_some_and(|targets| targets.contains(v));
        if set.len() < 2 && !set.iter().any(looped) {
            continue;
        }
        // `names` is sorted, so index order is name order.
        for &start in &set {
            let Some(mut cycle) = shortest_cycle(start, &set, &edges) else {
                continue;
            };
            cycle.pop();
            let first = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
            cycle.rotate_left(first);
            if !found.contains(&cycle) {
                found.push(cycle);
            }
        }
    }
    found.sort();
    found
        .into_iter()
        .map(|mut cycle| {
            cycle.push(cycle[0]);
            let dependencies = cycle
                .windows(2)
                .filter_map(|pair| {
                    counted
                        .iter()
                        .find(|d| d.from == names[pair[0]] && d.to == names[pair[1]])
                        .map(|d| (*d).clone())
                })
                .collect();
            DependencyCycle { dependencies }
        })
        .collect()
}

/// The workspace at `root` as `cargo metadata --no-deps --offline` describes it; an error is the reason,
/// as text (cargo's stderr when it fails), for the caller's own error type.
pub fn cargo_metadata(root: &Path) -> Result<serde_json::Value, String> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .output()
        .map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    serde_json::from_slice(&output.stdout).map_err(|e| e.to_string())
}

/// Every target of every package of the workspace at `root`, from `cargo metadata`.
pub fn workspace_crates(root: &Path) -> Result<Vec<CrateRoot>, ImportsError> {
    let metadata = cargo_metadata(root).map_err(ImportsError::Metadata)?;
    let mut crates = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let package_name = package["name"].as_str().unwrap_or_default();
        for target in package["targets"].as_array().into_iter().flatten() {
            let (Some(name), Some(file)) = (target["name"].as_str(), target["src_path"].as_str())
            else {
                return Err(ImportsError::Metadata(
                    "a target without name or src_path".into(),
                ));
            };
            let kind = target["kind"][0].as_str().unwrap_or("target");
            crates.push(CrateRoot {
                package: package_name.to_owned(),
                name: format!("{package_name} ({kind} {name})"),
                file: PathBuf::from(file),
            });
        }
    }
    crates.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(crates)
}

/// Which paths count as imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Every path into another file, a module's paths into its own children included: with a thin
    /// `lib.rs` or `mod.rs` (modules and re-exports), nothing below it may import from it, so every
    /// module imports only modules below it. The emulator's rule.
    Strict,
    /// A module's paths into its own descendants (its `mod.rs` re-exporting or calling its children)
    /// are not imports; every other path is. A child may then take shared items from its parent, but
    /// two files outside each other may not import each other, directly or through others.
    Contained,
}

/// The crates held to [`Rule::Strict`]: the emulator, which documents its layers
/// (`docs/ARCHITECTURE.md`).
pub const STRICT_PACKAGES: &[&str] = &["store-api-fixtures"];

impl Rule {
    /// The rule of a package.
    pub fn for_package(package: &str) -> Rule {
        if STRICT_PACKAGES.contains(&package) {
            Rule::Strict
        } else {
            Rule::Contained
        }
    }
}

type ModId = usize;

/// A module: the file it is written in, where its children's files are, its children.
#[derive(Debug)]
struct Module {
    file: usize,
    /// The folder a `mod x;` of this module looks in for `x.rs` or `x/mod.rs`.
    dir: PathBuf,
    parent: Option<ModId>,
    children: BTreeMap<String, ModId>,
}

/// One crate's modules, files and imports.
#[derive(Debug)]
pub struct Graph {
    krate: String,
    rule: Rule,
    /// Relative to the workspace root.
    files: Vec<PathBuf>,
    modules: Vec<Module>,
    imports: Vec<Import>,
    edges: BTreeMap<usize, BTreeSet<usize>>,
}

impl Graph {
    /// Reads the crate whose root file is `krate.file`; file names are kept relative to `root`.
    pub fn read(root: &Path, krate: &CrateRoot, rule: Rule) -> Result<Graph, ImportsError> {
        let mut graph = Graph {
            krate: krate.name.clone(),
            rule,
            files: Vec::new(),
            modules: Vec::new(),
            imports: Vec::new(),
            edges: BTreeMap::new(),
        };
        let mut sources: Vec<TokenStream> = Vec::new();
        let root_dir = krate
            .file
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let root_module = graph.add_file(root, &krate.file, root_dir, None, &mut sources)?;
        // The tree first (every `mod`), so that a path can be followed into any module.
        let mut queue = VecDeque::from([(root_module, 0usize)]);
        let mut scanned = Vec::new();
        while let Some((module, source)) = queue.pop_front() {
            let tokens = sources[source].clone();
            graph.declare(root, module, tokens.clone(), &mut sources, &mut queue)?;
            scanned.push((module, tokens));
        }
        for (module, tokens) in scanned {
            graph.scan(module, tokens);
        }
        Ok(graph)
    }

    fn add_file(
        &mut self,
        root: &Path,
        path: &Path,
        dir: PathBuf,
        parent: Option<ModId>,
        sources: &mut Vec<TokenStream>,
    ) -> Result<ModId, ImportsError> {
        let text = std::fs::read_to_string(path).map_err(|e| ImportsError::Io(path.into(), e))?;
        let tokens = TokenStream::from_str(&text)
            .map_err(|e| ImportsError::Lex(path.into(), e.to_string()))?;
        let relative = path.strip_prefix(root).unwrap_or(path).to_path_buf();
        self.files.push(relative);
        sources.push(tokens);
        self.modules.push(Module {
            file: self.files.len() - 1,
            dir,
            parent,
            children: BTreeMap::new(),
        });
        Ok(self.modules.len() - 1)
    }

    /// Declares the children of `module` written in `tokens`: inline ones at once (with their own
    /// children), file ones by reading their file and queueing it.
    fn declare(
        &mut self,
        root: &Path,
        module: ModId,
        tokens: TokenStream,
        sources: &mut Vec<TokenStream>,
        queue: &mut VecDeque<(ModId, usize)>,
    ) -> Result<(), ImportsError> {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            let Some((name, body, next)) = module_declaration(&tokens, i) else {
                i += 1;
                continue;
            };
            let dir = self.modules[module].dir.join(&name);
            match body {
                Some(inline) => {
                    self.modules.push(Module {
                        file: self.modules[module].file,
                        dir,
                        parent: Some(module),
                        children: BTreeMap::new(),
                    });
                    let child = self.modules.len() - 1;
                    self.modules[module].children.insert(name, child);
                    self.declare(root, child, inline, sources, queue)?;
                }
                None => {
                    let here = &self.modules[module].dir;
                    let file = match path_attribute(&tokens, i) {
                        // `#[path]` is relative to the folder of the file that holds it, for a module
                        // declared at that file's top.
                        Some(path) => self.files_dir(root, module).join(path),
                        None if here.join(format!("{name}.rs")).exists() => {
                            here.join(format!("{name}.rs"))
                        }
                        None => here.join(&name).join("mod.rs"),
                    };
                    let child_dir = if file.file_name().is_some_and(|f| f == "mod.rs") {
                        file.parent().map(Path::to_path_buf).unwrap_or_default()
                    } else {
                        dir
                    };
                    let child = self.add_file(root, &file, child_dir, Some(module), sources)?;
                    self.modules[module].children.insert(name, child);
                    queue.push_back((child, sources.len() - 1));
                }
            }
            i = next;
        }
        Ok(())
    }

    fn files_dir(&self, root: &Path, module: ModId) -> PathBuf {
        let file = root.join(&self.files[self.modules[module].file]);
        file.parent().map(Path::to_path_buf).unwrap_or_default()
    }

    /// Records every path of `tokens` (written in `module`) that names a module of this crate.
    fn scan(&mut self, module: ModId, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            if let Some((name, body, next)) = module_declaration(&tokens, i) {
                if let (Some(inline), Some(&child)) =
                    (body, self.modules[module].children.get(&name))
                {
                    self.scan(child, inline);
                }
                i = next;
                continue;
            }
            match &tokens[i] {
                // Not `use<'a, T>`, the precise capturing of an `impl Trait`.
                TokenTree::Ident(ident)
                    if ident == "use"
                        && !matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '<') =>
                {
                    let end = tokens[i..]
                        .iter()
                        .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))
                        .map_or(tokens.len(), |n| i + n);
                    let line = ident.span().start().line;
                    let mut paths = Vec::new();
                    use_paths(&tokens[i + 1..end], &mut Vec::new(), &mut paths);
                    for path in paths {
                        let _ = self.import(module, &path, line);
                    }
                    i = end + 1;
                    continue;
                }
                // `pub(in crate::a)` names where an item is visible, not what it uses.
                TokenTree::Group(group)
                    if !(group.delimiter() == Delimiter::Parenthesis
                        && i > 0
                        && matches!(&tokens[i - 1], TokenTree::Ident(v) if v == "pub")) =>
                {
                    self.scan(module, group.stream())
                }
                TokenTree::Ident(ident) if !follows_path_separator(&tokens, i) => {
                    let (path, next) = path_at(&tokens, i);
                    if path.len() > 1 {
                        let _ = self.import(module, &path, ident.span().start().line);
                    }
                    i = next.max(i + 1);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// Records the import of the file `path` leads to from `module`, if it names one of this crate's
    /// modules and another file.
    fn import(&mut self, module: ModId, path: &[String], line: usize) -> Option<()> {
        let target = self.resolve(module, path)?;
        let (from, to) = (self.modules[module].file, self.modules[target].file);
        let contained = self.rule == Rule::Contained
            && self.descends(target, self.modules.iter().position(|m| m.file == from)?);
        if from == to || contained {
            return None;
        }
        if self.edges.entry(from).or_default().insert(to) {
            self.imports.push(Import {
                from: self.files[from].clone(),
                to: self.files[to].clone(),
                line,
                path: path.join("::"),
            });
        }
        Some(())
    }

    /// Whether `module` is `ancestor` or inside it.
    fn descends(&self, module: ModId, ancestor: ModId) -> bool {
        let mut current = Some(module);
        while let Some(m) = current {
            if m == ancestor {
                return true;
            }
            current = self.modules[m].parent;
        }
        false
    }

    /// The module `path` (written in `module`) leads to: as far as its segments name modules.
    fn resolve(&self, module: ModId, path: &[String]) -> Option<ModId> {
        let first = path.first()?;
        let mut current = match first.as_str() {
            "crate" => 0,
            "self" => module,
            "super" => self.modules[module].parent?,
            name => *self.modules[module].children.get(name)?,
        };
        let mut rest = &path[1..];
        if first == "super" {
            while rest.first().is_some_and(|s| s == "super") {
                current = self.modules[current].parent?;
                rest = &rest[1..];
            }
        }
        for segment in rest {
            match self.modules[current].children.get(segment) {
                Some(&child) => current = child,
                None => break,
            }
        }
        Some(current)
    }

    /// The cycles: through every file caught in one, the shortest way back to it (each cycle once).
    pub fn cycles(&self) -> Vec<Cycle> {
        let mut found: Vec<Vec<usize>> = Vec::new();
        for set in strongly_connected(self.files.len(), &self.edges) {
            if set.len() < 2 {
                continue;
            }
            let mut files: Vec<usize> = set.iter().copied().collect();
            files.sort_by(|&a, &b| self.files[a].cmp(&self.files[b]));
            for start in files {
                let Some(mut cycle) = shortest_cycle(start, &set, &self.edges) else {
                    continue;
                };
                // The same cycle found from another of its files: compare from its first file in order.
                cycle.pop();
                let first = (0..cycle.len())
                    .min_by(|&a, &b| self.files[cycle[a]].cmp(&self.files[cycle[b]]))
                    .unwrap_or(0);
                cycle.rotate_left(first);
                if !found.contains(&cycle) {
                    found.push(cycle);
                }
            }
        }
        found
            .into_iter()
            .map(|mut cycle| {
                cycle.push(cycle[0]);
                let imports = cycle
                    .windows(2)
                    .filter_map(|pair| {
                        let (from, to) = (&self.files[pair[0]], &self.files[pair[1]]);
                        self.imports
                            .iter()
                            .find(|i| &i.from == from && &i.to == to)
                            .cloned()
                    })
                    .collect();
                Cycle {
                    krate: self.krate.clone(),
                    imports,
                }
            })
            .collect()
    }

    /// Every import recorded, in the order found.
    pub fn imports(&self) -> &[Import] {
        &self.imports
    }
}

/// At `i`, a module declaration (`mod name;` or `mod name { … }`, after any visibility): its name,
/// its inline body, and where the tokens after it start.
fn module_declaration(
    tokens: &[TokenTree],
    i: usize,
) -> Option<(String, Option<TokenStream>, usize)> {
    let TokenTree::Ident(keyword) = &tokens[i] else {
        return None;
    };
    if keyword != "mod" {
        return None;
    }
    let TokenTree::Ident(name) = tokens.get(i + 1)? else {
        return None;
    };
    match tokens.get(i + 2)? {
        TokenTree::Punct(p) if p.as_char() == ';' => Some((name.to_string(), None, i + 3)),
        TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
            Some((name.to_string(), Some(g.stream()), i + 3))
        }
        _ => None,
    }
}

/// The `#[path = "…"]` among the attributes right before the declaration at `i`.
fn path_attribute(tokens: &[TokenTree], i: usize) -> Option<String> {
    let mut j = i;
    // Skip a visibility: `pub`, `pub(crate)`.
    while j > 0 {
        match &tokens[j - 1] {
            TokenTree::Ident(ident) if ident == "pub" => j -= 1,
            TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => j -= 1,
            _ => break,
        }
    }
    while j >= 2 {
        let (TokenTree::Punct(hash), TokenTree::Group(attribute)) =
            (&tokens[j - 2], &tokens[j - 1])
        else {
            break;
        };
        if hash.as_char() != '#' || attribute.delimiter() != Delimiter::Bracket {
            break;
        }
        let inner: Vec<TokenTree> = attribute.stream().into_iter().collect();
        if let [
            TokenTree::Ident(name),
            TokenTree::Punct(eq),
            TokenTree::Literal(value),
        ] = inner.as_slice()
            && name == "path"
            && eq.as_char() == '='
        {
            return Some(value.to_string().trim_matches('"').to_owned());
        }
        j -= 2;
    }
    None
}

/// Whether `::` comes right before `i` (so `i` is inside a path, not its start).
fn follows_path_separator(tokens: &[TokenTree], i: usize) -> bool {
    i >= 2 && is_path_separator(tokens, i - 2)
}

/// Whether the tokens at `i` and `i + 1` are `::`.
fn is_path_separator(tokens: &[TokenTree], i: usize) -> bool {
    matches!(
        (tokens.get(i), tokens.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && b.as_char() == ':'
    )
}

/// The path starting at the identifier at `i` (`a::b::c`, stopping before generics or anything
/// else), and where the tokens after it start.
fn path_at(tokens: &[TokenTree], i: usize) -> (Vec<String>, usize) {
    let mut path = Vec::new();
    let mut j = i;
    while let Some(TokenTree::Ident(ident)) = tokens.get(j) {
        path.push(ident.to_string());
        if is_path_separator(tokens, j + 1)
            && matches!(tokens.get(j + 3), Some(TokenTree::Ident(_)))
        {
            j += 3;
        } else {
            return (path, j + 1);
        }
    }
    (path, j)
}

/// The paths of a use tree (after `use`, before `;`): `a::{self, b::c as d, e::*}` gives `a`, `a::b::c`
/// and `a::e`.
fn use_paths(tokens: &[TokenTree], prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let depth = prefix.len();
    let mut i = 0;
    // A leading `::` names another crate.
    if is_path_separator(tokens, 0) {
        return;
    }
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Ident(ident) if ident == "as" => {
                // The rename: skip it.
                i += 2;
                continue;
            }
            TokenTree::Ident(ident) if ident == "self" && depth > 0 && prefix.len() == depth => {
                out.push(prefix.clone());
            }
            TokenTree::Ident(ident) => prefix.push(ident.to_string()),
            TokenTree::Group(group) if group.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = group.stream().into_iter().collect();
                for tree in inner.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
                {
                    if !tree.is_empty() {
                        use_paths(tree, &mut prefix.clone(), out);
                    }
                }
                prefix.truncate(depth);
                return;
            }
            TokenTree::Punct(p) if p.as_char() == '*' => {}
            TokenTree::Punct(p) if p.as_char() == ',' => {
                // Only inside a group, which `split` already cut.
            }
            _ => {}
        }
        i += 1;
    }
    if prefix.len() > depth {
        out.push(prefix.clone());
    }
    prefix.truncate(depth);
}

/// Tarjan's strongly connected components of the graph of `n` nodes.
fn strongly_connected(n: usize, edges: &BTreeMap<usize, BTreeSet<usize>>) -> Vec<BTreeSet<usize>> {
    struct State<'a> {
        edges: &'a BTreeMap<usize, BTreeSet<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        sets: Vec<BTreeSet<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        let targets: Vec<usize> = s.edges.get(&v).into_iter().flatten().copied().collect();
        for w in targets {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(index) if s.on_stack[w] => s.low[v] = s.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut set = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                set.insert(w);
                if w == v {
                    break;
                }
            }
            s.sets.push(set);
        }
    }
    let mut state = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        sets: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            visit(&mut state, v);
        }
    }
    state.sets.sort_by_key(|set| set.iter().min().copied());
    state.sets
}

/// The shortest cycle from `start` back to it inside `set` (breadth first): the files, `start` at
/// both ends.
fn shortest_cycle(
    start: usize,
    set: &BTreeSet<usize>,
    edges: &BTreeMap<usize, BTreeSet<usize>>,
) -> Option<Vec<usize>> {
    let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in edges.get(&v).into_iter().flatten() {
            if !set.contains(&w) {
                continue;
            }
            if w == start {
                let mut cycle = vec![start];
                let mut at = v;
                while at != start {
                    cycle.push(at);
                    at = *came_from.get(&at)?;
                }
                cycle.push(start);
                cycle.reverse();
                return Some(cycle);
            }
            if w != start && !came_from.contains_key(&w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// Writes `files` (paths under a fresh folder) and reads the crate rooted at `src/lib.rs`.
    fn graph(files: &[(&str, &str)], rule: Rule) -> Graph {
        let root = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = root.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let krate = CrateRoot {
            package: "demo".into(),
            name: "demo (lib demo)".into(),
            file: root.path().join("src/lib.rs"),
        };
        Graph::read(root.path(), &krate, rule).unwrap()
    }

    /// The imports as `from → to (line)`.
    fn imports(graph: &Graph) -> Vec<String> {
        graph
            .imports()
            .iter()
            .map(|i| format!("{} → {} ({})", i.from.display(), i.to.display(), i.line))
            .collect()
    }

    const LEAVES: &str = "pub fn f() {}\npub struct T;\n";

    /// One dependency as `cargo metadata --no-deps` lists it (only what the check reads).
    fn dependency(
        name: &str,
        kind: Option<&str>,
        optional: bool,
        features: &[&str],
    ) -> serde_json::Value {
        serde_json::json!({"name": name, "kind": kind, "optional": optional, "features": features})
    }

    #[test]
    fn a_dependency_back_of_any_kind_is_a_cycle_and_a_feature_toggle_is_not() {
        // The shape the workspace had: the client dev-depends on the emulator, which signs with the
        // webhooks crate, whose `client` feature depends on the client.
        let metadata = serde_json::json!({"packages": [
            {"name": "client", "dependencies": [
                dependency("raw", None, false, &[]),
                dependency("serde", None, false, &["derive"]),
                dependency("emulator", Some("dev"), false, &[]),
            ]},
            {"name": "emulator", "dependencies": [
                dependency("raw", None, false, &[]),
                dependency("webhooks", None, false, &[]),
            ]},
            {"name": "webhooks", "dependencies": [dependency("client", None, true, &[])]},
            {"name": "raw", "dependencies": []},
            {"name": "redis", "dependencies": [dependency("redis", Some("dev"), false, &["testing"])]},
            {"name": "lonely", "dependencies": [dependency("lonely", Some("dev"), false, &[])]},
        ]});
        let dependencies = workspace_dependencies(&metadata).unwrap();
        assert_eq!(
            dependencies.len(),
            7,
            "serde is not a package of the workspace"
        );
        let cycles = dependency_cycles(&dependencies);
        let shown: Vec<String> = cycles.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "  client → emulator → webhooks → client\n    client → emulator (dev)\n    \
                 emulator → webhooks (normal)\n    webhooks → client (normal, optional)\n",
                "  lonely → lonely\n    lonely → lonely (dev)\n",
            ]
        );
        let error = ImportsError::Cycles {
            files: Vec::new(),
            packages: cycles,
        }
        .to_string();
        assert!(error.starts_with("2 dependency cycle(s) between the workspace's packages"));
        assert!(error.ends_with(DEPENDENCY_RULE), "{error}");

        // Without the optional dependency back, only the self-dependency that toggles nothing is left.
        let required: Vec<Dependency> = dependencies.into_iter().filter(|d| !d.optional).collect();
        let cycles = dependency_cycles(&required);
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].dependencies[0].from, "lonely");
    }

    #[test]
    fn every_form_of_path_names_the_file_it_leads_to() {
        let lib = "mod a; mod b; mod c; mod d; mod e; mod f; mod g; mod h; mod i; mod j;";
        let a = "use crate::b::T;
pub use crate::c::T as C;
pub(crate) use crate::{d, e::T as E};
fn one() { crate::f::f(); }
fn two() { assert!(super::g::T == super::g::T); }
type Three = Vec<crate::h::T>;
fn four() -> impl Sized + use<> { <crate::i::T as Default>::default() }
macro_rules! five { () => { $crate::j::f() }; }
";
        let mut files = vec![("src/lib.rs", lib), ("src/a.rs", a)];
        let leaves: Vec<String> = "bcdefghij".chars().map(|c| format!("src/{c}.rs")).collect();
        files.extend(leaves.iter().map(|path| (path.as_str(), LEAVES)));
        assert_eq!(
            imports(&graph(&files, Rule::Strict)),
            [
                "src/a.rs → src/b.rs (1)",
                "src/a.rs → src/c.rs (2)",
                "src/a.rs → src/d.rs (3)",
                "src/a.rs → src/e.rs (3)",
                "src/a.rs → src/f.rs (4)",
                "src/a.rs → src/g.rs (5)",
                "src/a.rs → src/h.rs (6)",
                "src/a.rs → src/i.rs (7)",
                "src/a.rs → src/j.rs (8)",
            ]
        );
    }

    #[test]
    fn words_that_only_look_like_imports_are_not() {
        let a = r#"// use crate::b::T;
/// See [`crate::b::T`].
const TEXT: &str = "crate::b::T";
pub(in crate::b) struct Hidden;
fn capture() -> impl Sized + use<> {}
mod tests {
    use super::*;
    use self::inner::X;
    mod inner { pub struct X; }
}
"#;
        let graph = graph(
            &[
                ("src/lib.rs", "mod a; mod b;"),
                ("src/a.rs", a),
                ("src/b.rs", LEAVES),
            ],
            Rule::Strict,
        );
        assert_eq!(imports(&graph), Vec::<String>::new());
    }

    #[test]
    fn inline_and_path_modules_resolve_like_rustc() {
        let lib = "mod a;\n#[path = \"elsewhere/b_file.rs\"]\nmod b;\nmod c { pub mod d; }";
        let a = "fn f() { super::b::f(); crate::c::d::f(); }
mod tests { use super::super::c::d::T; }";
        let graph = graph(
            &[
                ("src/lib.rs", lib),
                ("src/a.rs", a),
                ("src/elsewhere/b_file.rs", LEAVES),
                ("src/c/d.rs", LEAVES),
            ],
            Rule::Strict,
        );
        assert_eq!(
            imports(&graph),
            [
                "src/a.rs → src/elsewhere/b_file.rs (1)",
                "src/a.rs → src/c/d.rs (1)"
            ]
        );
    }

    /// A parent that re-exports its children and a child that takes an item from the parent.
    const PARENT_AND_CHILD: &[(&str, &str)] = &[
        ("src/lib.rs", "mod s;"),
        ("src/s/mod.rs", "mod x;\npub use x::f;\npub struct Shared;"),
        ("src/s/x.rs", "use super::Shared;\npub fn f(_: Shared) {}"),
    ];

    #[test]
    fn a_parent_reaching_into_its_children_counts_only_under_the_strict_rule() {
        assert!(graph(PARENT_AND_CHILD, Rule::Contained).cycles().is_empty());
        let cycles = graph(PARENT_AND_CHILD, Rule::Strict).cycles();
        assert_eq!(cycles.len(), 1);
        assert_eq!(
            cycles[0].files(),
            [
                Path::new("src/s/mod.rs"),
                Path::new("src/s/x.rs"),
                Path::new("src/s/mod.rs")
            ]
        );
    }

    #[test]
    fn a_cycle_is_named_with_its_files_and_lines() {
        let graph = graph(
            &[
                ("src/lib.rs", "mod a;\nmod b;\nmod c;"),
                ("src/a.rs", "use crate::b::f;"),
                ("src/b.rs", "pub fn f() {}\nfn g() { crate::c::g() }"),
                ("src/c.rs", "pub fn g() {\n    crate::a::h()\n}"),
            ],
            Rule::Contained,
        );
        let cycles = graph.cycles();
        assert_eq!(cycles.len(), 1, "one cycle, found from each of its files");
        assert_eq!(
            cycles[0].to_string(),
            "  demo (lib demo): src/a.rs → src/b.rs → src/c.rs → src/a.rs
    src/a.rs:1 crate::b::f (→ src/b.rs)
    src/b.rs:2 crate::c::g (→ src/c.rs)
    src/c.rs:2 crate::a::h (→ src/a.rs)
"
        );
    }

    fn paths(source: &str) -> Vec<String> {
        let tokens: Vec<TokenTree> = TokenStream::from_str(source).unwrap().into_iter().collect();
        let mut out = Vec::new();
        use_paths(&tokens, &mut Vec::new(), &mut out);
        out.iter().map(|p| p.join("::")).collect()
    }

    #[test]
    fn use_trees_give_every_path() {
        assert_eq!(
            paths("crate::{a, b::c as d, e::{self, f::*}, g::*}"),
            [
                "crate::a",
                "crate::b::c",
                "crate::e",
                "crate::e::f",
                "crate::g"
            ]
        );
        assert_eq!(paths("super::super::x"), ["super::super::x"]);
        assert!(paths("::std::fmt").is_empty());
    }
}
