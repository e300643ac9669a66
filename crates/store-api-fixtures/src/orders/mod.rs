//! Orders: creation (the validator's resolved order recorded as an `Order`), the emulator's price model,
//! and the lifecycle the provider and the app drive (the fulfillment ladder, holds, cancellation, payment).

mod creation;
mod editing;
mod lifecycle;
mod pricing;
mod view;

pub(crate) use creation::create;
pub(crate) use editing::edit_line_items;
pub use lifecycle::AppAction;
pub(crate) use lifecycle::{advance, apply};
