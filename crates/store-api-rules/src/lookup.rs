//! The store lookups of [`OrderContext`](super::OrderContext), written once: the scans every
//! implementation runs over its own lists, and the keys [`StoreSnapshot`](super::StoreSnapshot) indexes.
//!
//! The first match wins, in list order, both here and in the snapshot's index, so an index and a scan over
//! the same lists always agree (a SKU two variants share resolves to the first).

use store_api_raw::types;

/// Every variant of `products` with its product, in order.
pub fn product_variants<'a>(
    products: impl IntoIterator<Item = &'a types::Product>,
) -> impl Iterator<Item = (&'a types::Product, &'a types::ProductVariant)> {
    products.into_iter().flat_map(|product| {
        product
            .variants
            .iter()
            .map(move |variant| (product, variant))
    })
}

/// Every variant of `blanks` with its blank, in order.
pub fn catalog_variants<'a>(
    blanks: impl IntoIterator<Item = &'a types::CatalogProduct>,
) -> impl Iterator<Item = (&'a types::CatalogProduct, &'a types::CatalogVariant)> {
    blanks
        .into_iter()
        .flat_map(|blank| blank.variants.iter().map(move |variant| (blank, variant)))
}

/// The first variant of `products` with this id.
pub fn product_variant<'a>(
    products: impl IntoIterator<Item = &'a types::Product>,
    variant_id: &str,
) -> Option<(&'a types::Product, &'a types::ProductVariant)> {
    product_variants(products).find(|(_, variant)| variant.id == variant_id)
}

/// The first variant of `products` with this SKU.
pub fn product_variant_by_sku<'a>(
    products: impl IntoIterator<Item = &'a types::Product>,
    sku: &str,
) -> Option<(&'a types::Product, &'a types::ProductVariant)> {
    product_variants(products).find(|(_, variant)| variant.sku.as_deref() == Some(sku))
}

/// The first catalog variant of `blanks` with this id.
pub fn catalog_variant<'a>(
    blanks: impl IntoIterator<Item = &'a types::CatalogProduct>,
    catalog_variant_id: &str,
) -> Option<(&'a types::CatalogProduct, &'a types::CatalogVariant)> {
    catalog_variants(blanks).find(|(_, variant)| variant.id == catalog_variant_id)
}
