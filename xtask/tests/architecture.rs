//! The claims of `docs/ARCHITECTURE.md` a program can check hold (`cargo xtask imports` runs the same).

use xtask::architecture;

#[test]
fn architecture_md_agrees_with_the_code() {
    if let Err(error) = architecture::check(&xtask::workspace_root()) {
        panic!("{error}");
    }
}
