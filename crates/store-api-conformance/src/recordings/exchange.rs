//! One recorded exchange as the checks read it: its operation of the spec, its store, its query, its
//! bodies as JSON and its error envelope.

use serde_json::Value;
use store_api_cassette::{Exchange, RecordedBody};
use store_api_raw::contract::{OPERATIONS, Operation, VERSION_PREFIX};

use crate::report::RecordedExchange;

/// The error envelope of an answer: `{statusCode, error, message}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Envelope {
    pub status_code: Option<u64>,
    pub error: Option<String>,
    pub message: Message,
}

/// An envelope's `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Message {
    /// One string: a rule of the service (the first violated), or any other refusal.
    Text(String),
    /// A validation failure: every failing field.
    List(Vec<String>),
    /// Absent or of another shape.
    Other,
}

impl Message {
    /// The messages of a validation failure, if this is one.
    pub fn list(&self) -> Option<&[String]> {
        match self {
            Message::List(list) => Some(list),
            _ => None,
        }
    }
}

/// An exchange, read.
pub(crate) struct Seen<'a> {
    pub index: usize,
    pub exchange: &'a Exchange,
    /// The spec's operation its method and path reach.
    pub operation: Option<&'static Operation>,
    /// The `storeId` of its path.
    pub store: Option<String>,
    /// The query's pairs, percent-decoded, in order.
    pub query: Vec<(String, String)>,
}

impl<'a> Seen<'a> {
    pub fn new(index: usize, exchange: &'a Exchange) -> Seen<'a> {
        let request = &exchange.request;
        let relative = request.path.strip_prefix(VERSION_PREFIX);
        let (operation, store) = relative
            .and_then(|path| route(&request.method, path))
            .map_or((None, None), |(operation, store)| (Some(operation), store));
        let query = request.query.as_deref().map(pairs).unwrap_or_default();
        Seen {
            index,
            exchange,
            operation,
            store,
            query,
        }
    }

    /// Where a finding is seen: this exchange.
    pub fn at(&self) -> RecordedExchange {
        let request = &self.exchange.request;
        let path = match &request.query {
            Some(query) => format!("{}?{query}", request.path),
            None => request.path.clone(),
        };
        RecordedExchange::new(self.index, request.method.clone(), path)
    }

    pub fn is(&self, operation: &Operation) -> bool {
        self.operation.is_some_and(|op| op.id == operation.id)
    }

    pub fn status(&self) -> u16 {
        self.exchange.answer.status
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.exchange
            .answer
            .headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub fn header_u64(&self, name: &str) -> Option<u64> {
        self.header(name)
            .and_then(|value| value.trim().parse().ok())
    }

    /// The request header `name`.
    pub fn request_header(&self, name: &str) -> Option<&str> {
        self.exchange
            .request
            .headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub fn answer_json(&self) -> Option<&'a Value> {
        self.exchange
            .answer
            .body
            .as_ref()
            .and_then(RecordedBody::json)
    }

    pub fn request_json(&self) -> Option<&'a Value> {
        self.exchange
            .request
            .body
            .as_ref()
            .and_then(RecordedBody::json)
    }

    /// The request body's bytes as sent, when the cassette holds them (not an omitted body).
    pub fn request_bytes(&self) -> Option<Vec<u8>> {
        match self.exchange.request.body.as_ref()? {
            RecordedBody::Json(value) => serde_json::to_vec(value).ok(),
            RecordedBody::Text(text) => Some(text.as_bytes().to_vec()),
            // Omitted, or a kind of body this crate does not know.
            _ => None,
        }
    }

    /// The value of query parameter `name` (the first), percent-decoded.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The answer's error envelope, if its body is a JSON object.
    pub fn envelope(&self) -> Option<Envelope> {
        let json = self.answer_json()?.as_object()?;
        let message = match json.get("message") {
            Some(Value::String(text)) => Message::Text(text.clone()),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => Message::List(
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_owned))
                    .collect(),
            ),
            _ => Message::Other,
        };
        Some(Envelope {
            status_code: json.get("statusCode").and_then(Value::as_u64),
            error: json.get("error").and_then(Value::as_str).map(str::to_owned),
            message,
        })
    }

    /// The answer in a few words: its status and message (or the start of its body).
    pub fn describe(&self) -> String {
        let status = self.status();
        if status < 400 {
            // A success is its status, and the id of what it answered with.
            return match self.answer_json().and_then(|json| json["id"].as_str()) {
                Some(id) => format!("{status} {id}"),
                None => format!("{status}"),
            };
        }
        match self.exchange.answer.body.as_ref() {
            Some(RecordedBody::Json(value)) => match &value["message"] {
                Value::Null => format!("{status} {}", shorten(&value.to_string())),
                message => format!("{status} {message}"),
            },
            Some(RecordedBody::Text(text)) => format!("{status} {}", shorten(text)),
            Some(RecordedBody::Omitted { bytes, .. }) => format!("{status} ({bytes} bytes)"),
            _ => format!("{status}"),
        }
    }
}

fn shorten(text: &str) -> String {
    const MOST: usize = 120;
    match text.char_indices().nth(MOST) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The operation `method path` (relative to the version prefix) reaches, with its `storeId`.
fn route(method: &str, path: &str) -> Option<(&'static Operation, Option<String>)> {
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    OPERATIONS.iter().find_map(|operation| {
        if !operation.method.as_str().eq_ignore_ascii_case(method) {
            return None;
        }
        let template: Vec<&str> = operation.path.split('/').collect();
        if template.len() != segments.len() {
            return None;
        }
        let mut store = None;
        for (part, segment) in template.iter().zip(&segments) {
            if part.starts_with('{') {
                if segment.is_empty() {
                    return None;
                }
                if *part == "{storeId}" {
                    store = Some(decode(segment));
                }
            } else if part != segment {
                return None;
            }
        }
        Some((operation, store))
    })
}

/// `a=1&filter[b]=x,y` as pairs, percent-decoded.
fn pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
        .collect()
}

/// Percent-decoding (and `+` as a space); an invalid escape is kept as written.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_and_routes_are_read_as_the_service_reads_them() {
        assert_eq!(
            pairs("filter%5Bstatus%5D=a%2Cb&limit=2&x"),
            [
                ("filter[status]".to_owned(), "a,b".to_owned()),
                ("limit".to_owned(), "2".to_owned()),
                ("x".to_owned(), String::new())
            ]
        );
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz1"), "%zz1");
        let (operation, store) = route("POST", "/stores/store_alpha/orders").unwrap();
        assert_eq!(
            (operation.id, store.as_deref()),
            ("createOrder", Some("store_alpha"))
        );
        let (operation, _) = route("GET", "/stores/s/orders/ord_1").unwrap();
        assert_eq!(operation.id, "getOrder");
        assert!(route("GET", "/stores/s/nothing-here").is_none());
        assert!(route("DELETE", "/stores/s/orders").is_none());
    }
}
