//! Where Redis is ([`RedisConfig`]) and one lazily opened, reconnecting connection per component.

use std::fmt;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::{Cmd, Pipeline, RedisFuture, Value};
use tokio::sync::OnceCell;

use crate::error::RedisError;

/// Default bound on one command: a local Redis answers in well under a millisecond, so a second means
/// it is gone, and the caller should fall back rather than hang.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(1);

/// Whether the Redis behind a [`RedisConfig`] is one server or a Redis Cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Topology {
    /// Ask the first node on the first connection (`INFO cluster`, `cluster_enabled:1`). The default
    /// for [`RedisConfig::new`].
    #[default]
    Detect,
    /// One server (or a primary behind a proxy or a managed endpoint that hides its cluster).
    Standalone,
    /// A Redis Cluster: the URLs are seed nodes; the client learns the slots from them and follows
    /// `MOVED`/`ASK` redirections and failovers. The default for [`RedisConfig::cluster`]. Needs the
    /// `cluster` feature (on by default).
    Cluster,
}

/// Where Redis is and how to reach it: one URL or a cluster's seed nodes, plain TCP, TLS or a Unix
/// socket, and for TLS the roots to trust and the client certificate to present.
///
/// A URL converts into one ([`Topology::Detect`]), so the builders take `"redis://…"` as well.
///
/// ```no_run
/// # fn run(ca_pem: Vec<u8>) -> Result<(), Box<dyn std::error::Error>> {
/// use store_api_redis::{RedisConfig, RedisDedupe, RedisLimiter};
///
/// // A managed Redis over TLS whose certificate chains to a private CA.
/// let redis = RedisConfig::new("rediss://:password@redis.internal:6380/0").ca_certificate(ca_pem);
/// let limiter = RedisLimiter::builder(redis.clone(), "https://api.example.com", "store_alpha").build()?;
/// // A Redis Cluster, from any of its nodes.
/// let cluster = RedisConfig::cluster(["redis://10.0.0.5:7000", "redis://10.0.0.6:7000"]);
/// let dedupe = RedisDedupe::builder(cluster, "store_alpha").build()?;
/// # let _ = (limiter, dedupe);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisConfig {
    nodes: Vec<String>,
    topology: Topology,
    /// PEM roots that replace the system's (TLS only).
    ca: Option<Vec<u8>>,
    /// PEM certificate chain and private key presented to the server (TLS only).
    client: Option<(Vec<u8>, Vec<u8>)>,
}

impl RedisConfig {
    /// The Redis at `url` (`redis://[user:password@]host:6379/db`, `rediss://…` for TLS,
    /// `redis+unix:///path/to.sock`), a cluster or not as it answers ([`Topology::Detect`]).
    pub fn new(url: impl Into<String>) -> RedisConfig {
        RedisConfig {
            nodes: vec![url.into()],
            topology: Topology::Detect,
            ca: None,
            client: None,
        }
    }

