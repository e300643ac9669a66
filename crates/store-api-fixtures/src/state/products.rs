//! A store's products with their lookups indexed: an order's SKU or variant id is found by a hash probe,
//! not a scan, so an order costs the same in a store of 20,000 products as in one of ten (a scan took
//! 10 ms a line item there). Every change goes through a method: a product added or changed in place
//! updates the index (the app's usual edits, which must not cost a rebuild each); a removal, or a change
//! through [`Products::iter_mut`], drops it, and the next lookup builds it again.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::ops::Deref;
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use store_api_raw::types;

use super::record::Record;

/// The products of one store, in creation order, read as a slice.
#[derive(Clone, Debug, Default)]
pub(crate) struct Products {
    records: Vec<Record<types::Product>>,
    index: OnceLock<Index>,
}

/// Every holder (product, variant) of each variant id and SKU, in list order: the first is the one a
/// lookup answers, as in `store_api_rules::lookup`'s scans, so the index answers what a scan would.
#[derive(Clone, Debug, Default)]
struct Index {
    variant_ids: HashMap<String, Vec<(usize, usize)>>,
    skus: HashMap<String, Vec<(usize, usize)>>,
}

impl Index {
    fn add(&mut self, at: usize, product: &types::Product) {
        for (variant_at, variant) in product.variants.iter().enumerate() {
            holders(&mut self.variant_ids, &variant.id).push((at, variant_at));
            if let Some(sku) = &variant.sku {
                holders(&mut self.skus, sku).push((at, variant_at));
            }
        }
    }

    fn remove(&mut self, at: usize, product: &types::Product) {
        for variant in &product.variants {
            drop_holder(&mut self.variant_ids, &variant.id, at);
            if let Some(sku) = &variant.sku {
                drop_holder(&mut self.skus, sku, at);
            }
        }
    }
}

fn holders<'a>(
    map: &'a mut HashMap<String, Vec<(usize, usize)>>,
    key: &str,
) -> &'a mut Vec<(usize, usize)> {
    match map.entry(key.to_owned()) {
        Entry::Occupied(slot) => slot.into_mut(),
        Entry::Vacant(slot) => slot.insert(Vec::new()),
    }
}

fn drop_holder(map: &mut HashMap<String, Vec<(usize, usize)>>, key: &str, at: usize) {
    if let Some(list) = map.get_mut(key) {
        list.retain(|(holder, _)| *holder != at);
        if list.is_empty() {
            map.remove(key);
        }
    }
}

impl Products {
    pub fn push(&mut self, record: Record<types::Product>) {
        // The last position: its holders go last in every list.
        if let Some(index) = self.index.get_mut() {
            index.add(self.records.len(), &record.value);
        }
        self.records.push(record);
    }

    /// Changes the product with this id in place with `change`, keeping the index; `None` when there is
    /// no such product.
    pub fn update<R>(
        &mut self,
        product_id: &str,
        change: impl FnOnce(&mut Record<types::Product>) -> R,
    ) -> Option<R> {
        let at = self.records.iter().position(|r| r.value.id == product_id)?;
        let record = &mut self.records[at];
        if let Some(index) = self.index.get_mut() {
            index.remove(at, &record.value);
        }
        let changed = change(record);
        if let Some(index) = self.index.get_mut() {
            for (variant_at, variant) in record.value.variants.iter().enumerate() {
                insert_sorted(
                    holders(&mut index.variant_ids, &variant.id),
                    (at, variant_at),
                );
                if let Some(sku) = &variant.sku {
                    insert_sorted(holders(&mut index.skus, sku), (at, variant_at));
                }
            }
        }
        Some(changed)
    }

    pub fn retain(&mut self, keep: impl FnMut(&Record<types::Product>) -> bool) {
        self.index = OnceLock::new();
        self.records.retain(keep);
    }

    /// The products to change in place (the index is rebuilt after).
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Record<types::Product>> {
        self.index = OnceLock::new();
        self.records.iter_mut()
    }

    /// The first variant with this id, and its product.
    pub fn variant(&self, variant_id: &str) -> Option<(&types::Product, &types::ProductVariant)> {
        self.at(self
            .index()
            .variant_ids
            .get(variant_id)
            .and_then(|l| l.first()))
    }

    /// The first variant with this SKU, and its product.
    pub fn variant_by_sku(&self, sku: &str) -> Option<(&types::Product, &types::ProductVariant)> {
        self.at(self.index().skus.get(sku).and_then(|l| l.first()))
    }

    fn at(
        &self,
        position: Option<&(usize, usize)>,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        let &(at, variant_at) = position?;
        let product = &self.records.get(at)?.value;
        Some((product, product.variants.get(variant_at)?))
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let mut index = Index::default();
            for (at, record) in self.records.iter().enumerate() {
                index.add(at, &record.value);
            }
            index
        })
    }
}

fn insert_sorted(list: &mut Vec<(usize, usize)>, holder: (usize, usize)) {
    let at = list.partition_point(|known| *known < holder);
    list.insert(at, holder);
}

impl Deref for Products {
    type Target = [Record<types::Product>];

    fn deref(&self) -> &Self::Target {
        &self.records
    }
}

impl Serialize for Products {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.records.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Products {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Products {
            records: Vec::deserialize(deserializer)?,
            index: OnceLock::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use store_api_rules::lookup;

    use super::*;

    fn product(id: &str, variants: &[(&str, &str)]) -> Record<types::Product> {
        let mut product = types::Product::new(id.to_owned());
        for (variant_id, sku) in variants {
            let mut variant = types::ProductVariant::new((*variant_id).to_owned());
            variant.sku = Some((*sku).to_owned());
            product.variants.push(variant);
        }
        Record::new(0, product)
    }

    /// The index answers what the scans answer, repeats and changes included.
    #[test]
    fn the_index_agrees_with_the_scans_through_changes() {
        let mut products = Products::default();
        products.push(product("a", &[("v1", "S1"), ("v2", "S2")]));
        products.push(product("b", &[("v1", "S3"), ("v3", "S1")]));
        let agree = |products: &Products| {
            let values: Vec<&types::Product> = products.iter().map(|r| &r.value).collect();
            for key in ["v1", "v2", "v3", "S1", "S2", "S3", "nope"] {
                assert_eq!(
                    products.variant(key),
                    lookup::product_variant(values.iter().copied(), key)
                );
                assert_eq!(
                    products.variant_by_sku(key),
                    lookup::product_variant_by_sku(values.iter().copied(), key)
                );
            }
        };
        agree(&products);
        products.retain(|r| r.value.id != "a");
        agree(&products);
        if let Some(record) = products.iter_mut().next() {
            record.value.variants[0].sku = Some("S9".into());
        }
        agree(&products);
        assert!(products.variant_by_sku("S9").is_some());
        products.push(product("c", &[("v4", "S4")]));
        agree(&products);
        // Changes in place keep the index, and it still agrees: a key moved to a later product, one
        // taken from the first holder, one given to an earlier product.
        products.push(product("d", &[("v5", "S4"), ("v6", "S6")]));
        agree(&products);
        products.update("c", |r| r.value.variants[0].sku = Some("S6".into()));
        agree(&products);
        products.update("d", |r| r.value.variants.truncate(1));
        agree(&products);
        products.update("b", |r| r.value.variants[0].id = "v5".into());
        agree(&products);
        assert!(products.update("nope", |_| ()).is_none());
    }
}
