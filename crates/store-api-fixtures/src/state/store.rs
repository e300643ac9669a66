//! Everything the emulator knows (stores, catalog, images), and its optional persistence as one JSON
//! file.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use store_api_raw::types;

use super::book::{OrderBook, OrderMut};
use super::record::Record;
use crate::clock::Clock;
use crate::logs::Delivery;
use crate::seed::{Pricing, Seed};

/// Default total bytes of stored artwork images kept; beyond it the oldest images are evicted.
pub const DEFAULT_IMAGE_BYTES_CAP: usize = 256 * 1024 * 1024;

/// One stored artwork image, served at the `image.url` the artwork carries.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StoredImage {
    pub content_type: String,
    #[serde(with = "base64_bytes")]
    pub bytes: Bytes,
    /// Storage order, for evicting the oldest first (0 in state files written before it existed).
    #[serde(default)]
    pub seq: u64,
}

/// A blank of the catalog with the emulator's price for it and the stores that see it if private.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Blank {
    pub record: Record<types::CatalogProduct>,
    pub base_cost: f64,
    pub private_to: Vec<String>,
}

/// One store and everything it owns.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StoreState {
    pub id: String,
    pub name: String,
    pub api_key: String,
    pub active: bool,
    /// Indexed by variant id and SKU, so an order's lookups cost the same in a store of any size.
    pub products: super::products::Products,
    pub artworks: Vec<Record<types::Artwork>>,
    /// Indexed, so lists and lookups cost the same in a store of any size.
    pub orders: OrderBook,
    /// Topic → URL.
    pub webhooks: BTreeMap<String, String>,
    pub deliveries: std::collections::VecDeque<Delivery>,
    /// Number of the store's last order, for order names (`#1001`).
    pub order_number: u64,
}

impl StoreState {
    /// The order to change; the indexes follow the change when the guard drops.
    pub fn order_mut(&mut self, id: &str) -> Option<OrderMut<'_>> {
        self.orders.get_mut(id)
    }

    pub fn order_by_external_id(&self, external_id: &str) -> Option<&Record<types::Order>> {
        self.orders.by_external_id(external_id)
    }
}

/// Everything the emulator knows.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct State {
    pub stores: BTreeMap<String, StoreState>,
    pub catalog: Vec<Blank>,
    pub pricing: Pricing,
    /// Stored artwork images by image id.
    pub images: BTreeMap<String, StoredImage>,
    /// Last creation sequence number handed out.
    pub sequence: u64,
    /// The emulator's clock and id source (not saved: a loaded state gets the running emulator's).
    #[serde(skip)]
    pub clock: Clock,
}

impl State {
    /// A fresh state holding the built-in seed's data. It is built once per process and copied for each
    /// emulator: parsing the seed and writing every record's JSON cost a debug build milliseconds per
    /// start, the copy a tenth of one (records share their JSON).
    pub fn builtin() -> State {
        static BUILTIN: OnceLock<State> = OnceLock::new();
        BUILTIN
            .get_or_init(|| State::from_seed(Seed::builtin()))
            .clone()
    }

    /// A fresh state holding the seed's data.
    pub fn from_seed(seed: Seed) -> State {
        let mut state = State {
            stores: BTreeMap::new(),
            catalog: Vec::new(),
            pricing: seed.pricing,
            images: BTreeMap::new(),
            sequence: 0,
            clock: Clock::default(),
        };
        for store in seed.stores {
            state.stores.insert(
                store.id.clone(),
                StoreState {
                    id: store.id,
                    name: store.name,
                    api_key: store.api_key,
                    active: store.active,
                    products: Default::default(),
                    artworks: Vec::new(),
                    orders: OrderBook::default(),
                    webhooks: BTreeMap::new(),
                    deliveries: std::collections::VecDeque::new(),
                    order_number: 1000,
                },
            );
        }
        for blank in seed.catalog {
            let seq = state.next_sequence();
            state.catalog.push(Blank {
                record: Record::new(seq, blank.product),
                base_cost: blank.base_cost,
                private_to: blank.private_to,
            });
        }
        for product in seed.products {
            let seq = state.next_sequence();
            if let Some(store) = state.stores.get_mut(&product.store_id) {
                store.products.push(Record::new(seq, product.product));
            }
        }
        state
    }

    pub fn next_sequence(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence
    }

    /// Stores an image under `id`, then evicts the oldest images while the total exceeds `cap` bytes
    /// (never the one just stored: its artwork was just answered with its URL).
    pub fn store_image(&mut self, id: String, content_type: String, bytes: Bytes, cap: usize) {
        let seq = self.next_sequence();
        self.images.insert(
            id.clone(),
            StoredImage {
                content_type,
                bytes,
                seq,
            },
        );
        let mut total: usize = self.images.values().map(|i| i.bytes.len()).sum();
        while total > cap {
            let oldest = self
                .images
                .iter()
                .filter(|(key, _)| **key != id)
                .min_by_key(|(_, image)| image.seq)
                .map(|(key, _)| key.clone());
            let Some(oldest) = oldest else { break };
            if let Some(evicted) = self.images.remove(&oldest) {
                total -= evicted.bytes.len();
            }
        }
    }

    /// Whether an artwork of any store carries the image `image_id`.
    pub fn artwork_uses_image(&self, image_id: &str) -> bool {
        self.stores.values().any(|store| {
            store
                .artworks
                .iter()
                .any(|a| a.value.image.as_ref().is_some_and(|i| i.id == image_id))
        })
    }

    /// The blanks this store may see: public ones and private ones assigned to it.
    pub fn visible_catalog<'a>(
        &'a self,
        store_id: &'a str,
    ) -> impl Iterator<Item = &'a Blank> + 'a {
        self.catalog.iter().filter(move |blank| {
            blank.private_to.is_empty() || blank.private_to.iter().any(|s| s == store_id)
        })
    }

    /// Points every stored artwork copy's `image.url` at `origin`, where this emulator serves it.
    pub fn serve_images_from(&mut self, origin: &str) {
        let images = &self.images;
        for store in self.stores.values_mut() {
            for record in &mut store.artworks {
                let Some(image) = record.value.image.as_mut() else {
                    continue;
                };
                if images.contains_key(&image.id) {
                    image.url = Some(format!("{origin}/_emulator/images/{}", image.id));
                    record.refresh();
                }
            }
        }
    }

    /// Reads a state file written by [`State::save`], decoding as it reads (the file's text is never
    /// held whole beside the state).
    pub fn load(path: &Path) -> Result<State, String> {
        let file = std::fs::File::open(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut state: State = serde_json::from_reader(std::io::BufReader::new(file))
            .map_err(|e| format!("invalid state file {}: {e}", path.display()))?;
        state.catalog.iter_mut().for_each(|b| b.record.refresh());
        for store in state.stores.values_mut() {
            store.products.iter_mut().for_each(Record::refresh);
            store.artworks.iter_mut().for_each(Record::refresh);
            // Orders wrote their JSON as they were loaded (with their indexes).
        }
        Ok(state)
    }

    /// Writes the state atomically and durably ([`crate::durable::replace_file`]), encoded straight
    /// into the temporary file (no second copy in memory).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        use std::io::Write as _;
        crate::durable::replace_file(path, |file| {
            let mut writer = std::io::BufWriter::new(file);
            serde_json::to_writer(&mut writer, self)?;
            writer.flush()
        })
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

mod base64_bytes {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use bytes::Bytes;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &Bytes, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD
            .decode(text)
            .map(Bytes::from)
            .map_err(serde::de::Error::custom)
    }
}
