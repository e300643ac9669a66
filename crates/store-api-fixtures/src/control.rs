//! The control operations outside the Store API: what the app and the provider do (key rotation,
//! activation, webhook registration, moving orders, editing products), and what a test drives or reads
//! (faults, fake artwork hosts, the clock, the logs). The `/_emulator` HTTP endpoints
//! (`server/control`, a thin adapter) and the typed methods of [`Emulator`](crate::Emulator) both call
//! these functions, and nothing else.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use store_api_raw::open::{OrderStatus, WebhookTopic};
use store_api_raw::types;

use crate::artwork::FakeResource;
use crate::error::ApiError;
use crate::events::{PendingEvent, emit};
use crate::faults::{Fault, canonical_operation};
use crate::logs::{Delivery, RequestRecord};
use crate::loopback::is_loopback_url;
use crate::orders::{self, AppAction};
use crate::state::{Record, Shared};

/// A store's credentials, as `GET /_emulator/stores` lists them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StoreCredentials {
    /// Store id.
    pub id: String,
    /// The store's current API key.
    pub api_key: String,
    /// Whether the store is active.
    pub active: bool,
}

fn store_not_found() -> ApiError {
    ApiError::NotFound("Store not found".into())
}

pub(crate) fn stores(shared: &Shared) -> Vec<StoreCredentials> {
    shared
        .read()
        .stores
        .values()
        .map(|s| StoreCredentials {
            id: s.id.clone(),
            api_key: s.api_key.clone(),
            active: s.active,
        })
        .collect()
}

/// A new key in the same shape as the app's: [`KEY_BRAND_PREFIX`](store_api_raw::KEY_BRAND_PREFIX)
/// and 32 hex digits, [`KEY_LENGTH`](store_api_raw::KEY_LENGTH) characters.
pub(crate) fn rotate_key(shared: &Shared, store_id: &str) -> Result<String, ApiError> {
    let key = format!(
        "{}{:016x}{:016x}",
        store_api_raw::KEY_BRAND_PREFIX,
        shared.clock.random_u64(),
        shared.clock.random_u64()
    );
    debug_assert_eq!(key.len(), store_api_raw::KEY_LENGTH);
    let mut state = shared.lock();
    let store = state.stores.get_mut(store_id).ok_or_else(store_not_found)?;
    store.api_key = key.clone();
    Ok(key)
}

pub(crate) fn set_active(shared: &Shared, store_id: &str, active: bool) -> Result<(), ApiError> {
    let mut state = shared.lock();
    state
        .stores
        .get_mut(store_id)
        .ok_or_else(store_not_found)?
        .active = active;
    Ok(())
}

/// The store's registrations, `{topic: url}`: what a tool that registers itself for a while
/// (`store-api webhooks listen`) puts back when it is done.
pub(crate) fn webhooks(
    shared: &Shared,
    store_id: &str,
) -> Result<BTreeMap<String, String>, ApiError> {
    let state = shared.read();
    Ok(state
        .stores
        .get(store_id)
        .ok_or_else(store_not_found)?
        .webhooks
        .clone())
}

/// Replaces the store's registrations. Topics must be known ones and URLs absolute http(s) URLs.
pub(crate) fn set_webhooks(
    shared: &Shared,
    store_id: &str,
    urls: BTreeMap<String, String>,
) -> Result<(), ApiError> {
    let mut problems = Vec::new();
    for (topic, url) in &urls {
        if !WebhookTopic::from(topic.as_str()).is_known() {
            problems.push(format!("{topic} is not a webhook topic"));
        }
        match url::Url::parse(url) {
            Ok(parsed) if !matches!(parsed.scheme(), "http" | "https") => {
                problems.push(format!("{topic} must be an absolute http or https URL"))
            }
            Ok(parsed)
                if !shared.config.allow_remote_webhooks
                    && !is_loopback_url(&parsed) =>
            {
                problems.push(format!(
                    "{topic} must be on a loopback host (127.0.0.1, ::1 or localhost) unless the emulator allows remote webhooks (--allow-remote-webhooks)"
                ))
            }
            Ok(_) => {}
            Err(_) => problems.push(format!("{topic} must be an absolute http or https URL")),
        }
    }
    if !problems.is_empty() {
        return Err(ApiError::Invalid(problems));
    }
    let mut state = shared.lock();
    state
        .stores
        .get_mut(store_id)
        .ok_or_else(store_not_found)?
        .webhooks = urls;
    Ok(())
}

