//! The copy pre-flight validation checks orders against: a base read whole, and what changed since in
//! a small layer above it. A refresh that finds k changes builds a layer of k items, not a copy of the
//! store; the layer is folded into a new base only once it grows past a fraction of the store.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use super::merge::fold;
use super::versioned::Versioned;
use crate::model::{CatalogProduct, CatalogVariant, Product, ProductVariant};
use crate::validate::{OrderContext, StoreSnapshot};

/// Changes a layer holds before they are folded into a new base: at least this many…
const LAYER_MIN: usize = 1_000;
/// …or this fraction of the base (1 / `LAYER_FRACTION`), whichever is larger.
const LAYER_FRACTION: usize = 10;

/// The client's copy of the store's catalog and products, as pre-flight validation reads it
/// ([`OrderContext`]). From [`StoreCache::snapshot`](super::StoreCache::snapshot) or
/// [`StoreCache::current`](super::StoreCache::current).
///
/// A lookup answers what the service would: a changed product as it is now, a removed one not at all.
/// Where two products share a SKU or a variant id (which the service does not forbid), the one changed
/// most recently wins, then the newest.
#[derive(Debug)]
pub struct StoreCopy {
    base: Arc<StoreSnapshot>,
    /// Items changed or added since the base was read, indexed like the base.
    layer: StoreSnapshot,
    /// Ids of the base's products that the layer replaces or that were removed.
    hidden_products: HashSet<String>,
    /// Ids of the base's catalog products that the layer replaces or that were removed.
    hidden_catalog: HashSet<String>,
    /// [`StoreCopy::to_snapshot`], made once when asked for.
    whole: OnceLock<Arc<StoreSnapshot>>,
}

impl StoreCopy {
    /// A copy of exactly these lists.
    pub(crate) fn new(catalog: Vec<CatalogProduct>, products: Vec<Product>) -> StoreCopy {
        StoreCopy::over(Arc::new(StoreSnapshot::new(catalog, products)))
    }

    fn over(base: Arc<StoreSnapshot>) -> StoreCopy {
        StoreCopy {
            base,
            layer: StoreSnapshot::default(),
            hidden_products: HashSet::new(),
            hidden_catalog: HashSet::new(),
            whole: OnceLock::new(),
        }
    }

    /// This copy with `catalog` and `products` (items as the service has them now) put in and the
    /// products `removed` taken out. The caller has already dropped changes older than what it holds.
    pub(crate) fn with_changes(
        &self,
        catalog: Vec<CatalogProduct>,
        products: Vec<Product>,
        removed: &[&str],
    ) -> StoreCopy {
        let changed_catalog: HashSet<&str> = catalog.iter().map(|item| item.id.as_str()).collect();
        let gone: HashSet<&str> = products
            .iter()
            .map(|item| item.id.as_str())
            .chain(removed.iter().copied())
            .collect();
        let layer_catalog: Vec<CatalogProduct> = catalog
            .iter()
            .cloned()
            .chain(
                self.layer
                    .catalog()
                    .iter()
                    .filter(|item| !changed_catalog.contains(item.id.as_str()))
                    .cloned(),
            )
            .collect();
        let layer_products: Vec<Product> = products
            .iter()
            .cloned()
            .chain(
                self.layer
                    .products()
                    .iter()
                    .filter(|item| !gone.contains(item.id.as_str()))
                    .cloned(),
            )
            .collect();
        let mut hidden_products = self.hidden_products.clone();
        hidden_products.extend(gone.iter().map(|id| (*id).to_owned()));
        let mut hidden_catalog = self.hidden_catalog.clone();
        hidden_catalog.extend(changed_catalog.iter().map(|id| (*id).to_owned()));
        let layered = layer_catalog.len() + layer_products.len();
        let limit = LAYER_MIN
            .max((self.base.catalog().len() + self.base.products().len()) / LAYER_FRACTION);
        if layered > limit {
            // Folded into a new base: the one rebuild proportional to the store, once per `limit`
            // changes.
            let base_catalog: Vec<CatalogProduct> = self
                .base
                .catalog()
                .iter()
                .filter(|item| !hidden_catalog.contains(&item.id))
                .cloned()
                .collect();
            let base_products: Vec<Product> = self
                .base
                .products()
                .iter()
                .filter(|item| !hidden_products.contains(&item.id))
                .cloned()
                .collect();
            return StoreCopy::new(
                fold(&base_catalog, layer_catalog, &[]),
                fold(&base_products, layer_products, &[]),
            );
        }
        StoreCopy {
            base: self.base.clone(),
            layer: StoreSnapshot::new(
                fold(&[], layer_catalog, &[]),
                fold(&[], layer_products, &[]),
            ),
            hidden_products,
            hidden_catalog,
            whole: OnceLock::new(),
        }
    }

