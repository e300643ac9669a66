//! The store as the order rules see it: one store's products and artworks and the blanks visible to it.

use store_api_raw::types;
use store_api_rules::{OrderContext, lookup};

use crate::state::{State, StoreState};

/// One store of the emulator's state, read through the validator's shared lookups. They scan the lists
/// (the state changes between requests, so there is no index to keep fresh).
pub(super) struct StoreView<'a> {
    pub state: &'a State,
    pub store: &'a StoreState,
}

impl OrderContext for StoreView<'_> {
    fn product_variant(
        &self,
        variant_id: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        lookup::product_variant(products(self.store), variant_id)
    }

    fn product_variant_by_sku(
        &self,
        sku: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        lookup::product_variant_by_sku(products(self.store), sku)
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

/// The store's products, without their records' bookkeeping.
fn products(store: &StoreState) -> impl Iterator<Item = &types::Product> {
    store.products.iter().map(|record| &record.value)
}
