//! The client's methods and its builder (the [`Client`] handle itself is in `handle`, below the
//! modules that make calls, so that they and this module, which hands them out, do not import each other).

use std::ffi::OsString;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use store_api_raw::KeyHandle;
use store_api_raw::auth::set_api_key;

use crate::config::{ConfigError, EnvSettings};
use crate::error::{Error, Result};
pub use crate::handle::Client;
use crate::handle::Inner;
use crate::hook::RequestHook;
use crate::limiter::Limiter;
use crate::network::{Network, ReqwestNetwork};
use crate::ratelimit::RateLimiter;
use crate::resources::{Artworks, Catalog, Orders, Products};
use crate::retry::RetryPolicy;
use crate::settings::MAX_DURATION_SETTING;
use crate::store_cache::keeper::Keeper;
use crate::store_cache::{self, StoreCache};
use crate::transport::ClientTransport;
use crate::validate::StoreSnapshot;

/// The path after the host: every Store API 2026-08 route lives under it.
pub(crate) const VERSION_PATH: &str = store_api_raw::contract::VERSION_PREFIX;

/// The longest store-wide pause a 429's `Retry-After` imposes by default: 10 seconds. The service's own
/// bucket refills a token every 500 ms, so a real Retry-After is short; a longer one (a misbehaving proxy,
/// `Retry-After: 86400`) must not park every client of the store. See
/// [`ClientBuilder::max_rate_limit_pause`].
pub const DEFAULT_MAX_RATE_LIMIT_PAUSE: Duration = Duration::from_secs(10);

/// Timeout of one attempt (its connection, its answer and the answer's body, from the moment the rate
/// limiter lets it go) unless [`ClientBuilder::timeout`] sets another.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most bytes of one answer's body the client reads unless
/// [`ClientBuilder::max_response_bytes`] sets another: 8 MiB. The largest answer the service gives, a
/// page of 100 orders or blanks, is well under 1 MiB; an endless or huge body (a misconfigured proxy,
/// a hostile host) fails with [`Error::ResponseTooLarge`] instead of growing memory.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 8 << 20;

/// How long pre-flight validation trusts its copy of the catalog and products before it reads what
/// changed (in the background) unless [`ClientBuilder::cache_ttl`] sets another: 5 minutes.
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(300);

/// The User-Agent header unless [`ClientBuilder::user_agent`] sets another.
pub const DEFAULT_USER_AGENT: &str = concat!("store-api-rust/", env!("CARGO_PKG_VERSION"));

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.base_url)
            .field("store_id", &self.inner.store_id)
            .field("api_key", &"<redacted>")
            .finish()
    }
}

