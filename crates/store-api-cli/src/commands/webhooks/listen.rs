//! `webhooks listen`: a receiver on this machine in front of yours, as `stripe listen` is.
//!
//! "The emulator" is a base URL whose origin answers `GET /_emulator/stores` with its list of stores;
//! anything else (no base URL, a 404, no answer) is taken for the real service, where registrations
//! are made in the app. Against the emulator the listener reads the store's registrations, registers
//! itself for the chosen topics, and on Ctrl-C or SIGTERM puts back, for each topic still pointing at
//! it, what it displaced. The emulator's `PUT` replaces the whole map: a registration someone else
//! makes while the listener runs is kept, one made between its read and its write is not; a listener
//! killed with SIGKILL leaves its registration behind.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde::{Deserialize, Serialize};
use store_api_raw::KeyHandle;
use store_api_webhooks::{Event, Resource, Topic, Verifier, WebhookError};

use crate::cli::ListenArgs;
use crate::error::CliError;
use crate::global::GlobalArgs;
use crate::output::Output;

/// Where the listener waits for the real service's deliveries (through a tunnel) unless --listen
/// says otherwise: a fixed port, so the tunnel's target stays the same, and not the emulator's (8080)
/// nor the proxy's (8081).
const REAL_SERVICE_LISTEN: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 8765);

/// Against the emulator the port does not matter: it is told which.
const EMULATOR_LISTEN: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// The control plane is on this machine; a probe of the real service must not hold the start up.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(5);

/// Under the emulator's 10 s per attempt, so the sender hears the receiver's answer, not a timeout.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(9);

/// Headers that describe the connection to the listener, not the delivery: not passed on.
const HOP_BY_HOP: &[&str] = &[
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "proxy-connection",
    "proxy-authorization",
];

