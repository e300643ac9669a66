//! Who may use the emulator's control plane (its `/_emulator` endpoints, or a request's fault header):
//! requests to a loopback `Host`, unless remote access was allowed.

use axum::extract::Request;
use axum::http::header;

use crate::error::ApiError;
use crate::loopback::is_loopback_host;

/// Whether a request may use the emulator's control plane (its endpoints, or a fault header): a
/// loopback `Host`, or remote access allowed. The refusal starts with `what`.
pub(super) fn control_allowed(
    allow_remote: bool,
    request: &Request,
    what: &str,
) -> Result<(), ApiError> {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()))
        .unwrap_or_default();
    if allow_remote || is_loopback_host(host) {
        return Ok(());
    }
    Err(ApiError::Forbidden(format!(
        "{what} only requests to a loopback host, not {host:?}; start the emulator with --allow-remote to allow others"
    )))
}