impl Client {
    /// Settings for a new client.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client configured by the environment: `STORE_API_KEY`, `STORE_API_STORE_ID` and
    /// `STORE_API_BASE_URL` ([`ENV_API_KEY`](crate::ENV_API_KEY), [`ENV_STORE_ID`](crate::ENV_STORE_ID),
    /// [`ENV_BASE_URL`](crate::ENV_BASE_URL)), the variables the `store-api` command line reads.
    /// [`ClientBuilder::from_env`] starts a builder from them to adjust other settings.
    ///
    /// A missing or invalid variable is an [`Error::Config`] that names it (never showing the key).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), store_api::Error> {
    /// // STORE_API_KEY=csk_... STORE_API_STORE_ID=store_alpha STORE_API_BASE_URL=https://host
    /// let client = store_api::Client::from_env()?;
    /// let status = client.status().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_env() -> Result<Client> {
        ClientBuilder::from_env()?.build()
    }

    /// The handle this client, its clones and anything built on the handle read the API key from:
    /// [`KeyHandle::rotate`] switches every later request (retries included) to the new key at once.
    /// A request that crossed the rotation in flight and got a 401 for the old key is sent again with
    /// the new one. Pass the handle to `store_api_webhooks::Verifier::from_key_handle` so deliveries are
    /// checked with the same key; see [`ClientBuilder::key_handle`] to share one from the start.
    ///
    /// After rotating, [`Client::status`] confirms the new key: `Ok` when the service accepts it,
    /// [`Error::Unauthorized`] when it does not (the service has not rotated yet, or the key is wrong).
    ///
    /// ```no_run
    /// # async fn run(client: store_api::Client, new_key: String) -> Result<(), store_api::Error> {
    /// // The app shows the new key; the old one stopped working at that moment.
    /// client.key_handle().rotate(new_key);
    /// client.status().await?; // the new key is accepted
    /// # Ok(())
    /// # }
    /// ```
    pub fn key_handle(&self) -> &KeyHandle {
        &self.inner.transport.key
    }

    /// The store this client works for.
    pub fn store_id(&self) -> &str {
        &self.inner.store_id
    }

    /// The base URL, ending with the version segment (`.../store-api/2026-08`).
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// The rate limiter this client shares with its clones (and by default with every client of the
    /// same store and base URL in the process).
    pub fn in_process_limiter(&self) -> &RateLimiter {
        &self.inner.limiter
    }

    /// The limiter every request of this client goes through: the in-process [`RateLimiter`] unless
    /// [`ClientBuilder::limiter`] set another (a shared, cross-process one).
    pub fn limiter(&self) -> &Arc<dyn Limiter> {
        &self.inner.shared_limiter
    }

    /// Reachability and credential check (`GET /status`); each call uses one rate-limit token. It sends
    /// the key the [`key_handle`](Self::key_handle) holds now, so after a rotation it confirms the new
    /// key (an [`Error::Unauthorized`] means the service does not accept it).
    pub async fn status(&self) -> Result<crate::model::StatusResult> {
        let inner = &self.inner;
        let request = crate::operation::built(store_api_raw::requests::get_status(
            &inner.base_url,
            &inner.store_id,
        ))?;
        crate::operation::send(self, request).await
    }

    /// The items of any resource the API lists and reads by id ([`Listed`](crate::Listed)): what
    /// [`catalog`](Self::catalog), [`products`](Self::products), [`artworks`](Self::artworks) and
    /// [`orders`](Self::orders) name, and any list-and-get pair the spec adds, from its generated
    /// requests alone.
    ///
    /// ```no_run
    /// # async fn run(client: store_api::Client) -> Result<(), store_api::Error> {
    /// use store_api::ListOrdersQuery;
    /// use store_api::model::Order;
    ///
    /// let page = client.collection::<Order>().list(&ListOrdersQuery::new().limit(5)).await?;
    /// # let _ = page;
    /// # Ok(())
    /// # }
    /// ```
    pub fn collection<T: crate::Listed>(&self) -> crate::Collection<'_, T> {
        crate::Collection::new(self)
    }

    /// The blanks available to the store.
    pub fn catalog(&self) -> Catalog<'_> {
        Catalog::new(self)
    }

    /// The store's products.
    pub fn products(&self) -> Products<'_> {
        Products::new(self)
    }

    /// The store's artworks.
    pub fn artworks(&self) -> Artworks<'_> {
        Artworks::new(self)
    }

    /// The store's orders, with exactly-once submission.
    pub fn orders(&self) -> Orders<'_> {
        Orders::new(self)
    }

    /// The catalog and products pre-flight validation uses, as one [`StoreSnapshot`]: the copy
    /// [`StoreCache::snapshot`] gives, made into one snapshot (the copy's own base while nothing changed
    /// since it was read whole; else a copy of it, made once per change).
    pub async fn store_snapshot(&self) -> Result<Arc<StoreSnapshot>> {
        Ok(self.store_cache().snapshot().await?.to_snapshot())
    }

    /// The client's copy of the store: how pre-flight validation's catalog and products are read,
    /// refreshed, saved and restored (see [`store_cache`]).
    pub fn store_cache(&self) -> StoreCache<'_> {
        StoreCache::new(self)
    }

    /// Drops the cached catalog and products; the next validation fetches them again
    /// ([`StoreCache::clear`]).
    pub async fn clear_cache(&self) {
        self.store_cache().clear();
    }
}

/// Settings of a [`Client`].
#[derive(Default)]
#[must_use]
pub struct ClientBuilder {
    api_key: Option<KeyHandle>,
    hooks: Vec<Arc<dyn RequestHook>>,
    store_id: Option<String>,
    base_url: Option<String>,
    timeout: Option<Duration>,
    user_agent: Option<String>,
    http: Option<reqwest::ClientBuilder>,
    network: Option<Arc<dyn Network>>,
    max_response_bytes: Option<usize>,
    limiter: Option<RateLimiter>,
    shared_limiter: Option<Arc<dyn Limiter>>,
    retry: Option<RetryPolicy>,
    submit_retry: Option<RetryPolicy>,
    cache_ttl: Option<Duration>,
    reconcile_interval: Option<Duration>,
    foreground_refresh: bool,
    max_pause: Option<Duration>,
    root_certificates: Vec<RootCertificate>,
    allow_insecure_http: bool,
}

