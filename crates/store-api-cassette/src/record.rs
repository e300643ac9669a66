//! Recording: every exchange of a session written to a [`Cassette`], the key never, customer data as
//! placeholders unless the recording keeps it.
//!
//! [`Recording`] is the pure core (one exchange in, redacted; the cassette out), shared by the
//! [`Recorder`] network and the CLI's recording proxy. [`Recorder`] wraps a real network under a
//! [`store_api::Client`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::{Bytes, BytesMut};
use serde_json::Value;
use store_api::network::{Network, NetworkError, NetworkFuture};

use crate::format::{
    Cassette, CustomerData, Exchange, RecordedAnswer, RecordedBody, RecordedRequest,
};
use crate::matching::{canonical_digest, split_path};
use crate::redact::{Keys, Redactor};

/// Bodies longer than this (in bytes) are kept as their size and digest only, by default: 64 KiB.
pub const DEFAULT_MAX_KEPT_BODY: usize = 64 * 1024;

/// The request headers a cassette keeps.
const REQUEST_HEADERS: &[&str] = &["content-type"];

/// The answer headers a cassette keeps: what the client's behaviour depends on (and what a comparison
/// compares by presence and format).
pub(crate) const ANSWER_HEADERS: &[&str] = &[
    "content-type",
    "retry-after",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "location",
];

/// How a session is recorded.
///
/// ```
/// use store_api_cassette::RecordOptions;
///
/// // The default: names, addresses, emails and phone numbers become placeholders.
/// let redacted = RecordOptions::default();
/// // A recording of test data only, kept as sent.
/// let kept = RecordOptions::default().keep_customer_data(true);
/// # let _ = (redacted, kept);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordOptions {
    keep_customer_data: bool,
    max_kept_body: usize,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            keep_customer_data: false,
            max_kept_body: DEFAULT_MAX_KEPT_BODY,
        }
    }
}

impl RecordOptions {
    /// Keeps customer data (the `shippingAddress` of orders) as sent and received instead of
    /// replacing it by placeholders (default `false`). The API key is never kept.
    pub fn keep_customer_data(mut self, keep: bool) -> Self {
        self.keep_customer_data = keep;
        self
    }

    /// Bodies longer than `bytes` are kept as their size and SHA-256 only (default
    /// [`DEFAULT_MAX_KEPT_BODY`]). A request kept so is still matched on replay (by the digest of its
    /// redacted form); an answer kept so cannot be replayed.
    pub fn max_kept_body(mut self, bytes: usize) -> Self {
        self.max_kept_body = bytes;
        self
    }
}

/// One request as sent: what [`Recording::record`] and [`Replay::answer`](crate::Replay::answer) take.
#[derive(Debug, Clone, Copy)]
pub struct HttpRequest<'a> {
    /// The method, upper case (`GET`).
    pub method: &'a str,
    /// The path from the origin, with the query string if there is one
    /// (`/store-api/2026-08/stores/store_alpha/orders?limit=10`).
    pub path_and_query: &'a str,
    /// Its headers, the `X-API-Key` included (the recording learns the key from it, to scrub it).
    pub headers: &'a http::HeaderMap,
    /// Its body, empty when there is none.
    pub body: &'a [u8],
}

/// One answer as received (or replayed).
#[derive(Debug, Clone, PartialEq)]
pub struct HttpAnswer {
    /// The status code.
    pub status: u16,
    /// Its headers.
    pub headers: http::HeaderMap,
    /// Its body, whole.
    pub body: Bytes,
}

/// The exchanges of one session, recorded as they happen. Cloning it shares the recording (an `Arc`
/// inside); it can be fed from any number of threads.
///
/// ```
/// use store_api_cassette::{HttpAnswer, HttpRequest, RecordOptions, Recording};
///
/// let recording = Recording::new(RecordOptions::default());
/// let mut headers = http::HeaderMap::new();
/// headers.insert("x-api-key", "csk_live_0123456789".parse()?);
/// recording.record(
///     &HttpRequest {
///         method: "GET",
///         path_and_query: "/store-api/2026-08/stores/store_alpha/status",
///         headers: &headers,
///         body: b"",
///     },
///     &HttpAnswer { status: 200, headers: http::HeaderMap::new(), body: r#"{"status":"ok"}"#.into() },
/// );
/// let text = recording.cassette().to_text();
/// assert!(text.contains("/stores/store_alpha/status"));
/// assert!(!text.contains("csk_live_0123456789"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Recording {
    state: Arc<Mutex<RecordingState>>,
}

