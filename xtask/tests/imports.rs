//! No file of the workspace imports a file that imports it back (`cargo xtask imports`).

use xtask::imports;

#[test]
fn no_file_level_import_cycle_in_the_workspace() {
    if let Err(error) = imports::check(&xtask::workspace_root()) {
        panic!("{error}");
    }
}