/// A trust anchor added with [`ClientBuilder::root_certificate_pem`] or
/// [`ClientBuilder::root_certificate_der`], parsed in [`ClientBuilder::build`].
#[derive(Clone)]
// Without TLS the bytes are never read: `build` refuses root certificates before parsing them.
#[cfg_attr(not(any(feature = "rustls", feature = "native-tls")), allow(dead_code))]
enum RootCertificate {
    Pem(Vec<u8>),
    Der(Vec<u8>),
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base_url", &self.base_url)
            .field("store_id", &self.store_id)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("hooks", &self.hooks.len())
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// The store's API key, exactly as the app shows it (never validated or parsed). The client keeps
    /// it in a new [`KeyHandle`] ([`Client::key_handle`]); replaces an earlier
    /// [`key_handle`](Self::key_handle).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(KeyHandle::new(key));
        self
    }

    /// Reads the API key from `handle` before every request, instead of a fixed key: the client, its
    /// clones and a `store_api_webhooks::Verifier` built on the same handle then follow
    /// [`KeyHandle::rotate`] together. Replaces an earlier [`api_key`](Self::api_key).
    ///
    /// ```
    /// use store_api::{Client, KeyHandle};
    ///
    /// let key = KeyHandle::new("csk_old");
    /// let client = Client::builder()
    ///     .base_url("http://127.0.0.1:8080")
    ///     .store_id("store_alpha")
    ///     .key_handle(key.clone())
    ///     .build()?;
    /// key.rotate("csk_new");
    /// assert_eq!(client.key_handle().current().expose_secret(), "csk_new");
    /// # Ok::<(), store_api::Error>(())
    /// ```
    pub fn key_handle(mut self, handle: KeyHandle) -> Self {
        self.api_key = Some(handle);
        self
    }

    /// Adds a hook called around every attempt of every request (retries and order submissions
    /// included), after the ones added before it. See [`RequestHook`].
    pub fn hook(mut self, hook: Arc<dyn RequestHook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// The store id that matches the key.
    pub fn store_id(mut self, store_id: impl Into<String>) -> Self {
        self.store_id = Some(store_id.into());
        self
    }

    /// The service's address, `{base_url}` in the specification (for example `https://host`), with or
    /// without the `/store-api/2026-08` segment. Required: the specification does not name the host.
    /// For the local emulator, `Emulator::base_url()`.
    ///
    /// An `http://` URL (no TLS: the API key and the orders cross the network in clear text) is
    /// accepted only for a loopback host (`localhost`, `127.0.0.0/8`, `::1`); for any other host
    /// [`build`](Self::build) fails with [`Error::InsecureBaseUrl`] unless
    /// [`allow_insecure_http`](Self::allow_insecure_http) says so.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The most one attempt may take once the rate limiter lets it go (default [`DEFAULT_TIMEOUT`],
    /// 30 s): its connection, its answer and the answer's whole body. The client enforces it itself,
    /// whatever HTTP client or [`network`](Self::network) carries the request.
    ///
    /// A longer timeout than [`MAX_DURATION_SETTING`] (365 days; `Duration::MAX` for "no limit")
    /// counts as that.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The most bytes of one answer's body that are read (default [`DEFAULT_MAX_RESPONSE_BYTES`],
    /// 8 MiB); a larger answer fails with [`Error::ResponseTooLarge`].
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = Some(bytes);
        self
    }

    /// User-Agent header (default [`DEFAULT_USER_AGENT`], `store-api-rust/<version>`).
    pub fn user_agent(mut self, agent: impl Into<String>) -> Self {
        self.user_agent = Some(agent.into());
        self
    }

    /// Builds the HTTP client from a caller-configured `reqwest::ClientBuilder` (proxies, TLS settings,
    /// pool sizes). The client then sets, over what the builder says: no redirects (the Store API never
    /// redirects, and reqwest would carry the `X-API-Key` header to whatever host a `Location` names),
    /// the User-Agent and the root certificates added here. [`timeout`](Self::timeout) is enforced by
    /// the client on top of any timeout of the builder's.
    ///
    /// ```
    /// let client = store_api::Client::builder()
    ///     .base_url("http://127.0.0.1:8080")
    ///     .store_id("store_alpha")
    ///     .api_key("csk_example")
    ///     .http_client_builder(reqwest::Client::builder().pool_max_idle_per_host(4))
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), store_api::Error>(())
    /// ```
    pub fn http_client_builder(mut self, builder: reqwest::ClientBuilder) -> Self {
        self.http = Some(builder);
        self
    }

    /// Sends every request through `network` instead of reqwest: a simulated network in tests, or an
    /// HTTP stack of your own. The client keeps its guarantees over any network (the deadline of each
    /// attempt, the size limit of answers, no redirect followed, no request for another origin than the
    /// base URL's); the network sees the API key in each request's `X-API-Key`. See
    /// [`network::Network`](crate::network::Network).
    pub fn network(mut self, network: Arc<dyn Network>) -> Self {
        self.network = Some(network);
        self
    }

    /// Shares a rate limiter between clients (by default, clients of the same store and base URL in one
    /// process already share one).
    pub fn in_process_limiter(mut self, limiter: RateLimiter) -> Self {
        self.limiter = Some(limiter);
        self
    }

    /// Sends every request through `limiter` instead of the in-process one, for a limit shared by
    /// several processes (`store_api_redis::RedisLimiter`). The in-process limiter (see
    /// [`in_process_limiter`](Self::in_process_limiter)) is then not used by this client's requests.
    pub fn limiter(mut self, limiter: Arc<dyn Limiter>) -> Self {
        self.shared_limiter = Some(limiter);
        self
    }

    /// Retry policy of reads and of requests nothing was processed for (default [`RetryPolicy::default`]).
    /// Its durations are clamped to [`MAX_DURATION_SETTING`] (365 days).
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Retry policy of [`Orders::submit`] (default [`RetryPolicy::submit`]: 10 attempts within 5 minutes,
    /// 250 ms doubling to 10 s). Its durations are clamped to [`MAX_DURATION_SETTING`] (365 days):
    /// `with_max_elapsed(Duration::MAX)` retries for up to a year.
    pub fn submit_retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.submit_retry = Some(policy);
        self
    }

    /// The longest the whole store pauses after one 429, whatever its `Retry-After` says (default
    /// [`DEFAULT_MAX_RATE_LIMIT_PAUSE`], 10 s). The call that got the 429 still honours the full
    /// Retry-After, or returns [`Error::RateLimited`] at once when it exceeds the retry budget.
    ///
    /// A longer pause than [`MAX_DURATION_SETTING`] (365 days; `Duration::MAX` for "no limit") counts
    /// as that.
    pub fn max_rate_limit_pause(mut self, pause: Duration) -> Self {
        self.max_pause = Some(pause);
        self
    }

    /// How long pre-flight validation trusts its copy of the catalog and products before reading what
    /// changed since (default [`DEFAULT_CACHE_TTL`], 5 minutes). The read is incremental (a page per
    /// list and one per 100 changes) and runs in the background unless
    /// [`background_refresh`](Self::background_refresh) is off; see [`store_cache`].
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = Some(ttl);
        self
    }

    /// How often the whole store is read again, in the background, to see removals that an incremental
    /// read cannot (default [`store_cache::DEFAULT_RECONCILE_INTERVAL`], an hour; `Duration::MAX` for
    /// never).
    pub fn reconcile_interval(mut self, interval: Duration) -> Self {
        self.reconcile_interval = Some(interval);
        self
    }

    /// Whether a read of the store that falls due runs in the background while validation uses the copy
    /// it has (on, the default: what a service wants), or before the validation that finds it due (off:
    /// for a short-lived process, such as a command line, that would end before a background read).
    pub fn background_refresh(mut self, background: bool) -> Self {
        self.foreground_refresh = !background;
        self
    }

    /// Lets [`build`](Self::build) accept an `http://` base URL to a host that is not loopback. The API
    /// key travels in every request's `X-API-Key`, and without TLS anyone on the path can read it (and
    /// the orders' names and addresses): allow it only on a network you trust end to end (a test
    /// network, a sidecar proxy that adds TLS). Off by default; loopback hosts (`localhost`,
    /// `127.0.0.0/8`, `::1`) never need it.
    ///
    /// ```
    /// let client = store_api::Client::builder()
    ///     .base_url("http://store-api.test-network:8080")
    ///     .store_id("store_alpha")
    ///     .api_key("csk_example")
    ///     .allow_insecure_http(true)
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), store_api::Error>(())
    /// ```
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.allow_insecure_http = allow;
        self
    }

    /// Trusts the PEM certificate(s) in `pem` (one or a bundle) as root authorities, besides the
    /// platform's: for a private CA or a TLS-terminating proxy. Without the `rustls` or `native-tls`
    /// feature, `build` fails.
    pub fn root_certificate_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.root_certificates
            .push(RootCertificate::Pem(pem.as_ref().to_vec()));
        self
    }

    /// Trusts the DER-encoded certificate `der` as a root authority; see
    /// [`ClientBuilder::root_certificate_pem`].
    pub fn root_certificate_der(mut self, der: impl AsRef<[u8]>) -> Self {
        self.root_certificates
            .push(RootCertificate::Der(der.as_ref().to_vec()));
        self
    }

    /// Builds the client.
    ///
    /// Fails at once, before any request, when a setting is missing or invalid, when the base URL is
    /// `http` to a host that is not loopback ([`Error::InsecureBaseUrl`], unless
    /// [`allow_insecure_http`](Self::allow_insecure_http)), and when the base URL is `https` (or a root
    /// certificate was added) but no TLS feature (`rustls`, `native-tls`) is compiled in. Durations
    /// longer than [`MAX_DURATION_SETTING`] are clamped to it.
    pub fn build(self) -> Result<Client> {
        let api_key = self
            .api_key
            .ok_or_else(|| Error::invalid_argument("an API key is required"))?;
        // Refused here rather than on every request (a rotation to such a key is refused per attempt).
        set_api_key(&mut reqwest::header::HeaderMap::new(), &api_key.current())
            .map_err(|e| Error::invalid_argument(e.to_string()))?;
        let store_id = self
            .store_id
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Error::invalid_argument("a store id is required"))?;
        let base_url = normalize_base_url(
            &self
                .base_url
                .ok_or_else(|| Error::invalid_argument("a base URL is required"))?,
        )?;
        let parsed = url::Url::parse(&base_url)
            .map_err(|e| Error::invalid_argument_from(format!("invalid base URL: {e}"), e))?;
        if !self.allow_insecure_http {
            refuse_clear_text(&parsed)?;
        }
        require_tls(
            store_api_raw::tls::backend(),
            &base_url,
            !self.root_certificates.is_empty(),
        )?;
        // Clamped: every deadline is an instant computed from these, and `Duration::MAX` (a user's
        // "no limit") cannot be added to one.
        let timeout = self
            .timeout
            .unwrap_or(DEFAULT_TIMEOUT)
            .min(MAX_DURATION_SETTING);
        let http = self
            .http
            .unwrap_or_else(|| reqwest::Client::builder().connect_timeout(timeout))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(
                self.user_agent
                    .unwrap_or_else(|| DEFAULT_USER_AGENT.to_owned()),
            );
        let http = with_root_certificates(http, &self.root_certificates)?
            .build()
            .map_err(|e| {
                Error::invalid_argument_from(format!("cannot build the HTTP client: {e}"), e)
            })?;
        let network = self
            .network
            .unwrap_or_else(|| Arc::new(ReqwestNetwork::with_client(http)));
        let origin = parsed.origin();
        let limiter = self
            .limiter
            .unwrap_or_else(|| RateLimiter::for_store(&base_url, &store_id));
        let shared_limiter: Arc<dyn Limiter> = match self.shared_limiter {
            Some(shared) => shared,
            None => Arc::new(limiter.clone()),
        };
        let transport = Arc::new(ClientTransport {
            limiter: shared_limiter.clone(),
            policy: self.retry.unwrap_or_default().clamped(),
            max_pause: self
                .max_pause
                .unwrap_or(DEFAULT_MAX_RATE_LIMIT_PAUSE)
                .min(MAX_DURATION_SETTING),
            key: api_key.clone(),
            hooks: self.hooks,
            network,
            timeout,
            max_response_bytes: self
                .max_response_bytes
                .unwrap_or(DEFAULT_MAX_RESPONSE_BYTES),
            origin,
            #[cfg(feature = "otel-metrics")]
            server: crate::telemetry::metrics::Server::of(&parsed),
        });
        let submit_policy = self
            .submit_retry
            .unwrap_or_else(RetryPolicy::submit)
            .clamped();
        Ok(Client {
            inner: Arc::new(Inner {
                store_id,
                base_url,
                submit_policy,
                cache: Keeper::new(store_cache::Settings {
                    ttl: self.cache_ttl.unwrap_or(DEFAULT_CACHE_TTL),
                    reconcile_every: self
                        .reconcile_interval
                        .unwrap_or(store_cache::DEFAULT_RECONCILE_INTERVAL),
                    background: !self.foreground_refresh,
                    reconcile_pause: store_cache::RECONCILE_PAGE_PAUSE,
                }),
                limiter,
                transport,
                shared_limiter,
            }),
        })
    }
}

