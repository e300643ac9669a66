//! `proxy`: an HTTP proxy in front of the service that records every exchange into cassettes
//! (`--record DIR`), or that answers from them with nothing behind it (`--replay DIR`), so a test
//! suite in any language records and replays the same cassettes as the Rust `Recorder`/`Replayer`.
//!
//! Transparent by design: no retries, no rate limiting, no validation of its own. It forwards only to
//! the configured origin and passes every answer back as received (a 3xx included, never followed).
//! What it adds, it marks with the `X-Store-Api-Proxy` header: a refused request, a replay miss, an
//! origin that could not be reached.
//!
//! It keeps the emulator's guards: it answers only requests addressed to a loopback `Host` (the
//! emulator's one rule, [`store_api_fixtures::is_loopback_host`]) unless `--allow-remote`, since the
//! origin gets the proxy's own loopback `Host` and cannot tell a DNS-rebound page from a local
//! client; and it forwards the emulator's control plane only with `--forward-control-plane`. One
//! recording proxy at a time writes into a directory: it holds [`DIRECTORY_LOCK`] there.
//!
//! It says what it does: its ready line ends with the base URL to give the code under test (the
//! version prefix included), each exchange is one line on stderr (`traffic`), and Ctrl-C or
//! SIGTERM prints the counts, per cassette. A replay serves any number of runs of a suite
//! ([`store_api_cassette::Replay::with_runs`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use traffic::{Log, Outcome};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::response::Response;
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use store_api_cassette::{Cassette, HttpAnswer, HttpRequest, RecordOptions, Recording, Replay};

use super::order_file::open_lock_file;

mod traffic;
use crate::cli::ProxyArgs;
use crate::error::CliError;
use crate::global::GlobalArgs;
use crate::session::Session;

/// The request header naming the cassette an exchange belongs to (never forwarded).
pub const CASSETTE_HEADER: &str = "x-store-api-cassette";
/// The cassette of requests without [`CASSETTE_HEADER`].
pub const DEFAULT_CASSETTE: &str = "proxy";
/// The answer header marking an answer the proxy made itself (`refused`, `cassette-miss`,
/// `bad-gateway`), so no one mistakes it for the service's.
pub const PROXY_HEADER: &str = "x-store-api-proxy";
/// The status of a replay miss: a 500, which no test expects from a recorded session, so the code
/// under test fails loudly instead of taking the miss for a business outcome (a 404 or 409 could be).
const MISS_STATUS: StatusCode = StatusCode::INTERNAL_SERVER_ERROR;
/// The lock file a recording proxy holds in its directory, so that a second one (another test shard)
/// refuses to start instead of each rewriting the same cassettes with its own exchanges only.
pub const DIRECTORY_LOCK: &str = ".store-api-proxy.lock";
/// The first path segment of the emulator's control plane (`/_emulator/stores` lists every key).
const CONTROL_SEGMENT: &str = "_emulator";
/// The largest request body the proxy reads (it holds a whole body to record or match it); the
/// service's own limits are far below.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Records or replays until Ctrl-C or SIGTERM, then writes the cassettes and exits 0.
pub async fn run(args: ProxyArgs, global: &GlobalArgs) -> Result<(), CliError> {
    if !(args.listen.ip().is_loopback() || global.allow_insecure_http && args.allow_remote) {
        return Err(CliError::Usage(format!(
            "--listen {}: not a loopback address; callers' API keys would reach the proxy in clear \
             text, and requests from other hosts name a Host the proxy refuses (pass \
             --allow-insecure-http and --allow-remote on a network you trust)",
            args.listen
        )));
    }
    let mut session = None;
    let mode = match (&args.record, &args.replay) {
        (Some(dir), None) => {
            // Before anything starts: a second recording proxy on this directory stops here.
            let lock = lock_directory(dir)?;
            let origin = if global.emulator {
                let opened = Session::open(global).await?;
                let origin = opened.emulator.as_ref().map(|e| e.origin().to_owned());
                session = Some(opened);
                origin.ok_or_else(|| CliError::Failed("the embedded emulator is missing".into()))?
            } else {
                configured_origin(global)?
            };
            let options = RecordOptions::default()
                .keep_customer_data(args.keep_customer_data)
                .max_kept_body(args.max_kept_body);
            Mode::Record(Recorder::new(dir.clone(), origin, options, lock)?)
        }
        // Nothing stands behind a replay; an emulator asked for would be a test's mistake.
        (None, Some(_)) if global.emulator || global.emulator_state.is_some() => {
            return Err(CliError::Usage(
                "--emulator and --emulator-state only apply with --record: a replay answers from \
                 its cassettes alone"
                    .into(),
            ));
        }
        // Nothing stands behind a replay either: no control plane to forward (clap's `requires`
        // does not hold a flag to it).
        (None, Some(_)) if args.forward_control_plane => {
            return Err(CliError::Usage(
                "--forward-control-plane only applies with --record: a replay answers from its \
                 cassettes alone"
                    .into(),
            ));
        }
        (None, Some(dir)) => Mode::Replay(Replayer::load(dir)?),
        // clap's argument group requires exactly one of the two.
        _ => {
            return Err(CliError::Usage(
                "proxy needs exactly one of --record DIR and --replay DIR".into(),
            ));
        }
    };
    let guards = Guards {
        allow_remote: args.allow_remote,
        forward_control_plane: args.forward_control_plane,
    };
    let result = serve(args.listen, mode, guards).await;
    if let Some(session) = session {
        session.close().await;
    }
    result
}

