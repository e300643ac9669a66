//! The network under the client: what carries one request to the service and brings its answer back.
//!
//! By default that is reqwest, built so that it follows no redirect ([`ReqwestNetwork`]). A program
//! can plug in another [`Network`] with [`ClientBuilder::network`](crate::ClientBuilder::network): a
//! simulated one in tests (the workspace's own model of a misbehaving network is one), or a custom HTTP
//! stack. Whatever the network, the client's transport keeps the same guarantees on top of it: every
//! attempt has a deadline covering its answer's body, no body is read past
//! [`ClientBuilder::max_response_bytes`](crate::ClientBuilder::max_response_bytes), no request leaves
//! for another origin than the base URL's, and a redirect is an error that is never followed.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use reqwest::ResponseBuilderExt as _;
use tokio::time::{Instant, Sleep};

/// Any error a [`Network`] reports as the cause of a failed exchange.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The future a [`Network`] returns.
pub type NetworkFuture<'a> =
    Pin<Box<dyn Future<Output = Result<reqwest::Response, NetworkError>> + Send + 'a>>;

/// Carries one request to the service and returns its answer. The answer's body is read afterwards,
/// through the [`reqwest::Response`]; a network reports a connection that breaks mid-body as an error
/// of that body.
///
/// The request already carries the API key (`X-API-Key`), so a network sees it: give the client only a
/// network you trust with it. The client never hands a network a request for another origin than its
/// base URL's, and never follows a redirect a network returns.
///
/// ```
/// use store_api::network::{Network, NetworkError, NetworkFuture};
///
/// /// A network whose every connection is refused.
/// #[derive(Debug)]
/// struct Offline;
///
/// impl Network for Offline {
///     fn send(&self, _request: reqwest::Request) -> NetworkFuture<'_> {
///         Box::pin(async { Err(NetworkError::NotConnected("offline".into())) })
///     }
/// }
///
/// # async fn run() {
/// let client = store_api::Client::builder()
///     .base_url("http://127.0.0.1:8080")
///     .store_id("store_alpha")
///     .api_key("csk_example")
///     .network(std::sync::Arc::new(Offline))
///     .build()
///     .unwrap();
/// let error = client.status().await.unwrap_err();
/// assert!(!error.may_have_been_processed());
/// # }
/// ```
pub trait Network: Send + Sync + fmt::Debug {
    /// Sends `request` and returns the answer once its status and headers have arrived.
    fn send(&self, request: reqwest::Request) -> NetworkFuture<'_>;
}

/// Why a [`Network`] could not bring an answer back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NetworkError {
    /// reqwest's own error (the default network).
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    /// No connection could be made: nothing was sent.
    #[error("no connection could be made: {0}")]
    NotConnected(#[source] BoxError),
    /// The exchange broke after the request may have left (a reset, a closed connection): the
    /// service may have processed it.
    #[error("the connection broke: {0}")]
    Broken(#[source] BoxError),
}

/// The default network: reqwest, with redirects turned off (the Store API never redirects, and
/// reqwest would carry `X-API-Key` to whatever host a `Location` names).
#[derive(Debug, Clone)]
pub struct ReqwestNetwork {
    http: reqwest::Client,
}

impl ReqwestNetwork {
    /// A network that sends with `http`, which must have been built with
    /// `redirect(reqwest::redirect::Policy::none())`; the client's builder does so.
    pub(crate) fn new(http: reqwest::Client) -> ReqwestNetwork {
        ReqwestNetwork { http }
    }
}

impl Network for ReqwestNetwork {
    fn send(&self, request: reqwest::Request) -> NetworkFuture<'_> {
        Box::pin(async move { Ok(self.http.execute(request).await?) })
    }
}

