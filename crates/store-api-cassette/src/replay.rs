//! Replay: answers from a [`Cassette`], with no network at all, deterministic, and a loud failure with
//! a diff for a request the cassette does not hold.
//!
//! [`Replay`] is the pure core (a request in, its recorded answer out), shared by the [`Replayer`]
//! network and the CLI's replaying proxy. The rules:
//!
//! - A request is matched after the same scrubbing as a recording (the key, wherever it occurs, is
//!   `<api-key>`; any key is accepted), with customer data and fresh values (`externalOrderId`,
//!   `orderedAt`, `filter[externalOrderId]`) as variables bound one-to-one to the recorded values
//!   over the whole replay; answers carry the live values back (so a replayed 409's lookup finds the
//!   caller's own order, [`Submitted::AlreadyExisted`](store_api::Submitted::AlreadyExisted)).
//! - Writes (any method but `GET` and `HEAD`) are answered in the recorded order: a write must be the
//!   next recorded write.
//! - A read is answered by the first unused equal recorded read after the last write answered; the
//!   same request twice gets its recorded answers in turn.
//! - Anything else is a [`ReplayError`], whose text is a diff against the nearest recorded request.
//!   Through a [`store_api::Client`] it is
//!   [`store_api::Error::Refused`], never retried, its source the `ReplayError`.

use std::sync::{Mutex, PoisonError};

use bytes::Bytes;
use store_api::network::{Network, NetworkError, NetworkFuture};

use crate::format::{Cassette, CustomerData, Exchange, RecordedAnswer, RecordedBody};
use crate::matching::{Bindings, Live, Shape};
use crate::record::{HttpAnswer, HttpRequest, path_and_query, to_response};
use crate::redact::Keys;

/// Answers requests from a cassette. Shareable across threads (its progress is behind a lock).
#[derive(Debug)]
pub struct Replay {
    cassette: Cassette,
    shapes: Vec<Shape>,
    state: Mutex<ReplayState>,
}

#[derive(Debug, Default)]
struct ReplayState {
    used: Vec<bool>,
    /// The last write answered.
    last_write: Option<usize>,
    bindings: Bindings,
    /// Requests asked so far.
    asked: usize,
}

/// A request the cassette does not answer: its [`Display`](std::fmt::Display) says why, with a line
/// diff of the request as sent (its key scrubbed, its customer data redacted) against the nearest
/// recorded one.
#[derive(Debug, thiserror::Error)]
#[error("{summary}{}", if diff.is_empty() { String::new() } else { format!("\n{diff}") })]
pub struct ReplayError {
    summary: String,
    diff: String,
    nearest: Option<usize>,
}

impl ReplayError {
    /// The index of the recorded exchange the diff compares with, if any.
    pub fn nearest(&self) -> Option<usize> {
        self.nearest
    }

    /// The diff: `-` lines are the recorded request's, `+` lines the request sent.
    pub fn diff(&self) -> &str {
        &self.diff
    }
}

impl Replay {
    /// A replay of `cassette`, from its first exchange.
    pub fn new(cassette: Cassette) -> Replay {
        let shapes = cassette
            .exchanges
            .iter()
            .map(|exchange| Shape::recorded(&exchange.request))
            .collect();
        let state = ReplayState {
            used: vec![false; cassette.exchanges.len()],
            ..ReplayState::default()
        };
        Replay {
            cassette,
            shapes,
            state: Mutex::new(state),
        }
    }

    /// The cassette replayed.
    pub fn cassette(&self) -> &Cassette {
        &self.cassette
    }

    /// The recorded answer to `request`, with the live values of its variables carried back, or
    /// why there is none.
    pub fn answer(&self, request: &HttpRequest<'_>) -> Result<HttpAnswer, ReplayError> {
        let mut keys = Keys::default();
        keys.add_from(request.headers);
        let live = Live::new(request.method, request.path_and_query, request.body, &keys);
        let redacted = self.cassette.customer_data == CustomerData::Redacted;
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.asked += 1;
        let after = state.last_write.map_or(0, |write| write + 1);
        let is_write = |index: usize| !is_read(&self.shapes[index]);
        let candidates: Vec<usize> = if live.is_read() {
            (after..self.shapes.len())
                .filter(|&index| !state.used[index] && !is_write(index))
                .collect()
        } else {
            (after..self.shapes.len())
                .find(|&index| !state.used[index] && is_write(index))
                .into_iter()
                .collect()
        };
        for &index in &candidates {
            let mut bindings = state.bindings.clone();
            if live.against(&self.shapes[index], redacted, &mut bindings) == self.shapes[index] {
                state.used[index] = true;
                if !live.is_read() {
                    state.last_write = Some(index);
                }
                state.bindings = bindings;
                return self.recorded_answer(index, &state.bindings);
            }
        }
        Err(self.no_answer(&live, &candidates, &state, redacted))
    }

