//! The bottom of the emulator: everything it knows and the one way to reach it.
//!
//! [`Shared`] is what every handler holds: the [`State`] behind one lock, with its discipline (reads
//! never wait for each other; writers take turns and hold the write lock only to apply a change), the
//! clock, the logs, the rate limiter, the fault queue and the artwork downloader. The state's parts:
//! [`Record`]s (a resource and its JSON), a store's order book with its indexes and kept pages, and
//! the list conventions every collection is paged by. Nothing here imports a module above it.

mod book;
mod list;
mod pages;
pub(crate) mod products;
mod record;
mod shared;
mod store;

pub(crate) use book::filter_value;
pub(crate) use list::{ListQuery, ListSpec, Listable};
pub(crate) use record::Record;
pub(crate) use shared::{Config, Shared, WriteTurn};
pub use store::DEFAULT_IMAGE_BYTES_CAP;
pub(crate) use store::{State, StoreState};
