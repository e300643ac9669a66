//! A fault-injecting HTTP/1.1 proxy in front of the emulator, on 127.0.0.1.
//!
//! It reads each request itself (the client sends simple requests: a request line, headers and a
//! `Content-Length` body), then, decided per request with a seeded RNG, either forwards it with `reqwest`
//! and relays the answer, or injects one of the faults a real network and service produce (see
//! [`Fault`]). Every exchange is logged, so tests can count what reached the emulator and how it ended.
//! With [`FaultPlan::none`] it is a counting pass-through.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// A fault the proxy injects into one exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// Forwards the request, lets the emulator commit it, then closes the connection without answering.
    DropAfterCommit,
    /// Answers 500 without forwarding.
    ServerError,
    /// Answers 429 with `Retry-After: 1` without forwarding.
    RateLimited,
    /// Resets the connection (TCP RST) without forwarding.
    Reset,
    /// Forwards the request, then holds the answer past the client's timeout.
    DelayPastTimeout,
    /// Forwards the request (the emulator commits it), then answers 500 instead of its answer.
    ServerErrorAfterCommit,
    /// Forwards the request, then answers 409 with an HTML page (a proxy's, not the service's envelope).
    ForeignConflict,
    /// Forwards the request, then relays the status and headers but only half the body, and closes.
    TruncatedBody,
    /// Forwards the request, then relays the status and half the body, and resets the connection.
    ResetMidBody,
    /// Answers 429 with an absurd `Retry-After` (huge, negative, not a number) without forwarding.
    AbsurdRetryAfter,
    /// Targeted plans only: the order's first `POST` loses its answer after commit, and the first
    /// [`FaultPlan::lookup_lag`] lookups of its external id answer an empty list (an index that lags).
    LaggingLookup,
}

impl Fault {
    /// Every fault the random plans pick from, in the order the RNG picks from.
    pub const ALL: [Fault; 5] = [
        Fault::DropAfterCommit,
        Fault::ServerError,
        Fault::RateLimited,
        Fault::Reset,
        Fault::DelayPastTimeout,
    ];

    /// The faults of the rare-fault matrix, each aimed at an order's first `POST` by a targeted plan.
    pub const RARE: [Fault; 6] = [
        Fault::ServerErrorAfterCommit,
        Fault::ForeignConflict,
        Fault::TruncatedBody,
        Fault::LaggingLookup,
        Fault::AbsurdRetryAfter,
        Fault::ResetMidBody,
    ];

    /// The `Retry-After` values [`Fault::AbsurdRetryAfter`] cycles through.
    pub const ABSURD_RETRY_AFTER: [&'static str; 6] = [
        "18446744073709551615",
        "86400",
        "-1",
        "soon",
        "1e9",
        "99999999999999999999999",
    ];

    /// A short name, for reports.
    pub fn name(self) -> &'static str {
        match self {
            Fault::DropAfterCommit => "drop_after_commit",
            Fault::ServerError => "server_error",
            Fault::RateLimited => "rate_limited",
            Fault::Reset => "reset",
            Fault::DelayPastTimeout => "delay_past_timeout",
            Fault::ServerErrorAfterCommit => "500_after_commit",
            Fault::ForeignConflict => "409_foreign_body",
            Fault::TruncatedBody => "201_truncated",
            Fault::ResetMidBody => "reset_mid_body",
            Fault::AbsurdRetryAfter => "absurd_retry_after",
            Fault::LaggingLookup => "lagging_lookup",
        }
    }
}

