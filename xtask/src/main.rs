//! Project automation. `cargo xtask codegen [--check]` regenerates (or checks) the raw transport crate;
//! `cargo xtask growth` proves that every change the API may make within its version, regenerated, is a
//! minor change of every published crate (cargo-semver-checks against the unmodified workspace);
//! `cargo xtask imports [--root DIR]` fails on any file-level import cycle of the workspace's crates;
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
        ["imports"] => xtask::imports::check(&xtask::workspace_root()).map_err(Into::into),
        ["imports", "--root", root] => {
            xtask::imports::check(std::path::Path::new(root)).map_err(Into::into)
        }
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
