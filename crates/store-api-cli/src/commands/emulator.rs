//! `emulator`: the local emulator as a server, the same as the `store-api-emulator` binary.

use store_api_fixtures::ServeError;

use crate::cli::EmulatorArgs;
use crate::error::CliError;

/// Serves until Ctrl-C or SIGTERM, then shuts down (writing the state file when one was given).
pub async fn run(args: EmulatorArgs) -> Result<(), CliError> {
    // Logs go to stderr; a second subscriber (in tests) is not an error worth failing for.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .try_init();
    args.serve.serve().await.map_err(|error| match error {
        ServeError::Usage(message) => CliError::Usage(message),
        other => CliError::Failed(other.to_string()),
    })
}