/// How often and how the proxy misbehaves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultPlan {
    /// Seed of the RNG that decides each request.
    pub seed: u64,
    /// Share of requests that get a fault (0 forwards everything).
    pub fault_rate: f64,
    /// The faults to pick from, each equally likely.
    pub kinds: &'static [Fault],
    /// How long [`Fault::DelayPastTimeout`] holds the answer.
    pub delay: Duration,
    /// At most this many [`Fault::RateLimited`]; after that the other kinds are picked from. A 429 pauses
    /// the client's whole store for `Retry-After` (one second), as it should, so they are kept few.
    pub max_rate_limited: usize,
    /// Targeted: instead of drawing faults at random, `kinds[0]` hits the first `POST /orders` of each
    /// external id (and, for [`Fault::LaggingLookup`], its first lookups); everything else is forwarded.
    pub targeted: bool,
    /// How many lookups of one external id a [`Fault::LaggingLookup`] answers with an empty list.
    pub lookup_lag: usize,
}

impl FaultPlan {
    /// Forward every request unchanged.
    pub fn none() -> FaultPlan {
        FaultPlan {
            seed: 0,
            fault_rate: 0.0,
            kinds: &Fault::ALL,
            delay: Duration::ZERO,
            max_rate_limited: 0,
            targeted: false,
            lookup_lag: 0,
        }
    }

    /// `fault` on the first `POST /orders` of every external id (see [`FaultPlan::targeted`]).
    pub fn first_post(fault: &'static [Fault], lookup_lag: usize) -> FaultPlan {
        FaultPlan {
            seed: 0,
            fault_rate: 1.0,
            kinds: fault,
            delay: Duration::ZERO,
            max_rate_limited: usize::MAX,
            targeted: true,
            lookup_lag,
        }
    }

    /// A fault on `fault_rate` of the requests, every kind equally likely.
    pub fn faults(
        seed: u64,
        fault_rate: f64,
        delay: Duration,
        max_rate_limited: usize,
    ) -> FaultPlan {
        FaultPlan {
            seed,
            fault_rate,
            kinds: &Fault::ALL,
            delay,
            max_rate_limited,
            targeted: false,
            lookup_lag: 0,
        }
    }

    /// One of `kinds` on every request.
    pub fn always(kinds: &'static [Fault], delay: Duration) -> FaultPlan {
        FaultPlan {
            seed: 0,
            fault_rate: 1.0,
            kinds,
            delay,
            max_rate_limited: usize::MAX,
            targeted: false,
            lookup_lag: 0,
        }
    }
}

/// How one exchange ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Forwarded; the emulator answered with this status and the answer was relayed.
    Relayed(u16),
    /// A fault was injected; `upstream` is the emulator's status when the request was forwarded.
    Injected {
        /// The fault.
        fault: Fault,
        /// The emulator's answer, for faults that forward first.
        upstream: Option<u16>,
    },
    /// The emulator could not be reached (answered 502).
    UpstreamFailed,
}

/// One request the proxy received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// `GET`, `POST`, ...
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    /// How it ended.
    pub outcome: Outcome,
}

impl Exchange {
    /// The emulator's status, when the request reached it.
    pub fn upstream_status(&self) -> Option<u16> {
        match self.outcome {
            Outcome::Relayed(status) => Some(status),
            Outcome::Injected { upstream, .. } => upstream,
            Outcome::UpstreamFailed => None,
        }
    }

    /// Whether this is a `POST /orders`.
    pub fn is_order_post(&self) -> bool {
        self.method == "POST" && self.target.ends_with("/orders")
    }
}

#[derive(Debug)]
struct Shared {
    upstream: String,
    http: reqwest::Client,
    plan: FaultPlan,
    decisions: Mutex<Decisions>,
    log: Mutex<Vec<Exchange>>,
}

#[derive(Debug)]
struct Decisions {
    rng: StdRng,
    rate_limited: usize,
    /// Targeted plans: external ids whose first `POST` was seen, and lookups answered per id.
    posted: HashSet<String>,
    lookups: HashMap<String, usize>,
    absurd: usize,
}