/// Listens until Ctrl-C or SIGTERM; against the emulator, registered meanwhile.
pub async fn run(args: ListenArgs, global: &GlobalArgs, out: Output) -> Result<(), CliError> {
    // An emulator inside this process would stop with it, before anything could cause an event.
    if global.emulator {
        return Err(CliError::Usage(
            "webhooks listen does not start an emulator: run `store-api emulator` and point \
             --base-url at it"
                .into(),
        ));
    }
    // In the specification's order, whatever order the flags named them in.
    let topics: Vec<&'static str> = Topic::KNOWN
        .iter()
        .map(Topic::as_str)
        .filter(|topic| args.topics.is_empty() || args.topics.iter().any(|t| t == topic))
        .collect();
    let credentials = crate::config::resolve(global, &crate::config::process_env)?;
    // Both the control plane and the receiver are the user's own, mostly on this machine: no proxy.
    // A redirect from the receiver is its answer, shown as it is.
    let http = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| CliError::Failed(format!("cannot build the HTTP client: {e}")))?;
    let emulator = match &credentials.base_url {
        Some(base_url) => EmulatorControl::probe(&http, base_url).await?,
        None => None,
    };

    let (target, key, default_listen) = match emulator {
        Some((control, stores)) => {
            let ids = || {
                stores
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let Some(store_id) = credentials.store_id.clone() else {
                return Err(CliError::Usage(format!(
                    "webhooks listen needs --store-id to register at the emulator {} (its stores: {})",
                    control.origin,
                    ids()
                )));
            };
            let Some(store) = stores.iter().find(|s| s.id == store_id) else {
                return Err(CliError::Usage(format!(
                    "--store-id {store_id} is not a store of the emulator at {} (its stores: {})",
                    control.origin,
                    ids()
                )));
            };
            // The emulator signs with the store's key of the moment, which it hands out.
            let key = store.api_key.clone();
            if credentials
                .api_key
                .as_ref()
                .is_some_and(|mine| mine.expose() != key)
            {
                eprintln!(
                    "note: the configured API key is not store {store_id}'s current key at the \
                     emulator; deliveries are verified with the emulator's, a receiver holding yours \
                     would refuse them"
                );
            }
            (Target::Emulator { control, store_id }, key, EMULATOR_LISTEN)
        }
        None => {
            let key = credentials.api_key.ok_or_else(|| {
                CliError::Usage(format!(
                    "missing the signing key: --api-key, {} or a profile's key (deliveries are \
                     signed with the store's API key)",
                    store_api::ENV_API_KEY
                ))
            })?;
            (
                Target::Service {
                    base_url: credentials.base_url,
                },
                key.expose().to_owned(),
                REAL_SERVICE_LISTEN,
            )
        }
    };
    let handle = KeyHandle::new(key);
    // Anyone can compute HMAC("", body): an empty key (an unset variable) verifies nothing.
    if handle.current().expose_secret().is_empty() {
        return Err(CliError::Usage(
            "the store's API key is empty: pass the store's API key".into(),
        ));
    }

    let addr = args.listen.unwrap_or(default_listen);
    let socket = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| CliError::Failed(format!("cannot listen on {addr}: {e}")))?;
    let local = socket
        .local_addr()
        .map_err(|e| CliError::Failed(format!("cannot listen on {addr}: {e}")))?;
    let url = listener_url(local);
    // Listening for the signals before registering: one that comes in between still unregisters.
    let stopped = store_api_fixtures::stop_signal();

    let previous = match &target {
        Target::Emulator { control, store_id } => {
            let previous = control.registrations(store_id).await?;
            let mut registrations = previous.clone();
            for topic in &topics {
                registrations.insert((*topic).to_owned(), url.clone());
            }
            control.register(store_id, &registrations).await?;
            previous
        }
        Target::Service { .. } => BTreeMap::new(),
    };

    let ready = format!("store-api webhooks listen, listening on {url}");
    // JSON mode keeps stdout to the events' lines.
    if out.json {
        eprintln!("{ready}");
    } else {
        out.line(ready);
    }
    match &target {
        Target::Emulator { control, store_id } => {
            eprintln!(
                "registered at the emulator {} for store {store_id}: {}; Ctrl-C removes it",
                control.origin,
                topics.join(", ")
            );
            for topic in &topics {
                if let Some(old) = previous.get(*topic) {
                    eprintln!("  {topic} was registered to {old}: put back on exit");
                }
            }
        }
        Target::Service { base_url } => {
            let service = base_url.as_deref().unwrap_or("the service (no --base-url)");
            eprintln!(
                "{service} is not an emulator (no /_emulator control plane), so nothing is \
                 registered: in the app's webhook settings, register for {} a public https URL \
                 that reaches {url} (a tunnel to port {})",
                topics.join(", "),
                local.port()
            );
        }
    }
    match &args.forward_to {
        Some(to) => eprintln!("verified deliveries are passed on to {to}"),
        None => eprintln!("no --forward-to: verified deliveries are answered 204"),
    }

    let state = Arc::new(Listening {
        verifier: Verifier::from_key_handle(handle.clone()),
        handle,
        control: match &target {
            Target::Emulator { control, store_id } => Some((control.clone(), store_id.clone())),
            Target::Service { .. } => None,
        },
        forward_to: args.forward_to,
        http,
        topics,
        out,
    });
    let topics = state.topics.clone();
    let app = Router::new()
        .route("/", post(deliver))
        .route("/{*path}", post(deliver))
        .with_state(state);
    let served = axum::serve(socket, app)
        .with_graceful_shutdown(stopped)
        .await
        .map_err(|e| CliError::Failed(format!("the listener failed: {e}")));

    // Whatever ended the serving, the registration goes.
    if let Target::Emulator { control, store_id } = &target {
        control
            .unregister(store_id, &topics, &url, &previous)
            .await?;
    }
    served
}

/// Where deliveries come from.
enum Target {
    /// An emulator: the listener registers itself at its control plane.
    Emulator {
        control: EmulatorControl,
        store_id: String,
    },
    /// The real service, or anything that is not an emulator: registration happens in the app.
    Service { base_url: Option<String> },
}

