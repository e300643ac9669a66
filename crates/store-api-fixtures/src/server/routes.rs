//! The Store API's eleven operations.

use std::sync::Arc;

use axum::Extension;
use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use store_api_raw::{contract, types};
use store_api_rules::artwork_url::{UrlViolation, check_url};

use super::auth::StoreId;
use super::body;
use crate::artwork::{ArtworkFetcher, SAMPLE_IMAGE_URL};
use crate::deviation::Deviation;
use crate::error::ApiError;
use crate::events::emit;
use crate::state::{ListQuery, ListSpec, Listable, Record, Shared, StoreState, filter_value};

type Params = Path<std::collections::HashMap<String, String>>;

fn json(status: StatusCode, bytes: Bytes) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

fn param(params: &Params, name: &str) -> String {
    params.get(name).cloned().unwrap_or_default()
}

pub(crate) async fn status(
    State(shared): State<Arc<Shared>>,
    Extension(StoreId(store_id)): Extension<StoreId>,
) -> Response {
    let mut result = types::StatusResult::new();
    result.status = Some("ok".into());
    result.message = Some("The API is reachable and the key matches the store".into());
    result.version = Some(store_api_raw::API_VERSION.into());
    result.store = Some(types::StoreRef::new(store_id));
    result.checked_at = Some(shared.clock.now());
    json(
        StatusCode::OK,
        crate::wire::to_vec(&result).unwrap_or_default().into(),
    )
}

const CATALOG: ListSpec = &contract::LIST_CATALOG_PRODUCTS_QUERY;
const PRODUCTS: ListSpec = &contract::LIST_PRODUCTS_QUERY;
const ARTWORKS: ListSpec = &contract::LIST_ARTWORKS_QUERY;
const ORDERS: ListSpec = &contract::LIST_ORDERS_QUERY;

pub(crate) async fn list_catalog(
    State(shared): State<Arc<Shared>>,
    Extension(StoreId(store_id)): Extension<StoreId>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let query = ListQuery::parse(query.as_deref(), CATALOG, shared.config.deviations)?;
    let page = {
        let state = shared.read();
        query.select(state.visible_catalog(&store_id).map(|b| &b.record))
    };
    Ok(query.respond(page))
}

pub(crate) async fn get_catalog(
    State(shared): State<Arc<Shared>>,
    Extension(StoreId(store_id)): Extension<StoreId>,
    params: Params,
) -> Result<Response, ApiError> {
    let id = param(&params, "catalogProductId");
    let state = shared.read();
    state
        .visible_catalog(&store_id)
        .find(|b| b.record.value.id == id)
        .map(|b| json(StatusCode::OK, b.record.json.clone()))
        .ok_or_else(|| ApiError::NotFound("Catalog product not found".into()))
}

pub(crate) async fn list_products(
    State(shared): State<Arc<Shared>>,
    Extension(StoreId(store_id)): Extension<StoreId>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    list_in_store(&shared, &store_id, query, PRODUCTS, |store| &store.products)
}

pub(crate) async fn get_product(
    State(shared): State<Arc<Shared>>,
    Extension(StoreId(store_id)): Extension<StoreId>,
    params: Params,
) -> Result<Response, ApiError> {
    get_in_store(
        &shared,
        &store_id,
        &param(&params, "productId"),
        "Product not found",
        |store| &store.products,
    )
}

pub(crate) async fn list_artworks(
    State(shared): State<Arc<Shared>>,
    Extension(StoreId(store_id)): Extension<StoreId>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    list_in_store(&shared, &store_id, query, ARTWORKS, |store| &store.artworks)
}

pub(crate) async fn get_artwork(
    State(shared): State<Arc<Shared>>,
    Extension(StoreId(store_id)): Extension<StoreId>,
    params: Params,
) -> Result<Response, ApiError> {
    get_in_store(
        &shared,
        &store_id,
        &param(&params, "artworkId"),
        "Artwork not found",
        |store| &store.artworks,
    )
}

