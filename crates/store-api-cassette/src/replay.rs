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
//!
//! ```no_run
//! use store_api_cassette::{Cassette, Replayer};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let cassette = Cassette::load("tests/cassettes/status.json")?;
//! let replayer = std::sync::Arc::new(Replayer::new(cassette));
//! let client = store_api::Client::builder()
//!     .base_url("http://127.0.0.1:1/store-api/2026-08") // never connected to
//!     .store_id("store_alpha")
//!     .api_key("csk_any_key_will_do")
//!     .network(replayer.clone())
//!     .build()?;
//! match client.status().await {
//!     Ok(status) => println!("{status:?}"),
//!     Err(store_api::Error::Refused { source }) => {
//!         // The diff against the nearest recorded request.
//!         let replay = source.downcast_ref::<store_api_cassette::ReplayError>();
//!         panic!("{}", replay.map(ToString::to_string).unwrap_or_default());
//!     }
//!     Err(other) => return Err(other.into()),
//! }
//! assert!(replayer.replay().unused().is_empty());
//! # Ok(())
//! # }
//! ```

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
            #[allow(unreachable_patterns)]
            Some(_) => {
                return Err(fail(format!(
                    "exchange {index} matched, but its answer's body is of a kind this version cannot replay"
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
        let Some((index, shown, _)) = nearest else {
            return ReplayError {
                summary: format!(
                    "the cassette holds no answer for {what}: every one of its {} exchanges was used",
                    self.shapes.len()
                ),
                diff: String::new(),
                nearest: None,
            };
        };
        let held_elsewhere = unused.iter().any(|&other| {
            let mut bindings = state.bindings.clone();
            live.against(&self.shapes[other], redacted, &mut bindings) == self.shapes[other]
        });
        let why = if held_elsewhere && !live.is_read() {
            "the cassette holds it later: writes are answered in the recorded order, and the next recorded write is"
        } else if held_elsewhere {
            "the cassette holds it before a write already answered; the nearest read after it is"
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