    /// The exchanges never asked for so far (a test may assert there are none).
    pub fn unused(&self) -> Vec<Exchange> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.cassette
            .exchanges
            .iter()
            .zip(&state.used)
            .filter(|(_, used)| !**used)
            .map(|(exchange, _)| exchange.clone())
            .collect()
    }

    /// The answer of exchange `index`, with the live values carried back.
    fn recorded_answer(
        &self,
        index: usize,
        bindings: &Bindings,
    ) -> Result<HttpAnswer, ReplayError> {
        let recorded: &RecordedAnswer = &self.cassette.exchanges[index].answer;
        let fail = |summary: String| ReplayError {
            summary,
            diff: String::new(),
            nearest: Some(index),
        };
        if http::StatusCode::from_u16(recorded.status).is_err() {
            return Err(fail(format!(
                "exchange {index} matched, but its status {} is not an HTTP status",
                recorded.status
            )));
        }
        let mut headers = http::HeaderMap::new();
        for (name, value) in &recorded.headers {
            if let (Ok(name), Ok(value)) = (
                http::HeaderName::from_bytes(name.as_bytes()),
                http::HeaderValue::from_str(value),
            ) {
                headers.append(name, value);
            }
        }
        let body = match &recorded.body {
            None => Bytes::new(),
            Some(RecordedBody::Json(json)) => {
                let mut json = json.clone();
                bindings.restore(&mut json);
                Bytes::from(json.to_string())
            }
            Some(RecordedBody::Text(text)) => Bytes::from(text.clone()),
            Some(RecordedBody::Omitted { bytes, .. }) => {
                return Err(fail(format!(
                    "exchange {index} matched, but its answer's body ({bytes} bytes) was too large to keep when it was recorded; record again with a larger RecordOptions::max_kept_body"
                )));
            }
        };
        Ok(HttpAnswer {
            status: recorded.status,
            headers,
            body,
        })
    }

    /// Why `live` got no answer, with a diff against the nearest recorded request.
    fn no_answer(
        &self,
        live: &Live,
        candidates: &[usize],
        state: &ReplayState,
        redacted: bool,
    ) -> ReplayError {
        let asked = state.asked;
        let unused: Vec<usize> = (0..self.shapes.len())
            .filter(|&index| !state.used[index])
            .collect();
        // A write is compared with the write expected next; a read with the nearest unused read
        // after the last write, else the nearest unused exchange.
        let pool = if !candidates.is_empty() {
            candidates
        } else {
            &unused[..]
        };
        let compared: Vec<(usize, Shape)> = pool
            .iter()
            .map(|&index| {
                let mut bindings = state.bindings.clone();
                (
                    index,
                    live.against(&self.shapes[index], redacted, &mut bindings),
                )
            })
            .collect();
        let nearest = compared
            .iter()
            .map(|(index, shown)| (*index, shown, closeness(&self.shapes[*index], shown)))
            .max_by(|a, b| a.2.total_cmp(&b.2).then(b.0.cmp(&a.0)));
        let what = format!("request {asked} of this replay ({})", live.line());
        let answered = (0..self.shapes.len())
            .filter(|&other| state.used[other])
            .filter(|&other| {
                let mut bindings = state.bindings.clone();
                live.against(&self.shapes[other], redacted, &mut bindings) == self.shapes[other]
            })
            .count();
        let Some((index, shown, _)) = nearest else {
            return ReplayError {
                summary: format!(
                    "the cassette holds no answer for {what}: every one of its {} exchanges was used{}",
                    self.shapes.len(),
                    if answered > 0 {
                        format!(", and it held this request {answered} time(s)")
                    } else {
                        String::new()
                    }
                ),
                diff: String::new(),
                nearest: None,
            };
        };
        let held_elsewhere = unused.iter().any(|&other| {
            let mut bindings = state.bindings.clone();
            live.against(&self.shapes[other], redacted, &mut bindings) == self.shapes[other]
        });
        let used_up;
        let why = if held_elsewhere && !live.is_read() {
            "the cassette holds it later: writes are answered in the recorded order, and the next recorded write is"
        } else if held_elsewhere {
            "the cassette holds it before a write already answered; the nearest read after it is"
        } else if answered > 0 {
            used_up = format!(
                "the cassette held it {answered} time(s) and each answer was given already; the nearest unused request is"
            );
            used_up.as_str()
        } else if !live.is_read() && !candidates.is_empty() {
            "the next recorded write is"
        } else {
            "the nearest recorded request is"
        };
        let recorded = self.shapes[index].render();
        let sent = shown.render();
        let diff = crate::diff::unified(
            &recorded,
            &sent,
            &format!("recorded (exchange {index})"),
            "sent",
        );
        ReplayError {
            summary: format!(
                "the cassette holds no answer for {what}; {why} exchange {index} ({} {}):",
                self.shapes[index].method, self.shapes[index].path
            ),
            diff,
            nearest: Some(index),
        }
    }
}

