#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

//! # Modules and items
//!
//! - [`validate_order`] checks a create-order request against the store ([`OrderContext`]): body
//!   validation ([`validate_fields`]) and the ordering rules of standard and custom line items. A valid
//!   order comes back as a [`ResolvedOrder`] (each item's variant or blank), which the emulator records as is.
//! - [`StoreSnapshot`] is the client's indexed copy of the store; [`lookup`] holds the scans every other
//!   [`OrderContext`] runs, so all of them find the same variant for the same key.
//! - [`Violation::message`] is the service's message; [`service_message`] builds the error envelope's
//!   `message` (an array of field failures, or the first rule violation); [`rule_message`] words a failed
//!   rule of the spec's request schemas.
//! - [`decode`] turns a JSON body into a request type, and a body that does not decode into the
//!   service's field-path messages (the emulator's and the CLI's one implementation).
//! - [`merge_duplicates`] folds line items naming the same variant, which the service refuses.
//! - [`Placement`] computes and checks where a design sits in a [`PrintArea`] (rule 5 of custom line
//!   items; rule numbers are the specification's).
//! - [`countries`] holds the ISO 3166-1 alpha-2 and US state tables; [`artwork_url`] the checks of an
//!   artwork's URL.
//!
//! Paths in violations use the wire's field names joined by dots, array elements by 0-based index:
//! `lineItems.0.decorations.1.physicalWidth`.
//!
//! With the `testing` feature, `testing` provides an in-memory `TestCatalog` and
//! request builders.

pub mod artwork_url;

mod address;
mod context;
pub mod countries;
mod custom;
pub mod decode;
mod duplicates;
mod fields;
pub mod lookup;
mod merge;
mod order;
mod paths;
mod placement;
mod resolve;
mod resolved;
mod snapshot;
#[cfg(any(test, feature = "testing"))]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
mod violation;

#[cfg(test)]
mod tests;

pub use address::check_address;
pub use context::OrderContext;
pub use fields::validate_fields;
pub use merge::merge_duplicates;
pub use order::validate_order;
pub use placement::{
    Align, ImageSize, PLACEMENT_TOLERANCE_INCHES, Placement, PlacementError, PrintArea,
};
pub use resolved::{ItemSource, ResolvedLineItem, ResolvedOrder};
pub use snapshot::StoreSnapshot;
pub use violation::{
    Violation, ViolationKind, rule_kind, rule_message, rule_violation, service_message,
};
