//! Project automation for the Store API workspace.
//!
//! Only `cargo xtask` runs this code; no published crate depends on it.

pub mod architecture;
pub mod bench;
pub mod codegen;
pub mod contract;
pub mod generator;
pub mod growth;
pub mod imports;
pub mod open_enum;
pub mod public_api;
pub mod requests;
pub mod rules;
pub mod shapes;

/// The workspace root (the parent of this crate's folder).
pub fn workspace_root() -> std::path::PathBuf {
    let manifest_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(|| manifest_dir.to_path_buf())
}