/// The origin (`scheme://host:port`) of the session's base URL, from --base-url, the environment or
/// the profile; the base URL's own path is dropped: each request's path is forwarded as it came.
fn configured_origin(global: &GlobalArgs) -> Result<String, CliError> {
    let (base_url, _) = crate::config::resolve_target(global, &crate::config::process_env)?;
    let base_url = base_url.ok_or_else(|| {
        CliError::Usage(format!(
            "proxy --record needs the service to forward to: --base-url (or {}), a profile \
             (--profile) with base_url, or --emulator",
            store_api::ENV_BASE_URL
        ))
    })?;
    let url = Url::parse(&base_url)
        .map_err(|e| CliError::Usage(format!("--base-url {base_url:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(CliError::Usage(format!(
            "--base-url {base_url:?}: not an http(s) URL with a host"
        )));
    }
    let host = url.host_str().unwrap_or_default();
    let loopback = store_api_fixtures::is_loopback_host(host);
    if url.scheme() == "http" && !loopback && !global.allow_insecure_http {
        return Err(CliError::Usage(format!(
            "--base-url: http:// to {host}, which is not a loopback address, would send callers' API keys \
             in clear text; use https (or, on a network you trust, --allow-insecure-http)"
        )));
    }
    Ok(url.origin().ascii_serialization())
}

/// What the proxy does with a request.
enum Mode {
    Record(Recorder),
    Replay(Replayer),
}

/// What the proxy refuses beyond requests for other hosts.
#[derive(Debug, Clone, Copy)]
struct Guards {
    /// `--allow-remote`: any `Host` is answered, not only a loopback one.
    allow_remote: bool,
    /// `--forward-control-plane`: the emulator's control plane is forwarded when recording.
    forward_control_plane: bool,
}

/// The proxy's state, shared by every connection.
struct Proxy {
    mode: Mode,
    guards: Guards,
    /// `host:port` the proxy listens on: an absolute-form request naming it is for the proxy itself.
    own_authority: String,
    /// The exchanges' lines and counts.
    log: Log,
}

