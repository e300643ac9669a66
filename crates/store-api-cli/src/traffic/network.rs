//! `-vv` and more: each exchange's request and answer heads (and at `-vvv`, their bodies) printed by a
//! [`Network`] under the client, since the library's spans never hold headers or bodies.
//!
//! The key is written `REDACTED` wherever it stands in a header; the request line and the bodies are
//! the cassette crate's redaction of the exchange ([`Recording`]: the key as `<api-key>`, customer data
//! as placeholders), the same a recorded cassette holds.

use std::sync::Arc;

use reqwest::header::{CONTENT_LENGTH, HeaderMap, HeaderValue, TRANSFER_ENCODING, USER_AGENT};
use store_api::network::{Network, NetworkError, NetworkFuture, ReqwestNetwork};
use store_api_cassette::{
    Exchange, HttpAnswer, HttpRequest, RecordOptions, RecordedBody, Recording,
};

use super::{Paint, Sink};
use crate::terminal::{clean, clean_json, clean_lines};

/// What replaces the key in a header.
pub const REDACTED: &str = "REDACTED";

/// Headers whose value is a credential whatever it holds.
const SECRET_HEADERS: &[&str] = &[
    "x-api-key",
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

/// The most of an answer the client reads (the CLI keeps the client's default): an answer longer than
/// this is handed on so that the client refuses it, as it would have.
const LIMIT: usize = store_api::DEFAULT_MAX_RESPONSE_BYTES;

/// A network that prints each exchange's heads (and bodies, with `bodies`) to a [`Sink`] and carries
/// it over reqwest as the client's own network would.
#[derive(Clone)]
pub struct ShownNetwork {
    inner: ReqwestNetwork,
    bodies: bool,
    paint: Paint,
    sink: Sink,
}

impl std::fmt::Debug for ShownNetwork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShownNetwork")
            .field("bodies", &self.bodies)
            .finish_non_exhaustive()
    }
}

impl ShownNetwork {
    /// A network over reqwest (following no redirect, as the client's own).
    pub fn new(
        bodies: bool,
        paint: Paint,
        sink: Sink,
    ) -> Result<Arc<ShownNetwork>, store_api::Error> {
        Ok(Arc::new(ShownNetwork {
            inner: ReqwestNetwork::new()?,
            bodies,
            paint,
            sink,
        }))
    }

    fn print(&self, prefix: char, lines: &[String]) {
        let mut text = String::new();
        for line in lines {
            let line = if line.is_empty() {
                prefix.to_string()
            } else {
                format!("{prefix} {line}")
            };
            text.push_str(&self.paint.dim(&line));
            text.push('\n');
        }
        (self.sink)(&text);
    }
}

/// What was sent, kept for the redaction of the answer (whose placeholders continue the request's).
struct Sent {
    method: String,
    path_and_query: String,
    origin: String,
    headers: HeaderMap,
    body: Option<Vec<u8>>,
}

impl Sent {
    fn of(request: &reqwest::Request, bodies: bool) -> Sent {
        let url = request.url();
        Sent {
            method: request.method().as_str().to_owned(),
            path_and_query: match url.query() {
                Some(query) => format!("{}?{query}", url.path()),
                None => url.path().to_owned(),
            },
            origin: url.origin().ascii_serialization(),
            headers: request.headers().clone(),
            // A streamed body cannot be read twice; the client sends none.
            body: bodies
                .then(|| request.body().and_then(reqwest::Body::as_bytes))
                .flatten()
                .map(<[u8]>::to_vec),
        }
    }

    fn key(&self) -> Option<String> {
        self.headers
            .get("x-api-key")
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
            .filter(|key| !key.is_empty())
    }

    /// The exchange as the cassette crate redacts it (an empty answer when there is none yet).
    fn redacted(&self, answer: Option<&HttpAnswer>) -> Option<Exchange> {
        let recording = Recording::new(RecordOptions::default().max_kept_body(LIMIT));
        let empty = HttpAnswer {
            status: 0,
            headers: HeaderMap::new(),
            body: Default::default(),
        };
        recording.record(
            &HttpRequest {
                method: &self.method,
                path_and_query: &self.path_and_query,
                headers: &self.headers,
                body: self.body.as_deref().unwrap_or_default(),
            },
            answer.unwrap_or(&empty),
        );
        recording.cassette().exchanges.pop()
    }
}

/// `name: value` for each header, a credential's value and the key anywhere written [`REDACTED`].
pub fn header_lines(headers: &HeaderMap, key: Option<&str>) -> Vec<String> {
    headers
        .iter()
        .map(|(name, value)| {
            let shown = if SECRET_HEADERS.contains(&name.as_str()) {
                REDACTED.to_owned()
            } else {
                let text = String::from_utf8_lossy(value.as_bytes());
                match key {
                    Some(key) => text.replace(key, REDACTED),
                    None => text.into_owned(),
                }
            };
            format!("{name}: {}", clean(&shown))
        })
        .collect()
}

/// A body as the cassette crate keeps it: JSON (pretty) or text, cleaned for a terminal; or a note.
pub fn body_lines(body: Option<&RecordedBody>) -> Vec<String> {
    let text = match body {
        None => return Vec::new(),
        Some(RecordedBody::Json(json)) => match serde_json::to_string_pretty(json) {
            Ok(pretty) => clean_json(&pretty).into_owned(),
            Err(_) => "(a JSON body that cannot be shown)".to_owned(),
        },
        Some(RecordedBody::Text(text)) => clean_lines(text).into_owned(),
        Some(RecordedBody::Omitted { bytes, .. }) => {
            format!("({bytes} bytes not shown: not JSON, so its customer data cannot be redacted)")
        }
        Some(_) => "(a body not shown)".to_owned(),
    };
    // A blank line between the headers and the body, as on the wire.
    std::iter::once(String::new())
        .chain(text.lines().map(str::to_owned))
        .collect()
}

