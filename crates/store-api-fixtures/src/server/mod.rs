//! The HTTP server: the Store API under `/store-api/2026-08/stores/{storeId}`, the control endpoints
//! under `/_emulator`, and `Cannot <METHOD> <path>` for everything else.

mod access;
mod auth;
mod body;
pub(crate) mod connection;
mod control;
mod faults;
mod gate;
mod routes;

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::http::{Method, Uri};
use axum::middleware;
use axum::routing::{MethodFilter, MethodRouter, any, on};
use store_api_raw::contract::{self, HttpMethod};

pub use body::MAX_BODY_BYTES;

use crate::error::ApiError;
use crate::state::Shared;

/// The path prefix of every Store API route.
pub const API_PREFIX: &str = store_api_raw::contract::VERSION_PREFIX;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    // Every operation of the spec at its full path and method, from the generated table, each behind
    // its gate (faults, then authentication and the rate limit), which knows the operation. Full paths
    // rather than a nested router: nesting rewrites every request's URI on the way in.
    let mut paths: BTreeMap<&str, MethodRouter<Arc<Shared>>> = BTreeMap::new();
    for operation in contract::OPERATIONS {
        if let Some(handler) = handler(operation.id, method_filter(operation.method)) {
            let gate = gate::Gate {
                shared: shared.clone(),
                operation,
            };
            let handler = handler.route_layer(middleware::from_fn_with_state(gate, gate::gate));
            let merged = match paths.remove(operation.path) {
                Some(other) => other.merge(handler),
                None => handler,
            };
            paths.insert(operation.path, merged);
        }
    }
    let mut app = Router::new();
    for (path, methods) in paths {
        // Another method on a served path: authenticated by hand like an unserved path.
        app = app.route(
            &format!("{API_PREFIX}{path}"),
            methods.fallback(auth::unserved),
        );
    }
    app
        // Outside the gates: authenticated by hand, so a wrong key still gets the plain 404.
        .route(
            &format!("{API_PREFIX}/stores/{{storeId}}/{{*rest}}"),
            any(auth::unserved),
        )
        .nest(
            "/_emulator",
            control::router().route_layer(middleware::from_fn_with_state(
                shared.clone(),
                control::loopback_only,
            )),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(not_found)
        .with_state(shared)
}

/// The emulator's handler of an operation; `None` for one it does not implement, which then answers
/// like an unknown route.
fn handler(operation_id: &str, method: MethodFilter) -> Option<MethodRouter<Arc<Shared>>> {
    Some(match operation_id {
        "getStatus" => on(method, routes::status),
        "listCatalogProducts" => on(method, routes::list_catalog),
        "getCatalogProduct" => on(method, routes::get_catalog),
        "listProducts" => on(method, routes::list_products),
        "getProduct" => on(method, routes::get_product),
        "listArtworks" => on(method, routes::list_artworks),
        "createArtwork" => on(method, routes::create_artwork),
        "getArtwork" => on(method, routes::get_artwork),
        "listOrders" => on(method, routes::list_orders),
        "createOrder" => on(method, routes::create_order),
        "getOrder" => on(method, routes::get_order),
        _ => return None,
    })
}

fn method_filter(method: HttpMethod) -> MethodFilter {
    match method {
        HttpMethod::Get => MethodFilter::GET,
        HttpMethod::Put => MethodFilter::PUT,
        HttpMethod::Post => MethodFilter::POST,
        HttpMethod::Delete => MethodFilter::DELETE,
        HttpMethod::Options => MethodFilter::OPTIONS,
        HttpMethod::Head => MethodFilter::HEAD,
        HttpMethod::Patch => MethodFilter::PATCH,
        HttpMethod::Trace => MethodFilter::TRACE,
    }
}

/// Unknown routes, unknown version segments and unsupported methods, as the service answers them.
async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::NotFound(format!("Cannot {method} {}", uri.path()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_emulator_implements_every_operation_of_the_spec() {
        for operation in contract::OPERATIONS {
            assert!(
                handler(operation.id, MethodFilter::GET).is_some(),
                "{}",
                operation.id
            );
        }
    }
}
