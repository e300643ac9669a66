//! The store as the order rules see it: one store's products and artworks and the blanks visible to it.

use store_api_raw::types;
use store_api_rules::{OrderContext, lookup};

use crate::state::{State, StoreState};

/// One store of the emulator's state, read through the validator's shared lookups: the products' through
/// their index ([`Products`](crate::state::products::Products)), the catalog's by the shared scan (a few blanks).
pub(super) struct StoreView<'a> {
    pub state: &'a State,
    pub store: &'a StoreState,
}

impl OrderContext for StoreView<'_> {
    fn product_variant(
        &self,
        variant_id: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        self.store.products.variant(variant_id)
    }

    fn product_variant_by_sku(
        &self,
        sku: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        self.store.products.variant_by_sku(sku)
    }

    fn catalog_variant(
        &self,
        catalog_variant_id: &str,
    ) -> Option<(&types::CatalogProduct, &types::CatalogVariant)> {
        let visible = self
            .state
            .visible_catalog(&self.store.id)
            .map(|blank| &blank.record.value);
        lookup::catalog_variant(visible, catalog_variant_id)
    }

    fn artwork_exists(&self, artwork_id: &str) -> bool {
        self.store.artworks.iter().any(|a| a.value.id == artwork_id)
    }
}
