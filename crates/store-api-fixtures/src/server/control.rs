//! `/_emulator/...`: control endpoints (no API key), thin HTTP wrappers over [`crate::control`].

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use store_api_raw::types;

use super::access::{control_allowed, json_body};
use super::body;
use crate::artwork::FakeResource;
use crate::control;
use crate::error::ApiError;
use crate::faults::Fault;
use crate::orders::AppAction;
use crate::state::Shared;

type Params = Path<HashMap<String, String>>;

/// Lets a control request through only when its `Host` is loopback (unless remote access was allowed)
/// and no other site's web page sent it, and only with a JSON body if any: the control endpoints hand
/// out every store's key; a web page can reach a loopback port through DNS rebinding (its requests
/// then carry the page's public host name) or as a "simple" cross-origin request (its `Origin`, a
/// `text/plain` or form body).
pub(super) async fn admit(
    State(allow_remote): State<bool>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let admitted = control_allowed(allow_remote, &request, "The control endpoints answer")
        .and_then(|()| json_body(&request));
    match admitted {
        Ok(()) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

fn param(params: &Params, name: &str) -> String {
    params.get(name).cloned().unwrap_or_default()
}

/// A JSON answer written like the Store API's (timestamps with milliseconds).
fn wire_json<T: serde::Serialize>(value: T) -> Json<serde_json::Value> {
    Json(crate::wire::to_value(&value).unwrap_or_default())
}

pub(crate) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/stores", get(stores))
        .route("/stores/{storeId}/rotate-key", post(rotate_key))
        .route("/stores/{storeId}/active", put(set_active))
        .route(
            "/stores/{storeId}/webhooks",
            get(webhooks).put(set_webhooks),
        )
        .route("/stores/{storeId}/webhook-deliveries", get(deliveries))
        .route("/stores/{storeId}/requests", get(requests))
        .route("/clock/advance", post(advance_clock))
        .route("/stores/{storeId}/orders", post(create_order_in_app))
        .route(
            "/stores/{storeId}/orders/{orderId}/line-items",
            put(edit_line_items),
        )
        .route("/stores/{storeId}/orders/{orderId}/advance", post(advance))
        .route(
            "/stores/{storeId}/orders/{orderId}/app-action",
            post(app_action),
        )
        .route("/stores/{storeId}/products", post(create_product))
        .route(
            "/stores/{storeId}/products/{productId}",
            put(update_product).delete(delete_product),
        )
        .route(
            "/catalog-products/{catalogProductId}",
            put(update_catalog_product),
        )
        .route(
            "/faults",
            get(pending_faults).post(inject_fault).delete(clear_faults),
        )
        .route("/artwork-hosts", put(artwork_hosts))
        .route("/images/{imageId}", get(image))
}

async fn stores(State(shared): State<Arc<Shared>>) -> Json<Vec<control::StoreCredentials>> {
    Json(control::stores(&shared))
}

async fn rotate_key(
    State(shared): State<Arc<Shared>>,
    params: Params,
) -> Result<Json<serde_json::Value>, ApiError> {
    let key = control::rotate_key(&shared, &param(&params, "storeId"))?;
    Ok(Json(serde_json::json!({ "apiKey": key })))
}

#[derive(Deserialize)]
struct Active {
    active: bool,
}

async fn set_active(
    State(shared): State<Arc<Shared>>,
    params: Params,
    request: Body,
) -> Result<StatusCode, ApiError> {
    let Active { active } = body::decode(&body::read(request).await?)?;
    control::set_active(&shared, &param(&params, "storeId"), active)?;
    Ok(StatusCode::NO_CONTENT)
}

async fn webhooks(
    State(shared): State<Arc<Shared>>,
    params: Params,
) -> Result<Json<BTreeMap<String, String>>, ApiError> {
    Ok(Json(control::webhooks(
        &shared,
        &param(&params, "storeId"),
    )?))
}

async fn set_webhooks(
    State(shared): State<Arc<Shared>>,
    params: Params,
    request: Body,
) -> Result<StatusCode, ApiError> {
    let urls: BTreeMap<String, String> = body::decode(&body::read(request).await?)?;
    control::set_webhooks(&shared, &param(&params, "storeId"), urls)?;
    Ok(StatusCode::NO_CONTENT)
}

async fn create_order_in_app(
    State(shared): State<Arc<Shared>>,
    params: Params,
    request: Body,
) -> Result<Response, ApiError> {
    let order: types::CreateOrderRequest = body::decode(&body::read(request).await?)?;
    let created = control::create_order_in_app(&shared, &param(&params, "storeId"), order)?;
    Ok((StatusCode::CREATED, wire_json(created)).into_response())
}

/// The body of a line-item edit.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineItems {
    #[serde(rename = "lineItems")]
    line_items: Vec<types::LineItemInput>,
}

async fn edit_line_items(
    State(shared): State<Arc<Shared>>,
    params: Params,
    request: Body,
) -> Result<Response, ApiError> {
    let LineItems { line_items } = body::decode(&body::read(request).await?)?;
    let order = control::edit_line_items(
        &shared,
        &param(&params, "storeId"),
        &param(&params, "orderId"),
        line_items,
    )?;
    Ok(wire_json(order).into_response())
}

async fn pending_faults(State(shared): State<Arc<Shared>>) -> Json<Vec<Fault>> {
    Json(control::pending_faults(&shared))
}

