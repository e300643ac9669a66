//! The gate in front of each Store API route: an injected fault first ([`super::faults`], before
//! authentication, so a fault needs no key and never touches the store's bucket), then authentication
//! and the rate limit ([`super::auth`]), then the route's handler. The gate wraps the handler rather
//! than being an axum layer: a layer costs a boxed service and a future per request, and would hold the
//! emulator's state, which keeps the router from being built once per process (`super::router`).

use std::sync::Arc;

use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{RawPathParams, Request, State};
use axum::handler::Handler;
use axum::routing::{MethodFilter, MethodRouter, on};
use store_api_raw::contract::{HttpMethod, Operation};

use super::{auth, faults};
use crate::state::Shared;

/// The route of `operation`: `handler` behind the gate, for the operation's method.
pub(crate) fn gated<H, T>(operation: &'static Operation, handler: H) -> MethodRouter<Arc<Shared>>
where
    H: Handler<T, Arc<Shared>>,
    T: 'static,
{
    let method = method_filter(operation.method);
    on(
        method,
        move |State(shared): State<Arc<Shared>>,
              params: Result<RawPathParams, RawPathParamsRejection>,
              request: Request| {
            let handler = handler.clone();
            async move {
                let store_id = auth::store_id(params);
                let fault_scope = store_id.as_deref().unwrap_or_default();
                faults::inject(&shared, operation, fault_scope, request, |request| {
                    auth::guard(&shared, operation, store_id.clone(), request, |request| {
                        handler.call(request, shared.clone())
                    })
                })
                .await
            }
        },
    )
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
