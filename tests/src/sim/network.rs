//! The simulated network: a [`store_api::network::Network`] that carries each request to an emulator in
//! the same process (`Emulator::answer`) and does to the exchange what the schedule says.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt as _;
use rand::SeedableRng;
use rand::rngs::StdRng;
use store_api::network::{Network, NetworkError, NetworkFuture};
use store_api_fixtures::Emulator;

use super::exchange::{Exchange, RetryAfter};

/// The origin every simulated client is built for.
pub const HOME: &str = "http://api.store.test";
/// Another host, where simulated redirects point.
pub const ELSEWHERE: &str = "http://127.0.0.2:8443";
/// How long a late answer takes: longer than any deadline of the client's.
const LATE: Duration = Duration::from_secs(3_600);
/// How much of an endless body a client reads before the model calls its reading unbounded.
pub const OVERREAD: usize = 64 << 20;
/// A chunk of an endless body.
static CHUNK: [u8; 64 * 1024] = [b' '; 64 * 1024];

/// Which exchanges of a run are branched on (drawn from the schedule), by their kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `POST /orders`.
    pub posts: usize,
    /// `GET /orders?filter[externalOrderId]=…`, the lookups that settle a submission.
    pub lookups: usize,
    /// Any other `GET` the scenario reads through (an order, a page).
    pub reads: usize,
}

impl Limits {
    /// Every exchange of these kinds is branched on.
    pub const UNLIMITED: Limits = Limits {
        posts: usize::MAX,
        lookups: usize::MAX,
        reads: usize::MAX,
    };
}

/// The kind of one exchange, from its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `POST /orders`.
    Post,
    /// A lookup by external id.
    Lookup,
    /// Another read.
    Read,
    /// Anything else (never branched).
    Other,
}

impl Step {
    fn of(request: &reqwest::Request) -> Step {
        let path = request.url().path();
        let query = request.url().query().unwrap_or("");
        if request.method() == reqwest::Method::POST && path.ends_with("/orders") {
            Step::Post
        } else if request.method() == reqwest::Method::GET
            && query.contains("filter[externalOrderId]")
        {
            Step::Lookup
        } else if request.method() == reqwest::Method::GET && path.contains("/orders") {
            Step::Read
        } else {
            Step::Other
        }
    }

    /// One letter, for printed schedules.
    pub fn letter(self) -> char {
        match self {
            Step::Post => 'P',
            Step::Lookup => 'L',
            Step::Read => 'R',
            Step::Other => 'O',
        }
    }
}

/// What one run of a schedule did on the network.
#[derive(Debug, Default)]
pub struct Tape {
    /// The choices at the branch points, in order; past its end: `Deliver`, or a random draw.
    script: Vec<Exchange>,
    limits: Option<Limits>,
    random: Option<(StdRng, f64)>,
    posts: usize,
    lookups: usize,
    reads: usize,
    /// Every exchange: its kind, what the network did, and whether it was a branch point.
    pub exchanges: Vec<(Step, Exchange, bool)>,
    /// Requests for another origin than [`HOME`] that carried the API key.
    pub leaks: Vec<String>,
    /// Whether the client read [`OVERREAD`] bytes of an endless body (it has no size limit).
    pub overread: bool,
}

impl Tape {
    /// A tape for one run: `script` at the branch points allowed by `limits`, then `Deliver` (or, with
    /// `random`, a draw from its generator with that probability of `Deliver`).
    pub fn new(script: Vec<Exchange>, limits: Limits, random: Option<(u64, f64)>) -> Tape {
        Tape {
            script,
            limits: Some(limits),
            random: random.map(|(seed, deliver)| (StdRng::seed_from_u64(seed), deliver)),
            ..Tape::default()
        }
    }

    /// How many exchanges were branch points.
    pub fn branch_points(&self) -> usize {
        self.exchanges
            .iter()
            .filter(|(_, _, branch)| *branch)
            .count()
    }

    /// What the branch points got, in order: the schedule that replays this run.
    pub fn schedule(&self) -> Vec<Exchange> {
        self.exchanges
            .iter()
            .filter(|(_, _, branch)| *branch)
            .map(|(_, exchange, _)| *exchange)
            .collect()
    }

    /// `POST`s handed to the network.
    pub fn posts(&self) -> usize {
        self.posts
    }