    /// A Redis Cluster known by some of its nodes (one is enough; more survive one being down at
    /// start). URLs as for [`new`](Self::new); the first one's scheme decides TLS for every node.
    pub fn cluster<I>(nodes: I) -> RedisConfig
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        RedisConfig {
            nodes: nodes.into_iter().map(Into::into).collect(),
            topology: Topology::Cluster,
            ca: None,
            client: None,
        }
    }

    /// One server, a cluster, or ask ([`Topology`]).
    pub fn topology(mut self, topology: Topology) -> Self {
        self.topology = topology;
        self
    }

    /// Trusts the PEM certificate(s) in `pem` (one or a bundle) instead of the system's roots, for a
    /// `rediss://` URL whose server certificate chains to a private CA. Checked when a component is
    /// built. Needs the `tls` feature (on by default).
    pub fn ca_certificate(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca = Some(pem.into());
        self
    }

    /// Presents this client certificate (PEM chain) and its private key (PEM, PKCS#8, PKCS#1 or SEC1)
    /// to a server that asks for one (`tls-auth-clients yes`). Needs the `tls` feature.
    pub fn client_certificate(
        mut self,
        certificate_pem: impl Into<Vec<u8>>,
        key_pem: impl Into<Vec<u8>>,
    ) -> Self {
        self.client = Some((certificate_pem.into(), key_pem.into()));
        self
    }

    fn tls_requested(&self) -> bool {
        self.ca.is_some() || self.client.is_some()
    }

    /// The certificates in the `redis` crate's form (it parses them when a client is built).
    #[cfg(feature = "tls")]
    fn certificates(&self) -> Option<redis::TlsCertificates> {
        if !self.tls_requested() {
            return None;
        }
        Some(redis::TlsCertificates {
            client_tls: self
                .client
                .as_ref()
                .map(|(cert, key)| redis::ClientTlsConfig {
                    client_cert: cert.clone(),
                    client_key: key.clone(),
                }),
            root_cert: self.ca.clone(),
        })
    }

    /// Refuses settings that cannot work, naming why.
    fn check(&self) -> Result<(), RedisError> {
        if self.nodes.is_empty() {
            return Err(RedisError::Config(
                "no Redis URL given (RedisConfig::cluster with no node)".into(),
            ));
        }
        if self.topology != Topology::Cluster && self.nodes.len() > 1 {
            return Err(RedisError::Config(
                "several Redis URLs name a cluster's nodes: use RedisConfig::cluster".into(),
            ));
        }
        if cfg!(not(feature = "cluster")) && self.topology == Topology::Cluster {
            return Err(RedisError::Config(
                "Redis Cluster needs the `cluster` feature of store-api-redis".into(),
            ));
        }
        if self.tls_requested() {
            if cfg!(not(feature = "tls")) {
                return Err(RedisError::Config(
                    "a CA or client certificate needs the `tls` feature of store-api-redis".into(),
                ));
            }
            if let Some(plain) = self.nodes.iter().find(|url| !url.starts_with("rediss://")) {
                return Err(RedisError::Config(format!(
                    "a CA or client certificate is for rediss:// URLs, not {}",
                    redact(plain)
                )));
            }
            #[cfg(feature = "tls")]
            if let Some(ca) = &self.ca {
                use rustls::pki_types::CertificateDer;
                use rustls::pki_types::pem::PemObject;
                let certificates: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(ca).collect();
                if !certificates.is_ok_and(|certificates| !certificates.is_empty()) {
                    return Err(RedisError::Config(
                        "the CA certificate is not PEM (-----BEGIN CERTIFICATE-----)".into(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The client of the first node (TLS settings applied), used directly for one server and to
    /// detect a cluster.
    fn single_client(&self) -> Result<redis::Client, RedisError> {
        let url = self.nodes.first().map_or("", String::as_str);
        #[cfg(feature = "tls")]
        if let Some(certificates) = self.certificates() {
            return redis::Client::build_with_tls(url, certificates)
                .map_err(RedisError::InvalidUrl);
        }
        redis::Client::open(url).map_err(RedisError::InvalidUrl)
    }

    #[cfg(feature = "cluster")]
    fn cluster_client(
        &self,
        timeout: Duration,
        retries: Retries,
    ) -> Result<redis::cluster::ClusterClient, RedisError> {
        let builder =
            redis::cluster::ClusterClientBuilder::new(self.nodes.iter().map(String::as_str))
                .connection_timeout(timeout)
                .response_timeout(timeout)
                // A failover moves slots within seconds: retry redirections and refused connections
                // quickly; the command timeout bounds the whole exchange anyway.
                .retries(match retries {
                    Retries::ByTheLibrary => 4,
                    Retries::ByTheCaller => 0,
                })
                .min_retry_wait(20)
                .max_retry_wait(200);
        #[cfg(feature = "tls")]
        let builder = match self.certificates() {
            Some(certificates) => builder.certs(certificates),
            None => builder,
        };
        builder.build().map_err(RedisError::InvalidUrl)
    }
}

impl fmt::Debug for RedisConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // URLs may hold a password: show where they point only.
        let nodes: Vec<String> = self.nodes.iter().map(|url| redact(url)).collect();
        f.debug_struct("RedisConfig")
            .field("nodes", &nodes)
            .field("topology", &self.topology)
            .field("ca_certificate", &self.ca.is_some())
            .field("client_certificate", &self.client.is_some())
            .finish()
    }
}

impl From<&str> for RedisConfig {
    fn from(url: &str) -> RedisConfig {
        RedisConfig::new(url)
    }
}

impl From<String> for RedisConfig {
    fn from(url: String) -> RedisConfig {
        RedisConfig::new(url)
    }
}

impl From<&String> for RedisConfig {
    fn from(url: &String) -> RedisConfig {
        RedisConfig::new(url.as_str())
    }
}

/// A URL without its password (or the whole URL hidden when it does not parse).
fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            parsed.to_string()
        }
        Err(_) => "<unparsable URL>".to_owned(),
    }
}

/// Who retries a cluster command that failed (a refused connection, a redirection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retries {
    /// The client library, a few times within the command timeout.
    ByTheLibrary,
    /// The caller. The library resends a failed command on whichever connection it has then, even
    /// to another node: a `WAIT` resent there measures that connection's writes (none), not the
    /// write it was sent to confirm.
    #[cfg_attr(not(feature = "dedupe"), allow(dead_code))]
    ByTheCaller,
}