/// Fails when `url` is `http` to a host that is not loopback: the key would cross the network in
/// clear text.
fn refuse_clear_text(url: &url::Url) -> Result<()> {
    if url.scheme() != "http" {
        return Ok(());
    }
    let loopback = match url.host() {
        Some(url::Host::Domain(name)) => {
            name.trim_end_matches('.').eq_ignore_ascii_case("localhost")
        }
        Some(url::Host::Ipv4(address)) => address.is_loopback(),
        Some(url::Host::Ipv6(address)) => {
            address.is_loopback() || address.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        None => false,
    };
    if loopback {
        return Ok(());
    }
    Err(Error::InsecureBaseUrl {
        host: url.host_str().unwrap_or_default().to_owned(),
    })
}

/// Fails when HTTPS is asked for (an `https` base URL, or root certificates) and this build has no TLS
/// (`backend` is `store_api_raw::tls::backend()`, a parameter so both cases are tested in every build).
fn require_tls(backend: Option<&str>, base_url: &str, root_certificates: bool) -> Result<()> {
    if backend.is_some() {
        return Ok(());
    }
    if base_url.starts_with("https:") || root_certificates {
        return Err(Error::invalid_argument(
            "HTTPS needs TLS, and store-api was built without it: turn on its `rustls` feature \
             (default) or `native-tls`, e.g. `cargo add store-api --features rustls`",
        ));
    }
    Ok(())
}

/// Adds the trust anchors to `builder` (after installing the rustls crypto provider, which reqwest needs
/// before it builds a client; see `store_api_raw::tls`).
#[cfg(any(feature = "rustls", feature = "native-tls"))]
fn with_root_certificates(
    mut builder: reqwest::ClientBuilder,
    certificates: &[RootCertificate],
) -> Result<reqwest::ClientBuilder> {
    store_api_raw::tls::install_crypto_provider();
    for certificate in certificates {
        let parsed = match certificate {
            RootCertificate::Pem(pem) => reqwest::Certificate::from_pem_bundle(pem),
            RootCertificate::Der(der) => reqwest::Certificate::from_der(der).map(|c| vec![c]),
        }
        .map_err(|e| Error::invalid_argument_from(format!("invalid root certificate: {e}"), e))?;
        if parsed.is_empty() {
            return Err(Error::invalid_argument(
                "invalid root certificate: no certificate in the PEM text",
            ));
        }
        for certificate in parsed {
            builder = builder.add_root_certificate(certificate);
        }
    }
    Ok(builder)
}

/// Without TLS there is nothing to add (`require_tls` has refused root certificates already).
#[cfg(not(any(feature = "rustls", feature = "native-tls")))]
fn with_root_certificates(
    builder: reqwest::ClientBuilder,
    _certificates: &[RootCertificate],
) -> Result<reqwest::ClientBuilder> {
    Ok(builder)
}

impl ClientBuilder {
    /// A builder with the API key, store id and base URL read from [`ENV_API_KEY`](crate::ENV_API_KEY) (`STORE_API_KEY`),
    /// [`ENV_STORE_ID`](crate::ENV_STORE_ID) (`STORE_API_STORE_ID`) and [`ENV_BASE_URL`](crate::ENV_BASE_URL) (`STORE_API_BASE_URL`), the
    /// variables the `store-api` command line reads; anything can be adjusted before
    /// [`build`](Self::build).
    ///
    /// Fails with [`Error::Config`](crate::Error::Config) naming the first variable that is missing
    /// (unset or empty) or invalid (not Unicode, a key that cannot be sent in a header, a base URL that
    /// is not an http(s) URL). An `http` base URL to a host that is not loopback is read here but
    /// refused by [`build`](Self::build) unless [`allow_insecure_http`](Self::allow_insecure_http).
    ///
    /// ```no_run
    /// # fn run() -> Result<(), store_api::Error> {
    /// let client = store_api::ClientBuilder::from_env()?
    ///     .timeout(std::time::Duration::from_secs(10))
    ///     .build()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var_os(name))
    }

    /// [`from_env`](Self::from_env) over any source of variables (tests do not touch the process's
    /// environment, which other threads read).
    pub(crate) fn from_lookup(
        lookup: impl Fn(&str) -> Option<OsString>,
    ) -> Result<Self, ConfigError> {
        let settings = EnvSettings::read(lookup, |url| {
            normalize_base_url(url)
                .map(drop)
                .map_err(|error| match error {
                    Error::InvalidArgument {
                        message: reason, ..
                    } => reason,
                    other => other.to_string(),
                })
        })?;
        Ok(Self::default()
            .api_key(settings.api_key)
            .store_id(settings.store_id)
            .base_url(settings.base_url))
    }
}

