//! The connection a command works with: a client built from flags or the environment, or one pointed
//! at an emulator embedded in this process (`--emulator`). Never a silent fallback from one to the other.

use std::sync::Arc;

use store_api::{ApiKey, Client, ClientBuilder, ENV_API_KEY, ENV_BASE_URL, ENV_STORE_ID};
use store_api_fixtures::Emulator;

use crate::config::Credentials;
use crate::error::CliError;
use crate::global::GlobalArgs;
use crate::traffic::network::ShownNetwork;
use crate::traffic::{self, Detail, Paint};

/// The sample image every emulator of the command line serves from a fake public host, and its URL:
/// the emulator's own (`EmulatorBuilder::sample_artwork`), so the standalone one serves it too.
pub use store_api_fixtures::artwork::{SAMPLE_IMAGE_URL, SAMPLE_PNG};

/// A client, and the emulator it talks to when that runs in this process.
#[derive(Debug)]
pub struct Session {
    /// The Store API client.
    pub client: Client,
    /// The embedded emulator (`--emulator`), shut down (and its state saved) by [`Session::close`].
    pub emulator: Option<Emulator>,
    /// What `client` was built from, for [`Session::client_with`].
    settings: Settings,
}

/// The settings a session's client is built from.
#[derive(Debug, Clone)]
struct Settings {
    base_url: String,
    store_id: String,
    api_key: ApiKey,
    allow_insecure_http: bool,
    /// `-vv` and more: the network that shows each exchange's heads (and bodies).
    shown: Option<Arc<ShownNetwork>>,
}

impl Settings {
    fn builder(&self, api_key: &str) -> ClientBuilder {
        let builder = match &self.shown {
            Some(network) => Client::builder().network(network.clone()),
            None => Client::builder(),
        };
        builder
            .base_url(self.base_url.clone())
            .store_id(self.store_id.clone())
            .api_key(api_key)
            .allow_insecure_http(self.allow_insecure_http)
            // A run ends before a background read would: a refresh that falls due runs before the
            // check, and removals wait for the copy on disk to be a day old.
            .background_refresh(false)
            .reconcile_interval(crate::store_copy::RECONCILE_INTERVAL)
    }
}

impl Session {
    /// Builds the session the flags ask for.
    pub async fn open(global: &GlobalArgs) -> Result<Session, CliError> {
        if global.emulator {
            return Session::embedded(global).await;
        }
        if global.emulator_state.is_some() {
            return Err(CliError::Usage(
                "--emulator-state only applies with --emulator".into(),
            ));
        }
        let credentials = crate::config::resolve(global, &crate::config::process_env)?;
        let settings = settings(credentials, global.allow_insecure_http, shown(global)?)?;
        let client = build(settings.builder(settings.api_key.expose_secret()))?;
        Ok(Session {
            client,
            emulator: None,
            settings,
        })
    }

    /// The client's copy of the store, kept on disk between runs (`None` with the embedded emulator,
    /// whose store lives as long as the run).
    pub fn disk_copy(&self) -> Option<crate::store_copy::DiskCopy> {
        self.emulator
            .is_none()
            .then(|| crate::store_copy::DiskCopy::load(&self.client, &crate::config::process_env))
    }

    /// Runs `work`, which validates against the client's copy of the store, with the copy loaded from
    /// disk and filled first (a progress bar on a terminal), and saved again after, whatever `work`
    /// returned.
    pub async fn with_store_copy<T, E>(
        &self,
        out: crate::output::Output,
        work: impl std::future::Future<Output = Result<T, E>>,
    ) -> Result<T, CliError>
    where
        CliError: From<E>,
    {
        let disk = self.disk_copy();
        if let Some(disk) = &disk {
            disk.fill(&self.client, out).await?;
        }
        let result = work.await;
        if let Some(disk) = &disk {
            disk.save(&self.client);
        }
        Ok(result?)
    }

    /// Another client of the session's service and store: with `api_key` instead of the session's
    /// when given, its settings adjusted by `adjust` (no retries, for one).
    pub fn client_with(
        &self,
        api_key: Option<&str>,
        adjust: impl FnOnce(ClientBuilder) -> ClientBuilder,
    ) -> Result<Client, CliError> {
        let key = api_key.unwrap_or(self.settings.api_key.expose_secret());
        build(adjust(self.settings.builder(key)))
    }