/// A live link to Redis: one server's connection manager or a cluster connection. Both reconnect by
/// themselves; the cluster one also follows slot moves.
#[derive(Clone)]
enum Link {
    Single(ConnectionManager),
    #[cfg(feature = "cluster")]
    Cluster(redis::cluster_async::ClusterConnection),
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Link::Single(manager) => manager.req_packed_command(cmd),
            #[cfg(feature = "cluster")]
            Link::Cluster(cluster) => cluster.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Link::Single(manager) => manager.req_packed_commands(pipeline, offset, count),
            #[cfg(feature = "cluster")]
            Link::Cluster(cluster) => cluster.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Link::Single(manager) => manager.get_db(),
            #[cfg(feature = "cluster")]
            Link::Cluster(cluster) => cluster.get_db(),
        }
    }
}

/// A [`RedisConfig`] plus the link made on first use.
///
/// Made lazily because a link needs a tokio runtime, and a builder may run outside one; a failed
/// attempt (Redis down, or a cluster whose seeds do not answer) leaves nothing behind, so the next
/// command tries again while the component falls back.
pub(crate) struct Connection {
    config: RedisConfig,
    single: redis::Client,
    /// Built up front when the topology says cluster, on detection otherwise.
    #[cfg(feature = "cluster")]
    cluster: Option<redis::cluster::ClusterClient>,
    link: OnceCell<Link>,
    retries: Retries,
    pub timeout: Duration,
    /// Which primaries' replicas acknowledge writes (see [`write_then_wait`](Self::write_then_wait)).
    #[cfg(feature = "dedupe")]
    primaries: crate::primaries::Primaries,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("config", &self.config)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Checks the URLs and certificates; connects nothing.
    pub fn open(
        config: RedisConfig,
        timeout: Duration,
        retries: Retries,
    ) -> Result<Connection, RedisError> {
        config.check()?;
        // rustls needs a process-wide provider when more than one is compiled in: ring, as elsewhere
        // in the SDK, unless the program installed its own.
        #[cfg(feature = "tls")]
        if config.nodes.iter().any(|url| url.starts_with("rediss://"))
            && rustls::crypto::CryptoProvider::get_default().is_none()
        {
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        Ok(Connection {
            single: config.single_client()?,
            #[cfg(feature = "cluster")]
            cluster: match config.topology {
                Topology::Cluster => Some(config.cluster_client(timeout, retries)?),
                _ => None,
            },
            config,
            link: OnceCell::new(),
            retries,
            timeout,
            #[cfg(feature = "dedupe")]
            primaries: crate::primaries::Primaries::default(),
        })
    }

    /// The link (a cheap clone of a multiplexed connection), made on first use within the timeout.
    async fn link(&self) -> Result<Link, RedisError> {
        let link = self
            .link
            .get_or_try_init(|| async {
                match tokio::time::timeout(self.timeout, self.connect()).await {
                    Ok(link) => link,
                    Err(_) => Err(RedisError::Timeout(self.timeout)),
                }
            })
            .await?;
        Ok(link.clone())
    }

    async fn connect(&self) -> Result<Link, RedisError> {
        let cluster = match self.config.topology {
            Topology::Standalone => false,
            Topology::Cluster => true,
            Topology::Detect => cfg!(feature = "cluster") && self.cluster_enabled().await?,
        };
        #[cfg(feature = "cluster")]
        if cluster {
            let client = match &self.cluster {
                Some(client) => client.clone(),
                None => self.config.cluster_client(self.timeout, self.retries)?,
            };
            return Ok(Link::Cluster(client.get_async_connection().await?));
        }
        let _ = cluster;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            // Reconnection is retried on the next command anyway; do not block this one.
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(200));
        // Lazy: never fails for an unreachable server, so a replica starts (and falls back) while
        // Redis is down.
        Ok(Link::Single(ConnectionManager::new_lazy_with_config(
            self.single.clone(),
            config,
        )?))
    }