/// What the transport itself refuses or gives up on. It travels inside a `reqwest::Error` (the type
/// the generated client's calls fail with, which has no public constructor), as that error's source;
/// [`failure_of`] finds it again when the error is turned into the crate's own.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    /// The network could not connect: nothing was sent.
    #[error("no connection could be made: {0}")]
    NotConnected(#[source] BoxError),
    /// The exchange broke after the request may have left.
    #[error("the connection broke: {0}")]
    Broken(#[source] BoxError),
    /// The attempt's deadline passed after the request was handed to the network.
    #[error("no complete answer within {timeout:?}")]
    Deadline { timeout: Duration },
    /// The answer's body is larger than the client reads.
    #[error("the answer is larger than {limit} bytes")]
    TooLarge { limit: usize },
    /// A redirect, which is never followed.
    #[error("redirect {status} to {}", location.as_deref().unwrap_or("(no Location)"))]
    Redirected {
        status: u16,
        location: Option<String>,
    },
    /// A request for another origin than the base URL's: never sent, the key stays home.
    #[error("a request for another origin ({origin}) than the base URL's was not sent")]
    OffBase { origin: String },
}

impl Failure {
    /// Whether the service may have seen the request.
    pub(crate) fn sent(&self) -> bool {
        match self {
            Failure::NotConnected(_) | Failure::OffBase { .. } => false,
            Failure::Deadline { .. }
            | Failure::Broken(_)
            | Failure::TooLarge { .. }
            | Failure::Redirected { .. } => true,
        }
    }
}

/// `failure` as a `reqwest::Error`, by reading a body that fails with it: reqwest offers no other way
/// to make one, and the generated client's calls can only fail with that type.
pub(crate) async fn into_reqwest_error(failure: Failure) -> reqwest::Error {
    let mut next = Some(failure);
    loop {
        // A body that fails on its first frame cannot be read whole, so this returns the first time.
        let failure = next
            .take()
            .unwrap_or_else(|| Failure::Broken("the answer could not be read".into()));
        let body = reqwest::Body::wrap(Failing(Some(failure)));
        if let Err(error) = reqwest::Response::from(http::Response::new(body))
            .bytes()
            .await
        {
            return error;
        }
    }
}

/// A body whose first frame is an error.
struct Failing(Option<Failure>);

impl http_body::Body for Failing {
    type Data = Bytes;
    type Error = Failure;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Failure>>> {
        Poll::Ready(self.0.take().map(Err))
    }
}

/// The transport's own failure inside `error`, if it carries one.
pub(crate) fn failure_of(error: &reqwest::Error) -> Option<&Failure> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(failure) = current.downcast_ref::<Failure>() {
            return Some(failure);
        }
        source = current.source();
    }
    None
}

/// `response` with a body that fails once more than `limit` bytes arrive or when `deadline` passes
/// before it ends. An answer whose `Content-Length` already exceeds the limit fails at once.
pub(crate) fn guard(
    response: reqwest::Response,
    limit: usize,
    deadline: Instant,
    timeout: Duration,
) -> Result<reqwest::Response, Failure> {
    if response
        .content_length()
        .is_some_and(|length| usize::try_from(length).map_or(true, |length| length > limit))
    {
        return Err(Failure::TooLarge { limit });
    }
    let url = response.url().clone();
    let (mut parts, body) = http::Response::<reqwest::Body>::from(response).into_parts();
    // Keep the URL the answer came from (reqwest keeps it in an extension only its builder can set).
    if let Ok(carrier) = http::Response::builder().url(url).body(()) {
        parts.extensions.extend(carrier.into_parts().0.extensions);
    }
    let guarded = Guarded {
        inner: body,
        read: 0,
        limit,
        deadline: Box::pin(tokio::time::sleep_until(deadline)),
        timeout,
        failed: false,
    };
    Ok(reqwest::Response::from(http::Response::from_parts(
        parts,
        reqwest::Body::wrap(guarded),
    )))
}

/// A body read under a size limit and a deadline.
struct Guarded {
    inner: reqwest::Body,
    read: usize,
    limit: usize,
    deadline: Pin<Box<Sleep>>,
    timeout: Duration,
    /// An error was returned: the body ends there.
    failed: bool,
}

impl http_body::Body for Guarded {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if self.failed {
            return Poll::Ready(None);
        }
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            let Some(frame) = frame else {
                return Poll::Ready(None);
            };
            let frame = match frame {
                Ok(frame) => frame,
                Err(error) => {
                    self.failed = true;
                    return Poll::Ready(Some(Err(error.into())));
                }
            };
            if let Some(data) = frame.data_ref() {
                self.read = self.read.saturating_add(data.len());
                if self.read > self.limit {
                    self.failed = true;
                    let limit = self.limit;
                    return Poll::Ready(Some(Err(Failure::TooLarge { limit }.into())));
                }
            }
            return Poll::Ready(Some(Ok(frame)));
        }
        ready!(self.deadline.as_mut().poll(cx));
        self.failed = true;
        let timeout = self.timeout;
        Poll::Ready(Some(Err(Failure::Deadline { timeout }.into())))
    }

    fn is_end_stream(&self) -> bool {
        self.failed || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