    async fn embedded(global: &GlobalArgs) -> Result<Session, CliError> {
        let mut builder = Emulator::builder().network_downloads(false);
        if let Some(path) = &global.emulator_state {
            builder = builder.state_file(path);
        }
        let emulator = start(builder).await?;
        let store = emulator
            .active_store()
            .ok_or_else(|| CliError::Failed("the emulator has no active store".into()))?;
        let settings = Settings {
            base_url: emulator.base_url(),
            store_id: store.id,
            api_key: ApiKey::new(store.api_key),
            allow_insecure_http: false,
            shown: shown(global)?,
        };
        let client = build(settings.builder(settings.api_key.expose_secret()))?;
        eprintln!(
            "using the embedded emulator at {}, store {} — not the real service",
            emulator.origin(),
            client.store_id()
        );
        Ok(Session {
            client,
            emulator: Some(emulator),
            settings,
        })
    }

    /// Shuts the embedded emulator down, which writes its state file when one was given.
    pub async fn close(self) {
        if let Some(emulator) = self.emulator {
            emulator.shutdown().await;
        }
    }
}

/// The settings `credentials` give, or a usage error naming every missing setting and where it can
/// come from.
fn settings(
    credentials: Credentials,
    allow_insecure_http: bool,
    shown: Option<Arc<ShownNetwork>>,
) -> Result<Settings, CliError> {
    let in_profile = |field: &str| match &credentials.profile {
        Some(profile) => format!(", or {field} in profile {profile:?}"),
        None => String::new(),
    };
    let missing: Vec<String> = [
        (
            credentials.base_url.is_none(),
            format!("--base-url (or {}{})", ENV_BASE_URL, in_profile("base_url")),
        ),
        (
            credentials.store_id.is_none(),
            format!("--store-id (or {}{})", ENV_STORE_ID, in_profile("store_id")),
        ),
        (
            credentials.api_key.is_none(),
            format!(
                "--api-key (or {}{})",
                ENV_API_KEY,
                in_profile("key_file or key_env")
            ),
        ),
    ]
    .into_iter()
    .filter_map(|(is_missing, name)| is_missing.then_some(name))
    .collect();
    let (Some(base_url), Some(store_id), Some(api_key)) = (
        credentials.base_url,
        credentials.store_id,
        credentials.api_key,
    ) else {
        return Err(CliError::Usage(format!(
            "missing credentials: {}; or pass --profile NAME for a profile of the configuration file, or --emulator to use the embedded local emulator",
            missing.join(", ")
        )));
    };
    Ok(Settings {
        base_url,
        store_id,
        api_key: ApiKey::new(api_key.expose()),
        allow_insecure_http,
        shown,
    })
}

/// The network that shows the traffic's heads (`-vv`) and bodies (`-vvv`, `--debug`) on stderr, or
/// none (the client's own network) below `-vv`.
fn shown(global: &GlobalArgs) -> Result<Option<Arc<ShownNetwork>>, CliError> {
    let detail = Detail::of(global);
    if detail < Detail::Headers {
        return Ok(None);
    }
    let paint = Paint {
        ansi: traffic::colour_on_stderr(),
    };
    ShownNetwork::new(detail >= Detail::Bodies, paint, traffic::stderr_sink())
        .map(Some)
        .map_err(|e| CliError::Failed(e.to_string()))
}

/// The client `builder` builds, or a usage error in the command line's terms.
fn build(builder: ClientBuilder) -> Result<Client, CliError> {
    builder.build().map_err(|e| match e {
            // The builder's message names its own setting; a CLI user has a flag instead.
            store_api::Error::InsecureBaseUrl { host } => CliError::Usage(format!(
                "--base-url: http:// to {host}, which is not a loopback address, would send the API key in clear text; use https (or, on a network you trust, --allow-insecure-http)"
            )),
            other => CliError::Usage(other.to_string()),
        })
}

/// Starts an emulator serving the sample image on its fake public host.
pub async fn start(builder: store_api_fixtures::EmulatorBuilder) -> Result<Emulator, CliError> {
    builder
        .sample_artwork(true)
        .start()
        .await
        .map_err(|e| CliError::Failed(format!("the embedded emulator could not start: {e}")))
}

/// A client for the emulator's first active store.
pub fn emulator_client(emulator: &Emulator) -> Result<Client, CliError> {
    let store = emulator
        .active_store()
        .ok_or_else(|| CliError::Failed("the emulator has no active store".into()))?;
    Client::builder()
        .base_url(emulator.base_url())
        .store_id(store.id)
        .api_key(store.api_key)
        .build()
        .map_err(|e| CliError::Failed(e.to_string()))
}