    /// Whether the first node runs in cluster mode (`INFO cluster`).
    async fn cluster_enabled(&self) -> Result<bool, RedisError> {
        let mut probe = self.single.get_multiplexed_async_connection().await?;
        let info: String = redis::cmd("INFO")
            .arg("cluster")
            .query_async(&mut probe)
            .await?;
        Ok(info.lines().any(|line| line.trim() == "cluster_enabled:1"))
    }

    /// Whether the link is a Redis Cluster connection (connecting first, which detects it when asked).
    #[cfg(feature = "dedupe")]
    pub async fn is_cluster(&self) -> Result<bool, RedisError> {
        Ok(match self.link().await? {
            Link::Single(_) => false,
            #[cfg(feature = "cluster")]
            Link::Cluster(_) => true,
        })
    }

    /// Runs `write` (a command on `key` alone) and, when `replicas > 0`, `WAIT replicas within`
    /// right behind it, as one pipeline on the connection to `key`'s primary; answers `write`'s
    /// answer and how many replicas acknowledged it (0 when none were asked for).
    ///
    /// Replication is asynchronous: a write a primary acknowledged is lost if it dies before a
    /// replica copied it and that replica is promoted. `WAIT` counts the replicas that hold every
    /// write *its own connection* made, so it confirms `write` only on the connection that carried
    /// it: one pipeline sends both on one connection, in order (a connection replaced in between,
    /// after a reconnect or a failover, fails the pipeline rather than confirming nothing), and to
    /// the one primary that holds `key` (never the fewest over every primary of a cluster, so a
    /// primary without a replica does not decide for the others). `within` is at most half the
    /// command timeout, so that a primary merely short of replicas answers (with how many) instead
    /// of timing out like a dead one.
    #[cfg(feature = "dedupe")]
    pub async fn write_then_wait<T: redis::FromRedisValue>(
        &self,
        key: &str,
        write: &Cmd,
        replicas: u32,
        within: Duration,
    ) -> Result<(T, u32), RedisError> {
        let mut link = self.link().await?;
        let cluster = !matches!(link, Link::Single(_));
        let mut pipeline = redis::pipe();
        pipeline.add_command(write.clone());
        let ticket = if replicas > 0 {
            if cluster && self.primaries.should_ask() {
                // Which primary serves which slots, so that a short one is known by all its keys.
                let asked = redis::cmd("CLUSTER").arg("SLOTS").to_owned();
                if let Ok(Ok(slots)) =
                    tokio::time::timeout(self.timeout, asked.query_async(&mut link)).await
                {
                    self.primaries.learn(&crate::primaries::parse_slots(slots));
                }
            }
            // A primary known to be short of replicas gets one write at a time: each `WAIT` there
            // holds the connection for its whole timeout (see `primaries`).
            let Some(ticket) = self.primaries.admit(key, cluster, self.timeout) else {
                return Err(RedisError::NotReplicated {
                    acknowledged: 0,
                    wanted: replicas,
                });
            };
            let within = within.min(self.timeout / 2);
            pipeline
                .cmd("WAIT")
                .arg(replicas)
                .arg(u64::try_from(within.as_millis()).unwrap_or(u64::MAX).max(1));
            if cluster {
                // Which node ran it, for that bookkeeping.
                pipeline.cmd("CLUSTER").arg("MYID");
            }
            Some(ticket)
        } else {
            None
        };
        let count = pipeline.len();
        let exchange = async {
            match &mut link {
                Link::Single(manager) => manager.req_packed_commands(&pipeline, 0, count).await,
                #[cfg(feature = "cluster")]
                Link::Cluster(cluster) => {
                    use redis::cluster_routing::{Route, SingleNodeRoutingInfo, SlotAddr};
                    let primary = Route::with_key(key, SlotAddr::Master);
                    cluster
                        .route_pipeline(
                            pipeline.clone(),
                            0,
                            count,
                            SingleNodeRoutingInfo::SpecificNode(primary),
                        )
                        .await
                }
            }
        };
        let answers = match tokio::time::timeout(self.timeout, exchange).await {
            Ok(Ok(answers)) => answers,
            failed => {
                if let Some(ticket) = ticket {
                    ticket.finish(None, false);
                }
                return Err(match failed {
                    Ok(Err(error)) => error.into(),
                    _ => RedisError::Timeout(self.timeout),
                });
            }
        };
        let mut answers = answers.into_iter();
        let unexpected = |error: redis::ParsingError| RedisError::Unexpected(error.to_string());
        let written = answers
            .next()
            .ok_or_else(|| RedisError::Unexpected("no answer to a write".into()))?;
        let written = redis::from_redis_value(written).map_err(unexpected)?;
        let acknowledged: u32 = match answers.next() {
            Some(acknowledged) => redis::from_redis_value(acknowledged).map_err(unexpected)?,
            None => 0,
        };
        if let Some(ticket) = ticket {
            let node: Option<String> = match answers.next() {
                Some(id) => Some(redis::from_redis_value(id).map_err(unexpected)?),
                // One server: one node.
                None => Some(String::new()),
            };
            ticket.finish(node.as_deref(), acknowledged >= replicas);
        }
        Ok((written, acknowledged))
    }

