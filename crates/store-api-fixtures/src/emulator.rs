//! The in-process handle: start on 127.0.0.1, read the seeded credentials, drive the control operations
//! with types, shut down on drop.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use store_api_raw::types;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::artwork::{
    Downloader, FakeHosts, FakeResource, FetchLimits, SAMPLE_IMAGE_URL, SAMPLE_PNG,
};
use crate::clock::Clock;
use crate::control::{self, StoreCredentials};
use crate::deviation::{Deviation, Deviations};
use crate::error::ApiError;
use crate::faults::Fault;
use crate::logs::{Delivery, RequestRecord};
use crate::orders::AppAction;
use crate::ratelimit::StoreLimiter;
use crate::seed::Seed;
use crate::server;
use crate::state::{Config, DEFAULT_IMAGE_BYTES_CAP, Shared, State};

/// Why the emulator could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmulatorError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// The state file exists but could not be loaded, or it exists and the emulator is deterministic
    /// (its runs start from the seed).
    #[error("{0}")]
    State(String),
    /// A non-loopback listen address without [`EmulatorBuilder::allow_remote`].
    #[error(
        "refusing to listen on {addr}: the control endpoints list every store's API key; use a loopback address, or allow remote access explicitly (--allow-remote)"
    )]
    RemoteNotAllowed {
        /// The address.
        addr: SocketAddr,
    },
}

/// A control operation was refused (unknown store or order, a move the order's state does not allow).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (status {status})")]
#[non_exhaustive]
pub struct ControlError {
    /// The HTTP status the control endpoint answers with.
    pub status: u16,
    /// What was wrong.
    pub message: String,
}

impl From<ApiError> for ControlError {
    fn from(error: ApiError) -> Self {
        let message = match error.body().message {
            types::ErrorMessage::String(text) => text,
            types::ErrorMessage::Array(list) => list.join("; "),
        };
        ControlError {
            status: error.status().as_u16(),
            message,
        }
    }
}

/// How long changes wait at most before the state file is written.
pub const DEFAULT_SAVE_INTERVAL: Duration = Duration::from_millis(200);

/// Settings of an emulator to start.
#[derive(Debug)]
#[must_use]
pub struct EmulatorBuilder {
    listen: SocketAddr,
    seed: Option<Seed>,
    rate_limit: bool,
    webhook_backoff: Duration,
    auto_advance: Option<Duration>,
    state_file: Option<PathBuf>,
    fetch_limits: FetchLimits,
    network_downloads: bool,
    allow_remote: bool,
    allow_remote_webhooks: bool,
    save_interval: Duration,
    deterministic: Option<u64>,
    image_bytes_cap: usize,
    deviations: Deviations,
    sample_artwork: bool,
}

impl Default for EmulatorBuilder {
    fn default() -> Self {
        EmulatorBuilder {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            seed: None,
            rate_limit: true,
            webhook_backoff: Duration::from_secs(1),
            auto_advance: None,
            state_file: None,
            fetch_limits: FetchLimits::default(),
            network_downloads: true,
            allow_remote: false,
            allow_remote_webhooks: false,
            save_interval: DEFAULT_SAVE_INTERVAL,
            deterministic: None,
            image_bytes_cap: DEFAULT_IMAGE_BYTES_CAP,
            deviations: Deviations::default(),
            sample_artwork: false,
        }
    }
}

impl EmulatorBuilder {
    /// Address to listen on (default `127.0.0.1:0`, a free port).
    pub fn listen(mut self, addr: SocketAddr) -> Self {
        self.listen = addr;
        self
    }

    /// Data to start from instead of the built-in seed.
    pub fn seed(mut self, seed: Seed) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Turns the per-store rate limit (burst 10, then 2/s) on or off (default on).
    pub fn rate_limit(mut self, enabled: bool) -> Self {
        self.rate_limit = enabled;
        self
    }

    /// Wait before the second webhook attempt, doubled for each further one (default 1 s).
    pub fn webhook_backoff(mut self, base: Duration) -> Self {
        self.webhook_backoff = base;
        self
    }

    /// Moves every movable order one rung up the ladder each `period` (default off).
    pub fn auto_advance(mut self, period: Duration) -> Self {
        self.auto_advance = Some(period);
        self
    }

