//! `emulator`: the local emulator as a server, the same as the `store-api-emulator` binary.

use std::time::Duration;

use store_api_fixtures::{Emulator, Seed};

use crate::cli::EmulatorArgs;
use crate::error::CliError;

/// Serves until Ctrl-C, then shuts down (writing the state file when one was given).
pub async fn run(args: EmulatorArgs) -> Result<(), CliError> {
    // Logs go to stderr; a second subscriber (in tests) is not an error worth failing for.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .try_init();
    let mut builder = Emulator::builder()
        .listen(args.listen)
        .rate_limit(!args.no_rate_limit)
        .webhook_backoff(Duration::from_millis(args.webhook_backoff_ms));
    if let Some(path) = &args.seed {
        let seed = Seed::from_file(path).map_err(|e| CliError::Usage(e.to_string()))?;
        builder = builder.seed(seed);
    }
    if let Some(path) = args.state {
        builder = builder.state_file(path);
    }
    if let Some(ms) = args.auto_advance_ms {
        builder = builder.auto_advance(Duration::from_millis(ms.max(1)));
    }
    let emulator = builder
        .start()
        .await
        .map_err(|e| CliError::Failed(e.to_string()))?;
    // The one line on stdout that scripts wait for; everything else goes to stderr.
    println!("store-api-emulator listening on {}", emulator.origin());
    let _ = tokio::signal::ctrl_c().await;
    emulator.shutdown().await;
    Ok(())
}
