//! The one layer in front of each Store API route: an injected fault first ([`super::faults`], before
//! authentication, so a fault needs no key and never touches the store's bucket), then authentication
//! and the rate limit ([`super::auth`]). One layer rather than one each: every axum layer costs a
//! boxed service and a future per request.

use std::sync::Arc;

use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{RawPathParams, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use store_api_raw::contract::Operation;

use super::{auth, faults};
use crate::Shared;
use crate::error::ApiError;

/// What the layer of one route knows: the emulator, and the spec's operation the route serves.
#[derive(Clone)]
pub(crate) struct Gate {
    pub shared: Arc<Shared>,
    pub operation: &'static Operation,
}

pub(crate) async fn gate(
    State(Gate { shared, operation }): State<Gate>,
    params: Result<RawPathParams, RawPathParamsRejection>,
    request: Request,
    next: Next,
) -> Response {
    let store_id = store_id(params);
    let fault_scope = store_id.as_deref().unwrap_or_default();
    faults::inject(&shared, operation, fault_scope, request, |request| {
        auth::guard(&shared, operation, store_id.clone(), request, next)
    })
    .await
}

/// The `storeId` segment of the path, percent-decoded; a segment that does not decode to UTF-8 names
/// nothing and is answered with the envelope, not axum's plain-text rejection.
pub(crate) fn store_id(
    params: Result<RawPathParams, RawPathParamsRejection>,
) -> Result<String, ApiError> {
    let params = params.map_err(|rejection| ApiError::BadRequest(rejection.body_text()))?;
    Ok(params
        .iter()
        .find(|(name, _)| *name == "storeId")
        .map(|(_, value)| value.to_owned())
        .unwrap_or_default())
}
