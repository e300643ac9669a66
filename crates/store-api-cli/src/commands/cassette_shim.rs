//! TEMPORARY stand-in for store-api-cassette's record/replay cores (H1, branch h31-record), with their
//! fixed names, until that branch is merged. Deleted after the merge.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use reqwest::header::HeaderMap;
use store_api_cassette::{Cassette, CustomerData, Exchange, RecordedBody, RecordedRequest};

#[derive(Debug, Default, Clone)]
pub struct RecordOptions {
    keep: bool,
}

impl RecordOptions {
    pub fn keep_customer_data(mut self, keep: bool) -> Self {
        self.keep = keep;
        self
    }
}

#[derive(Debug, Clone)]
pub struct Recording {
    cassette: Arc<Mutex<Cassette>>,
}

pub struct HttpRequest<'a> {
    pub method: &'a str,
    pub path_and_query: &'a str,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
}

pub struct HttpAnswer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

fn body(bytes: &[u8]) -> Option<RecordedBody> {
    if bytes.is_empty() {
        return None;
    }
    Some(match serde_json::from_slice(bytes) {
        Ok(value) => RecordedBody::Json(value),
        Err(_) => RecordedBody::Text(String::from_utf8_lossy(bytes).into_owned()),
    })
}

fn request(request: &HttpRequest<'_>) -> RecordedRequest {
    let (path, query) = match request.path_and_query.split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
        None => (request.path_and_query.to_owned(), None),
    };
    let mut recorded: RecordedRequest = serde_json::from_value(serde_json::json!({
        "method": request.method, "path": path, "query": query,
    }))
    .unwrap_or_else(|_| unreachable!());
    recorded.body = body(request.body);
    recorded
}

impl Recording {
    pub fn new(options: RecordOptions) -> Recording {
        let data = if options.keep {
            CustomerData::Kept
        } else {
            CustomerData::Redacted
        };
        Recording {
            cassette: Arc::new(Mutex::new(Cassette::new(data))),
        }
    }

    pub fn record(&self, req: &HttpRequest<'_>, answer: &HttpAnswer) {
        let mut headers = std::collections::BTreeMap::new();
        for (name, value) in &answer.headers {
            if ["content-type", "location", "retry-after"].contains(&name.as_str()) {
                headers.insert(
                    name.as_str().to_owned(),
                    value.to_str().unwrap_or("").to_owned(),
                );
            }
        }
        let exchange: Exchange = serde_json::from_value(serde_json::json!({
            "request": request(req),
            "answer": {"status": answer.status, "headers": headers, "body": body(&answer.body)},
        }))
        .unwrap_or_else(|_| unreachable!());
        if let Ok(mut cassette) = self.cassette.lock() {
            cassette.exchanges.push(exchange);
        }
    }

    pub fn cassette(&self) -> Cassette {
        self.cassette
            .lock()
            .map(|c| c.clone())
            .unwrap_or_else(|_| Cassette::new(CustomerData::Redacted))
    }
}

#[derive(Debug)]
pub struct Replay {
    exchanges: Mutex<Vec<Option<Exchange>>>,
}

#[derive(Debug, thiserror::Error)]
#[error("no recorded exchange for {0}")]
pub struct ReplayError(String);

impl Replay {
    pub fn new(cassette: Cassette) -> Replay {
        Replay {
            exchanges: Mutex::new(cassette.exchanges.into_iter().map(Some).collect()),
        }
    }

    pub fn answer(&self, req: &HttpRequest<'_>) -> Result<HttpAnswer, ReplayError> {
        let wanted = request(req);
        let mut exchanges = self
            .exchanges
            .lock()
            .map_err(|_| ReplayError("poisoned".into()))?;
        for slot in exchanges.iter_mut() {
            let found = slot.as_ref().is_some_and(|e| {
                e.request.method == wanted.method
                    && e.request.path == wanted.path
                    && e.request.query == wanted.query
            });
            if found && let Some(exchange) = slot.take() {
                let mut headers = HeaderMap::new();
                for (name, value) in &exchange.answer.headers {
                    if let (Ok(n), Ok(v)) = (
                        reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                        reqwest::header::HeaderValue::from_str(value),
                    ) {
                        headers.insert(n, v);
                    }
                }
                let body = match exchange.answer.body {
                    Some(RecordedBody::Json(v)) => Bytes::from(v.to_string()),
                    Some(RecordedBody::Text(t)) => Bytes::from(t),
                    _ => Bytes::new(),
                };
                return Ok(HttpAnswer {
                    status: exchange.answer.status,
                    headers,
                    body,
                });
            }
        }
        Err(ReplayError(format!(
            "{} {}",
            wanted.method, req.path_and_query
        )))
    }
}
