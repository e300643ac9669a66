//! The emulator's router: every operation of the spec at its full path, each behind its gate, the
//! control routes under `/_emulator`, and `Cannot <METHOD> <path>` for everything else.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::http::{Method, Uri};
use axum::middleware;
use axum::routing::{MethodRouter, any};
use store_api_raw::contract::{self, Operation};

use crate::error::ApiError;
use crate::state::Shared;

use super::{auth, control, gate, routes};

/// The path prefix of every Store API route.
pub const API_PREFIX: &str = contract::VERSION_PREFIX;

/// The emulator's router, serving `shared`. The routes are built once per process (for each setting of
/// `allow_remote`, the only setting they hold) and each emulator gives them its state: building them
/// cost a debug build half a millisecond per start.
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    static ROUTES: [OnceLock<Router<Arc<Shared>>>; 2] = [OnceLock::new(), OnceLock::new()];
    let allow_remote = shared.config.allow_remote;
    ROUTES[usize::from(allow_remote)]
        .get_or_init(|| routes(allow_remote))
        .clone()
        .with_state(shared)
}

fn routes(allow_remote: bool) -> Router<Arc<Shared>> {
    // Every operation of the spec at its full path and method, from the generated table, each behind
    // its gate (faults, then authentication and the rate limit), which knows the operation. Full paths
    // rather than a nested router: nesting rewrites every request's URI on the way in.
    let mut paths: BTreeMap<&str, MethodRouter<Arc<Shared>>> = BTreeMap::new();
    for operation in contract::OPERATIONS {
        if let Some(route) = route(operation) {
            let merged = match paths.remove(operation.path) {
                Some(other) => other.merge(route),
                None => route,
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
            control::router()
                .route_layer(middleware::from_fn_with_state(allow_remote, control::admit)),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(not_found)
}

/// The emulator's route of an operation, behind its gate; `None` for one it does not implement, which
/// then answers like an unknown route.
fn route(operation: &'static Operation) -> Option<MethodRouter<Arc<Shared>>> {
    Some(match operation.id {
        "getStatus" => gate::gated(operation, routes::status),
        "listCatalogProducts" => gate::gated(operation, routes::list_catalog),
        "getCatalogProduct" => gate::gated(operation, routes::get_catalog),
        "listProducts" => gate::gated(operation, routes::list_products),
        "getProduct" => gate::gated(operation, routes::get_product),
        "listArtworks" => gate::gated(operation, routes::list_artworks),
        "createArtwork" => gate::gated(operation, routes::create_artwork),
        "getArtwork" => gate::gated(operation, routes::get_artwork),
        "listOrders" => gate::gated(operation, routes::list_orders),
        "createOrder" => gate::gated(operation, routes::create_order),
        "getOrder" => gate::gated(operation, routes::get_order),
        _ => return None,
    })
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
            assert!(route(operation).is_some(), "{}", operation.id);
        }
    }
}