    /// Loads the state from `path` on start when it exists, writes it there after changes (at most
    /// once per [`save_interval`](Self::save_interval)) and on shutdown; every write goes to a
    /// temporary file, synced, then renamed over the old one, and the folder is synced.
    pub fn state_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.state_file = Some(path.into());
        self
    }

    /// How long changes may wait before the state file is written (default
    /// [`DEFAULT_SAVE_INTERVAL`]): what a crash can lose at most.
    pub fn save_interval(mut self, interval: Duration) -> Self {
        self.save_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Timeout and size cap of artwork downloads (default 30 s and 50 MiB).
    pub fn fetch_limits(mut self, limits: FetchLimits) -> Self {
        self.fetch_limits = limits;
        self
    }

    /// Whether URLs not registered as fake hosts are downloaded from the network (default on). Off, they
    /// fail as a download failure; the emulator then never leaves the machine.
    pub fn network_downloads(mut self, enabled: bool) -> Self {
        self.network_downloads = enabled;
        self
    }

    /// Serves the sample artwork [`SAMPLE_PNG`](crate::artwork::SAMPLE_PNG) at
    /// [`SAMPLE_IMAGE_URL`](crate::artwork::SAMPLE_IMAGE_URL) from the start (default off; the
    /// `store-api-emulator` server and the `store-api` command line turn it on). It is one entry of
    /// [`Emulator::fake_hosts`]: `PUT /_emulator/artwork-hosts`, which replaces them all, removes it
    /// unless the new map holds it too.
    pub fn sample_artwork(mut self, enabled: bool) -> Self {
        self.sample_artwork = enabled;
        self
    }

    /// Allows a non-loopback [`listen`](Self::listen) address and control requests for any `Host`
    /// (default off). Off, the emulator refuses to bind anything but loopback, and its control endpoints
    /// (which list every store's key) answer 403 to a request whose `Host` is not loopback, so a web page
    /// cannot reach them through DNS rebinding.
    pub fn allow_remote(mut self, allowed: bool) -> Self {
        self.allow_remote = allowed;
        self
    }

    /// Allows webhook URLs on non-loopback hosts (default off: only `127.0.0.0/8`, `::1` and
    /// `localhost`), so the emulator cannot be used to probe other machines and read back the outcome.
    pub fn allow_remote_webhooks(mut self, allowed: bool) -> Self {
        self.allow_remote_webhooks = allowed;
        self
    }

    /// Deterministic mode: ids and rotated keys come from a sequence seeded by `seed`, and the clock
    /// stands at [`DETERMINISTIC_START`](crate::DETERMINISTIC_START) until
    /// [`Emulator::advance`] moves it. Every timestamp, the rate limit, webhook retry backoff,
    /// auto-advance and log retention follow that clock, so two runs of one scenario answer (and
    /// deliver) byte for byte alike. Default off: the real clock and random ids.
    ///
    /// A user's snapshot test of their own code, without redactions:
    ///
    /// ```no_run
    /// use store_api_fixtures::Emulator;
    ///
    /// // The function under test: the user's own code, calling the Store API (with any client; the
    /// // emulator hands out its base URL and each store's id and key).
    /// async fn store_status(base_url: &str, store_id: &str, key: &str) -> Result<String, reqwest::Error> {
    ///     let url = format!("{base_url}/stores/{store_id}/status");
    ///     reqwest::Client::new().get(url).header("X-API-Key", key).send().await?.text().await
    /// }
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let emu = Emulator::builder().deterministic(42).start().await?;
    /// let store = emu.store("store_alpha").ok_or("no such store")?;
    /// let outcome = store_status(&emu.base_url(), &store.id, &store.api_key).await?;
    /// // Ids and timestamps are the same on every run: the snapshot needs no redactions.
    /// insta::assert_snapshot!(outcome);
    /// # Ok(())
    /// # }
    /// ```
    pub fn deterministic(mut self, seed: u64) -> Self {
        self.deterministic = Some(seed);
        self
    }

    /// Total bytes of artwork images kept (default [`DEFAULT_IMAGE_BYTES_CAP`], 256 MiB); beyond
    /// it the oldest images are evicted and their URLs answer 404.
    pub fn image_bytes_cap(mut self, bytes: usize) -> Self {
        self.image_bytes_cap = bytes;
        self
    }

    /// Makes the emulator differ from the spec on one assumption (`deviation`; call again for several):
    /// how a probe of the spec's assumptions, such as `store_api_conformance::probe`, is shown to notice.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use store_api_fixtures::{Deviation, Emulator};
    ///
    /// let emu = Emulator::builder().deviate(Deviation::ResetAsUnixTime).start().await?;
    /// // X-RateLimit-Reset now counts like GitHub's: a Unix time, not seconds to wait.
    /// # Ok(())
    /// # }
    /// ```
    pub fn deviate(mut self, deviation: Deviation) -> Self {
        self.deviations = self.deviations.with(deviation);
        self
    }

    /// Binds, loads the state and starts serving. Must be called inside a tokio runtime.
    pub async fn start(self) -> Result<Emulator, EmulatorError> {
        if !self.listen.ip().is_loopback() && !self.allow_remote {
            return Err(EmulatorError::RemoteNotAllowed { addr: self.listen });
        }
        let clock = match self.deterministic {
            Some(seed) => Clock::deterministic(seed),
            None => Clock::real(),
        };
        if let Some(path) = &self.state_file
            && clock.is_deterministic()
            && path.exists()
        {
            // The seeded id sequence restarts with each run: ids of a loaded state could repeat.
            return Err(EmulatorError::State(format!(
                "a deterministic emulator starts from its seed and cannot load the state file {}; remove it or drop --deterministic",
                path.display()
            )));
        }
        let listener = tokio::net::TcpListener::bind(self.listen)
            .await
            .map_err(|source| EmulatorError::Bind {
                addr: self.listen,
                source,
            })?;
        let addr = listener
            .local_addr()
            .map_err(|source| EmulatorError::Bind {
                addr: self.listen,
                source,
            })?;
        let origin = format!("http://{addr}");
        let mut state = match &self.state_file {
            Some(path) if path.exists() => State::load(path).map_err(EmulatorError::State)?,
            _ => self.seed.map_or_else(State::builtin, State::from_seed),
        };
        // A saved state may come from an emulator that listened on another port.
        state.serve_images_from(&origin);
        state.clock = clock.clone();
        let fake = FakeHosts::new();
        if self.sample_artwork {
            // A fixed https URL and a PNG: refused only if the registry's rules changed under them.
            if let Err(error) = fake.insert(SAMPLE_IMAGE_URL, FakeResource::image(SAMPLE_PNG)) {
                tracing::warn!("the sample artwork is not served: {error}");
            }
        }
        let downloader = if self.network_downloads {
            Downloader::with_network(fake, self.fetch_limits)
        } else {
            Downloader::offline(fake, self.fetch_limits)
        };
        // Under `rustls` (unified into this build by any crate that turns it on) reqwest needs a crypto
        // provider installed before it builds a client (the webhook deliveries', the downloader's).
        store_api_raw::tls::install_crypto_provider();
        let limiter = self.rate_limit.then(|| StoreLimiter::new(clock.clone()));
        let config = Config {
            webhook_backoff: self.webhook_backoff,
            allow_remote: self.allow_remote,
            allow_remote_webhooks: self.allow_remote_webhooks,
            image_bytes_cap: self.image_bytes_cap,
            deviations: self.deviations,
        };
        let shared = Arc::new(Shared::new(
            state, clock, limiter, downloader, origin, config,
        ));
        let (stop, stopped) = oneshot::channel::<()>();
        let app = server::router(shared.clone());
        let in_process = app.clone();
        let state_file = self.state_file.clone();
        let saver = shared.clone();
        let task = tokio::spawn(async move {
            server::connection::serve(listener, app, async {
                let _ = stopped.await;
            })
            .await;
            if let Some(path) = state_file
                && let Err(error) = saver.read().save(&path)
            {
                tracing::error!(%error, "could not save the emulator state");
            }
        });
        let ticker = self.auto_advance.map(|period| {
            let shared = shared.clone();
            tokio::spawn(auto_advance(shared, period))
        });
        let saver = self.state_file.clone().map(|path| {
            let shared = shared.clone();
            tokio::spawn(save_on_change(shared, path, self.save_interval))
        });
        tracing::info!(%addr, "store-api-emulator listening");
        Ok(Emulator {
            addr,
            app: in_process,
            shared,
            stop: Some(stop),
            task: Some(task),
            ticker,
            saver,
        })
    }
}