#[derive(Debug)]
struct RecordingState {
    options: RecordOptions,
    redactor: Redactor,
    keys: Keys,
    cassette: Cassette,
}

impl Recording {
    /// An empty recording.
    pub fn new(options: RecordOptions) -> Recording {
        let customer_data = if options.keep_customer_data {
            CustomerData::Kept
        } else {
            CustomerData::Redacted
        };
        Recording {
            state: Arc::new(Mutex::new(RecordingState {
                options,
                redactor: Redactor::default(),
                keys: Keys::default(),
                cassette: Cassette::new(customer_data),
            })),
        }
    }

    /// Records one exchange: the request as sent (the key header and any occurrence of the key in
    /// its path, query or body are never written), the answer as received. Redaction happens here.
    pub fn record(&self, request: &HttpRequest<'_>, answer: &HttpAnswer) {
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let state = &mut *guard;
        state.keys.add_from(request.headers);
        let mut redactor = (!state.options.keep_customer_data).then_some(&mut state.redactor);
        let max = state.options.max_kept_body;
        let (path, query) = split_path(request.path_and_query);
        // The request first: its values get the first placeholders, as they were sent first.
        let request_body = recorded_body(
            request.body,
            &state.keys,
            redactor.as_deref_mut(),
            false,
            max,
        );
        let recorded_request = RecordedRequest {
            method: request.method.to_ascii_uppercase(),
            path: state.keys.scrub(path),
            query: query.map(|query| state.keys.scrub(query)),
            headers: kept_headers(request.headers, REQUEST_HEADERS, &state.keys),
            body: request_body,
        };
        let recorded_answer = RecordedAnswer {
            status: answer.status,
            headers: kept_headers(&answer.headers, ANSWER_HEADERS, &state.keys),
            body: recorded_body(&answer.body, &state.keys, redactor, true, max),
        };
        state.cassette.exchanges.push(Exchange {
            request: recorded_request,
            answer: recorded_answer,
        });
    }

    /// A snapshot of what was recorded so far.
    pub fn cassette(&self) -> Cassette {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .cassette
            .clone()
    }
}

/// The headers of `names` in `headers`, by lower-case name, the key scrubbed from their values.
fn kept_headers(
    headers: &http::HeaderMap,
    names: &[&str],
    keys: &Keys,
) -> BTreeMap<String, String> {
    names
        .iter()
        .filter_map(|name| {
            let value = headers.get(*name)?;
            let text = String::from_utf8_lossy(value.as_bytes());
            Some(((*name).to_owned(), keys.scrub(&text)))
        })
        .collect()
}

/// A body as a cassette keeps it: JSON when it parses (keys scrubbed, customer data redacted when a
/// redactor is given), text otherwise, its size and digest when it is longer than `max` or not text.
pub(crate) fn recorded_body(
    bytes: &[u8],
    keys: &Keys,
    redactor: Option<&mut Redactor>,
    answer: bool,
    max: usize,
) -> Option<RecordedBody> {
    if bytes.is_empty() {
        return None;
    }
    let redacted = redactor.is_some();
    if let Ok(mut json) = serde_json::from_slice::<Value>(bytes) {
        keys.scrub_json(&mut json);
        if bytes.len() > max {
            return Some(RecordedBody::Omitted {
                bytes: bytes.len() as u64,
                sha256: canonical_digest(&json, redacted),
            });
        }
        if let Some(redactor) = redactor {
            if answer {
                redactor.redact_answer(&mut json);
            } else {
                redactor.redact(&mut json);
            }
        }
        return Some(RecordedBody::Json(json));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) if bytes.len() <= max => Some(RecordedBody::Text(keys.scrub(text))),
        Ok(text) => Some(RecordedBody::Omitted {
            bytes: bytes.len() as u64,
            sha256: crate::matching::sha256_hex(keys.scrub(text).as_bytes()),
        }),
        Err(_) => Some(RecordedBody::Omitted {
            bytes: bytes.len() as u64,
            sha256: crate::matching::sha256_hex(bytes),
        }),
    }
}

