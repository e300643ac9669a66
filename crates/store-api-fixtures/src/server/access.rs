//! Who may use the emulator's control plane (its `/_emulator` endpoints, or a request's fault header):
//! requests to a loopback `Host` unless remote access was allowed, and never a web page of another
//! site, whose browser would otherwise send it as a "simple" cross-origin request (no preflight).
//!
//! A request is a foreign page's when it carries an `Origin` that is neither a loopback origin
//! (`http(s)://localhost`, `127.0.0.0/8` or `[::1]`, any port: a page served from this machine) nor the
//! emulator's own as the request addresses it (`http://` + its `Host`, which matters only with remote
//! access), `Origin: null` included; or when the browser marks it `Sec-Fetch-Site: cross-site`, whatever
//! its `Origin` (`same-site`, `same-origin` and `none` are left to the `Origin` check). A request
//! without either header (curl, the SDK, [`RemoteEmulator`](crate::RemoteEmulator)) is no page's.

use axum::body::HttpBody as _;
use axum::extract::Request;
use axum::http::{HeaderMap, header};
use url::Url;

use crate::error::ApiError;
use crate::loopback::{is_loopback_host, is_loopback_url};

/// Whether a request may use the emulator's control plane (its endpoints, or a fault header): a
/// loopback `Host`, or remote access allowed; and not sent by another site's page. The refusal starts
/// with `what`.
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
    if !allow_remote && !is_loopback_host(host) {
        return Err(ApiError::Forbidden(format!(
            "{what} only requests to a loopback host, not {host:?}; start the emulator with --allow-remote to allow others"
        )));
    }
    match sent_by_a_foreign_page(request.headers(), host) {
        Some(evidence) => Err(ApiError::Forbidden(format!(
            "{what} no request from another site's web page ({evidence}); pages served from a loopback origin may use it"
        ))),
        None => Ok(()),
    }
}

/// What shows that a browser sent the request for another site's page, if anything does.
fn sent_by_a_foreign_page(headers: &HeaderMap, host: &str) -> Option<String> {
    let cross_site = headers
        .get_all("sec-fetch-site")
        .iter()
        .any(|value| value.as_bytes().eq_ignore_ascii_case(b"cross-site"));
    if cross_site {
        return Some("Sec-Fetch-Site: cross-site".to_owned());
    }
    headers
        .get_all(header::ORIGIN)
        .iter()
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .find(|origin| !is_own_or_loopback_origin(origin, host))
        .map(|origin| format!("Origin: {origin}"))
}

/// Whether `origin` is a loopback origin, or the emulator's own as addressed by `host`.
fn is_own_or_loopback_origin(origin: &str, host: &str) -> bool {
    // `null` (a sandboxed frame, a file) does not parse: foreign.
    let Ok(url) = Url::parse(origin) else {
        return false;
    };
    if !matches!(url.scheme(), "http" | "https") {
        return false;
    }
    is_loopback_url(&url)
        || Url::parse(&format!("http://{host}")).is_ok_and(|own| own.origin() == url.origin())
}

/// Refuses a control request whose body is not declared as JSON (415): a browser sends `text/plain`,
/// form and multipart bodies across origins without asking first, never `application/json`.
pub(super) fn json_body(request: &Request) -> Result<(), ApiError> {
    if request.body().is_end_stream() {
        return Ok(());
    }
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let is_json = content_type.as_deref().is_some_and(|value| {
        value
            .split(';')
            .next()
            .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
    });
    if is_json {
        return Ok(());
    }
    Err(ApiError::UnsupportedMediaType(format!(
        "A control request's body must be JSON, sent with Content-Type: application/json (not {})",
        content_type.map_or_else(|| "without a Content-Type".to_owned(), |t| format!("{t:?}"))
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let host = "127.0.0.1:8080";
        for origin in [
            "http://127.0.0.1:8080",
            "http://127.0.0.1:3000",
            "https://127.9.9.9",
            "http://localhost:5173",
            "http://[::1]:1",
        ] {
            assert!(is_own_or_loopback_origin(origin, host), "{origin}");
        }
        for origin in [
            "null",
            "",
            "https://evil.example",
            "http://127.0.0.1.nip.io:8080",
            "http://localhost.evil.example",
            "file:///home/me/page.html",
            "chrome-extension://abcdef",
        ] {
            assert!(!is_own_or_loopback_origin(origin, host), "{origin}");
        }
        // With remote access, the name the request addresses is the emulator's own origin.
        assert!(is_own_or_loopback_origin(
            "http://emulator.lan:8080",
            "emulator.lan:8080"
        ));
        assert!(is_own_or_loopback_origin(
            "http://emulator.lan",
            "emulator.lan:80"
        ));
        assert!(!is_own_or_loopback_origin(
            "https://emulator.lan:8080",
            "emulator.lan:8080"
        ));
        assert!(!is_own_or_loopback_origin(
            "http://other.lan:8080",
            "emulator.lan:8080"
        ));
    }
}
