//! Create-order requests built in code: [`OrderBuilder`] for the order, [`ShipToAddress`] and [`ShipTo`] for
//! where it goes, [`CustomItem`] and [`Design`] for items printed on a blank.
//!
//! Every value is checked as it is built, by the same rules the pre-flight validator runs
//! ([`validate`](crate::validate)), and every [`BuildError`] names its field by its wire path
//! (`shippingAddress.address.country`, `lineItems.1.decorations.0.physicalWidth`).
//!
//! [`OrderBuilder::build`] gives an [`IdentifiedOrder`]: a request that carries its `externalOrderId`,
//! the only kind [`Orders::submit`](crate::Orders::submit) takes, so a submission without one does not
//! compile. A request read from JSON becomes one with `IdentifiedOrder::try_from`.
//!
//! ```
//! use store_api::model::DecorationMethod;
//! use store_api::validate::{Align, PrintArea};
//! use store_api::{ShipToAddress, CustomItem, Design, OrderBuilder, ShipTo};
//!
//! # fn run() -> Result<(), store_api::BuildError> {
//! let ship_to = ShipTo::new("Ada", "Lovelace", ShipToAddress::us("1 Main St", "Austin", "TX", "78701")?)?;
//! let front = PrintArea::new(12.0, 16.0); // from the blank's decoration location in the catalog
//! let order = OrderBuilder::new("order-1042", ship_to)?
//!     .sku("AA-TEE-SUN-BLK-M", 2)
//!     .variant("var_tee_s", 1)
//!     .custom(CustomItem::new("cv_tee_white_m").design(
//!         Design::new("art_logo", "front", DecorationMethod::DirectToGarment).fit(front, 1200, 600, Align::Top),
//!     ))
//!     .build()?;
//! assert_eq!(order.external_order_id(), "order-1042");
//! assert_eq!(order.as_request().line_items.len(), 3);
//! # Ok(())
//! # }
//! # run().unwrap();
//! ```

mod address;
mod error;
mod identified;
pub(crate) mod item;
mod order;

#[cfg(test)]
mod tests;

pub use address::{ShipTo, ShipToAddress};
pub use error::BuildError;
pub use identified::IdentifiedOrder;
pub use item::{CustomItem, Design};
pub use order::OrderBuilder;

/// A create-order request (the wire type): read it from JSON, or build it with
/// [`OrderBuilder`](crate::OrderBuilder) (which gives the [`IdentifiedOrder`] that
/// [`Orders::submit`](crate::Orders::submit) takes). Its fields are public but it is `#[non_exhaustive]`: construct it with
/// `NewOrder::new(line_items, shipping_address)`, so that a field added to the spec is not a breaking
/// change.
pub type NewOrder = store_api_raw::types::CreateOrderRequest;
