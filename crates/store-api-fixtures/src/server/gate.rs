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
use crate::state::Shared;

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
    let store_id = auth::store_id(params);
    let fault_scope = store_id.as_deref().unwrap_or_default();
    faults::inject(&shared, operation, fault_scope, request, |request| {
        auth::guard(&shared, operation, store_id.clone(), request, next)
    })
    .await
}
