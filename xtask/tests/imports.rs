//! No file of the workspace imports a file that imports it back, and no package depends on a package
//! that depends on it, dev-dependencies included (`cargo xtask imports`).

use xtask::imports;

#[test]
fn no_import_or_dependency_cycle_in_the_workspace() {
    if let Err(error) = imports::check(&xtask::workspace_root()) {
        panic!("{error}");
    }
}

/// The packages' half alone, so that a cycle between files does not hide it (and the other way round).
#[test]
fn no_dependency_cycle_between_the_workspace_packages() {
    let metadata =
        imports::cargo_metadata(&xtask::workspace_root()).unwrap_or_else(|e| panic!("{e}"));
    let dependencies = imports::workspace_dependencies(&metadata).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        dependencies.iter().any(|d| d.kind == "dev"),
        "the workspace's dev-dependencies are read"
    );
    let cycles = imports::dependency_cycles(&dependencies);
    assert!(
        cycles.is_empty(),
        "{}",
        imports::ImportsError::Cycles {
            files: Vec::new(),
            packages: cycles,
        }
    );
}