/// Queues a fault for the next matching requests.
pub(crate) fn inject_fault(shared: &Shared, mut fault: Fault) -> Result<(), ApiError> {
    let problems = fault.problems(|operation| canonical_operation(operation).is_some());
    if !problems.is_empty() {
        return Err(ApiError::Invalid(problems));
    }
    // Either form of the operation's name matches the same requests.
    fault.operation = fault
        .operation
        .and_then(|operation| canonical_operation(&operation).map(str::to_owned));
    shared.faults().push(fault);
    Ok(())
}

/// The injected faults that have not fired yet, with their remaining counts.
pub(crate) fn pending_faults(shared: &Shared) -> Vec<Fault> {
    shared.faults().pending()
}

/// Drops every injected fault that has not fired yet.
pub(crate) fn clear_faults(shared: &Shared) {
    shared.faults().clear();
}

/// Replaces the fake public hosts the artwork downloader serves from (URL → resource).
pub(crate) fn set_artwork_hosts(
    shared: &Shared,
    hosts: HashMap<String, FakeResource>,
) -> Result<(), ApiError> {
    shared
        .downloader
        .fake_hosts()
        .replace(hosts)
        .map_err(|e| ApiError::Invalid(vec![e.to_string()]))
}

/// A stored artwork image: its content type and bytes.
pub(crate) fn image(shared: &Shared, image_id: &str) -> Result<(String, Bytes), ApiError> {
    let state = shared.read();
    let Some(image) = state.images.get(image_id) else {
        // An artwork still pointing at the image means it was stored, then evicted.
        return Err(if state.artwork_uses_image(image_id) {
            ApiError::NotFound(format!(
                "Image {image_id} was evicted: the emulator keeps at most {} bytes of artwork images, evicting the oldest first",
                shared.config.image_bytes_cap
            ))
        } else {
            ApiError::NotFound("Image not found".into())
        });
    };
    Ok((image.content_type.clone(), image.bytes.clone()))
}

/// The store's delivery attempts of the last [`LOG_RETENTION`](crate::LOG_RETENTION), oldest first.
pub(crate) fn deliveries(shared: &Shared, store_id: &str) -> Result<Vec<Delivery>, ApiError> {
    let state = shared.read();
    let store = state.stores.get(store_id).ok_or_else(store_not_found)?;
    Ok(crate::logs::recent(&store.deliveries, shared.clock.now()))
}

/// The store's Store API requests of the last [`LOG_RETENTION`](crate::LOG_RETENTION), oldest first.
pub(crate) fn requests(shared: &Shared, store_id: &str) -> Result<Vec<RequestRecord>, ApiError> {
    if !shared.read().stores.contains_key(store_id) {
        return Err(store_not_found());
    }
    Ok(shared.requests.recent(store_id, shared.clock.now()))
}

/// Moves a deterministic emulator's clock forward; the emulator's time after the move.
pub(crate) fn advance_clock(
    shared: &Shared,
    by: std::time::Duration,
) -> Result<DateTime<Utc>, ApiError> {
    if shared.clock.advance(by) {
        Ok(shared.clock.now())
    } else {
        Err(ApiError::Conflict(
            "The emulator runs on the real clock; only a deterministic emulator (--deterministic SEED) can be advanced".into(),
        ))
    }
}

