//! What the copy of the store holds of an item: its id and when it last changed; and where a read
//! sorted by change reaches what the copy already holds. Pure: no I/O.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use store_api_raw::requests::GetById;

use crate::model::{CatalogProduct, Product};

/// An item of the store's copy, stamped with the time it last changed.
pub(crate) trait Versioned: GetById + Clone + Send + Sync + 'static {
    /// Which collection, for progress and logs.
    const COLLECTION: Collection;
    /// When the item last changed, as the service says.
    fn updated_at(&self) -> Option<DateTime<Utc>>;
    /// When the item was created (the copy keeps the service's default order, newest first).
    fn created_at(&self) -> Option<DateTime<Utc>>;
}

/// The two collections pre-flight validation reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Collection {
    /// `GET /catalog-products`.
    Catalog,
    /// `GET /products`.
    Products,
}

impl std::fmt::Display for Collection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Collection::Catalog => "catalog products",
            Collection::Products => "products",
        })
    }
}

impl Versioned for CatalogProduct {
    const COLLECTION: Collection = Collection::Catalog;
    fn updated_at(&self) -> Option<DateTime<Utc>> {
        self.updated_at
    }
    fn created_at(&self) -> Option<DateTime<Utc>> {
        self.created_at
    }
}

impl Versioned for Product {
    const COLLECTION: Collection = Collection::Products;
    fn updated_at(&self) -> Option<DateTime<Utc>> {
        self.updated_at
    }
    fn created_at(&self) -> Option<DateTime<Utc>> {
        self.created_at
    }
}

/// What the copy holds of one collection: each item's `updatedAt` by id, and the newest of them.
#[derive(Debug, Default)]
pub(crate) struct Held {
    pub stamps: HashMap<String, Option<DateTime<Utc>>>,
    pub newest: Option<DateTime<Utc>>,
}

impl Held {
    pub fn of<'a, T: Versioned + 'a>(items: impl IntoIterator<Item = &'a T>) -> Held {
        let mut held = Held::default();
        for item in items {
            let stamp = item.updated_at();
            held.newest = held.newest.max(stamp);
            held.stamps.insert(item.id().to_owned(), stamp);
        }
        held
    }

    /// These stamps with `changes` put in and `removed` taken out.
    pub fn updated<'a, T: Versioned + 'a>(
        &self,
        changes: impl IntoIterator<Item = &'a T>,
        removed: &[&str],
    ) -> Held {
        let mut stamps = self.stamps.clone();
        for id in removed {
            stamps.remove(*id);
        }
        for item in changes {
            stamps.insert(item.id().to_owned(), item.updated_at());
        }
        let newest = stamps.values().copied().max().flatten();
        Held { stamps, newest }
    }

    /// Whether `item` is one the copy holds as it is (same `updatedAt`).
    pub fn holds_unchanged<T: Versioned>(&self, item: &T) -> bool {
        self.stamps.get(item.id()) == Some(&item.updated_at())
    }
}

/// Whether an incremental read may stop after this page: it reached what the copy already holds.
///
/// The pages run newest change first, so the first item older than the newest the copy holds, or one
/// of the same millisecond that the copy holds unchanged, marks where the copy's knowledge begins:
/// every change since the copy was read sorts above it. An item without `updatedAt` cannot be placed
/// and counts as known (the service stamps every item; see the crate's README on staleness).
pub(crate) fn reaches_known<T: Versioned>(page: &[T], held: &Held) -> bool {
    let Some(newest) = held.newest else {
        // The copy holds no stamp at all: nothing marks where its knowledge begins.
        return false;
    };
    page.iter().any(|item| match item.updated_at() {
        None => true,
        Some(stamp) => stamp < newest || (stamp == newest && held.holds_unchanged(item)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product(id: &str, updated_ms: i64) -> Product {
        let mut product = Product::new(id.to_owned());
        product.updated_at = DateTime::from_timestamp_millis(updated_ms);
        product
    }

    #[test]
    fn a_read_stops_where_the_copy_begins() {
        let held = Held::of(&[product("a", 10), product("b", 20), product("c", 20)]);
        // (page, whether it reaches the copy)
        let cases = [
            // Newer than anything held: changes, read on.
            (vec![product("d", 30), product("b", 25)], false),
            // Older than the newest held: everything after it is known.
            (vec![product("d", 30), product("a", 10)], true),
            // The newest millisecond, held as it is: known.
            (vec![product("d", 30), product("c", 20)], true),
            // The newest millisecond, but not held (created in the same millisecond): read on.
            (vec![product("e", 20)], false),
            // Held, same millisecond as the newest, but the copy has another stamp for it.
            (vec![product("a", 20)], false),
            (vec![], false),
        ];
        for (page, expected) in cases {
            let ids: Vec<_> = page.iter().map(|p| p.id.clone()).collect();
            assert_eq!(reaches_known(&page, &held), expected, "{ids:?}");
        }
        // A copy with no stamps cannot tell where it begins: every page is read.
        let unstamped = Held::of(&[Product::new("x".into())]);
        assert!(!reaches_known(&[product("x", 1)], &unstamped));
        // An item without a stamp counts as known.
        assert!(reaches_known(&[Product::new("y".into())], &held));
    }
}