/// What every delivery needs.
struct Listening {
    verifier: Verifier,
    /// The verifier's key, replaced when the emulator's has changed (a rotation).
    handle: KeyHandle,
    control: Option<(EmulatorControl, String)>,
    forward_to: Option<reqwest::Url>,
    http: reqwest::Client,
    topics: Vec<&'static str>,
    out: Output,
}

/// One line per delivery; in JSON mode one object per line.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EventLine {
    topic: Option<String>,
    event_id: Option<String>,
    /// `order ord_…`, `product prd_…`, or the id alone for a topic this CLI does not know.
    resource: Option<String>,
    /// `verified`, `bad_signature` or `refused` (a signed body that is not an event, or too large).
    verdict: &'static str,
    /// Why the delivery was refused.
    reason: Option<String>,
    /// The receiver's status.
    forward_status: Option<u16>,
    /// Why it could not be passed on (an unreachable receiver), or why it was not.
    forward_error: Option<String>,
}

impl EventLine {
    fn text(&self) -> String {
        let dash = |value: &Option<String>| value.clone().unwrap_or_else(|| "-".into());
        let verdict = match (&self.reason, self.verdict) {
            (Some(reason), "bad_signature") => format!("bad signature ({reason})"),
            (Some(reason), verdict) => format!("{verdict} ({reason})"),
            (None, verdict) => verdict.to_owned(),
        };
        let mut text = format!(
            "{}  {}  {}  {verdict}",
            dash(&self.topic),
            dash(&self.event_id),
            dash(&self.resource)
        );
        match (self.forward_status, &self.forward_error) {
            (Some(status), _) => text.push_str(&format!("  -> {status}")),
            (None, Some(error)) => text.push_str(&format!("  -> {error}")),
            (None, None) => {}
        }
        text
    }
}

/// Verifies, prints, passes on; answers the sender with the receiver's status, 502 when the receiver
/// could not be reached, the verifier's status (401, 400, 413) for a refused delivery, and 204 when
/// there is no receiver.
async fn deliver(
    State(state): State<Arc<Listening>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let mut verified = state.verifier.verify_headers(&headers, &body);
    if matches!(verified, Err(WebhookError::SignatureMismatch))
        && let Some((control, store_id)) = &state.control
        && let Ok(key) = control.key(store_id).await
        && key != state.handle.current().expose_secret()
    {
        // Rotated since the start: the emulator signs each attempt with the key of the moment.
        state.handle.rotate(key);
        verified = state.verifier.verify_headers(&headers, &body);
    }
    let mut line = match &verified {
        Ok(event) => EventLine {
            topic: Some(event.topic.to_string()),
            event_id: Some(event.id.clone()),
            resource: Some(resource(event)),
            verdict: "verified",
            reason: None,
            forward_status: None,
            forward_error: None,
        },
        Err(error) => {
            // What the body claims, read without trusting it, so the line says which delivery failed.
            let claimed: serde_json::Value =
                serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
            let text = |value: &serde_json::Value| value.as_str().map(str::to_owned);
            let topic = text(&claimed["topic"]);
            let id = text(&claimed["data"]["id"]);
            EventLine {
                resource: match (&topic, &id) {
                    (Some(topic), Some(id)) => Some(resource(&Event::new(
                        "",
                        Topic::from(topic.as_str()),
                        id.as_str(),
                    ))),
                    _ => id,
                },
                topic,
                event_id: text(&claimed["id"]),
                verdict: match error {
                    WebhookError::MissingSignature
                    | WebhookError::MalformedSignature
                    | WebhookError::SignatureMismatch
                    | WebhookError::EmptyKey => "bad_signature",
                    _ => "refused",
                },
                reason: Some(error.to_string()),
                forward_status: None,
                forward_error: None,
            }
        }
    };
    let status = match (&verified, &state.forward_to) {
        (Err(error), forward_to) => {
            if forward_to.is_some() {
                line.forward_error = Some("not forwarded".into());
            }
            StatusCode::from_u16(error.status_code()).unwrap_or(StatusCode::BAD_REQUEST)
        }
        (Ok(event), _) if !state.topics.contains(&event.topic.as_str()) => {
            line.forward_error = Some("not in --topics, not forwarded".into());
            StatusCode::NO_CONTENT
        }
        (Ok(_), None) => StatusCode::NO_CONTENT,
        (Ok(_), Some(to)) => match forward(&state, to, &headers, &body).await {
            Ok(status) => {
                line.forward_status = Some(status.as_u16());
                status
            }
            Err(error) => {
                line.forward_error = Some(format!("forward failed: {error}"));
                StatusCode::BAD_GATEWAY
            }
        },
    };
    if state.out.json {
        // A line that cannot be encoded is not worth failing a delivery over.
        let _ = state.out.json_line(&line);
    } else {
        // A forged body's fields are shown, never obeyed: a line break in them would forge a line.
        state.out.line(crate::terminal::clean(&line.text()));
    }
    status
}

