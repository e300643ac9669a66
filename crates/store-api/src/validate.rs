//! Pre-flight validation: every rule the service enforces on a create-order request, checked locally.
//!
//! The rules live in the `store-api-rules` crate, which the local emulator (`store-api-fixtures`) runs
//! too, so the client's pre-flight check and the emulator can never disagree. This module re-exports
//! what a user of the client calls:
//!
//! - [`Orders::preflight`](crate::Orders::preflight) (and [`Orders::submit`](crate::Orders::submit),
//!   which runs it first) checks a request against the store's cached [`StoreSnapshot`]; a refusal is
//!   [`Error::Invalid`](crate::Error::Invalid), a list of [`Violation`]s, each with its
//!   [`ViolationKind`], wire path and the service's message.
//! - [`validate_order`] runs the same check against any [`OrderContext`] (a snapshot, or a store of
//!   your own); [`validate_fields`] the rules that need no store data.
//! - [`merge_duplicates`] folds line items naming the same variant, which the service refuses.
//! - [`Placement`] computes and checks where a design sits in a [`PrintArea`] (`Placement::fit`,
//!   `center`, `clamp`, `check`), as [`Design`](crate::Design) uses it.
//!
//! What only the emulator needs (the resolved order it records, the wording of a failed schema rule,
//! the error envelope's message, store lookups, body decoding) is `store-api-rules`' own.
//!
//! With the `testing` feature, `validate::testing` provides an in-memory `TestCatalog` and request builders.

use store_api_raw::types;

pub use store_api_rules::{
    Align, ImageSize, OrderContext, PLACEMENT_TOLERANCE_INCHES, Placement, PlacementError,
    PrintArea, StoreSnapshot, Violation, ViolationKind, merge_duplicates, validate_fields,
};

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub use store_api_rules::testing;

/// Checks a create-order request against the store `ctx` with every rule the service applies: the body
/// rules ([`validate_fields`]) and the ordering rules of standard and custom line items. `Ok` when the
/// service would accept it as far as can be known without sending it; otherwise every violation found,
/// field violations first.
///
/// ```
/// use store_api::validate::{OrderContext, ViolationKind, validate_order};
/// use store_api::model::{CatalogProduct, CatalogVariant, Product, ProductVariant};
///
/// /// A store with no products, blanks or artworks.
/// struct EmptyStore;
///
/// impl OrderContext for EmptyStore {
///     fn product_variant(&self, _: &str) -> Option<(&Product, &ProductVariant)> { None }
///     fn product_variant_by_sku(&self, _: &str) -> Option<(&Product, &ProductVariant)> { None }
///     fn catalog_variant(&self, _: &str) -> Option<(&CatalogProduct, &CatalogVariant)> { None }
///     fn artwork_exists(&self, _: &str) -> bool { false }
/// }
///
/// # fn main() -> Result<(), store_api::BuildError> {
/// use store_api::{AddressLines, ShipToAddress, OrderBuilder, ShipTo};
/// let address = ShipToAddress::new(AddressLines {
///     street_address: "1 Main St",
///     city_or_town: "Springfield",
///     state_or_province: "IL",
///     postal_code: "62701",
///     country: "US",
/// })?;
/// let ship_to = ShipTo::new("Ada", "Lovelace", address)?;
/// let order = OrderBuilder::new("1001", ship_to)?.variant("var_123", 2).build()?;
///
/// let violations = validate_order(order.as_request(), &EmptyStore).err().unwrap_or_default();
/// assert_eq!(violations.len(), 1);
/// assert_eq!(violations[0].kind, ViolationKind::ProductNotFound);
/// assert_eq!(violations[0].path, "lineItems.0.productVariantId");
/// assert_eq!(
///     violations[0].message(),
///     "No product found in the store for a line item: productVariantId var_123"
/// );
/// assert!(!violations[0].is_field_validation());
/// # Ok(())
/// # }
/// ```
pub fn validate_order<C: OrderContext>(
    order: &types::CreateOrderRequest,
    ctx: &C,
) -> Result<(), Vec<Violation>> {
    store_api_rules::validate_order(order, ctx).map(drop)
}
