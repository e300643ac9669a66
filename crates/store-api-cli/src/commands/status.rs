//! `status`: reachability and credential check.

use store_api::Client;

use crate::error::CliError;
use crate::output::{Output, or_dash, time};

/// Prints the status result.
pub async fn run(client: &Client, out: Output) -> Result<(), CliError> {
    let status = client.status().await?;
    out.json(&status)?;
    out.line(format!(
        "{}: {} (API version {}, store {}, checked at {})",
        or_dash(status.status.as_deref()),
        or_dash(status.message.as_deref()),
        or_dash(status.version.as_deref()),
        or_dash(status.store.as_ref().map(|s| s.id.as_str())),
        time(status.checked_at),
    ));
    Ok(())
}