impl Shared {
    fn decide(&self, request: &Request) -> Option<Fault> {
        let mut decisions = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if self.plan.targeted {
            let fault = *self.plan.kinds.first()?;
            if request.method == "POST" && request.target.ends_with("/orders") {
                let id = serde_json::from_slice::<serde_json::Value>(&request.body)
                    .ok()?
                    .get("externalOrderId")?
                    .as_str()?
                    .to_owned();
                if !decisions.posted.insert(id) {
                    return None;
                }
                return Some(match fault {
                    Fault::LaggingLookup => Fault::DropAfterCommit,
                    other => other,
                });
            }
            if fault == Fault::LaggingLookup && request.method == "GET" {
                let id = lookup_id(&request.target)?;
                let seen = decisions.lookups.entry(id).or_default();
                *seen += 1;
                return (*seen <= self.plan.lookup_lag).then_some(Fault::LaggingLookup);
            }
            return None;
        }
        if self.plan.fault_rate <= 0.0 || decisions.rng.random::<f64>() >= self.plan.fault_rate {
            return None;
        }
        let kinds = self.plan.kinds;
        let capped = decisions.rate_limited >= self.plan.max_rate_limited;
        let choices: Vec<Fault> = kinds
            .iter()
            .copied()
            .filter(|f| !(capped && *f == Fault::RateLimited))
            .collect();
        if choices.is_empty() {
            return None;
        }
        let fault = choices[decisions.rng.random_range(0..choices.len())];
        if fault == Fault::RateLimited {
            decisions.rate_limited += 1;
        }
        Some(fault)
    }

    fn record(&self, request: &Request, outcome: Outcome) {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Exchange {
                method: request.method.clone(),
                target: request.target.clone(),
                outcome,
            });
    }
}

