//! `emulator`: the local emulator as a server, the same as the `store-api-emulator` binary; and
//! `emulator trigger`, which drives one already running.

use std::path::Path;

use serde_json::Value;
use store_api_fixtures::{RemoteEmulator, RemoteError, ServeError};

use crate::cli::{EmulatorAction, EmulatorArgs, TriggerArgs, TriggerTopic};
use crate::error::CliError;
use crate::global::GlobalArgs;
use crate::output::Output;

/// Serves until Ctrl-C or SIGTERM, then shuts down (writing the state file when one was given); or
/// runs the subcommand.
pub async fn run(args: EmulatorArgs, global: &GlobalArgs, out: Output) -> Result<(), CliError> {
    if let Some(EmulatorAction::Trigger(trigger_args)) = args.action {
        return trigger(trigger_args, global, out).await;
    }
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

/// Causes `args.topic` on the emulator at --base-url and prints what changed.
async fn trigger(args: TriggerArgs, global: &GlobalArgs, out: Output) -> Result<(), CliError> {
    let (base_url, store) = crate::config::resolve_target(global, &crate::config::process_env)?;
    let (Some(base_url), Some(store)) = (base_url, store) else {
        return Err(CliError::Usage(
            "emulator trigger needs --base-url (the running emulator) and --store-id, or a profile \
             (--profile) that has them"
                .into(),
        ));
    };
    let store = store.as_str();
    let emulator = RemoteEmulator::new(&base_url).map_err(remote)?;
    let needs = |what: Option<&String>, flag: &str| {
        what.cloned()
            .ok_or_else(|| CliError::Usage(format!("{} needs {flag}", topic_name(args.topic))))
    };
    let body = || match &args.file {
        Some(path) => read_json(path),
        None => Err(CliError::Usage(format!(
            "{} needs --file",
            topic_name(args.topic)
        ))),
    };
    let changed = match args.topic {
        TriggerTopic::OrdersCreate => emulator.create_order_in_app(store, &body()?).await,
        TriggerTopic::OrdersUpdate => {
            let order = needs(args.order.as_ref(), "--order")?;
            emulator.advance_order(store, &order).await
        }
        TriggerTopic::ProductsCreate => emulator.create_product(store, &body()?).await,
        TriggerTopic::ProductsUpdate => {
            let product = needs(args.product.as_ref(), "--product")?;
            emulator.update_product(store, &product, &body()?).await
        }
        TriggerTopic::ProductsDelete => {
            let product = needs(args.product.as_ref(), "--product")?;
            emulator
                .delete_product(store, &product)
                .await
                .map(|()| serde_json::json!({ "id": product, "deleted": true }))
        }
    }
    .map_err(remote)?;
    if out.json {
        out.json(&changed)
    } else {
        let id = changed["id"].as_str().unwrap_or("-");
        println!("{}: {id}", topic_name(args.topic));
        Ok(())
    }
}

/// The topic as written on the command line (and on the wire): `orders_update`.
fn topic_name(topic: TriggerTopic) -> String {
    clap::ValueEnum::to_possible_value(&topic)
        .map(|value| value.get_name().to_owned())
        .unwrap_or_default()
}

/// The JSON in `path`, or on standard input for `-`.
fn read_json(path: &Path) -> Result<Value, CliError> {
    serde_json::from_str(&crate::input::read_text(path)?)
        .map_err(|e| CliError::Usage(format!("{} is not JSON: {e}", path.display())))
}

fn remote(error: RemoteError) -> CliError {
    match error {
        RemoteError::Refused(refused) => CliError::Failed(format!(
            "the emulator refused: {} ({})",
            refused.message, refused.status
        )),
        other => CliError::Usage(other.to_string()),
    }
}