/// Accepts `https://host`, `https://host/`, `https://host/store-api/2026-08[/]`.
pub(crate) fn normalize_base_url(url: &str) -> Result<String> {
    let trimmed = url.trim().trim_end_matches('/');
    let parsed = url::Url::parse(trimmed)
        .map_err(|e| Error::invalid_argument_from(format!("invalid base URL: {e}"), e))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::invalid_argument(
            "the base URL must be http or https",
        ));
    }
    if trimmed.ends_with(VERSION_PATH) {
        Ok(trimmed.to_owned())
    } else {
        Ok(format!("{trimmed}{VERSION_PATH}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::later;

    #[test]
    fn base_urls_are_normalized() {
        for input in [
            "http://h:1",
            "http://h:1/",
            "http://h:1/store-api/2026-08",
            "http://h:1/store-api/2026-08/",
        ] {
            assert_eq!(
                normalize_base_url(input).unwrap(),
                "http://h:1/store-api/2026-08"
            );
        }
        assert!(normalize_base_url("ftp://h").is_err());
        assert!(normalize_base_url("not a url").is_err());
    }

    #[test]
    fn the_key_never_shows_in_debug() {
        let key = "csk_0123456789abcdef0123456789abcdef";
        let builder = Client::builder()
            .api_key(key)
            .store_id("s")
            .base_url("http://127.0.0.1:1");
        assert!(!format!("{builder:?}").contains("0123456789"));
        let client = builder.build().unwrap();
        assert!(!format!("{client:?}").contains("0123456789"));
    }

    #[test]
    fn https_needs_a_tls_feature_and_says_which() {
        let result = Client::builder()
            .api_key("k")
            .store_id("s")
            .base_url("https://127.0.0.1:1")
            .build();
        if cfg!(any(feature = "rustls", feature = "native-tls")) {
            assert!(result.is_ok());
        } else {
            let error = result.unwrap_err().to_string();
            assert!(error.contains("`rustls` feature"), "{error}");
        }
    }

    #[test]
    fn without_tls_https_and_root_certificates_are_refused_naming_the_feature() {
        let https = "https://h/store-api/2026-08";
        let http = "http://h/store-api/2026-08";
        for (url, roots) in [(https, false), (http, true)] {
            let error = require_tls(None, url, roots).unwrap_err().to_string();
            assert!(error.contains("`rustls` feature"), "{error}");
            assert!(error.contains("native-tls"), "{error}");
        }
        assert!(require_tls(None, http, false).is_ok());
        assert!(require_tls(Some("rustls"), https, true).is_ok());
    }

    #[test]
    fn a_bad_root_certificate_is_refused_at_build() {
        let result = Client::builder()
            .api_key("k")
            .store_id("s")
            .base_url("https://127.0.0.1:1")
            .root_certificate_pem("not a certificate")
            .build();
        assert!(matches!(result, Err(Error::InvalidArgument { .. })));
    }

    /// An unparsable base URL is refused with the URL parser's error as the source, not only its text.
    #[test]
    fn an_invalid_base_url_keeps_the_parser_error_as_its_source() {
        let error = match Client::builder()
            .api_key("k")
            .store_id("s")
            .base_url("http://[::1")
            .build()
        {
            Err(error) => error,
            Ok(_) => panic!("an unparsable base URL was accepted"),
        };
        assert!(
            error
                .to_string()
                .starts_with("invalid argument: invalid base URL: ")
        );
        let source = std::error::Error::source(&error).expect("the parser's error as the source");
        assert_eq!(source.to_string(), "invalid IPv6 address");
    }

    fn build_at(url: &str, allow_insecure_http: bool) -> Result<Client> {
        Client::builder()
            .api_key("k")
            .store_id("s")
            .base_url(url)
            .allow_insecure_http(allow_insecure_http)
            .build()
    }

    // Issue 29, defect 9: an `http://` base URL to any host sent the key in clear text.
    #[test]
    fn http_is_refused_for_a_host_that_is_not_loopback_unless_allowed() {
        let loopback = [
            "http://127.0.0.1:8080",
            "http://127.8.9.10",
            "http://127.1:1",
            "http://[::1]:8080",
            "http://[::ffff:127.0.0.1]:8080",
            "http://localhost:8080",
            "http://LOCALHOST.:8080/store-api/2026-08",
        ];
        for url in loopback {
            assert!(build_at(url, false).is_ok(), "{url}");
        }
        let remote = [
            ("http://api.example.com", "api.example.com"),
            ("http://10.0.0.5:8080", "10.0.0.5"),
            ("http://0.0.0.0:8080", "0.0.0.0"),
            ("http://[2001:db8::1]", "[2001:db8::1]"),
            ("http://localhost.example.com", "localhost.example.com"),
            ("http://128.0.0.1", "128.0.0.1"),
        ];
        for (url, expected) in remote {
            let error = build_at(url, false).unwrap_err();
            let Error::InsecureBaseUrl { host } = &error else {
                panic!("{url}: {error:?}");
            };
            assert_eq!(host, expected);
            let text = error.to_string();
            assert!(text.starts_with("base_url: "), "{text}");
            assert!(text.contains("allow_insecure_http"), "{text}");
            assert!(build_at(url, true).is_ok(), "{url}");
        }
        if cfg!(any(feature = "rustls", feature = "native-tls")) {
            assert!(build_at("https://api.example.com", false).is_ok());
        }
    }

    // Issue 29, defect 8: `Duration::MAX` (a "no limit") is kept as the longest setting, so no
    // deadline computed from it overflows the clock.
    #[test]
    fn duration_settings_are_clamped_at_build() {
        let client = Client::builder()
            .api_key("k")
            .store_id("s")
            .base_url("http://127.0.0.1:1")
            .timeout(Duration::MAX)
            .max_rate_limit_pause(Duration::MAX)
            .retry_policy(RetryPolicy::default().with_max_elapsed(Duration::MAX))
            .submit_retry_policy(
                RetryPolicy::submit()
                    .with_max_elapsed(Duration::MAX)
                    .with_base_delay(Duration::MAX),
            )
            .build()
            .unwrap();
        let inner = &client.inner;
        assert_eq!(inner.transport.timeout, MAX_DURATION_SETTING);
        assert_eq!(inner.transport.max_pause, MAX_DURATION_SETTING);
        assert_eq!(inner.transport.policy.max_elapsed, MAX_DURATION_SETTING);
        assert_eq!(inner.submit_policy.max_elapsed, MAX_DURATION_SETTING);
        assert_eq!(inner.submit_policy.base_delay, MAX_DURATION_SETTING);
        let now = tokio::time::Instant::now();
        assert_eq!(later(now, Duration::MAX), now + MAX_DURATION_SETTING);
        assert_eq!(
            later(now, Duration::from_secs(1)),
            now + Duration::from_secs(1)
        );
    }

    #[test]
    fn clients_are_send_and_sync() {
        fn check<T: Send + Sync + Clone>() {}
        check::<Client>();
    }
}

/// `from_env` over a map of variables: which it reads, and how it names the one that is missing or wrong.
#[cfg(test)]
mod from_env_tests {
    use std::collections::HashMap;

    use super::*;
    use crate::config::{ENV_API_KEY, ENV_BASE_URL, ENV_STORE_ID};

    fn from(vars: &[(&str, &str)]) -> Result<ClientBuilder, ConfigError> {
        let vars: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        ClientBuilder::from_lookup(|name| vars.get(name).cloned())
    }

    const KEY: &str = "csk_0123456789abcdef0123456789abcdef";

    #[test]
    fn every_variable_is_read_and_the_client_builds() {
        let client = from(&[
            (ENV_API_KEY, KEY),
            (ENV_STORE_ID, "store_alpha"),
            (ENV_BASE_URL, "http://127.0.0.1:1"),
        ])
        .unwrap()
        .build()
        .unwrap();
        assert_eq!(client.store_id(), "store_alpha");
        assert_eq!(client.base_url(), "http://127.0.0.1:1/store-api/2026-08");
        assert_eq!(client.key_handle().current().expose_secret(), KEY);
    }

    #[test]
    fn errors_name_the_variable_and_never_show_the_key() {
        let cases: [(&[(&str, &str)], &str); 5] = [
            (&[], ENV_API_KEY),
            (&[(ENV_API_KEY, KEY)], ENV_STORE_ID),
            (&[(ENV_API_KEY, KEY), (ENV_STORE_ID, "")], ENV_STORE_ID),
            (&[(ENV_API_KEY, KEY), (ENV_STORE_ID, "s")], ENV_BASE_URL),
            (
                &[
                    (ENV_API_KEY, KEY),
                    (ENV_STORE_ID, "s"),
                    (ENV_BASE_URL, "ftp://h"),
                ],
                ENV_BASE_URL,
            ),
        ];
        for (vars, variable) in cases {
            let error = from(vars).unwrap_err();
            let text = Error::from(error.clone()).to_string();
            assert!(text.contains(variable), "{text}");
            assert!(!text.contains("0123456789"), "{text}");
        }
        let bad_key = "csk_0123456789\nabcdef";
        let error = from(&[(ENV_API_KEY, bad_key)]).unwrap_err();
        assert!(matches!(
            error,
            ConfigError::Invalid {
                variable: ENV_API_KEY,
                ..
            }
        ));
        assert!(!error.to_string().contains("0123456789"), "{error}");
    }
}