async fn inject_fault(
    State(shared): State<Arc<Shared>>,
    request: Body,
) -> Result<StatusCode, ApiError> {
    let fault: Fault = body::decode(&body::read(request).await?)?;
    control::inject_fault(&shared, fault)?;
    Ok(StatusCode::NO_CONTENT)
}

async fn clear_faults(State(shared): State<Arc<Shared>>) -> StatusCode {
    control::clear_faults(&shared);
    StatusCode::NO_CONTENT
}

async fn deliveries(
    State(shared): State<Arc<Shared>>,
    params: Params,
) -> Result<Response, ApiError> {
    Ok(wire_json(control::deliveries(&shared, &param(&params, "storeId"))?).into_response())
}

async fn requests(State(shared): State<Arc<Shared>>, params: Params) -> Result<Response, ApiError> {
    Ok(wire_json(control::requests(&shared, &param(&params, "storeId"))?).into_response())
}

/// The body of a clock advance: milliseconds of emulator time.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Advance {
    ms: u64,
}

async fn advance_clock(
    State(shared): State<Arc<Shared>>,
    request: Body,
) -> Result<Json<serde_json::Value>, ApiError> {
    let Advance { ms } = body::decode(&body::read(request).await?)?;
    let now = control::advance_clock(&shared, std::time::Duration::from_millis(ms))?
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    Ok(Json(serde_json::json!({ "now": now })))
}

async fn advance(
    State(shared): State<Arc<Shared>>,
    params: Params,
) -> Result<Json<serde_json::Value>, ApiError> {
    control::advance(
        &shared,
        &param(&params, "storeId"),
        &param(&params, "orderId"),
    )
    .map(wire_json)
}

#[derive(Deserialize)]
struct Action {
    action: AppAction,
}

async fn app_action(
    State(shared): State<Arc<Shared>>,
    params: Params,
    request: Body,
) -> Result<Json<serde_json::Value>, ApiError> {
    let Action { action } = body::decode(&body::read(request).await?)?;
    control::app_action(
        &shared,
        &param(&params, "storeId"),
        &param(&params, "orderId"),
        action,
    )
    .map(wire_json)
}

async fn create_product(
    State(shared): State<Arc<Shared>>,
    params: Params,
    request: Body,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let mut value: serde_json::Value = serde_json::from_slice(&body::read(request).await?)
        .map_err(|e| ApiError::BadRequest(format!("The request body is not valid JSON: {e}")))?;
    // The app assigns the id of a new product; accept a body without one.
    if let Some(object) = value.as_object_mut() {
        object
            .entry("id")
            .or_insert_with(|| serde_json::Value::String(String::new()));
    }
    let product: types::Product = body::decode(value.to_string().as_bytes())?;
    let product = control::create_product(&shared, &param(&params, "storeId"), product)?;
    Ok((StatusCode::CREATED, wire_json(product)))
}

async fn update_product(
    State(shared): State<Arc<Shared>>,
    params: Params,
    request: Body,
) -> Result<Json<serde_json::Value>, ApiError> {
    let mut value: serde_json::Value = serde_json::from_slice(&body::read(request).await?)
        .map_err(|e| ApiError::BadRequest(format!("The request body is not valid JSON: {e}")))?;
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "id".into(),
            serde_json::Value::String(param(&params, "productId")),
        );
    }
    let product: types::Product = body::decode(value.to_string().as_bytes())?;
    control::update_product(
        &shared,
        &param(&params, "storeId"),
        &param(&params, "productId"),
        product,
    )
    .map(wire_json)
}

async fn update_catalog_product(
    State(shared): State<Arc<Shared>>,
    params: Params,
    request: Body,
) -> Result<Json<serde_json::Value>, ApiError> {
    let id = param(&params, "catalogProductId");
    let mut value: serde_json::Value = serde_json::from_slice(&body::read(request).await?)
        .map_err(|e| ApiError::BadRequest(format!("The request body is not valid JSON: {e}")))?;
    // The path names the blank; a body need not repeat its id.
    if let Some(object) = value.as_object_mut() {
        object.insert("id".into(), serde_json::Value::String(id.clone()));
    }
    let product: types::CatalogProduct = body::decode(value.to_string().as_bytes())?;
    control::update_catalog_product(&shared, &id, product).map(wire_json)
}

async fn delete_product(
    State(shared): State<Arc<Shared>>,
    params: Params,
) -> Result<StatusCode, ApiError> {
    control::delete_product(
        &shared,
        &param(&params, "storeId"),
        &param(&params, "productId"),
    )?;
    Ok(StatusCode::NO_CONTENT)
}

async fn artwork_hosts(
    State(shared): State<Arc<Shared>>,
    request: Body,
) -> Result<StatusCode, ApiError> {
    let hosts: HashMap<String, FakeResource> = body::decode(&body::read(request).await?)?;
    control::set_artwork_hosts(&shared, hosts)?;
    Ok(StatusCode::NO_CONTENT)
}

async fn image(State(shared): State<Arc<Shared>>, params: Params) -> Result<Response, ApiError> {
    let (content_type, bytes) = control::image(&shared, &param(&params, "imageId"))?;
    Ok(([(header::CONTENT_TYPE, content_type)], bytes).into_response())
}
