//! The HTTP server: the Store API under `/store-api/2026-08/stores/{storeId}`, the control endpoints
//! under `/_emulator`, and `Cannot <METHOD> <path>` for everything else.

mod auth;
pub(crate) mod body;
mod control;
pub(crate) mod list;
pub(crate) mod ratelimit;
mod routes;

use std::sync::Arc;

use axum::Router;
use axum::http::{Method, Uri};
use axum::middleware;
use axum::routing::get;

use crate::Shared;
use crate::error::ApiError;

/// Largest request body accepted (the seed does not show one; this project assumes 1 MiB, answered 413).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The path prefix of every Store API route.
pub const API_PREFIX: &str = "/store-api/2026-08";

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let api = Router::new()
        .route("/status", get(routes::status))
        .route("/catalog-products", get(routes::list_catalog))
        .route(
            "/catalog-products/{catalogProductId}",
            get(routes::get_catalog),
        )
        .route("/products", get(routes::list_products))
        .route("/products/{productId}", get(routes::get_product))
        .route(
            "/artworks",
            get(routes::list_artworks).post(routes::create_artwork),
        )
        .route("/artworks/{artworkId}", get(routes::get_artwork))
        .route(
            "/orders",
            get(routes::list_orders).post(routes::create_order),
        )
        .route("/orders/{orderId}", get(routes::get_order))
        .route_layer(middleware::from_fn_with_state(shared.clone(), auth::guard));
    Router::new()
        .nest(&format!("{API_PREFIX}/stores/{{storeId}}"), api)
        .nest("/_emulator", control::router())
        .fallback(not_found)
        .method_not_allowed_fallback(not_found)
        .with_state(shared)
}

/// Unknown routes, unknown version segments and unsupported methods, as the service answers them.
async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::NotFound(format!("Cannot {method} {}", uri.path()))
}