    /// Every product the copy holds (every status): changed ones first.
    pub fn products(&self) -> impl Iterator<Item = &Product> {
        self.layer.products().iter().chain(
            self.base
                .products()
                .iter()
                .filter(|item| !self.hidden_products.contains(&item.id)),
        )
    }

    /// Every blank the copy holds: changed ones first.
    pub fn catalog(&self) -> impl Iterator<Item = &CatalogProduct> {
        self.layer.catalog().iter().chain(
            self.base
                .catalog()
                .iter()
                .filter(|item| !self.hidden_catalog.contains(&item.id)),
        )
    }

    /// The copy as one [`StoreSnapshot`]: the base itself while nothing changed since it was read,
    /// else made once (a copy of the whole store) and kept.
    pub fn to_snapshot(&self) -> Arc<StoreSnapshot> {
        if self.layer.catalog().is_empty()
            && self.layer.products().is_empty()
            && self.hidden_products.is_empty()
            && self.hidden_catalog.is_empty()
        {
            return self.base.clone();
        }
        self.whole
            .get_or_init(|| {
                let catalog: Vec<CatalogProduct> = self.catalog().cloned().collect();
                let products: Vec<Product> = self.products().cloned().collect();
                Arc::new(StoreSnapshot::new(
                    fold(&[], catalog, &[]),
                    fold(&[], products, &[]),
                ))
            })
            .clone()
    }

    fn visible_product<'a>(
        &self,
        found: Option<(&'a Product, &'a ProductVariant)>,
    ) -> Option<(&'a Product, &'a ProductVariant)> {
        found.filter(|(product, _)| !self.hidden_products.contains(&product.id))
    }

    /// Whether the copy's base is `other`'s (so it shares its memory).
    #[cfg(test)]
    fn shares_base_with(&self, other: &StoreCopy) -> bool {
        Arc::ptr_eq(&self.base, &other.base)
    }
}

/// Artworks are not copied (a store can hold many): pre-flight treats every artwork id as the store's
/// and leaves that one rule to the service.
impl OrderContext for StoreCopy {
    fn product_variant(&self, variant_id: &str) -> Option<(&Product, &ProductVariant)> {
        self.layer
            .product_variant(variant_id)
            .or_else(|| self.visible_product(self.base.product_variant(variant_id)))
    }

    fn product_variant_by_sku(&self, sku: &str) -> Option<(&Product, &ProductVariant)> {
        self.layer
            .product_variant_by_sku(sku)
            .or_else(|| self.visible_product(self.base.product_variant_by_sku(sku)))
    }

    fn catalog_variant(
        &self,
        catalog_variant_id: &str,
    ) -> Option<(&CatalogProduct, &CatalogVariant)> {
        self.layer.catalog_variant(catalog_variant_id).or_else(|| {
            self.base
                .catalog_variant(catalog_variant_id)
                .filter(|(blank, _)| !self.hidden_catalog.contains(&blank.id))
        })
    }

    fn artwork_exists(&self, _artwork_id: &str) -> bool {
        true
    }
}

