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
use std::time::Duration;

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
    /// The network refuses this request and always will (a replay that holds no answer for it, a
    /// policy): nothing was sent, and the client does not retry it. The cause becomes the source of
    /// [`Error::Refused`](crate::Error::Refused), where a caller can downcast it to the network's own
    /// error type.
    #[error("the network refused the request: {0}")]
    Refused(#[source] BoxError),
}

/// The default network: reqwest, with redirects turned off (the Store API never redirects, and
/// reqwest would carry `X-API-Key` to whatever host a `Location` names).
#[derive(Debug, Clone)]
pub struct ReqwestNetwork {
    http: reqwest::Client,
}

impl ReqwestNetwork {
    /// A network over a reqwest client of its own that follows no redirect (what a recorder of
    /// traffic or a [`Network`] wrapper sends the real exchanges with).
    ///
    /// ```
    /// let network = store_api::network::ReqwestNetwork::new()?;
    /// # let _ = network;
    /// # Ok::<(), store_api::Error>(())
    /// ```
    pub fn new() -> crate::Result<ReqwestNetwork> {
        crate::install_crypto_provider();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| {
                crate::Error::invalid_argument_from(format!("cannot build the HTTP client: {e}"), e)
            })?;
        Ok(ReqwestNetwork { http })
    }

    /// A network that sends with `http`, which must have been built with
    /// `redirect(reqwest::redirect::Policy::none())`; the client's builder does so.
    pub(crate) fn with_client(http: reqwest::Client) -> ReqwestNetwork {
        ReqwestNetwork { http }
    }
}

impl Network for ReqwestNetwork {
    fn send(&self, request: reqwest::Request) -> NetworkFuture<'_> {
        Box::pin(async move { Ok(self.http.execute(request).await?) })
    }
}

/// What the transport itself refuses or gives up on: the cause it reports
/// (`error::from_failure` makes it the crate's [`Error`](crate::Error)).
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