/// A [`Network`] that records every exchange through another one.
///
/// Each answer's body is read whole (at most [`store_api::DEFAULT_MAX_RESPONSE_BYTES`]), recorded,
/// and handed to the client as an equivalent answer. An answer that says it is longer than that is
/// passed through unread and not recorded (the client refuses it anyway); a body that breaks
/// mid-way is reported as a broken connection and not recorded, and so is an exchange that got no
/// answer at all (no connection, a reset): a cassette holds answers.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use store_api_cassette::{RecordOptions, Recorder};
///
/// let recorder = Arc::new(Recorder::reqwest(RecordOptions::default())?);
/// let client = store_api::Client::builder()
///     .base_url("https://api.example.com/store-api/2026-08")
///     .store_id("store_alpha")
///     .api_key(std::env::var("STORE_API_KEY")?)
///     .network(recorder.clone())
///     .build()?;
/// client.status().await?;
/// recorder.recording().cassette().save("tests/cassettes/status.json")?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Recorder {
    inner: Arc<dyn Network>,
    recording: Recording,
}

impl Recorder {
    /// A recorder of the exchanges `inner` carries.
    pub fn new(inner: Arc<dyn Network>, options: RecordOptions) -> Recorder {
        Recorder {
            inner,
            recording: Recording::new(options),
        }
    }

    /// A recorder over a reqwest client that follows no redirect (the client's own default network
    /// is built so too): what to record the real service with.
    pub fn reqwest(options: RecordOptions) -> Result<Recorder, reqwest::Error> {
        store_api::install_crypto_provider();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Recorder::new(Arc::new(Reqwest { http }), options))
    }

    /// The recording (shared: it grows as the recorder records).
    pub fn recording(&self) -> Recording {
        self.recording.clone()
    }
}

/// reqwest as a [`Network`], for [`Recorder::reqwest`].
#[derive(Debug)]
struct Reqwest {
    http: reqwest::Client,
}

impl Network for Reqwest {
    fn send(&self, request: reqwest::Request) -> NetworkFuture<'_> {
        Box::pin(async move { Ok(self.http.execute(request).await?) })
    }
}

impl Network for Recorder {
    fn send(&self, request: reqwest::Request) -> NetworkFuture<'_> {
        Box::pin(async move {
            let method = request.method().as_str().to_owned();
            let path_and_query = path_and_query(request.url());
            let headers = request.headers().clone();
            let body = request
                .body()
                .and_then(reqwest::Body::as_bytes)
                .map(Bytes::copy_from_slice)
                .unwrap_or_default();
            let response = self.inner.send(request).await?;
            let limit = store_api::DEFAULT_MAX_RESPONSE_BYTES;
            if response
                .content_length()
                .is_some_and(|length| length > limit as u64)
            {
                return Ok(response);
            }
            let status = response.status().as_u16();
            let answer_headers = response.headers().clone();
            let answer_body = read_body(response, limit).await?;
            let answer = HttpAnswer {
                status,
                headers: answer_headers,
                body: answer_body,
            };
            self.recording.record(
                &HttpRequest {
                    method: &method,
                    path_and_query: &path_and_query,
                    headers: &headers,
                    body: &body,
                },
                &answer,
            );
            to_response(answer).map_err(|error| NetworkError::Broken(error.into()))
        })
    }
}

/// The path and query of `url`, as [`HttpRequest::path_and_query`] takes them.
pub(crate) fn path_and_query(url: &url::Url) -> String {
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    }
}

