//! What a valid create-order request buys: each line item with the store data it resolves to, borrowed
//! from the request and the store, so the emulator prices and records it from the same lookups the rules
//! used.

use std::fmt;

use store_api_raw::types;

use super::context::OrderContext;
use super::resolve::{Resolution, non_empty, resolve_variant};

/// A create-order request that passed every rule, and the store it was checked against.
///
/// Returned by [`validate_order`](super::validate_order); it borrows the request and the store
/// ([`OrderContext`](super::OrderContext)). It holds no list of its own, so validating an order allocates
/// nothing: [`ResolvedOrder::line_items`] looks each item's variant or blank up again as it goes (a hash
/// probe in [`StoreSnapshot`](super::StoreSnapshot)), with the same lookups the rules used.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct ResolvedOrder<'a> {
    /// The request as sent.
    pub request: &'a types::CreateOrderRequest,
    /// The store it was checked against.
    store: &'a dyn OrderContext,
}

impl<'a> ResolvedOrder<'a> {
    /// `request`, which passed every rule against `store`.
    pub(crate) fn new(
        request: &'a types::CreateOrderRequest,
        store: &'a dyn OrderContext,
    ) -> ResolvedOrder<'a> {
        ResolvedOrder { request, store }
    }

    /// One entry per line item of the request, in the request's order: each with its variant or blank.
    ///
    /// Every item resolved when the order was validated; an [`OrderContext`] whose answers changed since
    /// (through interior mutability) could make one stop resolving, and such an item is left out.
    pub fn line_items(&self) -> impl Iterator<Item = ResolvedLineItem<'a>> + 'a {
        let store = self.store;
        self.request.line_items.iter().filter_map(move |input| {
            Some(ResolvedLineItem {
                input,
                source: source_of(input, store)?,
            })
        })
    }
}

impl fmt::Debug for ResolvedOrder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolvedOrder")
            .field("request", &self.request)
            .field("line_items", &self.line_items().collect::<Vec<_>>())
            .finish()
    }
}

/// What a line item of a valid order orders, looked up as its rules look it up.
fn source_of<'a>(
    input: &'a types::LineItemInput,
    store: &'a dyn OrderContext,
) -> Option<ItemSource<'a>> {
    if input.is_custom {
        let (blank, variant) =
            store.catalog_variant(non_empty(input.catalog_product_variant_id.as_deref())?)?;
        Some(ItemSource::Blank { blank, variant })
    } else {
        match resolve_variant(input, store) {
            Resolution::Found {
                product, variant, ..
            } => Some(ItemSource::Product { product, variant }),
            _ => None,
        }
    }
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
