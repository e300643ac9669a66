//! `store-api-emulator`: the local emulator of Store API 2026-08 as a server.

use std::process::ExitCode;

use clap::Parser;
use store_api_fixtures::{ServeArgs, ServeError};

/// A stateful local emulator of the Store API 2026-08 on loopback.
#[derive(Debug, Parser)]
#[command(name = "store-api-emulator", version)]
struct Args {
    #[command(flatten)]
    serve: ServeArgs,
}

fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(args.serve.serve()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            match error {
                ServeError::Usage(_) => ExitCode::from(2),
                _ => ExitCode::FAILURE,
            }
        }
    }
}
