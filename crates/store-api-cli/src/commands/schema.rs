//! `orders schema` and `webhooks schema`: JSON Schemas derived with schemars from the very Rust types
//! that encode and decode the bodies, so they cannot drift from what the SDK sends and accepts.

use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;

use crate::error::CliError;
use crate::output::write_stdout;

/// The JSON Schema of a create-order request (`store_api::NewOrder`).
pub fn order_request() -> schemars::Schema {
    generator().into_root_schema_for::<store_api::NewOrder>()
}

/// The JSON Schema of a webhook event (`store_api_webhooks::Event`).
pub fn webhook_event() -> schemars::Schema {
    generator().into_root_schema_for::<store_api_webhooks::Event>()
}

/// JSON Schema 2020-12 (what editors and validators read by default).
fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().into_generator()
}

/// Prints `schema` as pretty JSON, whatever the output mode: a schema is JSON either way.
pub fn print(schema: &schemars::Schema) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(schema)
        .map_err(|e| CliError::Failed(format!("cannot encode the schema as JSON: {e}")))?;
    write_stdout(&format!("{text}\n"));
    Ok(())
}