    /// The run as text: every exchange with its kind's letter, branch points in brackets.
    pub fn describe(&self) -> String {
        self.exchanges
            .iter()
            .map(|(step, exchange, branch)| {
                if *branch {
                    format!("{}:[{exchange}]", step.letter())
                } else {
                    format!("{}:{exchange}", step.letter())
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn choose(&mut self, step: Step) -> (Exchange, bool) {
        let limits = self.limits.unwrap_or(Limits::UNLIMITED);
        let (taken, limit) = match step {
            Step::Post => (&mut self.posts, limits.posts),
            Step::Lookup => (&mut self.lookups, limits.lookups),
            Step::Read => (&mut self.reads, limits.reads),
            Step::Other => return (Exchange::Deliver, false),
        };
        *taken += 1;
        if *taken > limit {
            return (Exchange::Deliver, false);
        }
        let point = self.branch_points();
        let exchange = match (self.script.get(point), &mut self.random) {
            (Some(scripted), _) => *scripted,
            (None, Some((rng, deliver))) => Exchange::random(rng, *deliver),
            (None, None) => Exchange::Deliver,
        };
        (exchange, true)
    }
}

/// The network of a simulated client: requests go to `emulator`, in process, under the schedule on
/// the current [`Tape`].
#[derive(Debug)]
pub struct SimNetwork {
    emulator: Mutex<Arc<Emulator>>,
    tape: Mutex<Tape>,
    /// The last answer passed on for each method and path, which a cache on the way may serve again
    /// ([`Exchange::Stale`]); kept across runs, as a cache would.
    cache: Mutex<HashMap<(reqwest::Method, String), http::Response<Bytes>>>,
    /// Set when a client reads [`OVERREAD`] bytes of an endless body: it has no size limit.
    overread: Arc<AtomicBool>,
}

impl SimNetwork {
    /// A network to `emulator`, with an empty tape (everything delivered).
    pub fn new(emulator: Arc<Emulator>) -> SimNetwork {
        SimNetwork {
            emulator: Mutex::new(emulator),
            tape: Mutex::new(Tape::default()),
            cache: Mutex::new(HashMap::new()),
            overread: Arc::default(),
        }
    }

    /// Puts a new tape in, returning the one that was there.
    pub fn load(&self, tape: Tape) -> Tape {
        let mut previous = std::mem::replace(&mut *self.tape(), tape);
        previous.overread = self.overread.swap(false, Ordering::SeqCst);
        previous
    }

    /// The current tape.
    pub fn tape(&self) -> MutexGuard<'_, Tape> {
        self.tape.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The emulator requests go to.
    pub fn emulator(&self) -> Arc<Emulator> {
        self.emulator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Sends later requests to `emulator` instead.
    pub fn replace_emulator(&self, emulator: Arc<Emulator>) {
        *self.emulator.lock().unwrap_or_else(PoisonError::into_inner) = emulator;
    }

    /// `request` answered by the emulator, in process (never through the schedule).
    pub async fn deliver(&self, request: &reqwest::Request) -> http::Response<Bytes> {
        let url = request.url();
        let target = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        };
        let body = request
            .body()
            .and_then(reqwest::Body::as_bytes)
            .map(Bytes::copy_from_slice)
            .unwrap_or_default();
        let mut forwarded = http::Request::new(body);
        *forwarded.method_mut() = request.method().clone();
        *forwarded.headers_mut() = request.headers().clone();
        match target.parse() {
            Ok(uri) => *forwarded.uri_mut() = uri,
            Err(_) => return text(400, "text/plain", "unparsable request target"),
        }
        self.emulator().answer(forwarded).await
    }

    fn cached(&self) -> MutexGuard<'_, HashMap<(reqwest::Method, String), http::Response<Bytes>>> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn exchange(&self, request: reqwest::Request) -> Result<reqwest::Response, NetworkError> {
        let step = Step::of(&request);
        let exchange = {
            let mut tape = self.tape();
            let origin = request.url().origin().ascii_serialization();
            if origin != HOME && request.headers().contains_key("x-api-key") {
                tape.leaks.push(origin);
            }
            let (exchange, branch) = tape.choose(step);
            tape.exchanges.push((step, exchange, branch));
            exchange
        };
        let key = (request.method().clone(), request.url().path().to_owned());
        if exchange.reaches_service() {
            let answer = self.deliver(&request).await;
            self.cached().insert(key, answer.clone());
            return self.after_service(exchange, answer).await;
        }
        match exchange {
            Exchange::Stale => {
                let cached = self.cached().get(&key).cloned();
                match cached {
                    Some(answer) => Ok(reqwest::Response::from(answer.map(reqwest::Body::from))),
                    None => Ok(page(504)),
                }
            }
            Exchange::LostBefore => std::future::pending().await,
            Exchange::ResetBefore => Err(NetworkError::Broken(reset())),
            Exchange::Redirect(status) => {
                let location = format!("{ELSEWHERE}{}", request.url().path());
                Ok(reqwest::Response::from(
                    http::Response::builder()
                        .status(status)
                        .header("location", location)
                        .body(reqwest::Body::from(Bytes::new()))
                        .unwrap_or_default(),
                ))
            }
            Exchange::Page(status) => Ok(page(status)),
            Exchange::RateLimited(retry_after) => Ok(rate_limited(retry_after)),
            // Every other kind reaches the service (above).
            _ => Err(NetworkError::Broken(
                format!("{exchange} does not reach the service").into(),
            )),
        }
    }

    /// What the client gets of the emulator's `answer` under `exchange`.
    async fn after_service(
        &self,
        exchange: Exchange,
        answer: http::Response<Bytes>,
    ) -> Result<reqwest::Response, NetworkError> {
        match exchange {
            Exchange::LostAfter => std::future::pending().await,
            Exchange::ResetAfter => Err(NetworkError::Broken(reset())),
            Exchange::Truncated => {
                let (mut parts, body) = answer.into_parts();
                parts
                    .headers
                    .insert(http::header::CONTENT_LENGTH, body.len().into());
                let half = body.slice(..body.len() / 2);
                let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
                    Ok(half),
                    Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the connection closed mid-body",
                    )),
                ];
                let body = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
                Ok(reqwest::Response::from(http::Response::from_parts(
                    parts, body,
                )))
            }
            Exchange::Late => {
                tokio::time::sleep(LATE).await;
                Ok(reqwest::Response::from(answer.map(reqwest::Body::from)))
            }
            Exchange::Endless => {
                // Endless for any client with a size limit; a client without one is caught (and
                // stopped) at OVERREAD instead of growing memory until the machine gives out.
                let overread = self.overread.clone();
                let chunks = futures::stream::iter(0..OVERREAD / CHUNK.len())
                    .map(|_| Ok(Bytes::from_static(&CHUNK)))
                    .chain(futures::stream::once(async move {
                        overread.store(true, Ordering::SeqCst);
                        Err(std::io::Error::other(
                            "the client read an endless body past 64 MiB",
                        ))
                    }));
                Ok(ok_with(reqwest::Body::wrap_stream(chunks)))
            }
            Exchange::Trickle => {
                let chunks = futures::stream::unfold((), |()| async {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Some((Ok::<_, Infallible>(Bytes::from_static(b" ")), ()))
                });
                Ok(ok_with(reqwest::Body::wrap_stream(chunks)))
            }
            Exchange::PageAfter(status) => Ok(page(status)),
            _ => Ok(reqwest::Response::from(answer.map(reqwest::Body::from))),
        }
    }
}

