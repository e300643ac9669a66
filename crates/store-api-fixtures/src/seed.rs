//! The seed data format: stores, catalog, products and the emulator's price model.
//!
//! The built-in seed is `seed/default.json` (documented in `seed/README.md`); `--seed FILE.json` replaces it.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use store_api_raw::types;

/// The built-in seed, compiled in.
const DEFAULT_SEED: &str = include_str!("../seed/default.json");

/// A complete data set the emulator starts from.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Seed {
    /// Stores and their keys.
    pub stores: Vec<SeedStore>,
    /// Blanks, with the emulator's own price for each.
    pub catalog: Vec<SeedBlank>,
    /// Products, each owned by one store.
    pub products: Vec<SeedProduct>,
    /// The price model of custom line items and shipping.
    pub pricing: Pricing,
}

/// A store of the seed.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedStore {
    /// Store id (the `:storeId` path segment).
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub name: String,
    /// The store's one API key.
    pub api_key: String,
    /// An inactive store answers 401 `The store is not active`.
    pub active: bool,
}

/// A blank of the seed's catalog.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedBlank {
    /// The blank exactly as served.
    pub product: types::CatalogProduct,
    /// USD unit price of the blank in a custom line item (never served: the catalog has no prices).
    pub base_cost: f64,
    /// Stores that see this private blank; empty means public.
    #[serde(default)]
    pub private_to: Vec<String>,
}

/// A product of the seed.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedProduct {
    /// The owning store.
    pub store_id: String,
    /// The product exactly as served.
    pub product: types::Product,
}

/// The emulator's price model (the seed does not show the provider's).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pricing {
    /// USD cost of one decoration, by decoration method.
    pub decoration_cost: BTreeMap<String, f64>,
    /// Cost of a decoration whose method has no entry.
    pub default_decoration_cost: f64,
    /// Shipping per order.
    pub shipping: Shipping,
}

/// Shipping cost: `first_item + additional_item × (total quantity − 1)`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Shipping {
    /// Cost of the first unit.
    pub first_item: f64,
    /// Cost of every further unit.
    pub additional_item: f64,
}

/// Why a seed could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeedError {
    /// The file could not be read.
    #[error("cannot read seed file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The JSON does not have the seed's shape.
    #[error("invalid seed data at {path}: {message}")]
    Invalid {
        /// Where in the document.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl Seed {
    /// The built-in seed (`seed/default.json`), parsed once per process.
    pub fn builtin() -> Seed {
        static BUILTIN: OnceLock<Seed> = OnceLock::new();
        // The built-in file is checked by a unit test; an error here is a build defect, and an empty
        // seed is a safe fallback that keeps the emulator from panicking.
        BUILTIN
            .get_or_init(|| Seed::from_json(DEFAULT_SEED).unwrap_or_else(|_| Seed::empty()))
            .clone()
    }

    /// A seed with no stores, blanks or products.
    pub fn empty() -> Seed {
        Seed {
            stores: Vec::new(),
            catalog: Vec::new(),
            products: Vec::new(),
            pricing: Pricing {
                decoration_cost: BTreeMap::new(),
                default_decoration_cost: 0.0,
                shipping: Shipping {
                    first_item: 0.0,
                    additional_item: 0.0,
                },
            },
        }
    }

    /// Parses a seed document, naming the failing path.
    pub fn from_json(text: &str) -> Result<Seed, SeedError> {
        let deserializer = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(deserializer).map_err(|e| SeedError::Invalid {
            path: e.path().to_string(),
            message: e.inner().to_string(),
        })
    }

    /// Reads and parses a seed file.
    pub fn from_file(path: &std::path::Path) -> Result<Seed, SeedError> {
        let text = std::fs::read_to_string(path).map_err(|source| SeedError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Seed::from_json(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_seed_parses_and_has_what_the_tests_rely_on() {
        let seed = Seed::from_json(DEFAULT_SEED).unwrap();
        assert!(seed.stores.iter().filter(|s| s.active).count() >= 2);
        assert!(seed.stores.iter().any(|s| !s.active));
        assert!(seed.stores.iter().all(|s| s.api_key.len() == 36));
        assert!(seed.catalog.len() >= 6);
        assert!(seed.catalog.iter().any(|b| !b.private_to.is_empty()));
        assert!(
            seed.catalog
                .iter()
                .any(|b| b.product.is_discontinued == Some(true))
        );
    }

    #[test]
    fn a_malformed_seed_names_the_path() {
        let error = Seed::from_json(r#"{"stores":[{"id":1}]}"#).unwrap_err();
        assert!(error.to_string().contains("stores[0].id"), "{error}");
    }
}
