//! One store's orders with the indexes that keep `GET /orders` independent of the store's size: the
//! orders in creation order (the default sort), by id, and by the value of every filter of the spec's
//! `listOrders` query. Every change goes through [`OrderBook::insert`] or the [`OrderMut`] guard, which
//! re-indexes the order when it is dropped, so no caller can leave an index stale.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use store_api_raw::contract;
use store_api_raw::types::{self, SortDirection};

use super::list::{ListQuery, Page};
use super::pages::PageCache;
use super::record::Record;

/// The `listOrders` filter the exactly-once lookup uses.
const EXTERNAL_ORDER_ID: &str = "externalOrderId";

/// The value `filter[field]` compares for an order; `None` for a field the emulator does not filter on
/// (a filter the spec adds later is then ignored, as unknown filters are).
pub(crate) fn filter_value<'a>(order: &'a types::Order, field: &str) -> Option<Option<&'a str>> {
    Some(match field {
        "status" => order.status.as_ref().map(|s| s.as_str()),
        "fulfillmentStatus" => order.fulfillment_status.as_ref().map(|s| s.as_str()),
        "paymentStatus" => order.payment_status.as_ref().map(|s| s.as_str()),
        EXTERNAL_ORDER_ID => order.external_order_id.as_deref(),
        _ => return None,
    })
}

/// Where an order sits in the default sort: `createdAt`, then creation sequence (the service's tiebreak
/// inside one millisecond), both in the list's direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    created_at: Option<DateTime<Utc>>,
    seq: u64,
}

impl Key {
    fn of(record: &Record<types::Order>) -> Key {
        Key {
            created_at: record.value.created_at,
            seq: record.seq,
        }
    }
}

/// The orders holding one value of one filter field. Most `externalOrderId`s are held by one order, so
/// that case needs no set of its own (a set per order would cost more memory than the order).
#[derive(Clone, Debug)]
enum Postings {
    One(Key),
    Many(BTreeSet<Key>),
}

impl Postings {
    fn len(&self) -> usize {
        match self {
            Postings::One(_) => 1,
            Postings::Many(keys) => keys.len(),
        }
    }

    fn insert(&mut self, key: Key) {
        match self {
            Postings::One(only) if *only == key => {}
            Postings::One(only) => *self = Postings::Many(BTreeSet::from([*only, key])),
            Postings::Many(keys) => {
                keys.insert(key);
            }
        }
    }

    /// Removes `key`; true when nothing is left.
    fn remove(&mut self, key: Key) -> bool {
        match self {
            Postings::One(only) => *only == key,
            Postings::Many(keys) => {
                keys.remove(&key);
                keys.is_empty()
            }
        }
    }

    /// The keys in the list's order.
    fn keys(&self, direction: SortDirection) -> Box<dyn Iterator<Item = &Key> + '_> {
        match (self, direction) {
            (Postings::One(key), _) => Box::new(std::iter::once(key)),
            (Postings::Many(keys), SortDirection::Asc) => Box::new(keys.iter()),
            (Postings::Many(keys), SortDirection::Desc) => Box::new(keys.iter().rev()),
        }
    }
}

/// One filter field's index: value → the orders holding it.
#[derive(Clone, Debug)]
struct FilterIndex {
    field: &'static str,
    postings: HashMap<String, Postings>,
}

impl FilterIndex {
    /// How many orders match any of `values`.
    fn count(&self, values: &[String]) -> usize {
        values
            .iter()
            .filter_map(|v| self.postings.get(v))
            .map(Postings::len)
            .sum()
    }
}

/// One store's orders and their indexes.
#[derive(Clone, Debug)]
pub(crate) struct OrderBook {
    /// Every order, in creation order.
    records: BTreeMap<Key, Record<types::Order>>,
    ids: HashMap<String, Key>,
    /// One index per filter of the spec's `listOrders` query that the emulator knows.
    filters: Vec<FilterIndex>,
    /// Counts changes: a kept answer is valid while the version it was written from is current.
    version: u64,
    /// Answers to `GET /orders` of the current version.
    pages: PageCache,
}

impl Default for OrderBook {
    fn default() -> OrderBook {
        let blank = types::Order::default();
        OrderBook {
            records: BTreeMap::new(),
            ids: HashMap::new(),
            filters: contract::LIST_ORDERS_QUERY
                .filters
                .iter()
                .filter(|param| filter_value(&blank, param.field).is_some())
                .map(|param| FilterIndex {
                    field: param.field,
                    postings: HashMap::new(),
                })
                .collect(),
            version: 0,
            pages: PageCache::default(),
        }
    }
}