/// The whole body of `response`, at most `limit` bytes.
async fn read_body(mut response: reqwest::Response, limit: usize) -> Result<Bytes, NetworkError> {
    let mut body = BytesMut::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| NetworkError::Broken(error.into()))?
    {
        if body.len().saturating_add(chunk.len()) > limit {
            return Err(NetworkError::Broken(
                format!("the answer is longer than {limit} bytes").into(),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// `answer` as the [`reqwest::Response`] a [`Network`] returns; its length is the body's.
pub(crate) fn to_response(answer: HttpAnswer) -> Result<reqwest::Response, http::Error> {
    let mut builder = http::Response::builder().status(answer.status);
    if let Some(headers) = builder.headers_mut() {
        *headers = answer.headers;
        // The body is whole now: its length is known, whatever the original framing was.
        headers.remove(http::header::TRANSFER_ENCODING);
        headers.insert(
            http::header::CONTENT_LENGTH,
            http::HeaderValue::from(answer.body.len()),
        );
    }
    let response = builder.body(reqwest::Body::from(answer.body))?;
    Ok(reqwest::Response::from(response))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request_headers(key: &str) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        headers.insert("x-api-key", key.parse().unwrap());
        headers.insert("content-type", "application/json".parse().unwrap());
        headers
    }

    #[test]
    fn the_key_is_never_written_and_customer_data_is_replaced() {
        let key = "csk_test_abcdefgh";
        let recording = Recording::new(RecordOptions::default());
        let body = json!({
            "externalOrderId": "ext-1", "note": format!("key {key}"),
            "shippingAddress": {"firstName": "Ada", "lastName": "Lovelace",
                "address": {"cityOrTown": "Austin", "stateOrProvince": "TX", "country": "US"}}
        });
        let answer = json!({"id": "ord_1", "shippingAddress": {"firstName": "Ada"}});
        recording.record(
            &HttpRequest {
                method: "POST",
                path_and_query: &format!("/store-api/2026-08/stores/{key}/orders?k={key}"),
                headers: &request_headers(key),
                body: body.to_string().as_bytes(),
            },
            &HttpAnswer {
                status: 201,
                headers: http::HeaderMap::new(),
                body: answer.to_string().into(),
            },
        );
        let cassette = recording.cassette();
        let text = cassette.to_text();
        for secret in [key, "Ada", "Lovelace", "Austin", "x-api-key"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        let exchange = &cassette.exchanges[0];
        assert_eq!(
            exchange.request.path,
            "/store-api/2026-08/stores/<api-key>/orders"
        );
        assert_eq!(exchange.request.query.as_deref(), Some("k=<api-key>"));
        assert_eq!(
            exchange.answer.body,
            Some(RecordedBody::Json(
                json!({"id": "ord_1", "shippingAddress": {"firstName": "Firstname1"}})
            ))
        );
        assert_eq!(cassette.customer_data, CustomerData::Redacted);
    }

    #[test]
    fn kept_customer_data_is_kept_and_large_bodies_are_digested() {
        let recording = Recording::new(
            RecordOptions::default()
                .keep_customer_data(true)
                .max_kept_body(10),
        );
        let body = json!({"shippingAddress": {"firstName": "Ada"}}).to_string();
        recording.record(
            &HttpRequest {
                method: "post",
                path_and_query: "/x",
                headers: &http::HeaderMap::new(),
                body: body.as_bytes(),
            },
            &HttpAnswer {
                status: 200,
                headers: http::HeaderMap::new(),
                body: Bytes::from_static(b"short"),
            },
        );
        let cassette = recording.cassette();
        let exchange = &cassette.exchanges[0];
        assert_eq!(exchange.request.method, "POST");
        assert!(matches!(
            exchange.request.body,
            Some(RecordedBody::Omitted { bytes, .. }) if bytes == body.len() as u64
        ));
        assert_eq!(
            exchange.answer.body,
            Some(RecordedBody::Text("short".into()))
        );
        assert_eq!(cassette.customer_data, CustomerData::Kept);
    }
}