/// Whether a recorded request is a read.
fn is_read(shape: &Shape) -> bool {
    shape.method == "GET" || shape.method == "HEAD"
}

/// How alike two requests are, from 0 to 2: the same method and path count 1, the rest the
/// similarity of their text.
fn closeness(recorded: &Shape, shown: &Shape) -> f32 {
    let route = if recorded.method == shown.method && recorded.path == shown.path {
        1.0
    } else {
        0.0
    };
    route + crate::diff::ratio(&recorded.render(), &shown.render())
}

/// A [`Network`] that answers from a cassette, with no network at all.
///
/// A request the cassette does not answer is refused with [`NetworkError::Refused`] (so the client
/// reports [`store_api::Error::Refused`] and never retries it), its source the [`ReplayError`].
///
/// ```no_run
/// use store_api_cassette::{Cassette, Replayer};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let cassette = Cassette::load("tests/cassettes/status.json")?;
/// let replayer = std::sync::Arc::new(Replayer::new(cassette));
/// let client = store_api::Client::builder()
///     .base_url("http://127.0.0.1:1/store-api/2026-08") // never connected to
///     .store_id("store_alpha")
///     .api_key("csk_any_key_will_do")
///     .network(replayer.clone())
///     .build()?;
/// match client.status().await {
///     Ok(status) => println!("{status:?}"),
///     Err(store_api::Error::Refused { source }) => {
///         // The diff against the nearest recorded request.
///         let replay = source.downcast_ref::<store_api_cassette::ReplayError>();
///         panic!("{}", replay.map(ToString::to_string).unwrap_or_default());
///     }
///     Err(other) => return Err(other.into()),
/// }
/// assert!(replayer.replay().unused().is_empty());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Replayer {
    replay: Replay,
}

impl Replayer {
    /// A replayer of `cassette`, from its first exchange.
    pub fn new(cassette: Cassette) -> Replayer {
        Replayer {
            replay: Replay::new(cassette),
        }
    }

    /// The replay: what was used, what was not.
    pub fn replay(&self) -> &Replay {
        &self.replay
    }
}

impl Network for Replayer {
    fn send(&self, request: reqwest::Request) -> NetworkFuture<'_> {
        let path_and_query = path_and_query(request.url());
        let body = request
            .body()
            .and_then(reqwest::Body::as_bytes)
            .unwrap_or_default();
        let answer = self.replay.answer(&HttpRequest {
            method: request.method().as_str(),
            path_and_query: &path_and_query,
            headers: request.headers(),
            body,
        });
        let response = match answer {
            Ok(answer) => {
                to_response(answer).map_err(|error| NetworkError::Refused(Box::new(error)))
            }
            Err(error) => Err(NetworkError::Refused(Box::new(error))),
        };
        Box::pin(async move { response })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::{RecordOptions, Recording};

    const ORDERS: &str = "/store-api/2026-08/stores/store_alpha/orders";