/// A running emulator on 127.0.0.1. Dropping it shuts the server down.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let emu = store_api_fixtures::Emulator::start().await?;
/// let store = &emu.stores()[0];
/// println!("{} as {} with key {}", emu.base_url(), store.id, store.api_key);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Emulator {
    addr: SocketAddr,
    /// The same routes the server serves, for [`Emulator::answer`].
    app: axum::Router,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    ticker: Option<JoinHandle<()>>,
    saver: Option<JoinHandle<()>>,
}

/// Advances every movable order each `period`: of real time as before, or of emulator time in
/// deterministic mode (an [`Emulator::advance`] across several periods moves them several rungs).
async fn auto_advance(shared: Arc<Shared>, period: Duration) {
    if shared.clock.is_deterministic() {
        let mut next = shared.clock.elapsed();
        loop {
            next = next.saturating_add(period);
            shared.clock.sleep_until(next).await;
            control::advance_all(&shared);
        }
    }
    let mut interval = tokio::time::interval(period);
    interval.tick().await;
    loop {
        interval.tick().await;
        control::advance_all(&shared);
    }
}

/// Writes the state file at most once per `interval`, and only after a change: a crash (even
/// `kill -9`) then loses at most the last interval's writes.
async fn save_on_change(shared: Arc<Shared>, path: PathBuf, interval: Duration) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if !shared.take_changed() {
            continue;
        }
        let (shared, path) = (shared.clone(), path.clone());
        // File I/O under the state lock: off the async workers.
        let saved = tokio::task::spawn_blocking(move || shared.read().save(&path)).await;
        if let Ok(Err(error)) = saved {
            tracing::error!(%error, "could not save the emulator state");
        }
    }
}