/// Binds, prints the ready line, serves until stopped, then writes the cassettes.
async fn serve(listen: SocketAddr, mode: Mode, guards: Guards) -> Result<(), CliError> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| CliError::Failed(format!("--listen {listen}: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::Failed(format!("--listen {listen}: {e}")))?;
    let what = match &mode {
        Mode::Record(recorder) => format!(
            "recording into {} from {}",
            recorder.dir.display(),
            recorder.origin
        ),
        Mode::Replay(replayer) => format!(
            "replaying {} ({} cassettes)",
            replayer.dir.display(),
            replayer.replays.len()
        ),
    };
    let proxy = Arc::new(Proxy {
        mode,
        guards,
        own_authority: addr.to_string(),
        log: Log::default(),
    });
    let app = axum::Router::new()
        .fallback(handle)
        .with_state(Arc::clone(&proxy));
    // Listening for SIGTERM before saying ready: a supervisor may send it the moment it reads the line.
    let stopped = store_api_fixtures::stop_signal();
    // The base URL the code under test takes as it is (STORE_API_BASE_URL), version prefix included.
    println!(
        "store-api proxy {what}, listening on http://{addr}{}",
        store_api_raw::contract::VERSION_PREFIX
    );
    flush_stdout();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(stopped)
        .await
        .map_err(|e| CliError::Failed(format!("the proxy stopped: {e}")));
    let saved = match &proxy.mode {
        // Every exchange was written as it happened; this is the last word after the in-flight ones.
        Mode::Record(recorder) => recorder.save_all(),
        // A suite that stopped short of its recording learns it here.
        Mode::Replay(replayer) => {
            replayer.report_unused();
            Ok(())
        }
    };
    let runs = match &proxy.mode {
        Mode::Replay(replayer) => replayer.runs(),
        Mode::Record(_) => BTreeMap::new(),
    };
    eprint!("{}", proxy.log.summary(&runs));
    saved?;
    served
}

fn flush_stdout() {
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
}

/// One request: refused, forwarded and recorded, or answered from a cassette.
async fn handle(State(proxy): State<Arc<Proxy>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if let Some(refusal) = refusal(&proxy, &parts) {
        eprintln!("refused: {refusal}");
        proxy.log.refused();
        return made_here(StatusCode::FORBIDDEN, "Forbidden", &refusal, "refused");
    }
    let name = match cassette_name(&parts.headers) {
        Ok(name) => name,
        Err(message) => {
            eprintln!("refused: {message}");
            proxy.log.refused();
            return made_here(StatusCode::BAD_REQUEST, "Bad Request", &message, "refused");
        }
    };
    let body = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(body) => body,
        Err(e) => {
            proxy.log.refused();
            return made_here(
                StatusCode::PAYLOAD_TOO_LARGE,
                "Payload Too Large",
                &format!("the proxy reads request bodies up to {MAX_BODY} bytes: {e}"),
                "refused",
            );
        }
    };
    let headers = forwarded_headers(&parts.headers);
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |path| path.as_str())
        .to_owned();
    let request = HttpRequest {
        method: parts.method.as_str(),
        path_and_query: &path_and_query,
        headers: &headers,
        body: &body,
    };
    // What the line shows of the request: what its cassette keeps of it (no key, no customer data).
    let line = store_api_cassette::request_line(&request);
    match &proxy.mode {
        Mode::Record(recorder) => {
            let response = recorder.forward(&name, &parts.method, &request).await;
            // A 502 of the proxy's own was said already, and nothing was recorded.
            if response.headers().contains_key(PROXY_HEADER) {
                proxy.log.unanswered();
            } else {
                proxy
                    .log
                    .exchange(&name, Outcome::Recorded, &line, response.status());
            }
            response
        }
        // Off the async workers: a miss's explanation (a bounded diff) takes milliseconds, not
        // nothing, and the other connections go on meanwhile.
        Mode::Replay(_) => {
            let method = parts.method.as_str().to_owned();
            let shared = Arc::clone(&proxy);
            let answered = tokio::task::spawn_blocking(move || {
                let request = HttpRequest {
                    method: &method,
                    path_and_query: &path_and_query,
                    headers: &headers,
                    body: &body,
                };
                match &shared.mode {
                    Mode::Replay(replayer) => replayer.answer(&name, &request, &line, &shared.log),
                    // The proxy's mode never changes.
                    Mode::Record(_) => made_here(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "Internal Server Error",
                        "not replaying",
                        "cassette-miss",
                    ),
                }
            })
            .await;
            answered.unwrap_or_else(|e| {
                made_here(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Internal Server Error",
                    &format!("the replay failed: {e}"),
                    "cassette-miss",
                )
            })
        }
    }
}