    fn headers(key: &str) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        headers.insert("x-api-key", key.parse().unwrap());
        headers
    }

    fn request<'a>(
        method: &'a str,
        path: &'a str,
        headers: &'a http::HeaderMap,
        body: &'a [u8],
    ) -> HttpRequest<'a> {
        HttpRequest {
            method,
            path_and_query: path,
            headers,
            body,
        }
    }

    fn answer(status: u16, body: &Value) -> HttpAnswer {
        HttpAnswer {
            status,
            headers: http::HeaderMap::new(),
            body: body.to_string().into(),
        }
    }

    fn order(external_id: &str, first_name: &str) -> Value {
        let quantity = if external_id.ends_with('2') { 2 } else { 1 };
        json!({"externalOrderId": external_id, "lineItems": [{"sku": "TEE", "quantity": quantity}],
            "shippingAddress": {"firstName": first_name,
            "address": {"stateOrProvince": "TX", "country": "US"}}})
    }

    /// A recording of: a read, two writes, a read.
    fn cassette() -> Cassette {
        let recording = Recording::new(RecordOptions::default());
        let key = headers("csk_recorded_key_1");
        let first = order("ext-recorded-1", "Ada").to_string();
        let second = order("ext-recorded-2", "Grace").to_string();
        recording.record(
            &request(
                "GET",
                "/store-api/2026-08/stores/store_alpha/status",
                &key,
                b"",
            ),
            &answer(200, &json!({"status": "ok"})),
        );
        recording.record(
            &request("POST", ORDERS, &key, first.as_bytes()),
            &answer(
                201,
                &json!({"id": "ord_1", "externalOrderId": "ext-recorded-1"}),
            ),
        );
        // A 409 whose body carries the order held.
        recording.record(
            &request("POST", ORDERS, &key, first.as_bytes()),
            &answer(
                409,
                &json!({"statusCode": 409, "message": "exists: ext-recorded-1",
                    "order": order("ext-recorded-1", "Ada")}),
            ),
        );
        recording.record(
            &request("POST", ORDERS, &key, second.as_bytes()),
            &answer(201, &json!({"id": "ord_2"})),
        );
        recording.cassette()
    }

    #[test]
    fn a_409_carrying_the_order_is_redacted_and_replays_with_the_callers_values() {
        let cassette = cassette();
        let text = cassette.to_text();
        assert!(!text.contains("Ada") && !text.contains("Grace"), "{text}");
        assert!(
            !text.contains("\"TX\"") && !text.contains("csk_recorded_key_1"),
            "{text}"
        );

        let replay = Replay::new(cassette);
        let other_key = headers("csk_another_key");
        let mine = order("ext-live-1", "Augusta").to_string();
        let post = || replay.answer(&request("POST", ORDERS, &other_key, mine.as_bytes()));
        assert_eq!(post().unwrap().status, 201);
        let conflict = post().unwrap();
        assert_eq!(conflict.status, 409);
        let body: Value = serde_json::from_slice(&conflict.body).unwrap();
        assert_eq!(body["message"], "exists: ext-live-1");
        assert_eq!(body["order"], order("ext-live-1", "Augusta"));
        // The status read was never asked for.
        assert_eq!(replay.unused().len(), 2);
    }

    #[test]
    fn writes_are_answered_in_the_recorded_order_only() {
        let replay = Replay::new(cassette());
        let none = http::HeaderMap::new();
        let second = order("ext-live-2", "Grace").to_string();
        let error = replay
            .answer(&request("POST", ORDERS, &none, second.as_bytes()))
            .unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("writes are answered in the recorded order"),
            "{text}"
        );
        assert_eq!(error.nearest(), Some(1));
        assert!(error.diff().contains("+      \"quantity\": 2"), "{text}");
        assert!(
            !text.contains("Grace"),
            "customer data is never shown: {text}"
        );

        // After a write, a read recorded before it is no longer answered.
        let first = order("ext-live-1", "Ada").to_string();
        assert!(
            replay
                .answer(&request("POST", ORDERS, &none, first.as_bytes()))
                .is_ok()
        );
        let status = "/store-api/2026-08/stores/store_alpha/status";
        let error = replay
            .answer(&request("GET", status, &none, b""))
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("before a write already answered"),
            "{error}"
        );
    }

    #[test]
    fn one_live_value_binds_one_placeholder() {
        let replay = Replay::new(cassette());
        let none = http::HeaderMap::new();
        // The recorded order 1 was Ada: bound to Bob now, for the whole replay.
        let bob = order("ext-live-1", "Bob").to_string();
        assert!(
            replay
                .answer(&request("POST", ORDERS, &none, bob.as_bytes()))
                .is_ok()
        );
        // The 409 of the same order with another name (where Bob was bound) does not match.
        let carol = order("ext-live-1", "Carol").to_string();
        assert!(
            replay
                .answer(&request("POST", ORDERS, &none, carol.as_bytes()))
                .is_err()
        );
    }

    #[test]
    fn an_answer_too_large_to_keep_is_refused_by_name() {
        let recording = Recording::new(RecordOptions::default().max_kept_body(8));
        let none = http::HeaderMap::new();
        recording.record(
            &request("GET", ORDERS, &none, b""),
            &answer(200, &json!({"items": [1, 2, 3]})),
        );
        let replay = Replay::new(recording.cassette());
        let error = replay
            .answer(&request("GET", ORDERS, &none, b""))
            .unwrap_err();
        assert!(error.to_string().contains("max_kept_body"), "{error}");
        // Asked again: its one answer was given (it matched, although it could not be replayed).
        let again = replay
            .answer(&request("GET", ORDERS, &none, b""))
            .unwrap_err();
        assert!(
            again.to_string().contains("held this request 1 time(s)"),
            "{again}"
        );
    }
}