impl Emulator {
    /// Starts an emulator with the built-in seed and the real rate limit on a free loopback port.
    pub async fn start() -> Result<Emulator, EmulatorError> {
        Emulator::builder().start().await
    }

    /// Settings for an emulator to start.
    pub fn builder() -> EmulatorBuilder {
        EmulatorBuilder::default()
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/store-api/2026-08`: the base URL of the Store API (clients append
    /// `/stores/{storeId}/...`).
    ///
    /// With [`Emulator::store`]'s credentials it is all a client needs. A `store_api::Client` of a
    /// store (this crate does not depend on the client):
    ///
    /// ```text
    /// let store = emu.store("store_alpha").expect("a seeded store");
    /// let client = store_api::Client::builder()
    ///     .base_url(emu.base_url())
    ///     .store_id(&store.id)
    ///     .api_key(store.api_key)
    ///     .allow_insecure_http(true) // plain HTTP; needed only when bound beyond loopback (`allow_remote`)
    ///     .build()?;
    /// ```
    ///
    /// The client keeps the service's rate limit (two requests a second after a burst of ten); when
    /// [`Emulator::rate_limited`] is false, a relaxed limiter
    /// (`.in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))`) keeps a test
    /// from waiting for nothing.
    pub fn base_url(&self) -> String {
        format!("{}{}", self.shared.origin, server::API_PREFIX)
    }

    /// `http://127.0.0.1:PORT`: where the control endpoints live (under `/_emulator`).
    pub fn origin(&self) -> &str {
        &self.shared.origin
    }

    /// Every store with its current key and whether it is active.
    pub fn stores(&self) -> Vec<StoreCredentials> {
        control::stores(&self.shared)
    }

    /// One store's credentials.
    pub fn store(&self, store_id: &str) -> Option<StoreCredentials> {
        self.stores().into_iter().find(|s| s.id == store_id)
    }

    /// Whether the emulator holds stores to the service's rate limit
    /// ([`EmulatorBuilder::rate_limit`]). A client's own limiter can be relaxed when it is off, so a
    /// test is not held to two requests a second.
    pub fn rate_limited(&self) -> bool {
        self.shared.limiter.is_some()
    }

    /// The first active store (a convenience for tests and demos).
    pub fn active_store(&self) -> Option<StoreCredentials> {
        self.stores().into_iter().find(|s| s.active)
    }

    /// Rotates a store's key: the old key gives 401 at once and webhook signatures use the new one.
    pub fn rotate_key(&self, store_id: &str) -> Result<String, ControlError> {
        Ok(control::rotate_key(&self.shared, store_id)?)
    }

    /// Activates or deactivates a store.
    pub fn set_active(&self, store_id: &str, active: bool) -> Result<(), ControlError> {
        Ok(control::set_active(&self.shared, store_id, active)?)
    }

    /// Replaces the store's webhook registrations (topic → URL).
    pub fn set_webhooks(
        &self,
        store_id: &str,
        urls: BTreeMap<String, String>,
    ) -> Result<(), ControlError> {
        Ok(control::set_webhooks(&self.shared, store_id, urls)?)
    }

    /// Creates an order as the app does (no key, no rate limit, the same rules as `POST /orders`);
    /// emits `orders_create`.
    pub fn create_order_in_app(
        &self,
        store_id: &str,
        request: types::CreateOrderRequest,
    ) -> Result<types::Order, ControlError> {
        Ok(control::create_order_in_app(
            &self.shared,
            store_id,
            request,
        )?)
    }

    /// Replaces an order's line items as the app does (checked by the same rules as a new order's,
    /// priced again); emits `orders_update`. Refused (409) once production started or the order closed.
    pub fn edit_line_items(
        &self,
        store_id: &str,
        order_id: &str,
        line_items: Vec<types::LineItemInput>,
    ) -> Result<types::Order, ControlError> {
        Ok(control::edit_line_items(
            &self.shared,
            store_id,
            order_id,
            line_items,
        )?)
    }

    /// Queues a fault for the next matching requests (see [`Fault`](crate::Fault)); refused when the
    /// operation is unknown, the status is not an error status or the count is zero.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use store_api_fixtures::{Emulator, Fault, FaultKind};
    ///
    /// let emu = Emulator::start().await?;
    /// // The next order creation is processed, but its answer never arrives.
    /// emu.inject_fault(Fault::new(FaultKind::DropAfterCommit).operation("create_order"))?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn inject_fault(&self, fault: Fault) -> Result<(), ControlError> {
        Ok(control::inject_fault(&self.shared, fault)?)
    }

