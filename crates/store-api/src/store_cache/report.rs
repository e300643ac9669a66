//! What a read of the store reports: how many pages it took, and how far it has come.

use std::time::Duration;

use super::versioned::Collection;

/// What a read of the store did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refreshed {
    /// Whether it read everything (a fill or a reconciliation) rather than only the changes.
    pub full: bool,
    /// `GET /catalog-products` pages requested.
    pub catalog_pages: u32,
    /// `GET /products` pages requested.
    pub product_pages: u32,
    /// Items read (changed ones, for an incremental read; every one, for a full read).
    pub changed: usize,
    /// How long it took, rate-limit waits included.
    pub took: Duration,
}

/// How far a full read has come, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// The collection being read.
    pub collection: Collection,
    /// Items read so far.
    pub read: u64,
    /// Items the service counts in the collection (its `totalItems`).
    pub total: u64,
}