/// `order ord_…`, `product prd_…`, or the id alone.
fn resource(event: &Event) -> String {
    match event.resource() {
        Resource::Order(id) => format!("order {id}"),
        Resource::Product(id) => format!("product {id}"),
        _ => event.data.id.clone(),
    }
}

/// Posts the delivery's own headers and body to the receiver; its status.
async fn forward(
    state: &Listening,
    to: &reqwest::Url,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<StatusCode, String> {
    let mut request = state
        .http
        .post(to.clone())
        .timeout(FORWARD_TIMEOUT)
        .body(body.clone());
    for (name, value) in headers {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            request = request.header(name, value);
        }
    }
    let response = request.send().await.map_err(|e| chain(&e.without_url()))?;
    Ok(response.status())
}

/// An error with its causes: reqwest's own says only "error sending request".
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// The URL the listener is reached at: a loopback host for an unspecified address (the emulator only
/// delivers to loopback hosts unless told otherwise).
fn listener_url(local: SocketAddr) -> String {
    let ip = match local.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("http://{}/", SocketAddr::new(ip, local.port()))
}

/// A store as `GET /_emulator/stores` lists it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoreEntry {
    id: String,
    api_key: String,
}

/// The few control calls of an emulator the listener makes.
#[derive(Clone)]
struct EmulatorControl {
    http: reqwest::Client,
    origin: reqwest::Url,
}

