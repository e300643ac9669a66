//! Pre-flight validation: every rule the service enforces on a create-order or create-artwork request,
//! checked locally. The emulator in `store-api-fixtures` runs these same functions, so the client's
//! pre-flight check and the emulator can never disagree.
//!
//! - [`validate_order`] checks a create-order request against the store ([`OrderContext`]): body
//!   validation ([`validate_fields`]) and the ordering rules of standard and custom line items. A valid
//!   order comes back as a [`ResolvedOrder`] (each item's variant or blank), which the emulator records as is.
//! - [`StoreSnapshot`] is the client's indexed copy of the store; [`lookup`] holds the scans every other
//!   [`OrderContext`] runs, so all of them find the same variant for the same key.
//! - [`Violation::message`] is the service's message; [`service_message`] builds the error envelope's
//!   `message` (an array of field failures, or the first rule violation).
//! - [`merge_duplicates`] folds line items naming the same variant, which the service refuses.
//! - [`Placement`] computes and checks where a design sits in a [`PrintArea`] (rule 5 of custom line
//!   items; rule numbers are the specification's).
//! - [`countries`] holds the ISO 3166-1 alpha-2 and US state tables.
//!
//! Paths in violations use the wire's field names joined by dots, array elements by 0-based index:
//! `lineItems.0.decorations.1.physicalWidth`.
//!
//! With the `testing` feature, `validate::testing` provides an in-memory `TestCatalog` and request builders.

pub mod artwork_url;

pub(crate) mod address;
mod context;
pub mod countries;
mod custom;
mod duplicates;
mod fields;
pub mod lookup;
mod merge;
mod order;
mod paths;
pub mod placement;
mod resolve;
mod resolved;
mod snapshot;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod violation;

#[cfg(test)]
mod tests;

pub use context::OrderContext;
pub use fields::validate_fields;
pub use merge::merge_duplicates;
pub use order::validate_order;
pub use placement::{Align, PLACEMENT_TOLERANCE_INCHES, Placement, PlacementError, PrintArea};
pub use resolved::{ItemSource, ResolvedLineItem, ResolvedOrder};
pub use snapshot::StoreSnapshot;
pub use violation::{
    Violation, ViolationKind, rule_kind, rule_message, rule_violation, service_message,
};