    /// Runs `script` with a bound on the whole exchange (EVALSHA, loading the script on NOSCRIPT: a
    /// restarted server or a promoted replica may not have it).
    pub async fn invoke<T: redis::FromRedisValue>(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T, RedisError> {
        let mut link = self.link().await?;
        match tokio::time::timeout(self.timeout, invocation.invoke_async(&mut link)).await {
            Ok(result) => Ok(result?),
            Err(_) => Err(RedisError::Timeout(self.timeout)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_passwords() {
        let config = RedisConfig::new("rediss://user:hunter2@redis.example:6380/0");
        let shown = format!("{config:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("redis.example:6380"), "{shown}");
    }

    #[test]
    fn several_urls_without_cluster_are_refused() {
        let config = RedisConfig::cluster(["redis://127.0.0.1:1", "redis://127.0.0.1:2"])
            .topology(Topology::Standalone);
        assert!(matches!(
            Connection::open(config, DEFAULT_COMMAND_TIMEOUT, Retries::ByTheLibrary),
            Err(RedisError::Config(_))
        ));
    }

    #[test]
    fn a_certificate_needs_a_tls_url() {
        let config = RedisConfig::new("redis://127.0.0.1:1").ca_certificate(b"not pem".to_vec());
        let error =
            Connection::open(config, DEFAULT_COMMAND_TIMEOUT, Retries::ByTheLibrary).unwrap_err();
        assert!(error.to_string().contains("rediss://"), "{error}");
    }

    #[cfg(feature = "tls")]
    #[test]
    fn a_certificate_that_is_not_pem_is_refused_at_build() {
        let config = RedisConfig::new("rediss://127.0.0.1:1").ca_certificate(b"not pem".to_vec());
        assert!(Connection::open(config, DEFAULT_COMMAND_TIMEOUT, Retries::ByTheLibrary).is_err());
    }
}
