//! `webhooks verify`: check a delivery offline, as a receiver would.

use store_api_webhooks::Verifier;

use crate::cli::{GlobalArgs, WebhooksCommand};
use crate::error::CliError;
use crate::output::Output;
use crate::render;

/// Runs a `webhooks` subcommand.
pub fn run(command: WebhooksCommand, global: &GlobalArgs, out: Output) -> Result<(), CliError> {
    match command {
        WebhooksCommand::Verify {
            signature,
            file,
            key,
        } => {
            let key = key.or_else(|| global.api_key.clone()).ok_or_else(|| {
                CliError::Usage("missing the signing key: --key, --api-key or STORE_API_KEY".into())
            })?;
            // Anyone can compute HMAC("", body): an empty key (an unset variable) verifies nothing.
            let verifier = Verifier::try_new(key.expose())
                .map_err(|e| CliError::Usage(format!("{e}; pass the store's API key")))?;
            // The exact bytes: any re-encoding would change what was signed.
            let body = crate::input::read_bytes(&file)?;
            let event = verifier
                .verify(&signature, &body)
                .map_err(|e| CliError::Failed(format!("the delivery does not verify: {e}")))?;
            out.json(&event)?;
            out.line(format!(
                "signature verified: {} event {} about {}",
                event.topic, event.id, event.data.id
            ));
            out.table(&render::event_detail(&event));
            Ok(())
        }
    }
}
