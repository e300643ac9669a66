//! The issue's end-to-end check, as a team regenerating bindings would do it: on a copy of the workspace,
//! add an optional field to `Order` and a value to `DecorationMethod` in the spec, run the codegen, and
//! compile a probe that only builds if the field is visible through `store_api`'s own types and the value
//! is a known variant, together with the emulator (which compiles the client as well).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use xtask::codegen::{self, Mode};
use xtask::generator::SPEC_PATH;

/// What the copy takes from the workspace (sources only: every `target/` is skipped).
const COPIED: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "spec",
    "crates",
    "xtask",
    "tests",
    "examples",
];

const PROBE_MANIFEST: &str = r#"[package]
name = "spec-change-probe"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
store-api = { path = "../crates/store-api", default-features = false }
"#;

/// Compiles only if the new field and the new known variant exist.
const PROBE_SOURCE: &str = r#"//! Compiles only against bindings regenerated from the edited spec.
use store_api::model::{DecorationMethod, Order};

/// The new field of `Order`.
pub fn gift_message(order: &Order) -> Option<&str> {
    order.gift_message.as_deref()
}

/// The new value, as a known variant (not `Unknown`).
pub fn emboss() -> DecorationMethod {
    DecorationMethod::Emboss
}
"#;

#[test]
fn a_spec_change_regenerates_into_a_workspace_that_compiles() {
    let started = Instant::now();
    let workspace = xtask::workspace_root();
    let scratch = workspace.join("target/spec-change");
    let copy = scratch.join("workspace");
    if copy.exists() {
        std::fs::remove_dir_all(&copy).unwrap();
    }
    for entry in COPIED {
        copy_tree(&workspace.join(entry), &copy.join(entry));
    }

    edit(
        &copy.join(SPEC_PATH),
        "      required: [id]\n      properties:\n        id:\n          type: string\n          description: Id of the order.\n",
        "      required: [id]\n      properties:\n        id:\n          type: string\n          description: Id of the order.\n        giftMessage:\n          type: string\n          description: A message printed on the packing slip.\n",
    );
    edit(
        &copy.join(SPEC_PATH),
        "            - liquid_3d\n",
        "            - liquid_3d\n            - emboss\n",
    );
    codegen::run(&copy, Mode::Write).unwrap();

    std::fs::create_dir_all(copy.join("probe/src")).unwrap();
    std::fs::write(copy.join("probe/Cargo.toml"), PROBE_MANIFEST).unwrap();
    std::fs::write(copy.join("probe/src/lib.rs"), PROBE_SOURCE).unwrap();
    edit(
        &copy.join("Cargo.toml"),
        "members = [\n",
        "members = [\n    \"probe\",\n",
    );

    // A target directory of its own: a nested cargo must not wait on the lock of the one running us.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .current_dir(&copy)
        .args([
            "check",
            "--offline",
            "--quiet",
            "-p",
            "spec-change-probe",
            "-p",
            "store-api-fixtures",
            "--target-dir",
        ])
        .arg(scratch.join("target"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the regenerated workspace does not compile:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("spec change end to end: {:?}", started.elapsed());
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} in {}",
        path.display()
    );
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

fn copy_tree(from: &Path, to: &PathBuf) {
    if from.is_file() {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
        return;
    }
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        copy_tree(&entry.path(), &to.join(name));
    }
}
