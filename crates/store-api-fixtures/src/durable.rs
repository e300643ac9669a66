//! Replacing a file atomically and durably: what the emulator's state file is written with, and what
//! the `store-api` command line writes a generated `externalOrderId` into an order file with.
//!
//! The one implementation lives in [`store_api_raw::durable`], the lowest crate both the emulator and
//! the cassettes (`store_api_cassette::Cassette::save`) depend on; it is re-exported here, so
//! `store_api_fixtures::durable::replace_file` keeps working. Change it there.

pub use store_api_raw::durable::{replace_file, replace_file_with_mode};
