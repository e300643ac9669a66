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
//! use store_api::validate::{Align, ImageSize, PrintArea};
//! use store_api::{AddressLines, ShipToAddress, CustomItem, Design, OrderBuilder, ShipTo};
//!
//! # fn run() -> Result<(), store_api::BuildError> {
//! let address = ShipToAddress::new(AddressLines {
//!     street_address: "1 Main St",
//!     city_or_town: "Austin",
//!     state_or_province: "TX",
//!     postal_code: "78701",
//!     country: "US",
//! })?;
//! let ship_to = ShipTo::new("Ada", "Lovelace", address)?;
//! let front = PrintArea::new(12.0, 16.0); // from the blank's decoration location in the catalog
//! let order = OrderBuilder::new("order-1042", ship_to)?
//!     .sku("AA-TEE-SUN-BLK-M", 2)
//!     .variant("var_tee_s", 1)
//!     .custom(CustomItem::new("cv_tee_white_m").design(
//!         Design::new("art_logo", "front", DecorationMethod::DirectToGarment).fit(front, ImageSize::new(1200, 600), Align::Top),
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

pub use address::{AddressLines, ShipTo, ShipToAddress};
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

/// An external order id can be looked up only without a comma: `filter[externalOrderId]=a,b` means "a
/// or b". The generated query's rule, asked here so that an order no lookup could find is refused
/// before anything is sent ([`Orders::submit`](crate::Orders::submit) must be able to look it up).
fn check_filterable_external_id(id: &str) -> Result<(), store_api_raw::requests::BuildError> {
    store_api_raw::requests::ListOrdersQuery::new()
        .external_order_id([id])
        .to_query_string()
        .map(drop)
}
