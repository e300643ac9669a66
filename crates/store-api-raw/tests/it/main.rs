//! Integration tests of the raw crate (one binary, so the suite links once).
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// Growing enumerations decode unknown values and re-encode them unchanged.
mod open_enums;
/// Requests matched to the spec's operations.
mod operations;
/// What the generated request builders put on the wire, read by a real server on 127.0.0.1.
mod wire;
