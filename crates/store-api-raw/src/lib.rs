#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Without the `client` feature only the wire types (`types`, `open`) and `ApiKey` are compiled: the code
// generator marks everything else in `generated.rs` `#[cfg(feature = "client")]`.
#[allow(missing_docs, clippy::all, clippy::unwrap_used, clippy::expect_used)]
mod generated;
#[cfg(feature = "client")]
pub mod hooks;
mod key;
pub mod money;
pub mod open;
#[cfg(feature = "client")]
pub mod tls;

pub use generated::*;
#[cfg(feature = "client")]
pub use hooks::{Hooks, Transport};
pub use key::ApiKey;
pub use money::Money;

/// The API version this crate was generated for; it is also the path segment after `/store-api/`.
pub const API_VERSION: &str = "2026-08";
