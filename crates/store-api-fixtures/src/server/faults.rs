//! Fires injected faults (see [`crate::faults`]) in front of every Store API route: before
//! authentication (see [`super::gate`]), so a fault needs no key and never touches the store's
//! rate-limit bucket. A request's own fault header comes first, then the queue.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use store_api_raw::contract::Operation;
use store_api_raw::types;

use super::access::control_allowed;
use super::connection::ConnectionAbort;
use crate::error::ApiError;
use crate::faults::{FAULT_HEADER, Fault, FaultKind, REDIRECT_HOST};
use crate::state::Shared;

/// Answers with the fault the request carries or the queue holds for `operation` on `store_id`, if any;
/// otherwise (and around the faults that let the request through) runs `inner`.
pub(crate) async fn inject<Inner, Answer>(
    shared: &Shared,
    operation: &Operation,
    store_id: &str,
    request: Request,
    inner: Inner,
) -> Response
where
    Inner: FnOnce(Request) -> Answer,
    Answer: Future<Output = Response>,
{
    let fault = match header_fault(shared, &request) {
        Err(refusal) => return refusal.into_response(),
        Ok(Some(fault)) => Some(fault),
        Ok(None) => shared.faults().take(operation.method_name, store_id),
    };
    let Some(fault) = fault else {
        return inner(request).await;
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
            drop(inner(request).await);
            end_connection(abort, false).await
        }
        FaultKind::Delay { delay } => {
            let response = inner(request).await;
            tokio::time::sleep(delay).await;
            response
        }
        FaultKind::StatusAfterCommit { status } => {
            drop(inner(request).await);
            injected_status(status)
        }
        FaultKind::ForeignConflict => {
            drop(inner(request).await);
            foreign_page(409, &[])
        }
        FaultKind::TruncatedBody => cut_body(inner(request).await, abort, false).await,
        FaultKind::ResetMidBody => cut_body(inner(request).await, abort, true).await,
        FaultKind::EmptyPage => empty_page(inner(request).await).await,
        FaultKind::Redirect { status, location } => {
            let location = location.unwrap_or_else(|| elsewhere(shared, &request));
            foreign_page(status, &[(header::LOCATION, location)])
        }
        FaultKind::ForeignPage { status } => foreign_page(status, &[]),
        FaultKind::EndlessBody => {
            drop(inner(request).await);
            endless_body(abort)
        }
        FaultKind::SlowBody { interval, bytes } => {
            slow_body(inner(request).await, abort, interval, bytes).await
        }
    }
}

/// An intermediary's own HTML page with `status` (and `headers`, such as a redirect's `Location`), not
/// the service's envelope.
fn foreign_page(status: u16, headers: &[(header::HeaderName, String)]) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let who = match status.as_u16() {
        300..=399 => "load balancer",
        403 => "request blocked by the web application firewall",
        404 => "no such route on the gateway (a deploy in progress?)",
        408 => "the gateway timed out waiting for the request",
        413 => "request entity larger than the gateway allows",
        500..=599 => "the gateway could not reach the service",
        _ => "edge proxy",
    };
    let page = format!(
        "<html><body><h1>{} {}</h1><p>{who} (a fault injected in the emulator)</p></body></html>",
        status.as_u16(),
        status.canonical_reason().unwrap_or("Error")
    );
    let mut response = (status, [(header::CONTENT_TYPE, "text/html")], page).into_response();
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// The request's own path and query at [`REDIRECT_HOST`], on the emulator's port: another host, for a
/// redirect that names none.
fn elsewhere(shared: &Shared, request: &Request) -> String {
    let port = url::Url::parse(&shared.origin)
        .ok()
        .and_then(|origin| origin.port())
        .map(|port| format!(":{port}"))
        .unwrap_or_default();
    let target = request
        .uri()
        .path_and_query()
        .map_or("/", |target| target.as_str());
    format!("http://{REDIRECT_HOST}{port}{target}")
}

