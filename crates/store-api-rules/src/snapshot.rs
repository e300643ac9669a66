//! The client's copy of the store that pre-flight validation checks orders against: the catalog and the
//! products at one moment, indexed once so each lookup is a hash probe rather than a scan.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use store_api_raw::types;

use super::context::OrderContext;

/// A copy of the store's catalog and products at one moment, with its lookups indexed.
///
/// Built with [`StoreSnapshot::new`]; the lists are read-only afterwards so the index stays true.
#[derive(Debug, Default)]
pub struct StoreSnapshot {
    catalog: Vec<types::CatalogProduct>,
    products: Vec<types::Product>,
    index: Index,
}

/// Positions (list index, variant index) by key; the first of equal keys wins, as in [`super::lookup`].
#[derive(Debug, Default)]
struct Index {
    variant_ids: Positions,
    skus: Positions,
    catalog_variant_ids: Positions,
}

/// Positions by id, hashed with the Fx hash (rustc's, from `rustc-hash`): several times cheaper than the
/// default SipHash on short ids, which is most of a lookup's cost. SipHash's protection against chosen
/// keys is not needed here: the keys are the store's own ids, fixed when the snapshot is built, so a
/// crafted id in an order can only probe the table, never fill one bucket.
type Positions = HashMap<String, (usize, usize), rustc_hash::FxBuildHasher>;

impl StoreSnapshot {
    /// A snapshot of `catalog` (the blanks visible to the store) and `products` (every status).
    pub fn new(
        catalog: Vec<types::CatalogProduct>,
        products: Vec<types::Product>,
    ) -> StoreSnapshot {
        let mut index = Index::default();
        for (at, product) in products.iter().enumerate() {
            for (variant_at, variant) in product.variants.iter().enumerate() {
                first(&mut index.variant_ids, &variant.id, (at, variant_at));
                if let Some(sku) = &variant.sku {
                    first(&mut index.skus, sku, (at, variant_at));
                }
            }
        }
        for (at, blank) in catalog.iter().enumerate() {
            for (variant_at, variant) in blank.variants.iter().enumerate() {
                first(
                    &mut index.catalog_variant_ids,
                    &variant.id,
                    (at, variant_at),
                );
            }
        }
        StoreSnapshot {
            catalog,
            products,
            index,
        }
    }

    /// Blanks visible to the store.
    pub fn catalog(&self) -> &[types::CatalogProduct] {
        &self.catalog
    }

    /// The store's products (every status).
    pub fn products(&self) -> &[types::Product] {
        &self.products
    }

    fn product_at(
        &self,
        position: Option<&(usize, usize)>,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        let &(at, variant_at) = position?;
        let product = self.products.get(at)?;
        Some((product, product.variants.get(variant_at)?))
    }
}

/// Records `position` under `key` unless an earlier entry holds it.
fn first(map: &mut Positions, key: &str, position: (usize, usize)) {
    if let Entry::Vacant(slot) = map.entry(key.to_owned()) {
        slot.insert(position);
    }
}

/// Artworks are not copied (a store can hold many): pre-flight treats every artwork id as the store's
/// and leaves that one rule to the service.
impl OrderContext for StoreSnapshot {
    fn product_variant(
        &self,
        variant_id: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        self.product_at(self.index.variant_ids.get(variant_id))
    }

    fn product_variant_by_sku(
        &self,
        sku: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        self.product_at(self.index.skus.get(sku))
    }

    fn catalog_variant(
        &self,
        catalog_variant_id: &str,
    ) -> Option<(&types::CatalogProduct, &types::CatalogVariant)> {
        let &(at, variant_at) = self.index.catalog_variant_ids.get(catalog_variant_id)?;
        let blank = self.catalog.get(at)?;
        Some((blank, blank.variants.get(variant_at)?))
    }

    fn artwork_exists(&self, _artwork_id: &str) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::lookup;
    use super::super::testing::TestCatalog;
    use super::*;

    /// The index answers exactly what a scan of the same lists answers, repeats and misses included.
    #[test]
    fn the_index_agrees_with_the_scans() {
        let sample = TestCatalog::sample();
        let mut products = sample.products.clone();
        // A second variant with an existing id and SKU: the first must still win.
        products.push(super::super::testing::product(
            "prod_copy",
            store_api_raw::open::ProductStatus::Active,
            &[("var_tee_s", "TEE-M")],
        ));
        let snapshot = StoreSnapshot::new(sample.catalog_products.clone(), products.clone());
        let ids = ["var_tee_s", "var_tee_m", "var_hidden", "TEE-S", "nope", ""];
        for key in ids {
            assert_eq!(
                snapshot.product_variant(key),
                lookup::product_variant(&products, key)
            );
        }
        for key in ["TEE-S", "TEE-M", "GONE", "var_tee_s", "nope"] {
            assert_eq!(
                snapshot.product_variant_by_sku(key),
                lookup::product_variant_by_sku(&products, key)
            );
        }
        for key in ["cv_tee_white_m", "cv_tee_old", "cv_retired", "nope"] {
            assert_eq!(
                snapshot.catalog_variant(key),
                lookup::catalog_variant(&sample.catalog_products, key)
            );
        }
        assert!(snapshot.catalog_variant("cv_retired").is_some());
    }
}
