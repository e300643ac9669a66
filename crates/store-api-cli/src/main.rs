#![doc = include_str!("../README.md")]

mod cli;
mod commands;
mod config;
mod demo;
mod error;
mod global;
mod input;
mod jq;
mod logging;
mod output;
mod png;
mod progress;
mod render;
mod session;
mod store_copy;
mod terminal;
mod traffic;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    // clap exits by itself on usage errors (code 2), --help and --version (code 0).
    let cli = cli::Cli::parse();
    // The emulator server installs its own logger (its requests, at info); it sends no traffic.
    if !matches!(&cli.command, cli::Command::Emulator(args) if args.action.is_none()) {
        logging::init(&cli.global);
    }
    // Every reqwest client of the process (the SDK's, the control endpoint's, the demo's) needs a rustls
    // crypto provider installed first; ring is the one compiled in.
    store_api::install_crypto_provider();
    let json = cli.global.json;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            error::report(
                &error::CliError::Failed(format!("cannot start the runtime: {e}")),
                json,
            );
            return ExitCode::from(error::EXIT_FAILED);
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(()) => ExitCode::from(error::EXIT_OK),
        Err(e) => {
            error::report(&e, json);
            ExitCode::from(e.exit_code())
        }
    }
}