/// A `200` whose JSON body opens a list and never closes it, nor ends.
fn endless_body(abort: Option<Arc<ConnectionAbort>>) -> Response {
    let Some(abort) = abort else {
        // Answered in process (`Emulator::answer`), which reads the whole body: it would never return.
        return injected_status(503);
    };
    abort.unending();
    let item: &[u8] = b"{\"id\":\"ord_0000000000000000\"},";
    let chunk = Bytes::from(item.repeat(64 * 1024 / item.len()));
    let opening = futures::stream::once(async { Ok(Bytes::from_static(b"{\"items\":[")) });
    let body = opening.chain(futures::stream::repeat(Ok::<_, Infallible>(chunk)));
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(body),
    )
        .into_response()
}

/// The answer's status and headers (its full `Content-Length`) at once, then its body `bytes` at a time,
/// `interval` apart.
async fn slow_body(
    response: Response,
    abort: Option<Arc<ConnectionAbort>>,
    interval: Duration,
    bytes: usize,
) -> Response {
    if let Some(abort) = abort {
        abort.unending();
    }
    let (mut parts, body) = response.into_parts();
    let whole = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    parts
        .headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(whole.len()));
    let pieces = futures::stream::unfold(0, move |sent| {
        let whole = whole.clone();
        async move {
            if sent >= whole.len() {
                return None;
            }
            tokio::time::sleep(interval).await;
            let end = whole.len().min(sent + bytes.max(1));
            Some((Ok::<_, Infallible>(whole.slice(sent..end)), end))
        }
    });
    Response::from_parts(parts, Body::from_stream(pieces))
}

/// The fault a request's [`FAULT_HEADER`] names, if it has one and may use it.
fn header_fault(shared: &Shared, request: &Request) -> Result<Option<FaultKind>, ApiError> {
    let Some(value) = request.headers().get(FAULT_HEADER) else {
        return Ok(None);
    };
    control_allowed(
        shared.config.allow_remote,
        request,
        &format!("The {FAULT_HEADER} header is honoured for"),
    )?;
    let value = value
        .to_str()
        .map_err(|_| ApiError::BadRequest(format!("{FAULT_HEADER} must be text")))?;
    Fault::from_header(value)
        .map(Some)
        .map_err(|problem| ApiError::BadRequest(format!("{FAULT_HEADER}: {problem}")))
}

/// Sends the answer's status and headers, with its full `Content-Length`, and half its body; then closes
/// (or resets) the connection inside the body.
async fn cut_body(
    response: Response,
    abort: Option<Arc<ConnectionAbort>>,
    reset: bool,
) -> Response {
    let Some(abort) = abort else {
        return injected_status(503);
    };
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let half = bytes.slice(..bytes.len() / 2);
    let first = futures::stream::once(async move { Ok::<_, std::io::Error>(half) });
    let then_end = futures::stream::once(async move {
        // Let the status line, the headers and the first half reach the client before the end.
        tokio::time::sleep(Duration::from_millis(20)).await;
        if reset {
            abort.reset();
        } else {
            abort.close();
        }
        std::future::pending::<Result<Bytes, std::io::Error>>().await
    });
    let mut cut = Response::from_parts(parts, Body::from_stream(first.chain(then_end)));
    cut.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    cut
}

/// The answer with its page emptied: no items, zero counts; any other answer unchanged.
async fn empty_page(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let page = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .filter(|value| value.get("items").is_some_and(serde_json::Value::is_array));
    let Some(mut page) = page else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    page["items"] = serde_json::json!([]);
    for count in ["totalItems", "startItem", "endItem"] {
        if page.get(count).is_some() {
            page[count] = serde_json::json!(0);
        }
    }
    let emptied = serde_json::to_vec(&page).unwrap_or_default();
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(emptied))
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
    let mut body = types::Error::new(
        types::ErrorMessage::String(format!("{reason} (a fault injected in the emulator)")),
        i64::from(status.as_u16()),
    );
    body.error = (status != StatusCode::TOO_MANY_REQUESTS).then(|| reason.to_owned());
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}