/// Items of `T` in `changes` that are newer than (or as new as) what `held` stamps for them: a read
/// never takes back what a webhook brought meanwhile.
pub(crate) fn newer<T: Versioned>(changes: Vec<T>, held: &super::versioned::Held) -> Vec<T> {
    changes
        .into_iter()
        .filter(|item| match held.stamps.get(item.id()) {
            Some(stamp) => item.updated_at() >= *stamp,
            None => true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;
    use crate::model::ProductStatus;

    fn product(id: &str, sku: &str, updated_ms: i64) -> Product {
        let mut product = Product::new(id.to_owned());
        product.updated_at = DateTime::from_timestamp_millis(updated_ms);
        product.created_at = DateTime::from_timestamp_millis(1);
        product.status = Some(ProductStatus::Active);
        let mut variant = ProductVariant::new(format!("var_{id}"));
        variant.sku = Some(sku.to_owned());
        product.variants.push(variant);
        product
    }

    fn ids(copy: &StoreCopy) -> Vec<&str> {
        let mut ids: Vec<&str> = copy.products().map(|p| p.id.as_str()).collect();
        ids.sort_unstable();
        ids
    }

    #[test]
    fn a_layer_answers_what_changed_and_hides_what_it_replaces_or_removes() {
        let base = StoreCopy::new(
            Vec::new(),
            vec![
                product("a", "SKU-A", 1),
                product("b", "SKU-B", 1),
                product("c", "SKU-C", 1),
            ],
        );
        // b moves to another SKU; c is removed; d is new.
        let next = base.with_changes(
            Vec::new(),
            vec![product("b", "SKU-B2", 2), product("d", "SKU-D", 2)],
            &["c"],
        );
        assert!(
            next.shares_base_with(&base),
            "a few changes do not copy the store"
        );
        assert_eq!(ids(&next), ["a", "b", "d"]);
        let found = |sku: &str| next.product_variant_by_sku(sku).map(|(p, _)| p.id.as_str());
        assert_eq!(found("SKU-A"), Some("a"));
        assert_eq!(
            found("SKU-B"),
            None,
            "the old SKU of a changed product is gone"
        );
        assert_eq!(found("SKU-B2"), Some("b"));
        assert_eq!(found("SKU-C"), None, "a removed product is gone");
        assert_eq!(found("SKU-D"), Some("d"));
        assert_eq!(
            next.product_variant("var_c").map(|(p, _)| p.id.as_str()),
            None
        );
        // The whole snapshot answers alike.
        let whole = next.to_snapshot();
        for sku in ["SKU-A", "SKU-B", "SKU-B2", "SKU-C", "SKU-D"] {
            assert_eq!(
                whole
                    .product_variant_by_sku(sku)
                    .map(|(p, _)| p.id.as_str()),
                found(sku),
                "{sku}"
            );
        }
        // A second layer keeps the first one's changes unless it replaces them.
        let later = next.with_changes(Vec::new(), vec![product("d", "SKU-D2", 3)], &[]);
        assert_eq!(ids(&later), ["a", "b", "d"]);
        assert_eq!(
            later
                .product_variant_by_sku("SKU-B2")
                .map(|(p, _)| p.id.as_str()),
            Some("b")
        );
        assert!(later.product_variant_by_sku("SKU-D").is_none());
    }

    #[test]
    fn a_layer_past_its_limit_is_folded_into_a_new_base() {
        let base = StoreCopy::new(Vec::new(), vec![product("a", "SKU-A", 1)]);
        let many: Vec<Product> = (0..=LAYER_MIN)
            .map(|n| product(&format!("p{n}"), &format!("SKU-{n}"), 2))
            .collect();
        let next = base.with_changes(Vec::new(), many, &["a"]);
        assert!(!next.shares_base_with(&base));
        assert!(next.layer.products().is_empty());
        assert_eq!(next.products().count(), LAYER_MIN + 1);
        assert!(next.product_variant_by_sku("SKU-A").is_none());
        assert!(next.product_variant_by_sku("SKU-7").is_some());
    }
}
