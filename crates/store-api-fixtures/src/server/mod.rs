//! The HTTP server: the Store API under `/store-api/2026-08/stores/{storeId}`, the control endpoints
//! under `/_emulator`, and `Cannot <METHOD> <path>` for everything else.
//!
//! Only declarations and re-exports (`cargo xtask imports` checks it, `docs/ARCHITECTURE.md`): the
//! router lives in `router`, so no module of the server imports this file.

mod access;
mod auth;
mod body;
pub(crate) mod connection;
mod control;
mod faults;
mod gate;
mod router;
mod routes;

pub use body::MAX_BODY_BYTES;
pub use router::API_PREFIX;
pub(crate) use router::router;