impl Network for SimNetwork {
    fn send(&self, request: reqwest::Request) -> NetworkFuture<'_> {
        Box::pin(self.exchange(request))
    }
}

fn reset() -> store_api::network::BoxError {
    Box::new(std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        "connection reset by peer",
    ))
}

fn ok_with(body: reqwest::Body) -> reqwest::Response {
    reqwest::Response::from(
        http::Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(body)
            .unwrap_or_default(),
    )
}

/// An intermediary's HTML page.
fn page(status: u16) -> reqwest::Response {
    let title = http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error");
    let html = format!(
        "<html><head><title>{status} {title}</title></head><body><h1>{title}</h1><p>Request ID: 8f3a</p></body></html>"
    );
    reqwest::Response::from(
        text(status, "text/html; charset=utf-8", &html).map(reqwest::Body::from),
    )
}

fn rate_limited(retry_after: RetryAfter) -> reqwest::Response {
    let mut builder = http::Response::builder()
        .status(429)
        .header("content-type", "application/json");
    builder = match retry_after {
        RetryAfter::Absent => builder,
        RetryAfter::Seconds(seconds) => builder.header("retry-after", seconds),
        RetryAfter::Garbage => builder.header("retry-after", "soon"),
    };
    let body = Bytes::from_static(br#"{"statusCode":429,"message":"Too Many Requests"}"#);
    reqwest::Response::from(builder.body(reqwest::Body::from(body)).unwrap_or_default())
}

fn text(status: u16, content_type: &str, body: &str) -> http::Response<Bytes> {
    http::Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Bytes::copy_from_slice(body.as_bytes()))
        .unwrap_or_default()
}