/// The store's orders, oldest first (none for an unknown store).
pub(crate) fn orders(shared: &Shared, store_id: &str) -> Vec<types::Order> {
    shared
        .read()
        .stores
        .get(store_id)
        .map(|s| s.orders.iter().map(|o| o.value.clone()).collect())
        .unwrap_or_default()
}

/// Number of orders the store holds (0 for an unknown store).
pub(crate) fn order_count(shared: &Shared, store_id: &str) -> usize {
    shared
        .read()
        .stores
        .get(store_id)
        .map_or(0, |s| s.orders.len())
}

/// Applies `change` to one order and emits orders_update.
fn change_order(
    shared: &Arc<Shared>,
    store_id: &str,
    order_id: &str,
    change: impl FnOnce(&mut types::Order) -> Result<(), ApiError>,
) -> Result<types::Order, ApiError> {
    let order = {
        let mut state = shared.lock();
        let store = state.stores.get_mut(store_id).ok_or_else(store_not_found)?;
        let mut record = store
            .order_mut(order_id)
            .ok_or_else(|| ApiError::NotFound("Order not found".into()))?;
        let mut order = record.value.clone();
        change(&mut order)?;
        record.set(order.clone());
        order
    };
    emit(
        shared,
        vec![PendingEvent::new(
            store_id,
            WebhookTopic::OrdersUpdate,
            &order.id,
        )],
    );
    Ok(order)
}

/// Creates an order as the app does (no key, no rate limit; the same rules): emits orders_create.
pub(crate) fn create_order_in_app(
    shared: &Arc<Shared>,
    store_id: &str,
    request: types::CreateOrderRequest,
) -> Result<types::Order, ApiError> {
    let turn = shared.write_turn();
    if !turn.read().stores.contains_key(store_id) {
        return Err(store_not_found());
    }
    let keeping = orders::AddressKeeping::of(shared.config.deviations);
    let (order, event) = orders::create(turn, store_id, request, keeping)?;
    emit(shared, vec![event]);
    Ok(order)
}

/// Replaces an order's line items as the app does: emits orders_update.
pub(crate) fn edit_line_items(
    shared: &Arc<Shared>,
    store_id: &str,
    order_id: &str,
    line_items: Vec<types::LineItemInput>,
) -> Result<types::Order, ApiError> {
    let (order, event) = {
        let mut state = shared.lock();
        orders::edit_line_items(&mut state, store_id, order_id, line_items)?
    };
    emit(shared, vec![event]);
    Ok(order)
}

pub(crate) fn advance(
    shared: &Arc<Shared>,
    store_id: &str,
    order_id: &str,
) -> Result<types::Order, ApiError> {
    change_order(shared, store_id, order_id, |order| {
        orders::advance(order, &shared.clock)
    })
}

pub(crate) fn app_action(
    shared: &Arc<Shared>,
    store_id: &str,
    order_id: &str,
    action: AppAction,
) -> Result<types::Order, ApiError> {
    change_order(shared, store_id, order_id, |order| {
        orders::apply(order, action, &shared.clock)
    })
}

/// Advances every order that the provider would move (not held, canceled, or awaiting a decision).
pub(crate) fn advance_all(shared: &Arc<Shared>) {
    let movable: Vec<(String, String)> = {
        let state = shared.read();
        state
            .stores
            .values()
            .flat_map(|store| {
                store
                    .orders
                    .iter()
                    .filter(|o| {
                        o.value.status.as_ref().is_some_and(|s| {
                            !matches!(
                                s,
                                OrderStatus::OnHold
                                    | OrderStatus::Canceled
                                    | OrderStatus::CancellationRequested
                                    | OrderStatus::Fulfilled
                            )
                        })
                    })
                    .map(|o| (store.id.clone(), o.value.id.clone()))
            })
            .collect()
    };
    for (store_id, order_id) in movable {
        let _ = advance(shared, &store_id, &order_id);
    }
}

