//! `webhooks verify`: check a delivery offline, as a receiver would; `webhooks schema`: the event's
//! JSON Schema; `webhooks listen`: receive deliveries on this machine (`listen`).

mod listen;

use store_api_webhooks::Verifier;

use crate::cli::WebhooksCommand;
use crate::error::CliError;
use crate::global::GlobalArgs;
use crate::output::Output;
use crate::render;

/// Runs a `webhooks` subcommand.
pub async fn run(
    command: WebhooksCommand,
    global: &GlobalArgs,
    out: Output,
) -> Result<(), CliError> {
    match command {
        WebhooksCommand::Listen(args) => listen::run(args, global, out).await,
        WebhooksCommand::Schema => super::schema::print(&super::schema::webhook_event()),
        WebhooksCommand::Verify {
            signature,
            file,
            key,
        } => {
            let key = match key {
                Some(key) => key,
                None => crate::config::resolve(global, &crate::config::process_env)?
                    .api_key
                    .ok_or_else(|| {
                        CliError::Usage(format!(
                            "missing the signing key: --key, --api-key, {} or a profile's key",
                            store_api::ENV_API_KEY
                        ))
                    })?,
            };
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