/// Why a request must not be answered: a CONNECT tunnel; an absolute-form target (as sent to a
/// forward proxy) naming a host that is neither the proxy nor, when recording, the configured origin;
/// a `Host` that is not a loopback one (without `--allow-remote`); or, when recording, the emulator's
/// control plane (without `--forward-control-plane`).
fn refusal(proxy: &Proxy, parts: &Parts) -> Option<String> {
    let (method, uri) = (&parts.method, &parts.uri);
    if method == Method::CONNECT {
        return Some(format!(
            "CONNECT {uri}: the proxy opens no tunnels; it forwards only to its configured origin"
        ));
    }
    if let Some(refusal) = other_host(proxy, method, uri) {
        return Some(refusal);
    }
    if !proxy.guards.allow_remote {
        // As the emulator reads it: the Host header, else the request's authority (HTTP/2).
        let host = parts
            .headers
            .get(axum::http::header::HOST)
            .map(|value| value.to_str().unwrap_or_default())
            .or_else(|| uri.authority().map(|authority| authority.as_str()))
            .unwrap_or_default();
        if !store_api_fixtures::is_loopback_host(host) {
            return Some(format!(
                "{method} {} with Host {host:?}: the proxy answers only requests to a loopback host \
                 (localhost, 127.0.0.0/8, [::1]), so that a web page whose name was pointed at this \
                 machine (DNS rebinding) cannot use it; start the proxy with --allow-remote to answer \
                 others",
                uri.path()
            ));
        }
    }
    if let Mode::Record(recorder) = &proxy.mode
        && !proxy.guards.forward_control_plane
    {
        let path_and_query = uri.path_and_query().map_or("/", |path| path.as_str());
        let fault = parts.headers.contains_key(store_api_fixtures::FAULT_HEADER);
        if fault || addresses_control_plane(&recorder.origin, path_and_query) {
            let what = if fault {
                format!("the {} header", store_api_fixtures::FAULT_HEADER)
            } else {
                format!("/{CONTROL_SEGMENT}/...")
            };
            return Some(format!(
                "{method} {}: {what} is the emulator's control plane (it lists every store's key and \
                 injects faults), which the proxy does not forward; start the proxy with \
                 --forward-control-plane to forward it",
                uri.path()
            ));
        }
    }
    None
}

/// Whether the request for `path_and_query` reaches the emulator's control plane at `origin`: the
/// path as it is sent (dot segments resolved as the URL parser resolves them), its first segment
/// percent-decoded and in any case.
fn addresses_control_plane(origin: &str, path_and_query: &str) -> bool {
    let Ok(url) = Url::parse(&format!("{origin}{path_and_query}")) else {
        // Not sent either: the forward fails the same way.
        return false;
    };
    url.path_segments()
        .and_then(|mut segments| segments.find(|segment| !segment.is_empty()))
        .is_some_and(|first| {
            percent_decoded(first).eq_ignore_ascii_case(CONTROL_SEGMENT.as_bytes())
        })
}

/// `text` with its `%XX` escapes decoded (an invalid escape kept as written).
fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escaped = (bytes[at] == b'%')
            .then(|| bytes.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                at += 3;
            }
            None => {
                decoded.push(bytes[at]);
                at += 1;
            }
        }
    }
    decoded
}

/// Why an absolute-form target is refused: it names a host that is neither the proxy nor, when
/// recording, the configured origin.
fn other_host(proxy: &Proxy, method: &Method, uri: &axum::http::Uri) -> Option<String> {
    let authority = uri.authority()?.as_str();
    let origin_authority = match &proxy.mode {
        Mode::Record(recorder) => Url::parse(&recorder.origin)
            .ok()
            .map(|url| authority_of(&url)),
        Mode::Replay(_) => None,
    };
    if authority.eq_ignore_ascii_case(&proxy.own_authority)
        || origin_authority.is_some_and(|own| authority.eq_ignore_ascii_case(&own))
    {
        return None;
    }
    Some(format!(
        "{method} {uri}: the proxy forwards only to its configured origin, never to {authority}"
    ))
}