impl Network for ShownNetwork {
    fn send(&self, mut request: reqwest::Request) -> NetworkFuture<'_> {
        Box::pin(async move {
            // The client's own network sends its User-Agent as a default header; written into the
            // request here, so that what is shown is what is sent.
            request
                .headers_mut()
                .entry(USER_AGENT)
                .or_insert(HeaderValue::from_static(store_api::DEFAULT_USER_AGENT));
            let sent = Sent::of(&request, self.bodies);
            let key = sent.key();
            let redacted = sent.redacted(None);
            let mut lines = vec![match &redacted {
                Some(exchange) => {
                    let query = exchange
                        .request
                        .query
                        .as_ref()
                        .map(|query| format!("?{query}"))
                        .unwrap_or_default();
                    clean(&format!(
                        "{} {}{}{query}",
                        exchange.request.method, sent.origin, exchange.request.path
                    ))
                    .into_owned()
                }
                None => sent.method.clone(),
            }];
            lines.extend(header_lines(&sent.headers, key.as_deref()));
            if self.bodies {
                if request.body().is_some() && sent.body.is_none() {
                    lines.extend(["".to_owned(), "(a streamed body, not shown)".to_owned()]);
                } else {
                    lines.extend(body_lines(
                        redacted.as_ref().and_then(|e| e.request.body.as_ref()),
                    ));
                }
            }
            self.print('>', &lines);

            let response = self.inner.send(request).await?;
            let status = response.status();
            let version = response.version();
            let headers = response.headers().clone();
            let mut lines = vec![format!(
                "{} {}",
                status.as_str(),
                status.canonical_reason().unwrap_or_default()
            )];
            lines.extend(header_lines(&headers, key.as_deref()));
            if !self.bodies {
                self.print('<', &lines);
                return Ok(response);
            }
            if response
                .content_length()
                .is_some_and(|length| length > LIMIT as u64)
            {
                lines.extend([
                    "".to_owned(),
                    format!("(longer than {LIMIT} bytes: not read)"),
                ]);
                self.print('<', &lines);
                return Ok(response);
            }
            let body = match read_capped(response).await {
                Ok(body) => body,
                Err(error) => {
                    lines.extend(["".to_owned(), "(the body broke off)".to_owned()]);
                    self.print('<', &lines);
                    return Err(NetworkError::Broken(error.into()));
                }
            };
            if body.len() > LIMIT {
                lines.extend([
                    "".to_owned(),
                    format!("(longer than {LIMIT} bytes: not shown)"),
                ]);
            } else {
                let answer = HttpAnswer {
                    status: status.as_u16(),
                    headers: headers.clone(),
                    body: body.clone().into(),
                };
                let exchange = sent.redacted(Some(&answer));
                lines.extend(body_lines(
                    exchange.as_ref().and_then(|e| e.answer.body.as_ref()),
                ));
            }
            self.print('<', &lines);
            rebuilt(status, version, headers, body)
        })
    }
}

/// The whole body, or at most one chunk more than [`LIMIT`]: enough for the client to refuse it as
/// too large, as it would have.
async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        body.extend_from_slice(&chunk);
        if body.len() > LIMIT {
            break;
        }
    }
    Ok(body)
}

/// The answer again, from its head and its body read whole.
fn rebuilt(
    status: reqwest::StatusCode,
    version: reqwest::Version,
    mut headers: HeaderMap,
    body: Vec<u8>,
) -> Result<reqwest::Response, NetworkError> {
    // The body is whole now: its length is known, whatever the original framing was.
    headers.remove(TRANSFER_ENCODING);
    headers.insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
    let mut builder = http::Response::builder().status(status).version(version);
    if let Some(all) = builder.headers_mut() {
        *all = headers;
    }
    let response = builder
        .body(reqwest::Body::from(body))
        .map_err(|error| NetworkError::Broken(error.into()))?;
    Ok(reqwest::Response::from(response))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_never_a_header_value() {
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", HeaderValue::from_static("csk_secret_key"));
        headers.insert("x-echo", HeaderValue::from_static("was csk_secret_key"));
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        assert_eq!(
            header_lines(&headers, Some("csk_secret_key")),
            [
                "x-api-key: REDACTED",
                "x-echo: was REDACTED",
                "content-type: application/json"
            ]
        );
    }

    #[test]
    fn customer_data_is_redacted_in_bodies() {
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", HeaderValue::from_static("csk_secret_key"));
        let sent = Sent {
            method: "POST".into(),
            path_and_query: "/store-api/2026-08/stores/s/orders".into(),
            origin: "http://127.0.0.1:1".into(),
            headers,
            body: Some(
                br#"{"shippingAddress":{"firstName":"Ada","email":"ada@example.com"},"note":"csk_secret_key"}"#
                    .to_vec(),
            ),
        };
        let exchange = sent.redacted(None).unwrap();
        let text = body_lines(exchange.request.body.as_ref()).join("\n");
        for secret in ["Ada", "ada@example.com", "csk_secret_key"] {
            assert!(!text.contains(secret), "{secret}: {text}");
        }
        assert!(text.contains("firstName"), "{text}");
    }
}
