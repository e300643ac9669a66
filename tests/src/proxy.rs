//! A fault-injecting HTTP/1.1 proxy in front of the emulator, on 127.0.0.1: a thin user of the
//! emulator's own faults.
//!
//! It reads each request (the client sends simple requests: a request line, headers and a
//! `Content-Length` body) and decides per request, with a seeded RNG or a targeted plan, which fault it
//! meets (see [`Fault`]). The fault itself is the emulator's: the request goes on with the emulator's
//! fault header ([`store_api_fixtures::FAULT_HEADER`]), and the proxy relays whatever comes back byte
//! for byte, ending or resetting the client's connection where the emulator ended or reset its own. What
//! stays here is what only a proxy can do: choosing faults request by request across many connections,
//! and logging every exchange so tests can count what reached the emulator and how it ended. With
//! [`FaultPlan::none`] it is a counting pass-through.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use store_api_fixtures::{FAULT_HEADER, FaultKind};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// A fault the proxy injects into one exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The emulator commits the request, then closes the connection without answering.
    DropAfterCommit,
    /// The emulator answers 500 and processes nothing.
    ServerError,
    /// The emulator answers 429 with `Retry-After: 1` and processes nothing.
    RateLimited,
    /// The emulator resets the connection (TCP RST) and processes nothing.
    Reset,
    /// The emulator commits the request, then holds the answer past the client's timeout.
    DelayPastTimeout,
    /// The emulator commits the request, then answers 500 instead.
    ServerErrorAfterCommit,
    /// The emulator commits the request, then answers 409 with an HTML page (a proxy's, not the
    /// service's envelope).
    ForeignConflict,
    /// The emulator commits the request, then sends the status, headers and half the body, and closes.
    TruncatedBody,
    /// The emulator commits the request, then sends the status and half the body, and resets.
    ResetMidBody,
    /// The emulator answers 429 with an absurd `Retry-After` (huge, negative, not a number).
    AbsurdRetryAfter,
    /// Targeted plans only: the order's first `POST` loses its answer after commit, and the first
    /// [`FaultPlan::lookup_lag`] lookups of its external id answer an empty page (an index that lags).
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

    /// The emulator's fault that plays this one; `retry_after` is the value an
    /// [`Fault::AbsurdRetryAfter`] sends.
    fn emulator_kind(self, delay: Duration, retry_after: &str) -> FaultKind {
        match self {
            Fault::DropAfterCommit => FaultKind::DropAfterCommit,
            Fault::ServerError => FaultKind::Status { status: 500 },
            Fault::RateLimited => FaultKind::RateLimited {
                retry_after: "1".into(),
            },
            Fault::Reset => FaultKind::Reset,
            Fault::DelayPastTimeout => FaultKind::Delay { delay },
            Fault::ServerErrorAfterCommit => FaultKind::StatusAfterCommit { status: 500 },
            Fault::ForeignConflict => FaultKind::ForeignConflict,
            Fault::TruncatedBody => FaultKind::TruncatedBody,
            Fault::ResetMidBody => FaultKind::ResetMidBody,
            Fault::AbsurdRetryAfter => FaultKind::RateLimited {
                retry_after: retry_after.into(),
            },
            Fault::LaggingLookup => FaultKind::EmptyPage,
        }
    }

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
    /// No fault; the emulator answered with this status and the answer was relayed.
    Relayed(u16),
    /// The request carried a fault to the emulator.
    Injected {
        /// The fault.
        fault: Fault,
        /// The status line that came back, when one did (none after a drop or a reset).
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
    /// The status the emulator sent back, when it sent one.
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
    upstream: SocketAddr,
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
    /// The fault this request meets, with the emulator's fault header for it, under one lock.
    fn decide(&self, request: &Request) -> Option<(Fault, String)> {
        let mut decisions = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let fault = self.pick(&mut decisions, request)?;
        let absurd = Fault::ABSURD_RETRY_AFTER[decisions.absurd % Fault::ABSURD_RETRY_AFTER.len()];
        if fault == Fault::AbsurdRetryAfter {
            decisions.absurd += 1;
        }
        Some((
            fault,
            fault.emulator_kind(self.plan.delay, absurd).header_value(),
        ))
    }

    fn pick(&self, decisions: &mut Decisions, request: &Request) -> Option<Fault> {
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
        let upstream = upstream_origin
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .expect("the emulator's origin is http://IP:PORT");
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("a local address");
        let shared = Arc::new(Shared {
            upstream,
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

/// How relaying one answer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Relayed {
    /// The whole answer (status) went back; the client's connection stays open.
    Whole(u16),
    /// The emulator closed its connection early (after this status line, if any).
    Closed(Option<u16>),
    /// The emulator reset its connection (after this status line, if any).
    Reset(Option<u16>),
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
    let mut client = BufReader::new(stream);
    // Keep-alive: one request after another until the client closes or a fault ends the connection.
    while let Ok(Some(request)) = read_request(&mut client).await {
        let (fault, header) = shared.decide(&request).unzip();
        let relayed = match TcpStream::connect(shared.upstream).await {
            Ok(mut upstream) => {
                let sent = upstream
                    .write_all(&encode(&request, shared.upstream, header.as_deref()))
                    .await;
                match sent {
                    Ok(()) => relay(upstream, client.get_mut()).await,
                    Err(_) => Relayed::Closed(None),
                }
            }
            Err(_) => Relayed::Closed(None),
        };
        let (status, keep_open) = match relayed {
            Relayed::Whole(status) => (Some(status), true),
            Relayed::Closed(status) => (status, false),
            Relayed::Reset(status) => {
                // SO_LINGER 0: closing sends RST instead of FIN, as the emulator did.
                let _ = client.get_ref().set_zero_linger();
                (status, false)
            }
        };
        let outcome = match (fault, status) {
            (Some(fault), upstream) => Outcome::Injected { fault, upstream },
            (None, Some(status)) => Outcome::Relayed(status),
            (None, None) => Outcome::UpstreamFailed,
        };
        if outcome == Outcome::UpstreamFailed {
            let _ = client.get_mut().write_all(BAD_GATEWAY).await;
        }
        shared.record(&request, outcome);
        if !keep_open {
            return;
        }
    }
}

/// What the client gets when the emulator cannot be reached.
const BAD_GATEWAY: &[u8] = b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/json\r\ncontent-length: 63\r\n\r\n{\"statusCode\":502,\"message\":\"Bad Gateway\",\"error\":\"Bad Gateway\"}";

/// The request as sent to the emulator: on a connection of its own, with the fault header if any.
fn encode(request: &Request, upstream: SocketAddr, fault: Option<&str>) -> Vec<u8> {
    let mut head = format!(
        "{} {} HTTP/1.1\r\nhost: {upstream}\r\n",
        request.method, request.target
    );
    for (name, value) in request
        .headers
        .iter()
        .filter(|(name, _)| !is_hop_header(name))
    {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(fault) = fault {
        head.push_str(&format!("{FAULT_HEADER}: {fault}\r\n"));
    }
    head.push_str(&format!(
        "connection: close\r\ncontent-length: {}\r\n\r\n",
        request.body.len()
    ));
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&request.body);
    bytes
}

/// Copies the emulator's answer to the client as it comes (its `connection: close`, which only concerns
/// the proxy's own upstream connection, left out), and says how it ended.
async fn relay(upstream: TcpStream, client: &mut TcpStream) -> Relayed {
    let mut upstream = BufReader::new(upstream);
    let mut head = Vec::new();
    let mut line = String::new();
    let mut status = None;
    let mut length = None;
    loop {
        line.clear();
        match upstream.read_line(&mut line).await {
            Ok(0) => return Relayed::Closed(status),
            Ok(_) => {}
            Err(error) => return ended_by(&error, status),
        }
        if status.is_none() {
            status = line.split_whitespace().nth(1).and_then(|s| s.parse().ok());
        } else if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("connection") {
                continue;
            }
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
        head.extend_from_slice(line.as_bytes());
        if line == "\r\n" {
            break;
        }
    }
    let Some(length) = length else {
        // Every answer of the emulator has a length; anything else is relayed as an early close.
        let _ = client.write_all(&head).await;
        return Relayed::Closed(status);
    };
    if client.write_all(&head).await.is_err() {
        return Relayed::Closed(status);
    }
    match copy_exactly(&mut upstream, client, length).await {
        Ok(true) => Relayed::Whole(status.unwrap_or(0)),
        Ok(false) => Relayed::Closed(status),
        Err(error) => ended_by(&error, status),
    }
}

/// Copies `length` bytes; `Ok(false)` when the emulator closed first (or the client went away).
async fn copy_exactly(
    from: &mut (impl AsyncRead + Unpin),
    to: &mut TcpStream,
    mut length: usize,
) -> std::io::Result<bool> {
    let mut buffer = [0u8; 16 * 1024];
    while length > 0 {
        let wanted = length.min(buffer.len());
        let read = from.read(&mut buffer[..wanted]).await?;
        if read == 0 {
            return Ok(false);
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return Ok(false);
        }
        length -= read;
    }
    Ok(true)
}

fn ended_by(error: &std::io::Error, status: Option<u16>) -> Relayed {
    match error.kind() {
        std::io::ErrorKind::ConnectionReset => Relayed::Reset(status),
        _ => Relayed::Closed(status),
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