impl EmulatorControl {
    /// The emulator at `base_url` and its stores, or `None` when its control plane does not answer
    /// there (the real service).
    async fn probe(
        http: &reqwest::Client,
        base_url: &str,
    ) -> Result<Option<(EmulatorControl, Vec<StoreEntry>)>, CliError> {
        let trimmed = base_url.trim_end_matches('/');
        let origin = trimmed
            .strip_suffix(store_api_fixtures::API_PREFIX)
            .unwrap_or(trimmed);
        let origin = reqwest::Url::parse(origin)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https") && !url.cannot_be_a_base())
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "--base-url {base_url:?} is not an http or https URL"
                ))
            })?;
        let control = EmulatorControl {
            http: http.clone(),
            origin,
        };
        let Ok(url) = control.url(&["stores"]) else {
            return Ok(None);
        };
        // No key is sent: the probe tells the real service nothing.
        let answer = match control.http.get(url).timeout(CONTROL_TIMEOUT).send().await {
            Ok(answer) => answer,
            // Nothing on this machine's port: an emulator not started (yet), not the real service.
            Err(e)
                if control
                    .origin
                    .host_str()
                    .is_some_and(store_api_fixtures::is_loopback_host) =>
            {
                return Err(CliError::Failed(format!(
                    "nothing answers at {} ({}): is the emulator running?",
                    control.origin,
                    chain(&e.without_url())
                )));
            }
            // The real service offline, or out of reach: deliveries may still come through a tunnel.
            Err(_) => return Ok(None),
        };
        if !answer.status().is_success() {
            return Ok(None);
        }
        Ok(answer
            .json::<Vec<StoreEntry>>()
            .await
            .ok()
            .map(|stores| (control, stores)))
    }

    /// `/_emulator/SEGMENTS…`, each segment escaped.
    fn url(&self, segments: &[&str]) -> Result<reqwest::Url, CliError> {
        let mut url = self.origin.clone();
        url.path_segments_mut()
            .map_err(|()| CliError::Usage(format!("bad emulator URL {}", self.origin)))?
            .pop_if_empty()
            .push("_emulator")
            .extend(segments);
        Ok(url)
    }

    /// One control call; the answer's body on a 2xx.
    async fn call(&self, request: reqwest::RequestBuilder, what: &str) -> Result<Bytes, CliError> {
        let unreachable = |e: reqwest::Error| {
            CliError::Failed(format!(
                "the emulator at {} did not answer {what}: {}",
                self.origin,
                chain(&e.without_url())
            ))
        };
        let answer = request
            .timeout(CONTROL_TIMEOUT)
            .send()
            .await
            .map_err(unreachable)?;
        let status = answer.status();
        let body = answer.bytes().await.map_err(unreachable)?;
        if status.is_success() {
            return Ok(body);
        }
        Err(CliError::Failed(format!(
            "the emulator refused {what}: {status} {}",
            String::from_utf8_lossy(&body)
        )))
    }

    /// The store's current key.
    async fn key(&self, store_id: &str) -> Result<String, CliError> {
        let body = self
            .call(self.http.get(self.url(&["stores"])?), "the list of stores")
            .await?;
        let stores: Vec<StoreEntry> = serde_json::from_slice(&body)
            .map_err(|e| CliError::Failed(format!("the emulator's list of stores: {e}")))?;
        stores
            .into_iter()
            .find(|s| s.id == store_id)
            .map(|s| s.api_key)
            .ok_or_else(|| CliError::Failed(format!("store {store_id} is gone from the emulator")))
    }

    /// The store's registrations, `{topic: url}`.
    async fn registrations(&self, store_id: &str) -> Result<BTreeMap<String, String>, CliError> {
        let url = self.url(&["stores", store_id, "webhooks"])?;
        let body = self
            .call(self.http.get(url), "the read of the registrations")
            .await?;
        serde_json::from_slice(&body).map_err(|e| {
            CliError::Failed(format!(
                "the emulator's registrations are not {{topic: url}}: {e}"
            ))
        })
    }

    /// Replaces the store's registrations.
    async fn register(
        &self,
        store_id: &str,
        registrations: &BTreeMap<String, String>,
    ) -> Result<(), CliError> {
        let url = self.url(&["stores", store_id, "webhooks"])?;
        self.call(self.http.put(url).json(registrations), "the registration")
            .await
            .map(drop)
    }

    /// Puts back, for each of `topics` still registered to `url`, what was there before (or nothing).
    /// An emulator gone meanwhile took its registrations with it: a note, not a failure.
    async fn unregister(
        &self,
        store_id: &str,
        topics: &[&str],
        url: &str,
        previous: &BTreeMap<String, String>,
    ) -> Result<(), CliError> {
        let mut registrations = match self.registrations(store_id).await {
            Ok(registrations) => registrations,
            Err(error) => {
                eprintln!("note: the registration could not be removed: {error}");
                return Ok(());
            }
        };
        for topic in topics {
            if registrations.get(*topic).map(String::as_str) != Some(url) {
                // Registered to someone else since: theirs now.
                continue;
            }
            match previous.get(*topic) {
                Some(old) => registrations.insert((*topic).to_owned(), old.clone()),
                None => registrations.remove(*topic),
            };
        }
        self.register(store_id, &registrations).await?;
        eprintln!("removed the registration of {url}");
        Ok(())
    }
}
