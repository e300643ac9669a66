//! What the telemetry tests (`telemetry_spans`, `telemetry_metrics`) share: the faults they inject, the
//! attributes they expect, and the keys their properties draw.

use proptest::prelude::*;
use store_api_fixtures::{Emulator, Fault, FaultKind};

use crate::ALPHA;

/// A fault on the next request of `operation` to the store `ALPHA`.
pub fn on(operation: &str, kind: FaultKind) -> Fault {
    Fault::new(kind).operation(operation).store(ALPHA)
}

/// The emulator's port, as `server.port` carries it.
pub fn port_of(emu: &Emulator) -> i64 {
    let url = reqwest::Url::parse(emu.origin()).unwrap();
    i64::from(url.port().unwrap())
}

/// The path template of `operation`, with the version prefix (`url.template`).
pub fn template(operation: &str) -> String {
    let op = store_api_raw::contract::OPERATIONS
        .iter()
        .find(|op| op.method_name == operation)
        .unwrap();
    format!("{}{}", store_api_raw::contract::VERSION_PREFIX, op.path)
}

/// A key of the service's shape: the brand prefix, then hex, 36 characters in all.
pub fn service_key() -> impl Strategy<Value = String> {
    let rest = store_api_raw::KEY_LENGTH - store_api_raw::KEY_BRAND_PREFIX.len();
    proptest::string::string_regex(&format!("[0-9a-f]{{{rest}}}"))
        .unwrap()
        .prop_map(|hex| format!("{}{hex}", store_api_raw::KEY_BRAND_PREFIX))
}
