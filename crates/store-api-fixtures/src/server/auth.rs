//! Authentication, then the rate limit, in front of every Store API route.
//!
//! Order matters: a request without a valid key gets 401, never 429 (the bucket is the store's, and an
//! anonymous caller must not be able to drain it), and a limited request is refused before anything is
//! processed. Every answer to an identified store carries the X-RateLimit headers: allowed ones, 429s,
//! 401s for a known store (its bucket as it stands, no token spent), and 404s for unserved paths under
//! it. Every answer that carries them is also written to the store's request log.

use std::sync::Arc;

use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{OriginalUri, RawPathParams, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use store_api_raw::contract::{Operation, shapes};
use subtle::ConstantTimeEq;

use crate::deviation::Deviation;
use crate::error::{ApiError, INVALID_API_KEY, STORE_NOT_ACTIVE};
use crate::logs::RequestRecord;
use crate::ratelimit::{BURST, Decision};
use crate::state::Shared;

/// The authenticated store of a request, put into its extensions.
#[derive(Debug, Clone)]
pub(crate) struct StoreId(pub String);

/// Authenticates the request for `store_id` (the path's, or why the path names none), spends a token of
/// its bucket and runs `inner`; logs the answer and adds the rate-limit headers.
pub(crate) async fn guard<Inner, Answer>(
    shared: &Shared,
    operation: &Operation,
    store_id: Result<String, ApiError>,
    mut request: Request,
    inner: Inner,
) -> Response
where
    Inner: FnOnce(Request) -> Answer,
    Answer: Future<Output = Response>,
{
    let store_id = match store_id {
        Ok(store_id) => store_id,
        Err(error) => return error.into_response(),
    };
    let seen = Seen::of(&request, operation, shared.clock.now());
    if let Err(refused) = authenticate(shared, &store_id, request.headers()) {
        let response = refused.error.into_response();
        // A known store's 401 reports its bucket, without spending a token of it.
        let response = match (&shared.limiter, refused.store_known) {
            _ if shared
                .config
                .deviations
                .has(Deviation::NoRateLimitHeadersOn401) =>
            {
                response
            }
            (Some(limiter), true) => with_headers(shared, response, limiter.peek(&store_id)),
            (None, true) => with_headers(shared, response, UNLIMITED),
            (_, false) => return response,
        };
        seen.log(shared, &store_id, &response);
        return response;
    }
    let decision = take_token(shared, &store_id);
    let response = match decision {
        Decision::Allowed { .. } => {
            request.extensions_mut().insert(StoreId(store_id.clone()));
            inner(request).await
        }
        Decision::Limited {
            retry_after_secs, ..
        } => ApiError::TooManyRequests {
            retry_after_secs,
            frozen: shared.clock.is_deterministic(),
        }
        .into_response(),
    };
    seen.log(shared, &store_id, &response);
    with_headers(shared, response, decision)
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

/// What the request log records of a request, taken before the request is handed on (its status is
/// filled in from the answer).
struct Seen(RequestRecord);

impl Seen {
    fn of(request: &Request, operation: &Operation, at: DateTime<Utc>) -> Seen {
        let path = request
            .extensions()
            .get::<OriginalUri>()
            .map_or_else(|| request.uri().path(), |uri| uri.path());
        Seen(RequestRecord::new(
            at,
            request.method().as_str(),
            path,
            Some(operation.id),
            0,
        ))
    }

    fn log(self, shared: &Shared, store_id: &str, response: &Response) {
        let Seen(mut record) = self;
        record.status = response.status().as_u16();
        // The request's arrival is recent enough to prune the log by.
        let at = record.at;
        shared.requests.record(store_id, record, at);
    }
}

/// A path under a store that the API does not serve: `Cannot <METHOD> <path>` like any unknown route,
/// but when the key is the store's, the request counts against its bucket and the answer carries the
/// rate-limit headers (a 429 when the bucket is empty), as every answer to an identified store does.
pub(crate) async fn unserved(
    State(shared): State<Arc<Shared>>,
    params: Result<RawPathParams, RawPathParamsRejection>,
    method: Method,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let not_found = ApiError::NotFound(format!("Cannot {method} {}", uri.path()));
    let store_id = store_id(params).unwrap_or_default();
    if authenticate(&shared, &store_id, &headers).is_err() {
        return not_found.into_response();
    }
    let decision = take_token(&shared, &store_id);
    let response = match decision {
        Decision::Allowed { .. } => not_found.into_response(),
        Decision::Limited {
            retry_after_secs, ..
        } => ApiError::TooManyRequests {
            retry_after_secs,
            frozen: shared.clock.is_deterministic(),
        }
        .into_response(),
    };
    let seen = RequestRecord::new(shared.clock.now(), method.as_str(), uri.path(), None, 0);
    Seen(seen).log(&shared, &store_id, &response);
    with_headers(&shared, response, decision)
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
fn with_headers(shared: &Shared, mut response: Response, decision: Decision) -> Response {
    let (remaining, mut reset) = match decision {
        Decision::Allowed {
            remaining,
            reset_secs,
        } => (remaining, reset_secs),
        Decision::Limited { reset_secs, .. } => (0, reset_secs),
    };
    if shared.config.deviations.has(Deviation::ResetAsUnixTime) {
        let now = u64::try_from(shared.clock.now().timestamp()).unwrap_or_default();
        reset += now;
    }
    let headers = response.headers_mut();
    headers.insert(RATE_LIMIT_LIMIT, HeaderValue::from(BURST));
    headers.insert(RATE_LIMIT_REMAINING, HeaderValue::from(remaining));
    headers.insert(RATE_LIMIT_RESET, HeaderValue::from(reset));
    response
}

// Built at compile time from the spec's names (`contract::shapes`): a name given as `&str` is parsed
// again on every insert.
const RATE_LIMIT_LIMIT: HeaderName = HeaderName::from_static(shapes::X_RATE_LIMIT_LIMIT.name);
const RATE_LIMIT_REMAINING: HeaderName =
    HeaderName::from_static(shapes::X_RATE_LIMIT_REMAINING.name);
const RATE_LIMIT_RESET: HeaderName = HeaderName::from_static(shapes::X_RATE_LIMIT_RESET.name);

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
        // Compared without an early exit, so timing does not reveal a prefix of the key.
        Some(key) if bool::from(key.as_bytes().ct_eq(store.api_key.as_bytes())) => {}
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