/// Validates the body and the URL, downloads the image (without holding the state lock), stores the copy
/// and serves it at the artwork's `image.url`.
pub(crate) async fn create_artwork(
    State(shared): State<Arc<Shared>>,
    Extension(StoreId(store_id)): Extension<StoreId>,
    request_body: Body,
) -> Result<Response, ApiError> {
    let bytes = body::read(request_body).await?;
    let request: types::CreateArtworkRequest =
        body::decode_request(&bytes, shared.config.deviations, |_| Vec::new())?;
    let url =
        check_url(&request.image.url).map_err(|v| ApiError::BadRequest(v.message().to_owned()))?;
    let image =
        shared.downloader.fetch(&url).await.map_err(|violation| {
            ApiError::BadRequest(download_refusal(&shared, &url, violation))
        })?;
    let image_id = shared.clock.new_id("img");
    let at = shared.clock.now();
    let mut image_ref = types::ImageRef::new(image_id.clone());
    image_ref.url = Some(format!("{}/_emulator/images/{image_id}", shared.origin));
    let mut artwork = types::Artwork::new(shared.clock.new_id("art"));
    artwork.name = Some(request.name.to_string());
    artwork.image = Some(image_ref);
    artwork.created_at = Some(at);
    artwork.updated_at = Some(at);
    let record = {
        let mut state = shared.lock();
        let seq = state.next_sequence();
        state.store_image(
            image_id,
            image.content_type.to_owned(),
            image.bytes,
            shared.config.image_bytes_cap,
        );
        let store = state
            .stores
            .get_mut(&store_id)
            .ok_or_else(|| ApiError::NotFound("Store not found".into()))?;
        let record = Record::new(seq, artwork);
        store.artworks.push(record.clone());
        record
    };
    Ok(json(StatusCode::CREATED, record.json))
}

/// The service's message for a failed download; for a host no fake resource is registered on, with
/// the emulator's hint after it: the emulator serves such hosts only once told what they hold (the
/// service's text stays first, whole, so a check on it still matches).
fn download_refusal(shared: &Shared, url: &url::Url, violation: UrlViolation) -> String {
    let message = violation.message();
    let hint = matches!(
        violation,
        UrlViolation::DownloadFailed | UrlViolation::Unresolvable
    ) && !shared.downloader.fake_hosts().knows_host(url);
    match url.host_str() {
        Some(host) if hint => format!(
            "{message} (emulator: no image of the host {host} is registered; register one with PUT /_emulator/artwork-hosts, or use the sample {SAMPLE_IMAGE_URL})"
        ),
        _ => message.to_owned(),
    }
}

pub(crate) async fn list_orders(
    State(shared): State<Arc<Shared>>,
    Extension(StoreId(store_id)): Extension<StoreId>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let raw = query.as_deref().unwrap_or_default();
    // The same query of an unchanged book is answered with the bytes written last time.
    let kept = {
        let state = shared.read();
        state
            .stores
            .get(&store_id)
            .and_then(|store| store.orders.kept_page(raw))
    };
    if let Some(answer) = kept {
        return Ok(json(StatusCode::OK, answer));
    }
    let query = ListQuery::parse(Some(raw), ORDERS, shared.config.deviations)?;
    // Read off the store's order indexes under a read lock; the envelope is written after it.
    let (page, version) = {
        let state = shared.read();
        let store = state
            .stores
            .get(&store_id)
            .ok_or_else(|| ApiError::NotFound("Store not found".into()))?;
        (store.orders.select(&query), store.orders.version())
    };
    let answer = query.envelope(page);
    if let Some(store) = shared.read().stores.get(&store_id) {
        store.orders.keep_page(version, raw, answer.clone());
    }
    Ok(json(StatusCode::OK, answer))
}

pub(crate) async fn get_order(
    State(shared): State<Arc<Shared>>,
    Extension(StoreId(store_id)): Extension<StoreId>,
    params: Params,
) -> Result<Response, ApiError> {
    let id = param(&params, "orderId");
    let state = shared.read();
    state
        .stores
        .get(&store_id)
        .and_then(|store| store.orders.get(&id))
        .map(|r| json(StatusCode::OK, r.json.clone()))
        .ok_or_else(|| ApiError::NotFound("Order not found".into()))
}

pub(crate) async fn create_order(
    State(shared): State<Arc<Shared>>,
    Extension(StoreId(store_id)): Extension<StoreId>,
    request_body: Body,
) -> Result<Response, ApiError> {
    let bytes = body::read(request_body).await?;
    let deviations = shared.config.deviations;
    if deviations.has(Deviation::ConflictBeforeValidation) {
        crate::orders::conflict_before_validation(&shared.read(), &store_id, &bytes)?;
    }
    let request: types::CreateOrderRequest =
        body::decode_request(&bytes, deviations, store_api_rules::validate_fields)?;
    if deviations.has(Deviation::EmptyIdsRefused) {
        crate::orders::refuse_empty_ids(&request)?;
    }
    let keeping = crate::orders::AddressKeeping::of(deviations);
    let (order, event) = crate::orders::create(shared.write_turn(), &store_id, request, keeping)?;
    emit(&shared, vec![event]);
    Ok(json(
        StatusCode::CREATED,
        crate::wire::to_vec(&order).unwrap_or_default().into(),
    ))
}