impl OrderBook {
    /// Number of orders.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// The orders, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Record<types::Order>> {
        self.records.values()
    }

    /// The order with this id.
    pub fn get(&self, id: &str) -> Option<&Record<types::Order>> {
        self.ids.get(id).and_then(|key| self.records.get(key))
    }

    /// The order created with this `externalOrderId` (the exactly-once lookup).
    pub fn by_external_id(&self, external_id: &str) -> Option<&Record<types::Order>> {
        match self.filters.iter().find(|i| i.field == EXTERNAL_ORDER_ID) {
            Some(index) => index
                .postings
                .get(external_id)
                .and_then(|postings| postings.keys(SortDirection::Asc).next())
                .and_then(|key| self.records.get(key)),
            None => self
                .iter()
                .find(|o| o.value.external_order_id.as_deref() == Some(external_id)),
        }
    }

    /// Adds an order (an order with the id of a stored one replaces it).
    pub fn insert(&mut self, record: Record<types::Order>) {
        let _replaced = self.take(&record.value.id);
        self.put(record);
    }

    /// The order with this id, to change in place; its indexes follow the change when the guard drops.
    pub fn get_mut(&mut self, id: &str) -> Option<OrderMut<'_>> {
        let record = self.take(id)?;
        Some(OrderMut { book: self, record })
    }

    /// The page of orders `query` asks for. Sorted by `createdAt` only (the default), the page is read
    /// off the creation-order index or, with one filter value, off that value's index: the cost is that
    /// of the page, not of the store. Other queries sort only the orders of the most selective filter.
    pub fn select(&self, query: &ListQuery) -> Page {
        // The most selective indexed filter drives; the others are checked order by order.
        let driver = query
            .filters
            .iter()
            .filter_map(|(field, values)| {
                let index = self.filters.iter().find(|i| i.field == field)?;
                Some((index, values))
            })
            .min_by_key(|(index, values)| index.count(values));
        let record = |key: &Key| self.records.get(key);
        match (query.creation_order(), driver) {
            (Some(direction), None) => {
                let ordered: Box<dyn Iterator<Item = &Record<types::Order>>> = match direction {
                    SortDirection::Asc => Box::new(self.records.values()),
                    SortDirection::Desc => Box::new(self.records.values().rev()),
                };
                query.page_of(self.records.len(), ordered.map(|r| &r.json))
            }
            (Some(direction), Some((index, values)))
                if query.filters.len() == 1 && values.len() == 1 =>
            {
                match index.postings.get(&values[0]) {
                    Some(postings) => query.page_of(
                        postings.len(),
                        postings.keys(direction).filter_map(record).map(|r| &r.json),
                    ),
                    None => query.page_of(0, std::iter::empty()),
                }
            }
            (_, Some((index, values))) => {
                let candidates = values
                    .iter()
                    .filter_map(|v| index.postings.get(v))
                    .flat_map(|postings| postings.keys(SortDirection::Asc))
                    .filter_map(record);
                query.select(candidates)
            }
            (None, None) => query.select(self.records.values()),
        }
    }

    /// The book's version: it changes with every change to an order.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The answer to `GET /orders?{query}` kept for the book as it stands.
    pub fn kept_page(&self, query: &str) -> Option<bytes::Bytes> {
        self.pages.get(self.version, query)
    }

    /// Keeps the answer to `GET /orders?{query}` written from `version` of the book (it may have
    /// changed since, then the answer is not kept).
    pub fn keep_page(&self, version: u64, query: &str, answer: bytes::Bytes) {
        self.pages.put(version, query, answer);
    }

    /// Removes the order with this id from the book and every index.
    fn take(&mut self, id: &str) -> Option<Record<types::Order>> {
        let key = self.ids.remove(id)?;
        self.version += 1;
        let record = self.records.remove(&key)?;
        for index in &mut self.filters {
            let Some(Some(value)) = filter_value(&record.value, index.field) else {
                continue;
            };
            if let Some(postings) = index.postings.get_mut(value)
                && postings.remove(key)
            {
                index.postings.remove(value);
            }
        }
        Some(record)
    }

    /// Stores an order that is in no index.
    fn put(&mut self, record: Record<types::Order>) {
        self.version += 1;
        let key = Key::of(&record);
        for index in &mut self.filters {
            let Some(Some(value)) = filter_value(&record.value, index.field) else {
                continue;
            };
            match index.postings.get_mut(value) {
                Some(postings) => postings.insert(key),
                None => {
                    index.postings.insert(value.to_owned(), Postings::One(key));
                }
            }
        }
        self.ids.insert(record.value.id.clone(), key);
        self.records.insert(key, record);
    }
}

/// An order taken out of its book to be changed; dropping the guard puts it back, indexed by its new
/// values (also when the change panicked, so the book never loses an order).
pub(crate) struct OrderMut<'a> {
    book: &'a mut OrderBook,
    record: Record<types::Order>,
}

impl std::ops::Deref for OrderMut<'_> {
    type Target = Record<types::Order>;

    fn deref(&self) -> &Record<types::Order> {
        &self.record
    }
}

impl std::ops::DerefMut for OrderMut<'_> {
    fn deref_mut(&mut self) -> &mut Record<types::Order> {
        &mut self.record
    }
}