/// `host:port` of `url`, the port spelled out even when it is the scheme's default.
fn authority_of(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port_or_known_default() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// The cassette the request's [`CASSETTE_HEADER`] names ([`DEFAULT_CASSETTE`] without one), or why
/// the name cannot be a file name in DIR.
fn cassette_name(headers: &HeaderMap) -> Result<String, String> {
    let Some(value) = headers.get(CASSETTE_HEADER) else {
        return Ok(DEFAULT_CASSETTE.to_owned());
    };
    // One rule on every platform (`store_api_cassette::cassette_name`): lower-cased, so `A` and `a`
    // are one cassette everywhere; Windows' device names (`CON`, `nul`) refused everywhere.
    let name = String::from_utf8_lossy(value.as_bytes());
    store_api_cassette::cassette_name(&name).map_err(|e| {
        format!(
            "X-Store-Api-Cassette: {e} (the cassette is the file NAME.json in the proxy's directory, \
             NAME in lower case)"
        )
    })
}

/// Hop-by-hop headers (RFC 9110 7.6.1), which concern one connection and are never passed on.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// `headers` without the hop-by-hop ones (and those `Connection` names) and without `content-length`,
/// which the next hop sets from the body it gets.
fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let named: Vec<String> = headers
        .get_all("connection")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|name| name.trim().to_ascii_lowercase())
        .collect();
    let mut kept = HeaderMap::new();
    for (name, value) in headers {
        let name_text = name.as_str();
        if HOP_BY_HOP.contains(&name_text)
            || name_text == "content-length"
            || named.iter().any(|n| n == name_text)
        {
            continue;
        }
        kept.append(name.clone(), value.clone());
    }
    kept
}

/// The request headers the origin gets: end to end ones, without `Host` (the origin's is set from
/// its URL), without `Expect` (the proxy has read the whole body already) and without
/// [`CASSETTE_HEADER`] (the proxy's own). The caller's `X-API-Key` stays.
fn forwarded_headers(headers: &HeaderMap) -> HeaderMap {
    let mut kept = end_to_end(headers);
    kept.remove("host");
    kept.remove("expect");
    kept.remove(CASSETTE_HEADER);
    kept
}

/// An answer the proxy made itself: the service's error envelope, marked with [`PROXY_HEADER`].
fn made_here(status: StatusCode, error: &str, message: &str, marker: &'static str) -> Response {
    let body = serde_json::json!({
        "statusCode": status.as_u16(),
        "error": error,
        "message": message,
    });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        "content-type",
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    headers.insert(PROXY_HEADER, HeaderValue::from_static(marker));
    response
}

/// The answer as the caller gets it: the status, the end-to-end headers and the body as received.
fn passed_back(answer: &HttpAnswer) -> Response {
    let mut response = Response::new(Body::from(answer.body.clone()));
    *response.status_mut() =
        StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    *response.headers_mut() = end_to_end(&answer.headers);
    response
}

/// `--record`: forwards to the origin and keeps one [`Recording`] per cassette name.
struct Recorder {
    dir: PathBuf,
    origin: String,
    options: RecordOptions,
    http: reqwest::Client,
    cassettes: Mutex<BTreeMap<String, Arc<Named>>>,
    /// [`DIRECTORY_LOCK`], held open (and so locked) until the proxy exits.
    _lock: File,
}

/// Creates `dir` if needed and takes its [`DIRECTORY_LOCK`]: a second recording proxy on the same
/// directory (parallel test shards) would rewrite the same cassettes with its own exchanges only, and
/// is refused like an order file held by another run (exit 4), naming the lock.
fn lock_directory(dir: &Path) -> Result<File, CliError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::Usage(format!("--record {}: {e}", dir.display())))?;
    let path = dir.join(DIRECTORY_LOCK);
    let unavailable = |e: &dyn std::fmt::Display| {
        CliError::Usage(format!(
            "--record {}: cannot lock {} ({e}), which keeps two recording proxies from writing into \
             one directory",
            dir.display(),
            path.display()
        ))
    };
    let file = open_lock_file(&path).map_err(|e| unavailable(&e))?;
    // Called by path: std's `File::try_lock` (Rust 1.89) would shadow the trait's method.
    match fs4::FileExt::try_lock(&file) {
        Ok(()) => Ok(file),
        Err(fs4::TryLockError::WouldBlock) => Err(CliError::Busy(format!(
            "--record {}: another `store-api proxy --record` is recording into this directory (it \
             holds {}); two would each rewrite the same cassettes and lose each other's exchanges. \
             Give each proxy its own directory (one per test shard), or stop the other first",
            dir.display(),
            path.display()
        ))),
        Err(fs4::TryLockError::Error(e)) => Err(unavailable(&e)),
    }
}

