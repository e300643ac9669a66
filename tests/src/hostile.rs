//! A misbehaving server on a loopback address: whatever a load balancer, a web application firewall, a
//! deploy or an attacker on the path answers, for tests over real HTTP. Each request is recorded (with
//! its headers, so a test can see whether the API key reached it) and answered by the test's closure,
//! which may forward it to an upstream (the emulator) first.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, Request, StatusCode, Uri};
use axum::response::Response;
use tokio::task::JoinHandle;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Its method.
    pub method: Method,
    /// Its target (path and query).
    pub uri: Uri,
    /// Its headers.
    pub headers: HeaderMap,
    /// Its body.
    pub body: Bytes,
}

impl Seen {
    /// Whether it carried an `X-API-Key`.
    pub fn carries_key(&self) -> bool {
        self.headers.contains_key("x-api-key")
    }
}

/// Where a request can be forwarded.
#[derive(Debug, Clone)]
pub struct Upstream {
    origin: Option<String>,
    http: reqwest::Client,
}

impl Upstream {
    /// `seen` sent on to the upstream; its answer's status, headers and body (a 502 without one).
    pub async fn forward(&self, seen: &Seen) -> (StatusCode, HeaderMap, Bytes) {
        let Some(origin) = &self.origin else {
            return (StatusCode::BAD_GATEWAY, HeaderMap::new(), Bytes::new());
        };
        let mut headers = seen.headers.clone();
        headers.remove("host");
        let sent = self
            .http
            .request(seen.method.clone(), format!("{origin}{}", seen.uri))
            .headers(headers)
            .body(seen.body.clone())
            .send()
            .await;
        match sent {
            Ok(response) => {
                let status = response.status();
                let headers = response.headers().clone();
                let body = response.bytes().await.unwrap_or_default();
                (status, headers, body)
            }
            Err(_) => (StatusCode::BAD_GATEWAY, HeaderMap::new(), Bytes::new()),
        }
    }

    /// `seen` sent on to the upstream, and its status and body answered as JSON.
    pub async fn relay(&self, seen: &Seen) -> Response {
        let (status, _, body) = self.forward(seen).await;
        answer(
            status.as_u16(),
            &[("content-type", "application/json")],
            body,
        )
    }
}

/// A server that answers every request with what its closure says.
#[derive(Debug)]
pub struct Hostile {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: JoinHandle<()>,
}

impl Hostile {
    /// A server on 127.0.0.1 that forwards everything to `origin` and records what it saw.
    pub async fn forwarding(origin: &str) -> Hostile {
        Hostile::start(
            "127.0.0.1",
            Some(origin.to_owned()),
            |seen: Seen, upstream: Upstream| async move { upstream.relay(&seen).await },
        )
        .await
    }

    /// Serves on `ip` (a free port), forwarding to `upstream` when the closure asks.
    pub async fn start<F, Fut>(ip: &str, upstream: Option<String>, answer: F) -> Hostile
    where
        F: Fn(Seen, Upstream) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        let listener = tokio::net::TcpListener::bind((ip, 0))
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let seen = Arc::new(Mutex::new(Vec::new()));
        store_api::install_crypto_provider();
        let upstream = Upstream {
            origin: upstream,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("an HTTP client"),
        };
        let record = seen.clone();
        let handler = move |request: Request<Body>| {
            let (answer, upstream, record) = (answer.clone(), upstream.clone(), record.clone());
            async move {
                let (parts, body) = request.into_parts();
                let body = axum::body::to_bytes(body, usize::MAX)
                    .await
                    .unwrap_or_default();
                let seen = Seen {
                    method: parts.method,
                    uri: parts.uri,
                    headers: parts.headers,
                    body,
                };
                record
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(seen.clone());
                answer(seen, upstream).await
            }
        };
        let app = axum::Router::new().fallback(handler);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Hostile { addr, seen, task }
    }

    /// `http://ip:port`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request it received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// An answer with `status`, these headers and this body.
pub fn answer(status: u16, headers: &[(&str, &str)], body: impl Into<Body>) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            axum::http::HeaderName::from_bytes(name.as_bytes()),
            axum::http::HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

/// A firewall's or a gateway's HTML page with `status`.
pub fn html_page(status: u16) -> Response {
    answer(
        status,
        &[("content-type", "text/html")],
        format!(
            "<html><body><h1>{status}</h1><p>Request blocked. Support ID: 1234</p></body></html>"
        ),
    )
}