impl Drop for OrderMut<'_> {
    fn drop(&mut self) {
        let placeholder = Record {
            seq: 0,
            value: types::Order::default(),
            json: bytes::Bytes::new(),
        };
        let record = std::mem::replace(&mut self.record, placeholder);
        self.book.put(record);
    }
}

/// Saved as the list of orders, oldest first (the state file's format before the indexes existed).
impl Serialize for OrderBook {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.records.values())
    }
}

/// Loaded from that list, each order's JSON written again and every index rebuilt.
impl<'de> Deserialize<'de> for OrderBook {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<OrderBook, D::Error> {
        let records = Vec::<Record<types::Order>>::deserialize(deserializer)?;
        let mut book = OrderBook::default();
        for mut record in records {
            record.refresh();
            book.insert(record);
        }
        Ok(book)
    }
}

#[cfg(test)]
mod tests {
    use store_api_raw::open::OrderStatus;

    use super::*;
    use crate::deviation::Deviations;

    const ORDERS: &contract::ListRules = &contract::LIST_ORDERS_QUERY;

    fn order(n: u64, status: OrderStatus, external: Option<&str>) -> Record<types::Order> {
        let at = crate::clock::DETERMINISTIC_START + chrono::Duration::milliseconds(n as i64 / 2);
        let mut order = types::Order::new(format!("ord_{n}"));
        order.status = Some(status);
        order.external_order_id = external.map(str::to_owned);
        order.created_at = Some(at);
        order.updated_at = Some(at);
        Record::new(n, order)
    }

    /// The ids of the page, through the indexes and through the plain filter-and-sort of every order.
    fn both_ways(book: &OrderBook, query: &str) -> (Vec<String>, Vec<String>) {
        let query = ListQuery::parse(Some(query), ORDERS, Deviations::default()).unwrap();
        let ids = |page: Page| {
            let list: types::OrderList = serde_json::from_slice(&query.envelope(page)).unwrap();
            let ids: Vec<String> = list.items.into_iter().map(|order| order.id).collect();
            (list.total_items.unwrap_or_default(), ids)
        };
        let (indexed_total, indexed) = ids(book.select(&query));
        let (plain_total, plain) = ids(query.select(book.iter()));
        assert_eq!(indexed_total, plain_total);
        (indexed, plain)
    }

    fn book() -> OrderBook {
        let mut book = OrderBook::default();
        for n in 1..=40 {
            let status = match n % 3 {
                0 => OrderStatus::Pending,
                1 => OrderStatus::OnHold,
                _ => OrderStatus::Canceled,
            };
            let external = format!("ext-{}", n % 37);
            book.insert(order(n, status, Some(&external)));
        }
        book
    }

    #[test]
    fn indexed_pages_equal_the_sorted_scan_for_every_query_shape() {
        let book = book();
        for query in [
            "limit=7",
            "limit=7&page=3",
            "sort[createdAt]=asc&limit=5&page=2",
            "filter[status]=pending&limit=4&page=2",
            "filter[status]=pending&sort[createdAt]=asc",
            "filter[status]=pending,canceled&limit=9",
            "filter[status]=on_hold&filter[externalOrderId]=ext-1",
            "filter[externalOrderId]=ext-2",
            "filter[externalOrderId]=ext-99",
            "filter[status]=nothing",
            "sort[updatedAt]=asc&limit=6",
            "sort[updatedAt]=desc&filter[status]=pending",
            "page=100",
        ] {
            let (indexed, plain) = both_ways(&book, query);
            assert_eq!(indexed, plain, "{query}");
        }
    }

    #[test]
    fn a_change_through_the_guard_moves_the_order_between_indexes() {
        let mut book = book();
        let before = both_ways(&book, "filter[status]=pending&limit=100").0;
        assert!(before.contains(&"ord_3".to_owned()));
        {
            let mut record = book.get_mut("ord_3").unwrap();
            let mut changed = record.value.clone();
            changed.status = Some(OrderStatus::Canceled);
            changed.external_order_id = Some("moved".into());
            record.set(changed);
        }
        let (after, plain) = both_ways(&book, "filter[status]=pending&limit=100");
        assert_eq!(after, plain);
        assert_eq!(after.len(), before.len() - 1);
        assert!(!after.contains(&"ord_3".to_owned()));
        assert_eq!(book.by_external_id("moved").unwrap().value.id, "ord_3");
        assert_eq!(book.len(), 40);
        // ext-3 was also held by ord_40: the shared value keeps its other order.
        assert_eq!(book.by_external_id("ext-3").unwrap().value.id, "ord_40");
    }

    #[test]
    fn the_book_saves_as_a_list_and_loads_with_its_indexes() {
        let book = book();
        let text = serde_json::to_string(&book).unwrap();
        assert!(text.starts_with("[{"));
        let loaded: OrderBook = serde_json::from_str(&text).unwrap();
        assert_eq!(loaded.len(), 40);
        assert_eq!(
            both_ways(&loaded, "filter[status]=on_hold"),
            both_ways(&book, "filter[status]=on_hold")
        );
        assert!(loaded.iter().all(|r| !r.json.is_empty()));
    }
}
