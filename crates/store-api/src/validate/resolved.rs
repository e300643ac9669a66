//! What a valid create-order request buys: each line item with the store data it resolved to, borrowed
//! from the request and the store, so the emulator prices and records it without looking anything up again.

use store_api_raw::types;

/// A create-order request that passed every rule, with each line item's resolved variant or blank.
///
/// Returned by [`validate_order`](super::validate_order); it borrows the request and the store
/// ([`OrderContext`](super::OrderContext)) it was checked against.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ResolvedOrder<'a> {
    /// The request as sent.
    pub request: &'a types::CreateOrderRequest,
    /// One entry per line item of the request, in the request's order.
    pub line_items: Vec<ResolvedLineItem<'a>>,
}

/// One line item of a [`ResolvedOrder`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ResolvedLineItem<'a> {
    /// The line item as sent.
    pub input: &'a types::LineItemInput,
    /// What it orders.
    pub source: ItemSource<'a>,
}

/// What a resolved line item orders: the specification's two kinds of line item, so the enum is closed.
#[derive(Clone, Copy, Debug)]
pub enum ItemSource<'a> {
    /// A standard line item: a variant of one of the store's products (its `cost` is what the store pays).
    Product {
        /// The product.
        product: &'a types::Product,
        /// The variant named by `productVariantId` or `sku`.
        variant: &'a types::ProductVariant,
    },
    /// A custom line item: a catalog variant and its blank, decorated as the input says.
    Blank {
        /// The blank (catalog product).
        blank: &'a types::CatalogProduct,
        /// The catalog variant named by `catalogProductVariantId`.
        variant: &'a types::CatalogVariant,
    },
}