/// One cassette being recorded; `writing` serializes its saves (one temporary file per cassette).
struct Named {
    recording: Recording,
    path: PathBuf,
    writing: Mutex<()>,
}

impl Named {
    /// Writes what was recorded so far, atomically; the snapshot is taken under the lock, so the
    /// last write holds every exchange.
    fn save(&self) -> Result<(), CliError> {
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        // Appends the exchanges recorded since the last save (`Recording::save`: O(new exchanges)).
        self.recording
            .save(&self.path)
            .map_err(|e| CliError::Failed(e.to_string()))
    }
}

impl Recorder {
    fn new(
        dir: PathBuf,
        origin: String,
        options: RecordOptions,
        lock: File,
    ) -> Result<Recorder, CliError> {
        // Transparent: a 3xx is the caller's to follow or not; no proxy of the environment in between;
        // no timeout of its own (the caller's client has one).
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| CliError::Failed(format!("cannot build the HTTP client: {e}")))?;
        Ok(Recorder {
            dir,
            origin,
            options,
            http,
            cassettes: Mutex::new(BTreeMap::new()),
            _lock: lock,
        })
    }

    fn named(&self, name: &str) -> Arc<Named> {
        let mut cassettes = self.cassettes.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(cassettes.entry(name.to_owned()).or_insert_with(|| {
            Arc::new(Named {
                recording: Recording::new(self.options.clone()),
                path: cassette_path(&self.dir, name),
                writing: Mutex::new(()),
            })
        }))
    }

    /// Sends the request to the origin, records the exchange, writes the cassette, and passes the
    /// answer back; an origin that cannot be reached is a 502 of the proxy's own (not recorded).
    async fn forward(&self, name: &str, method: &Method, request: &HttpRequest<'_>) -> Response {
        let url = format!("{}{}", self.origin, request.path_and_query);
        let answer = match self.send(method, &url, request).await {
            Ok(answer) => answer,
            Err(e) => {
                let message = format!("{} {url}: {e}", request.method);
                eprintln!("the origin did not answer: {message}");
                return made_here(
                    StatusCode::BAD_GATEWAY,
                    "Bad Gateway",
                    &message,
                    "bad-gateway",
                );
            }
        };
        let named = self.named(name);
        named.recording.record(request, &answer);
        // Written after each exchange, so a killed proxy loses nothing; off the async threads.
        let writer = Arc::clone(&named);
        match tokio::task::spawn_blocking(move || writer.save()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("error: {e}"),
            Err(e) => eprintln!("error: writing {}: {e}", named.path.display()),
        }
        passed_back(&answer)
    }

    /// One request to the origin and its whole answer.
    async fn send(
        &self,
        method: &Method,
        url: &str,
        request: &HttpRequest<'_>,
    ) -> Result<HttpAnswer, reqwest::Error> {
        let sent = self
            .http
            .request(method.clone(), url)
            .headers(request.headers.clone())
            .body(Bytes::copy_from_slice(request.body))
            .send()
            .await?;
        let status = sent.status().as_u16();
        let headers = sent.headers().clone();
        let body = sent.bytes().await?;
        Ok(HttpAnswer {
            status,
            headers,
            body,
        })
    }

    fn save_all(&self) -> Result<(), CliError> {
        let cassettes: Vec<Arc<Named>> = self
            .cassettes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        for named in cassettes {
            named.save()?;
        }
        Ok(())
    }
}

/// `--replay`: every cassette of DIR, loaded at start, each serving any number of runs.
struct Replayer {
    dir: PathBuf,
    replays: BTreeMap<String, Replay>,
}

