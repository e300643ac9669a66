//! Project automation. `cargo xtask codegen [--check]` regenerates (or checks) the raw transport crate;
//! `cargo xtask growth` proves that every change the API may make within its version, regenerated, is a
//! minor change of every published crate (cargo-semver-checks against the unmodified workspace);
//! `cargo xtask imports [--root DIR]` fails on any file-level import cycle of the workspace's crates,
//! on any dependency cycle between its packages (dev-dependencies included) and on any checkable claim
//! of `docs/ARCHITECTURE.md` the code contradicts;
//! `cargo xtask public-api [--check]` writes (or checks) docs/public-api/, the listing of every published crate's API;
//! `cargo xtask bench [--quick]` measures the SDK against its targets and writes BENCHMARKS.md.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result: Result<String, Box<dyn std::error::Error>> = match args.as_slice() {
        ["codegen"] => xtask::codegen::run(&xtask::workspace_root(), xtask::codegen::Mode::Write)
            .map_err(Into::into),
        ["codegen", "--check"] => {
            xtask::codegen::run(&xtask::workspace_root(), xtask::codegen::Mode::Check)
                .map_err(Into::into)
        }
        ["growth"] => xtask::growth::run(&xtask::workspace_root()).map_err(Into::into),
        ["public-api"] => {
            xtask::public_api::run(&xtask::workspace_root(), xtask::public_api::Mode::Write)
                .map_err(Into::into)
        }
        ["public-api", "--check"] => {
            xtask::public_api::run(&xtask::workspace_root(), xtask::public_api::Mode::Check)
                .map_err(Into::into)
        }
        ["imports"] => imports(&xtask::workspace_root()),
        ["imports", "--root", root] => imports(std::path::Path::new(root)),
        ["bench"] => return xtask::bench::command(xtask::bench::Mode::Full),
        ["bench", "--quick"] => return xtask::bench::command(xtask::bench::Mode::Quick),
        _ => {
            eprintln!(
                "usage: cargo xtask codegen [--check] | cargo xtask growth | cargo xtask imports [--root DIR] | cargo xtask public-api [--check] | cargo xtask bench [--quick]"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(message) => {
            println!("{message}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The import-cycle check and the claims of `docs/ARCHITECTURE.md` (thin `mod.rs` files, the
/// dependency table), which are about the same structure: both run, and both report.
fn imports(root: &std::path::Path) -> Result<String, Box<dyn std::error::Error>> {
    match (
        xtask::imports::check(root),
        xtask::architecture::check(root),
    ) {
        (Ok(cycles), Ok(architecture)) => Ok(format!("{cycles}\n{architecture}")),
        (Err(e), Ok(architecture)) => Err(format!("{e}\n({architecture})").into()),
        (Ok(_), Err(e)) => Err(e.into()),
        (Err(cycles), Err(architecture)) => Err(format!("{cycles}\n{architecture}").into()),
    }
}
