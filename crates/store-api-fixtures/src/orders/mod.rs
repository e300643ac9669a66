//! Orders: creation (the validator's resolved order recorded as an `Order`), the emulator's price model,
//! and the lifecycle the provider and the app drive (the fulfillment ladder, holds, cancellation, payment).

mod creation;
mod editing;
mod lifecycle;
mod pricing;
mod view;

pub(crate) use creation::{AddressKeeping, conflict_before_validation, create, refuse_empty_ids};
pub(crate) use editing::edit_line_items;
pub use lifecycle::AppAction;
pub(crate) use lifecycle::{advance, apply};