// ---- one store's resources: lists and single reads

/// A page of one of the store's collections.
fn list_in_store<T: Listable>(
    shared: &Shared,
    store_id: &str,
    query: Option<String>,
    spec: ListSpec,
    collection: fn(&StoreState) -> &[Record<T>],
) -> Result<Response, ApiError> {
    let query = ListQuery::parse(query.as_deref(), spec, shared.config.deviations)?;
    let page = {
        let state = shared.read();
        let store = state
            .stores
            .get(store_id)
            .ok_or_else(|| ApiError::NotFound("Store not found".into()))?;
        query.select(collection(store).iter())
    };
    Ok(query.respond(page))
}

/// One resource of the store; another store's and a nonexistent id give the same 404 with `not_found`.
fn get_in_store<T: HasId>(
    shared: &Shared,
    store_id: &str,
    id: &str,
    not_found: &str,
    collection: fn(&StoreState) -> &[Record<T>],
) -> Result<Response, ApiError> {
    let state = shared.read();
    state
        .stores
        .get(store_id)
        .and_then(|store| collection(store).iter().find(|r| r.value.id() == id))
        .map(|r| json(StatusCode::OK, r.json.clone()))
        .ok_or_else(|| ApiError::NotFound(not_found.to_owned()))
}

/// The id of a stored resource.
trait HasId {
    fn id(&self) -> &str;
}

impl HasId for types::Product {
    fn id(&self) -> &str {
        &self.id
    }
}

impl HasId for types::Artwork {
    fn id(&self) -> &str {
        &self.id
    }
}

// ---- sorting and filtering of each resource

fn time_field(
    created: Option<DateTime<Utc>>,
    updated: Option<DateTime<Utc>>,
    field: &str,
) -> Option<DateTime<Utc>> {
    match field {
        "createdAt" => created,
        "updatedAt" => updated,
        _ => None,
    }
}

impl Listable for types::CatalogProduct {
    fn text(&self, field: &str) -> Option<&str> {
        (field == "name").then_some(self.name.as_deref()).flatten()
    }
    fn time(&self, field: &str) -> Option<DateTime<Utc>> {
        time_field(self.created_at, self.updated_at, field)
    }
    fn matches(&self, field: &str, values: &[String]) -> bool {
        match field {
            "productType" => self
                .product_type
                .as_ref()
                .is_some_and(|t| values.contains(t)),
            "decorationMethod" => self
                .decoration_methods
                .iter()
                .any(|m| values.iter().any(|v| v == m.as_str())),
            _ => true,
        }
    }
}

impl Listable for types::Product {
    fn text(&self, field: &str) -> Option<&str> {
        (field == "name").then_some(self.name.as_deref()).flatten()
    }
    fn time(&self, field: &str) -> Option<DateTime<Utc>> {
        time_field(self.created_at, self.updated_at, field)
    }
    fn matches(&self, field: &str, values: &[String]) -> bool {
        match field {
            "status" => self
                .status
                .as_ref()
                .is_some_and(|s| values.iter().any(|v| v == s.as_str())),
            _ => true,
        }
    }
}

impl Listable for types::Artwork {
    fn text(&self, field: &str) -> Option<&str> {
        (field == "name").then_some(self.name.as_deref()).flatten()
    }
    fn time(&self, field: &str) -> Option<DateTime<Utc>> {
        time_field(self.created_at, self.updated_at, field)
    }
    fn matches(&self, _field: &str, _values: &[String]) -> bool {
        true
    }
}

impl Listable for types::Order {
    fn text(&self, _field: &str) -> Option<&str> {
        None
    }
    fn time(&self, field: &str) -> Option<DateTime<Utc>> {
        time_field(self.created_at, self.updated_at, field)
    }
    fn matches(&self, field: &str, values: &[String]) -> bool {
        match filter_value(self, field) {
            Some(value) => value.is_some_and(|v| values.iter().any(|wanted| wanted == v)),
            None => true,
        }
    }
}
