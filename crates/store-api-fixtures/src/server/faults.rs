//! Fires injected faults (see [`crate::faults`]) in front of every Store API route: before
//! authentication, so a fault needs no key and never touches the store's rate-limit bucket.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{MatchedPath, Path, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use store_api_raw::{contract, types};

use super::connection::ConnectionAbort;
use crate::Shared;
use crate::faults::FaultKind;

pub(crate) async fn inject(
    State(shared): State<Arc<Shared>>,
    matched: Option<MatchedPath>,
    params: Result<Path<HashMap<String, String>>, PathRejection>,
    request: Request,
    next: Next,
) -> Response {
    let store_id = params
        .ok()
        .and_then(|Path(params)| params.get("storeId").cloned())
        .unwrap_or_default();
    let operation = matched.and_then(|m| operation_id(request.method(), m.as_str()));
    let fault = operation.and_then(|operation| shared.faults().take(operation, &store_id));
    let Some(fault) = fault else {
        return next.run(request).await;
    };
    let abort = request.extensions().get::<Arc<ConnectionAbort>>().cloned();
    match fault {
        FaultKind::Status { status } => injected_status(status),
        FaultKind::RateLimited { retry_after } => {
            let mut response = injected_status(429);
            if let Ok(value) = HeaderValue::from_str(&retry_after) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
        FaultKind::Reset => end_connection(abort, true).await,
        FaultKind::DropAfterCommit => {
            drop(next.run(request).await);
            end_connection(abort, false).await
        }
        FaultKind::Delay { delay } => {
            let response = next.run(request).await;
            tokio::time::sleep(delay).await;
            response
        }
        FaultKind::StatusAfterCommit { status } => {
            drop(next.run(request).await);
            injected_status(status)
        }
    }
}

/// Ends the connection without an answer; the connection task drops this handler with it.
async fn end_connection(abort: Option<Arc<ConnectionAbort>>, reset: bool) -> Response {
    let Some(abort) = abort else {
        // Not served by our accept loop (never the case in the emulator): the nearest honest answer.
        return injected_status(503);
    };
    if reset {
        abort.reset();
    } else {
        abort.close();
    }
    std::future::pending().await
}

/// The service's error envelope with `status`, saying the fault was injected.
fn injected_status(status: u16) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
    let reason = status.canonical_reason().unwrap_or("Error");
    let body = types::Error {
        message: types::ErrorMessage::String(format!(
            "{reason} (a fault injected in the emulator)"
        )),
        error: (status != StatusCode::TOO_MANY_REQUESTS).then(|| reason.to_owned()),
        status_code: i64::from(status.as_u16()),
    };
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

/// The operation of a routed request (the generated client's name, `create_order`), from its method
/// and route template.
pub(crate) fn operation_id(method: &Method, template: &str) -> Option<&'static str> {
    let relative = template.strip_prefix(super::API_PREFIX)?;
    contract::OPERATIONS
        .iter()
        .find(|op| op.method.as_str() == method.as_str() && op.path == relative)
        .map(|op| op.method_name)
}

/// The operation's name as [`operation_id`] reports it, for either of the spec's forms
/// (`createOrder` or `create_order`); `None` when the Store API has no such operation.
pub(crate) fn canonical_operation(id: &str) -> Option<&'static str> {
    contract::operation(id).map(|op| op.method_name)
}
