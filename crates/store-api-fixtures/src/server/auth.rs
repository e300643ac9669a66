//! Authentication, then the rate limit, in front of every Store API route.
//!
//! Order matters: a request without a valid key gets 401, never 429 (the bucket is the store's, and an
//! anonymous caller must not be able to drain it), and a limited request is refused before anything is
//! processed. Every answer to an identified store carries the X-RateLimit headers: allowed ones, 429s,
//! 401s for a known store (its bucket as it stands, no token spent), and 404s for unserved paths under
//! it. Every answer that carries them is also written to the store's request log.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{MatchedPath, OriginalUri, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use store_api_raw::contract;

use super::ratelimit::{BURST, Decision};
use crate::Shared;
use crate::error::{ApiError, INVALID_API_KEY, STORE_NOT_ACTIVE};
use crate::logs::RequestRecord;

/// The authenticated store of a request, put into its extensions.
#[derive(Debug, Clone)]
pub(crate) struct StoreId(pub String);

pub(crate) async fn guard(
    State(shared): State<Arc<Shared>>,
    params: Result<Path<HashMap<String, String>>, PathRejection>,
    mut request: Request,
    next: Next,
) -> Response {
    // A segment that does not percent-decode to UTF-8 names nothing: answer with the envelope, not
    // axum's plain-text rejection.
    let Path(params) = match params {
        Ok(params) => params,
        Err(rejection) => return ApiError::BadRequest(rejection.body_text()).into_response(),
    };
    let store_id = params.get("storeId").cloned().unwrap_or_default();
    let seen = Seen::of(&request, shared.clock.now());
    if let Err(refused) = authenticate(&shared, &store_id, request.headers()) {
        let response = refused.error.into_response();
        // A known store's 401 reports its bucket, without spending a token of it.
        let response = match (&shared.limiter, refused.store_known) {
            (Some(limiter), true) => with_headers(response, limiter.peek(&store_id)),
            (None, true) => with_headers(response, UNLIMITED),
            (_, false) => return response,
        };
        seen.log(&shared, &store_id, &response);
        return response;
    }
    let decision = take_token(&shared, &store_id);
    let response = match decision {
        Decision::Allowed { .. } => {
            request.extensions_mut().insert(StoreId(store_id.clone()));
            next.run(request).await
        }
        Decision::Limited {
            retry_after_secs, ..
        } => ApiError::TooManyRequests { retry_after_secs }.into_response(),
    };
    seen.log(&shared, &store_id, &response);
    with_headers(response, decision)
}

/// What the request log records of a request, taken before the request is handed on.
struct Seen {
    at: DateTime<Utc>,
    method: Method,
    path: String,
    operation_id: Option<&'static str>,
}

impl Seen {
    fn of(request: &Request, at: DateTime<Utc>) -> Seen {
        let method = request.method().clone();
        let operation_id = request
            .extensions()
            .get::<MatchedPath>()
            .and_then(|matched| operation_id(&method, matched.as_str()));
        let path = request
            .extensions()
            .get::<OriginalUri>()
            .map_or_else(|| request.uri().path(), |uri| uri.path())
            .to_owned();
        Seen {
            at,
            method,
            path,
            operation_id,
        }
    }

    fn log(self, shared: &Shared, store_id: &str, response: &Response) {
        let record = RequestRecord {
            at: self.at,
            method: self.method.to_string(),
            path: self.path,
            operation_id: self.operation_id.map(str::to_owned),
            status: response.status().as_u16(),
        };
        shared.requests.record(store_id, record, shared.clock.now());
    }
}

/// The spec's operation at `matched` (the route template, with or without the version prefix).
fn operation_id(method: &Method, matched: &str) -> Option<&'static str> {
    let template = matched.strip_prefix(super::API_PREFIX).unwrap_or(matched);
    contract::OPERATIONS
        .iter()
        .find(|op| op.path == template && op.method.as_str() == method.as_str())
        .map(|op| op.id)
}

/// A path under a store that the API does not serve: `Cannot <METHOD> <path>` like any unknown route,
/// but when the key is the store's, the request counts against its bucket and the answer carries the
/// rate-limit headers (a 429 when the bucket is empty), as every answer to an identified store does.
pub(crate) async fn unserved(
    State(shared): State<Arc<Shared>>,
    params: Result<Path<HashMap<String, String>>, PathRejection>,
    method: Method,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let not_found = ApiError::NotFound(format!("Cannot {method} {}", uri.path()));
    let store_id = params
        .ok()
        .and_then(|Path(params)| params.get("storeId").cloned())
        .unwrap_or_default();
    if authenticate(&shared, &store_id, &headers).is_err() {
        return not_found.into_response();
    }
    let decision = take_token(&shared, &store_id);
    let response = match decision {
        Decision::Allowed { .. } => not_found.into_response(),
        Decision::Limited {
            retry_after_secs, ..
        } => ApiError::TooManyRequests { retry_after_secs }.into_response(),
    };
    let seen = Seen {
        at: shared.clock.now(),
        method,
        path: uri.path().to_owned(),
        operation_id: None,
    };
    seen.log(&shared, &store_id, &response);
    with_headers(response, decision)
}

/// The headers' values when the emulator's rate limit is off: a full bucket, always.
const UNLIMITED: Decision = Decision::Allowed {
    remaining: BURST,
    reset_secs: 0,
};

fn take_token(shared: &Shared, store_id: &str) -> Decision {
    match &shared.limiter {
        Some(limiter) => limiter.check(store_id),
        None => UNLIMITED,
    }
}

/// Adds `X-RateLimit-Limit`, `-Remaining` and `-Reset` for `decision`.
fn with_headers(mut response: Response, decision: Decision) -> Response {
    let (remaining, reset) = match decision {
        Decision::Allowed {
            remaining,
            reset_secs,
        } => (remaining, reset_secs),
        Decision::Limited { reset_secs, .. } => (0, reset_secs),
    };
    let headers = response.headers_mut();
    headers.insert("x-ratelimit-limit", HeaderValue::from(BURST));
    headers.insert("x-ratelimit-remaining", HeaderValue::from(remaining));
    headers.insert("x-ratelimit-reset", HeaderValue::from(reset));
    response
}

/// The two 401s of the seed: an unknown store, a missing or wrong key → `Invalid API key`; the right
/// key of an inactive store → `The store is not active`.
fn authenticate(shared: &Shared, store_id: &str, headers: &HeaderMap) -> Result<(), Refused> {
    let presented = headers.get("x-api-key").and_then(|v| v.to_str().ok());
    let state = shared.read();
    let store = state.stores.get(store_id).ok_or(Refused {
        error: ApiError::Unauthorized(INVALID_API_KEY),
        store_known: false,
    })?;
    let refused = |message| Refused {
        error: ApiError::Unauthorized(message),
        store_known: true,
    };
    match presented {
        Some(key) if constant_time_eq(key.as_bytes(), store.api_key.as_bytes()) => {}
        _ => return Err(refused(INVALID_API_KEY)),
    }
    if !store.active {
        return Err(refused(STORE_NOT_ACTIVE));
    }
    Ok(())
}

/// A 401, and whether the path named a store that exists (whose bucket the answer then reports).
struct Refused {
    error: ApiError,
    store_known: bool,
}

/// Compares keys without an early exit, so timing does not reveal a prefix of the key.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
