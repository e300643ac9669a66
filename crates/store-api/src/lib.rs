//! Ergonomic client for Store API 2026-08.
#![deny(missing_docs)]

pub mod validate;
