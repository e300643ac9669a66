//! What the order rules need to know about the store: its products, its catalog and its artworks.

use store_api_raw::types;

/// The store data an order is checked against.
///
/// The client implements it over products, catalog products and artworks it fetched (or cached); the
/// emulator implements it over its own state. Lookups are exact, case-sensitive string matches.
pub trait OrderContext {
    /// A variant of one of this store's products, by variant id.
    fn product_variant(
        &self,
        variant_id: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)>;

    /// A variant of one of this store's products, by SKU.
    fn product_variant_by_sku(
        &self,
        sku: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)>;

    /// A catalog variant visible to this store, with its blank.
    fn catalog_variant(
        &self,
        catalog_variant_id: &str,
    ) -> Option<(&types::CatalogProduct, &types::CatalogVariant)>;

    /// Whether an artwork with this id belongs to this store.
    fn artwork_exists(&self, artwork_id: &str) -> bool;
}

impl<T: OrderContext + ?Sized> OrderContext for &T {
    fn product_variant(
        &self,
        variant_id: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        (**self).product_variant(variant_id)
    }

    fn product_variant_by_sku(
        &self,
        sku: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        (**self).product_variant_by_sku(sku)
    }

    fn catalog_variant(
        &self,
        catalog_variant_id: &str,
    ) -> Option<(&types::CatalogProduct, &types::CatalogVariant)> {
        (**self).catalog_variant(catalog_variant_id)
    }

    fn artwork_exists(&self, artwork_id: &str) -> bool {
        (**self).artwork_exists(artwork_id)
    }
}
