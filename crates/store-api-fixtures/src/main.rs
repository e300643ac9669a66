//! `store-api-emulator`: the local emulator of Store API 2026-08 as a server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use store_api_fixtures::{Emulator, Seed};

/// A stateful local emulator of the Store API 2026-08 on loopback.
#[derive(Debug, Parser)]
#[command(name = "store-api-emulator", version)]
struct Args {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Seed file replacing the built-in data (format: crates/store-api-fixtures/seed/README.md).
    #[arg(long)]
    seed: Option<PathBuf>,
    /// Turn the per-store rate limit off (for load tests).
    #[arg(long)]
    no_rate_limit: bool,
    /// Load the state from this file on start (if it exists) and write it there on shutdown.
    #[arg(long)]
    state: Option<PathBuf>,
    /// Move every movable order one rung up the fulfillment ladder this often, in milliseconds.
    #[arg(long, value_name = "MS")]
    auto_advance_ms: Option<u64>,
    /// Wait before the second webhook attempt, doubled for each further one, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    webhook_backoff_ms: u64,
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
    runtime.block_on(run(args))
}

async fn run(args: Args) -> ExitCode {
    let mut builder = Emulator::builder()
        .listen(args.listen)
        .rate_limit(!args.no_rate_limit)
        .webhook_backoff(Duration::from_millis(args.webhook_backoff_ms));
    if let Some(path) = &args.seed {
        match Seed::from_file(path) {
            Ok(seed) => builder = builder.seed(seed),
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(path) = args.state {
        builder = builder.state_file(path);
    }
    if let Some(ms) = args.auto_advance_ms {
        builder = builder.auto_advance(Duration::from_millis(ms.max(1)));
    }
    let emulator = match builder.start().await {
        Ok(emulator) => emulator,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    // The one line on stdout that scripts wait for; everything else goes to stderr.
    println!("store-api-emulator listening on {}", emulator.origin());
    let _ = tokio::signal::ctrl_c().await;
    emulator.shutdown().await;
    ExitCode::SUCCESS
}