impl Replayer {
    /// Loads every `NAME.json` of `dir`; one that is not a cassette stops the start, naming it.
    fn load(dir: &Path) -> Result<Replayer, CliError> {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| CliError::Usage(format!("--replay {}: {e}", dir.display())))?;
        let mut replays = BTreeMap::new();
        for entry in entries {
            let path = entry
                .map_err(|e| CliError::Usage(format!("--replay {}: {e}", dir.display())))?
                .path();
            let name = path
                .file_name()
                .and_then(|name| name.to_str())
                .and_then(|name| name.strip_suffix(".json"));
            let Some(name) = name.and_then(|name| store_api_cassette::cassette_name(name).ok())
            else {
                continue;
            };
            let cassette = Cassette::load(&path).map_err(|e| CliError::Usage(e.to_string()))?;
            if replays
                .insert(name.clone(), Replay::new(cassette).with_runs())
                .is_some()
            {
                return Err(CliError::Usage(format!(
                    "--replay {}: two files hold the cassette {name:?} (names differ only in case, \
                     which a case-insensitive file system cannot tell apart); keep one",
                    dir.display()
                )));
            }
        }
        Ok(Replayer {
            dir: dir.to_owned(),
            replays,
        })
    }

    /// The recorded answer, or the loud miss: a 500 with the diff, also printed on stderr under the
    /// exchange's line (`line`, the request as its cassette keeps it).
    fn answer(&self, name: &str, request: &HttpRequest<'_>, line: &str, log: &Log) -> Response {
        let miss = |message: String| {
            log.missed(name, line, MISS_STATUS, &message);
            made_here(MISS_STATUS, "Cassette Miss", &message, "cassette-miss")
        };
        let Some(replay) = self.replays.get(name) else {
            let known: Vec<&str> = self.replays.keys().map(String::as_str).collect();
            return miss(format!(
                "no cassette {} (the directory holds: {})",
                cassette_path(&self.dir, name).display(),
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ));
        };
        let answered = replay.answer(request);
        log.run(name, replay.runs());
        match answered {
            Ok(answer) => {
                let response = passed_back(&answer);
                log.exchange(name, Outcome::Replayed, line, response.status());
                response
            }
            Err(e) => miss(e.to_string()),
        }
    }

    /// The runs each cassette served.
    fn runs(&self) -> BTreeMap<String, usize> {
        self.replays
            .iter()
            .map(|(name, replay)| (name.clone(), replay.runs()))
            .collect()
    }
}

impl Replayer {
    /// Names on stderr the recorded exchanges no request asked for.
    fn report_unused(&self) {
        for (name, replay) in &self.replays {
            let unused = replay.unused();
            if unused.is_empty() {
                continue;
            }
            let requests: Vec<String> = unused
                .iter()
                .map(|exchange| format!("  {} {}", exchange.request.method, exchange.request.path))
                .collect();
            eprintln!(
                "cassette {name}: {} recorded exchanges never asked for:\n{}",
                unused.len(),
                requests.join("\n")
            );
        }
    }
}

#[cfg(test)]
fn cassette_name_is_safe(name: &str) -> bool {
    let mut headers = HeaderMap::new();
    match HeaderValue::from_str(name) {
        Ok(value) => {
            headers.insert(
                reqwest::header::HeaderName::from_static(CASSETTE_HEADER),
                value,
            );
            cassette_name(&headers).is_ok()
        }
        Err(_) => false,
    }
}

fn cassette_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.json"))
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderName;

    use super::*;

    #[test]
    fn cassette_names_are_safe_file_names() {
        let cases: &[(&str, bool)] = &[
            ("proxy", true),
            ("orders-2.v1_x", true),
            ("", false),
            ("..", false),
            (".hidden", false),
            ("a/b", false),
            ("a\\b", false),
            ("../../etc/passwd", false),
            ("naïve", false),
            (&"x".repeat(101), false),
            // Issue 35, defect 15: reserved on Windows, so refused everywhere.
            ("CON", false),
            ("nul", false),
            ("com1.json", false),
        ];
        for (name, safe) in cases {
            assert_eq!(cassette_name_is_safe(name), *safe, "{name:?}");
        }
    }

    #[test]
    fn hop_by_hop_headers_and_those_connection_names_stay_behind() {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("connection", "keep-alive, x-private"),
            ("keep-alive", "timeout=5"),
            ("x-private", "1"),
            ("transfer-encoding", "chunked"),
            ("content-length", "3"),
            ("host", "127.0.0.1:1"),
            ("expect", "100-continue"),
            ("x-store-api-cassette", "orders"),
            ("x-api-key", "csk_caller"),
            ("content-type", "application/json"),
        ] {
            headers.insert(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        let kept = forwarded_headers(&headers);
        let mut names: Vec<&str> = kept.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["content-type", "x-api-key"]);
    }
}