/// Creates a product as the app would (id and timestamps assigned when missing) and emits products_create.
pub(crate) fn create_product(
    shared: &Arc<Shared>,
    store_id: &str,
    mut product: types::Product,
) -> Result<types::Product, ApiError> {
    if product.id.is_empty() {
        product.id = shared.clock.new_id("prod");
    }
    let at = shared.clock.now();
    product.created_at.get_or_insert(at);
    product.updated_at = Some(at);
    {
        let mut state = shared.lock();
        let seq = state.next_sequence();
        let store = state.stores.get_mut(store_id).ok_or_else(store_not_found)?;
        if store.products.iter().any(|p| p.value.id == product.id) {
            return Err(ApiError::Conflict(format!(
                "A product with id {} exists",
                product.id
            )));
        }
        store.products.push(Record::new(seq, product.clone()));
    }
    emit(
        shared,
        vec![PendingEvent::new(
            store_id,
            WebhookTopic::ProductsCreate,
            &product.id,
        )],
    );
    Ok(product)
}

/// Replaces a product (keeping its id and createdAt; updatedAt moves, see [`Clock::change_stamp`]) and
/// emits products_update.
///
/// [`Clock::change_stamp`]: crate::clock::Clock::change_stamp
pub(crate) fn update_product(
    shared: &Arc<Shared>,
    store_id: &str,
    product_id: &str,
    mut product: types::Product,
) -> Result<types::Product, ApiError> {
    {
        let mut state = shared.lock();
        let store = state.stores.get_mut(store_id).ok_or_else(store_not_found)?;
        product.id = product_id.to_owned();
        store
            .products
            .update(product_id, |record| {
                product.created_at = record.value.created_at;
                product.updated_at = Some(shared.clock.change_stamp(record.value.updated_at));
                record.set(product.clone());
            })
            .ok_or_else(|| ApiError::NotFound("Product not found".into()))?;
    }
    emit(
        shared,
        vec![PendingEvent::new(
            store_id,
            WebhookTopic::ProductsUpdate,
            product_id,
        )],
    );
    Ok(product)
}

/// Deletes a product and emits products_delete.
pub(crate) fn delete_product(
    shared: &Arc<Shared>,
    store_id: &str,
    product_id: &str,
) -> Result<(), ApiError> {
    {
        let mut state = shared.lock();
        let store = state.stores.get_mut(store_id).ok_or_else(store_not_found)?;
        let before = store.products.len();
        store.products.retain(|p| p.value.id != product_id);
        if store.products.len() == before {
            return Err(ApiError::NotFound("Product not found".into()));
        }
    }
    emit(
        shared,
        vec![PendingEvent::new(
            store_id,
            WebhookTopic::ProductsDelete,
            product_id,
        )],
    );
    Ok(())
}

/// Replaces a catalog product (a blank) as the provider edits it: its id and createdAt are kept,
/// updatedAt moves ([`Clock::change_stamp`]), and what the emulator keeps beside the wire type (its
/// price, the stores it is private to) stays. No webhook: the seed has no catalog topic.
///
/// [`Clock::change_stamp`]: crate::clock::Clock::change_stamp
pub(crate) fn update_catalog_product(
    shared: &Shared,
    catalog_product_id: &str,
    mut product: types::CatalogProduct,
) -> Result<types::CatalogProduct, ApiError> {
    let mut state = shared.lock();
    let blank = state
        .catalog
        .iter_mut()
        .find(|b| b.record.value.id == catalog_product_id)
        .ok_or_else(|| ApiError::NotFound("Catalog product not found".into()))?;
    let previous = &blank.record.value;
    product.id = catalog_product_id.to_owned();
    product.created_at = previous.created_at;
    product.updated_at = Some(shared.clock.change_stamp(previous.updated_at));
    blank.record.set(product.clone());
    Ok(product)
}