/// A running proxy; dropping it stops accepting and closes every connection.
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl FaultProxy {
    /// Starts a proxy on 127.0.0.1 forwarding to `upstream_origin` (`http://127.0.0.1:PORT`, the
    /// emulator's `origin()`).
    pub async fn start(upstream_origin: &str, plan: FaultPlan) -> FaultProxy {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("a local address");
        // reqwest under `rustls` needs a crypto provider before it builds a client.
        store_api::install_crypto_provider();
        let shared = Arc::new(Shared {
            upstream: upstream_origin.trim_end_matches('/').to_owned(),
            http: reqwest::Client::new(),
            plan,
            decisions: Mutex::new(Decisions {
                rng: StdRng::seed_from_u64(plan.seed),
                rate_limited: 0,
                posted: HashSet::new(),
                lookups: HashMap::new(),
                absurd: 0,
            }),
            log: Mutex::new(Vec::new()),
        });
        let accepting = shared.clone();
        let task = tokio::spawn(async move {
            // Owned here, so aborting this task closes every connection too.
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => {
                            connections.spawn(serve(stream, accepting.clone()));
                        }
                        Err(_) => return,
                    },
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        FaultProxy { addr, shared, task }
    }

    /// `http://127.0.0.1:PORT`, for `ClientBuilder::base_url`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every exchange so far, in the order they ended.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.shared
            .log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many times `fault` was injected.
    pub fn injected(&self, fault: Fault) -> usize {
        self.exchanges()
            .iter()
            .filter(|e| matches!(e.outcome, Outcome::Injected { fault: f, .. } if f == fault))
            .count()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A request as read from the connection.
#[derive(Debug)]
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// A response to write back.
#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn error(status: u16, body: serde_json::Value, extra: &[(&str, &str)]) -> Response {
        let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
        headers.extend(
            extra
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned())),
        );
        Response {
            status,
            headers,
            body: body.to_string().into_bytes(),
        }
    }

    fn encode(&self) -> Vec<u8> {
        let reason = reqwest::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let mut out = format!("HTTP/1.1 {} {reason}\r\n", self.status);
        for (name, value) in &self.headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        out.push_str(&format!("content-length: {}\r\n\r\n", self.body.len()));
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// Headers that describe one hop's connection or framing; the proxy sets its own.
fn is_hop_header(name: &str) -> bool {
    [
        "host",
        "content-length",
        "connection",
        "transfer-encoding",
        "keep-alive",
    ]
    .iter()
    .any(|h| name.eq_ignore_ascii_case(h))
}

async fn serve(stream: TcpStream, shared: Arc<Shared>) {
    let mut conn = BufReader::new(stream);
    // Keep-alive: one request after another until the client closes or a fault ends the connection.
    while let Ok(Some(request)) = read_request(&mut conn).await {
        match shared.decide(&request) {
            None => {
                let (response, outcome) = forward(&shared, &request).await;
                shared.record(&request, outcome);
                if conn.get_mut().write_all(&response.encode()).await.is_err() {
                    return;
                }
            }
            Some(fault @ Fault::DropAfterCommit) => {
                let (_, outcome) = forward(&shared, &request).await;
                shared.record(&request, injected(fault, outcome));
                return; // dropping the stream closes it with no answer
            }
            Some(fault @ Fault::ServerError) => {
                shared.record(&request, injected(fault, Outcome::UpstreamFailed));
                let body = serde_json::json!({
                    "message": "Injected failure", "error": "Internal Server Error", "statusCode": 500
                });
                if conn
                    .get_mut()
                    .write_all(&Response::error(500, body, &[]).encode())
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Some(fault @ Fault::RateLimited) => {
                shared.record(&request, injected(fault, Outcome::UpstreamFailed));
                let body = serde_json::json!({ "statusCode": 429, "message": "Too many requests (injected)" });
                let response = Response::error(429, body, &[("retry-after", "1")]);
                if conn.get_mut().write_all(&response.encode()).await.is_err() {
                    return;
                }
            }
            Some(fault @ Fault::Reset) => {
                shared.record(&request, injected(fault, Outcome::UpstreamFailed));
                // SO_LINGER 0: the close sends RST instead of FIN.
                let _ = conn.get_ref().set_zero_linger();
                return;
            }
            Some(fault @ Fault::DelayPastTimeout) => {
                let (response, outcome) = forward(&shared, &request).await;
                shared.record(&request, injected(fault, outcome));
                tokio::time::sleep(shared.plan.delay).await;
                // The client has given up by now; the write may fail, and the connection ends either way.
                let _ = conn.get_mut().write_all(&response.encode()).await;
                return;
            }
            Some(fault @ Fault::ServerErrorAfterCommit) => {
                let (_, outcome) = forward(&shared, &request).await;
                shared.record(&request, injected(fault, outcome));
                let body = serde_json::json!({
                    "message": "Injected failure after commit", "error": "Internal Server Error", "statusCode": 500
                });
                if conn
                    .get_mut()
                    .write_all(&Response::error(500, body, &[]).encode())
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Some(fault @ Fault::ForeignConflict) => {
                let (_, outcome) = forward(&shared, &request).await;
                shared.record(&request, injected(fault, outcome));
                let response = Response {
                    status: 409,
                    headers: vec![("content-type".to_owned(), "text/html".to_owned())],
                    body: b"<html><body><h1>409 Conflict</h1><p>edge proxy</p></body></html>"
                        .to_vec(),
                };
                if conn.get_mut().write_all(&response.encode()).await.is_err() {
                    return;
                }
            }
            Some(fault @ (Fault::TruncatedBody | Fault::ResetMidBody)) => {
                let (response, outcome) = forward(&shared, &request).await;
                shared.record(&request, injected(fault, outcome));
                let bytes = response.encode();
                let cut = bytes.len() - response.body.len() / 2;
                let _ = conn.get_mut().write_all(&bytes[..cut]).await;
                let _ = conn.get_mut().flush().await;
                if fault == Fault::ResetMidBody {
                    // Let the headers arrive first, so the reset lands inside the body.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    let _ = conn.get_ref().set_zero_linger();
                }
                return;
            }
            Some(fault @ Fault::AbsurdRetryAfter) => {
                shared.record(&request, injected(fault, Outcome::UpstreamFailed));
                let value = {
                    let mut decisions = shared
                        .decisions
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    let value = Fault::ABSURD_RETRY_AFTER
                        [decisions.absurd % Fault::ABSURD_RETRY_AFTER.len()];
                    decisions.absurd += 1;
                    value
                };
                let body = serde_json::json!({ "statusCode": 429, "message": "Too many requests (injected)" });
                let response = Response::error(429, body, &[("retry-after", value)]);
                if conn.get_mut().write_all(&response.encode()).await.is_err() {
                    return;
                }
            }
            Some(fault @ Fault::LaggingLookup) => {
                let (mut response, outcome) = forward(&shared, &request).await;
                shared.record(&request, injected(fault, outcome));
                // The order is committed, but this read does not show it yet.
                if let Ok(mut page) = serde_json::from_slice::<serde_json::Value>(&response.body) {
                    page["items"] = serde_json::json!([]);
                    for field in ["totalItems", "startItem", "endItem"] {
                        if page.get(field).is_some() {
                            page[field] = serde_json::json!(0);
                        }
                    }
                    response.body = page.to_string().into_bytes();
                }
                if conn.get_mut().write_all(&response.encode()).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The external id a `GET /orders?filter[externalOrderId]=...` looks up.
fn lookup_id(target: &str) -> Option<String> {
    let (path, query) = target.split_once('?')?;
    if !path.ends_with("/orders") {
        return None;
    }
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        let name = name.replace("%5B", "[").replace("%5D", "]");
        (name == "filter[externalOrderId]").then(|| value.to_owned())
    })
}

fn injected(fault: Fault, forwarded: Outcome) -> Outcome {
    let upstream = match forwarded {
        Outcome::Relayed(status) => Some(status),
        _ => None,
    };
    Outcome::Injected { fault, upstream }
}

/// Reads one request; `None` when the client closed the connection between requests.
async fn read_request(conn: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    let mut line = String::new();
    if conn.read_line(&mut line).await? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(std::io::Error::other("malformed request line"));
    };
    let (method, target) = (method.to_owned(), target.to_owned());
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        line.clear();
        if conn.read_line(&mut line).await? == 0 {
            return Err(std::io::Error::other(
                "connection closed inside the headers",
            ));
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(std::io::Error::other("malformed header"));
        };
        let (name, value) = (name.trim().to_owned(), value.trim().to_owned());
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse().map_err(std::io::Error::other)?;
        }
        headers.push((name, value));
    }
    let mut body = vec![0; length];
    conn.read_exact(&mut body).await?;
    Ok(Some(Request {
        method,
        target,
        headers,
        body,
    }))
}

/// Sends the request to the emulator and reads its whole answer.
async fn forward(shared: &Shared, request: &Request) -> (Response, Outcome) {
    let failed = || {
        let body = serde_json::json!({ "message": "Bad Gateway", "error": "Bad Gateway", "statusCode": 502 });
        (Response::error(502, body, &[]), Outcome::UpstreamFailed)
    };
    let Ok(method) = reqwest::Method::from_bytes(request.method.as_bytes()) else {
        return failed();
    };
    let mut builder = shared
        .http
        .request(method, format!("{}{}", shared.upstream, request.target))
        .body(request.body.clone());
    for (name, value) in request
        .headers
        .iter()
        .filter(|(name, _)| !is_hop_header(name))
    {
        builder = builder.header(name, value);
    }
    let Ok(answer) = builder.send().await else {
        return failed();
    };
    let status = answer.status().as_u16();
    let headers = answer
        .headers()
        .iter()
        .filter(|(name, _)| !is_hop_header(name.as_str()))
        .filter_map(|(name, value)| {
            Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
        })
        .collect();
    let Ok(body) = answer.bytes().await else {
        return failed();
    };
    (
        Response {
            status,
            headers,
            body: body.to_vec(),
        },
        Outcome::Relayed(status),
    )
}
