#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

#[allow(missing_docs, clippy::all, clippy::unwrap_used, clippy::expect_used)]
mod generated;
pub mod hooks;
pub mod open;

pub use generated::*;
pub use hooks::{ApiKey, Hooks, Transport};

/// The API version this crate was generated for; it is also the path segment after `/store-api/`.
pub const API_VERSION: &str = "2026-08";