    /// The injected faults that have not fired yet, with their remaining counts.
    pub fn pending_faults(&self) -> Vec<Fault> {
        control::pending_faults(&self.shared)
    }

    /// Drops every injected fault that has not fired yet.
    pub fn clear_faults(&self) {
        control::clear_faults(&self.shared);
    }

    /// The store's webhook delivery attempts of the last [`LOG_RETENTION`](crate::LOG_RETENTION)
    /// (at most [`LOG_CAP`](crate::LOG_CAP)), oldest first.
    pub fn webhook_deliveries(&self, store_id: &str) -> Result<Vec<Delivery>, ControlError> {
        Ok(control::deliveries(&self.shared, store_id)?)
    }

    /// The store's Store API requests of the last [`LOG_RETENTION`](crate::LOG_RETENTION) (at most
    /// [`LOG_CAP`](crate::LOG_CAP)), oldest first: every answer to a known store, with the
    /// operation it reached.
    pub fn requests(&self, store_id: &str) -> Result<Vec<RequestRecord>, ControlError> {
        Ok(control::requests(&self.shared, store_id)?)
    }

    /// The emulator's current time (the real time, or a deterministic emulator's clock).
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.shared.clock.now()
    }

    /// Moves a deterministic emulator's clock forward by `by`: timestamps, the rate limit, webhook
    /// retries waiting for that time, auto-advance and log retention follow. Released work (a retry,
    /// an auto-advance) runs in the background right after. Refused (409) on the real clock.
    pub fn advance(&self, by: Duration) -> Result<(), ControlError> {
        control::advance_clock(&self.shared, by)?;
        Ok(())
    }

    /// Moves an order one rung up the fulfillment ladder (fulfilled sets tracking and fulfilledAt).
    pub fn advance_order(
        &self,
        store_id: &str,
        order_id: &str,
    ) -> Result<types::Order, ControlError> {
        Ok(control::advance(&self.shared, store_id, order_id)?)
    }

    /// Applies an app-side action to an order.
    pub fn app_action(
        &self,
        store_id: &str,
        order_id: &str,
        action: AppAction,
    ) -> Result<types::Order, ControlError> {
        Ok(control::app_action(
            &self.shared,
            store_id,
            order_id,
            action,
        )?)
    }

    /// Creates a product as the app would (emits products_create).
    pub fn create_product(
        &self,
        store_id: &str,
        product: types::Product,
    ) -> Result<types::Product, ControlError> {
        Ok(control::create_product(&self.shared, store_id, product)?)
    }

    /// Replaces a product, keeping its id and createdAt (emits products_update). Its updatedAt moves
    /// past its previous value (even on a deterministic clock standing still) and is never behind the
    /// clock.
    pub fn update_product(
        &self,
        store_id: &str,
        product_id: &str,
        product: types::Product,
    ) -> Result<types::Product, ControlError> {
        Ok(control::update_product(
            &self.shared,
            store_id,
            product_id,
            product,
        )?)
    }

    /// Replaces a catalog product (a blank) as the provider edits it, keeping its id and createdAt;
    /// updatedAt moves past its previous value (even on a deterministic clock standing still) and is
    /// never behind the clock. The blank's price and the stores it is private to stay. No webhook (the
    /// seed has no catalog topic). 404 `Catalog product not found` for an unknown id.
    pub fn update_catalog_product(
        &self,
        catalog_product_id: &str,
        product: types::CatalogProduct,
    ) -> Result<types::CatalogProduct, ControlError> {
        Ok(control::update_catalog_product(
            &self.shared,
            catalog_product_id,
            product,
        )?)
    }

    /// Deletes a product (emits products_delete).
    pub fn delete_product(&self, store_id: &str, product_id: &str) -> Result<(), ControlError> {
        Ok(control::delete_product(&self.shared, store_id, product_id)?)
    }

    /// The registry of fake public hosts the artwork downloader serves from.
    pub fn fake_hosts(&self) -> &FakeHosts {
        self.shared.downloader.fake_hosts()
    }

    /// Number of orders the store holds (for exactly-once checks).
    pub fn order_count(&self, store_id: &str) -> usize {
        control::order_count(&self.shared, store_id)
    }

    /// The store's orders, oldest first.
    pub fn orders(&self, store_id: &str) -> Vec<types::Order> {
        control::orders(&self.shared, store_id)
    }

    /// Answers `request` in this process, without a socket, as the server answers it on a connection:
    /// the same routes, authentication, rate limit, request log and validation. For a simulation that
    /// carries the client's requests over a network model of its own (see
    /// `store_api::network::Network`), so that a paused tokio clock can drive both sides. An injected
    /// fault that needs a connection (a drop, a reset, a cut or an endless body) answers 503 here instead; a body
    /// over [`MAX_BODY_BYTES`](crate::MAX_BODY_BYTES) is refused as the server refuses it.
    pub async fn answer(
        &self,
        request: axum::http::Request<bytes::Bytes>,
    ) -> axum::http::Response<bytes::Bytes> {
        use tower_service::Service as _;
        let request = request.map(axum::body::Body::from);
        let response = match self.app.clone().call(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let (parts, body) = response.into_parts();
        // The emulator's own answers are small; one that cannot be read whole is cut off here.
        let body = axum::body::to_bytes(body, usize::MAX)
            .await
            .unwrap_or_default();
        axum::http::Response::from_parts(parts, body)
    }

    /// Stops serving, waits for in-flight requests and writes the state file if one was set.
    pub async fn shutdown(mut self) {
        self.signal_stop();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    fn signal_stop(&mut self) {
        for background in [self.ticker.take(), self.saver.take()]
            .into_iter()
            .flatten()
        {
            background.abort();
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.signal_stop();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    /// While a writer checks its change under the read lock, reads go on; another writer waits for the
    /// turn to end, so what the first checked still holds when it writes.
    #[tokio::test]
    async fn reads_go_on_during_a_writers_checks_and_writers_take_turns() {
        let emulator = Emulator::builder().start().await.unwrap();
        let shared = emulator.shared.clone();
        let turn = shared.write_turn();
        let checked = turn.read().stores.len();
        {
            let _checking = turn.read();
            let reader = {
                let shared = shared.clone();
                std::thread::spawn(move || shared.read().stores.len())
            };
            assert_eq!(reader.join().unwrap(), checked);
        }
        let (done, finished) = mpsc::channel();
        let writer = {
            let shared = shared.clone();
            std::thread::spawn(move || {
                let _state = shared.lock();
                let _ = done.send(());
            })
        };
        assert!(
            finished.recv_timeout(Duration::from_millis(200)).is_err(),
            "another writer went ahead during the turn"
        );
        drop(turn.write());
        finished.recv_timeout(Duration::from_secs(10)).unwrap();
        writer.join().unwrap();
    }
}
