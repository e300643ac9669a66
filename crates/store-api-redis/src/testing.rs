//! Private `redis-server`s for tests and benches (feature `testing`): one server on a Unix socket, one
//! speaking TLS with certificates made here, or a Redis Cluster of six nodes on loopback ports.
//!
//! [`RedisServer::start`] runs `redis-server` on a Unix socket in a temporary directory (no port to
//! find, nothing shared with another test) and stops it on drop; [`RedisServer::start_tls`] adds a
//! TLS port on 127.0.0.1 with a certificate chain from [`TestCertificates`]; [`RedisCluster::start`]
//! runs three primaries and three replicas joined by `redis-cli --cluster create`, with a node timeout
//! of one second so that a failover takes seconds. When `redis-server` is not installed they return
//! `Ok(None)` after a loud message, so a developer without Redis still runs the rest of the suite;
//! with `STORE_API_REQUIRE_REDIS=1` (set by `.ci/run`) that is an error instead, so CI never skips.
//!
//! [`RedisServer::start_tcp`] and [`RedisServer::start_replica_of`] make a primary with a replica;
//! [`LossyProxy`] sits between a client and a server and loses a reply on demand (the write done, its
//! answer never back), what a network drop does to a command in flight.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The variable under which a missing `redis-server` fails instead of skipping.
pub const REQUIRE_ENV: &str = "STORE_API_REQUIRE_REDIS";

/// How long a cluster node may be silent before it counts as failed: short, so that a failover in a
/// test takes two or three seconds (the default, 15 s, is for real networks).
pub const CLUSTER_NODE_TIMEOUT: Duration = Duration::from_millis(1_000);

/// How long a server or a cluster may take to be ready.
const READY_WITHIN: Duration = Duration::from_secs(20);

/// A running private `redis-server`.
#[derive(Debug)]
pub struct RedisServer {
    dir: tempfile::TempDir,
    child: Option<Child>,
    persistent: bool,
    tls: Option<Tls>,
    /// A TCP port on 127.0.0.1 besides the socket (what a replica needs to reach its primary).
    port: Option<u16>,
    /// The TCP port of the primary this server replicates.
    replica_of: Option<u16>,
}

/// The TLS side of a [`RedisServer`].
#[derive(Debug)]
struct Tls {
    port: u16,
    certificates: TestCertificates,
    client_auth: bool,
}

impl RedisServer {
    /// Starts a server without persistence, or `Ok(None)` (after a loud message on stderr) when
    /// `redis-server` is not installed and `STORE_API_REQUIRE_REDIS` is not set.
    pub fn start() -> io::Result<Option<RedisServer>> {
        Self::start_with(false, None)
    }

    /// Like [`start`](Self::start), with the append-only file on and fsynced at every write, so a
    /// restart loses nothing (what the dedupe needs to keep its guarantee across a restart).
    pub fn start_persistent() -> io::Result<Option<RedisServer>> {
        Self::start_with(true, None)
    }

    /// Like [`start`](Self::start), also listening for TLS on a free port of 127.0.0.1
    /// ([`tls_url`](Self::tls_url)) with a certificate for `127.0.0.1` and `localhost` signed by the
    /// CA of [`certificates`](Self::certificates). With `client_auth`, the server refuses clients
    /// without a certificate signed by that CA (`tls-auth-clients yes`).
    pub fn start_tls(client_auth: bool) -> io::Result<Option<RedisServer>> {
        let tls = Tls {
            port: free_ports(1)?[0],
            certificates: TestCertificates::generate()?,
            client_auth,
        };
        Self::start_with(false, Some(tls))
    }

    /// Like [`start`](Self::start), also listening on a free TCP port of 127.0.0.1
    /// ([`port`](Self::port)), so that [`start_replica_of`](Self::start_replica_of) can replicate it.
    pub fn start_tcp() -> io::Result<Option<RedisServer>> {
        if !available(&["redis-server"])? {
            return Ok(None);
        }
        let mut server = Self::unstarted(false, None)?;
        server.port = Some(free_ports(1)?[0]);
        server.spawn()?;
        Ok(Some(server))
    }

    /// A server replicating `primary` (started with [`start_tcp`](Self::start_tcp)), once it is in
    /// sync with it (`master_link_status:up`).
    pub fn start_replica_of(primary: &RedisServer) -> io::Result<Option<RedisServer>> {
        let Some(primary_port) = primary.port else {
            return Err(io::Error::other(
                "a replica needs a primary started with RedisServer::start_tcp",
            ));
        };
        if !available(&["redis-server"])? {
            return Ok(None);
        }
        let mut replica = Self::unstarted(false, None)?;
        replica.port = Some(free_ports(1)?[0]);
        replica.replica_of = Some(primary_port);
        replica.spawn()?;
        let port = replica.port.unwrap_or_default();
        // Both ends: the replica's link is up, and the primary lists it online (a `WAIT` counts only
        // replicas the primary sees; under load the primary's side can lag the replica's).
        let synced = wait_until(READY_WITHIN, || {
            info(port, "replication").is_some_and(|text| text.contains("master_link_status:up"))
                && info(primary_port, "replication").is_some_and(|text| {
                    text.lines().any(|line| {
                        line.starts_with("slave")
                            && line.contains(&format!("port={port},"))
                            && line.contains("state=online")
                    })
                })
        });
        if !synced {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the replica did not sync with its primary in time",
            ));
        }
        Ok(Some(replica))
    }

    /// The TCP port of a server started with [`start_tcp`](Self::start_tcp) or
    /// [`start_replica_of`](Self::start_replica_of).
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    fn start_with(persistent: bool, tls: Option<Tls>) -> io::Result<Option<RedisServer>> {
        if !available(&["redis-server"])? {
            return Ok(None);
        }
        let mut server = Self::unstarted(persistent, tls)?;
        if let Some(tls) = &server.tls {
            let dir = server.dir.path();
            std::fs::write(dir.join("ca.pem"), &tls.certificates.ca_pem)?;
            std::fs::write(dir.join("server.pem"), &tls.certificates.server_cert_pem)?;
            std::fs::write(dir.join("server.key"), &tls.certificates.server_key_pem)?;
        }
        server.spawn()?;
        Ok(Some(server))
    }

    fn unstarted(persistent: bool, tls: Option<Tls>) -> io::Result<RedisServer> {
        Ok(RedisServer {
            dir: tempfile::Builder::new().prefix("redis-test-").tempdir()?,
            child: None,
            persistent,
            tls,
            port: None,
            replica_of: None,
        })
    }

    /// The URL of the server (`redis+unix:///…/r.sock`).
    pub fn url(&self) -> String {
        format!("redis+unix://{}", self.socket().display())
    }

    /// The TLS URL (`rediss://127.0.0.1:PORT/`) of a server started with
    /// [`start_tls`](Self::start_tls).
    pub fn tls_url(&self) -> Option<String> {
        self.tls
            .as_ref()
            .map(|tls| format!("rediss://127.0.0.1:{}/", tls.port))
    }

    /// The certificates of a server started with [`start_tls`](Self::start_tls).
    pub fn certificates(&self) -> Option<&TestCertificates> {
        self.tls.as_ref().map(|tls| &tls.certificates)
    }

    /// The server's socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("r.sock")
    }

    /// Kills the server (as a crash would) and waits for it to exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_file(self.socket());
    }

    /// Starts the server again on the same socket (with the same data directory).
    pub fn restart(&mut self) -> io::Result<()> {
        self.stop();
        self.spawn()
    }

    fn spawn(&mut self) -> io::Result<()> {
        let dir: &Path = self.dir.path();
        let mut command = Command::new("redis-server");
        let port = self.port.unwrap_or(0).to_string();
        command
            .args(["--port", &port, "--save", "", "--daemonize", "no"])
            .arg("--unixsocket")
            .arg(self.socket())
            .arg("--dir")
            .arg(dir)
            .args(if self.persistent {
                ["--appendonly", "yes", "--appendfsync", "always"]
            } else {
                ["--appendonly", "no", "--appendfsync", "everysec"]
            });
        if self.tls.is_some() || self.port.is_some() {
            command.args(["--bind", "127.0.0.1"]);
        }
        if let Some(primary) = self.replica_of {
            command.args(["--replicaof", "127.0.0.1", &primary.to_string()]);
        }
        if self.port.is_some() {
            // A replica syncs at once (the default waits 5 s for more replicas to share the transfer).
            command.args(["--repl-diskless-sync-delay", "0"]);
        }
        if let Some(tls) = &self.tls {
            command
                .args(["--tls-port", &tls.port.to_string()])
                .arg("--tls-cert-file")
                .arg(dir.join("server.pem"))
                .arg("--tls-key-file")
                .arg(dir.join("server.key"))
                .arg("--tls-ca-cert-file")
                .arg(dir.join("ca.pem"))
                .args([
                    "--tls-auth-clients",
                    if tls.client_auth { "yes" } else { "no" },
                ]);
        }
        self.child = Some(quiet(&mut command).spawn()?);
        let socket = self.socket();
        let ready = wait_until(READY_WITHIN, || {
            // Ready when it answers PING with PONG: it accepts connections while still loading its
            // append-only file, and answers `-LOADING` until then.
            std::os::unix::net::UnixStream::connect(&socket).is_ok_and(ping)
        });
        if !ready {
            self.stop();
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "redis-server did not answer on its socket in time",
            ));
        }
        Ok(())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A certificate authority, a server certificate for `127.0.0.1` and `localhost` and a client
/// certificate, both signed by it, made with rcgen (ECDSA P-256); every one in PEM.
#[derive(Clone)]
pub struct TestCertificates {
    /// The CA's certificate: what a client trusts.
    pub ca_pem: String,
    /// The server's certificate.
    pub server_cert_pem: String,
    /// The server's private key.
    pub server_key_pem: String,
    /// A client certificate (for `tls-auth-clients yes`).
    pub client_cert_pem: String,
    /// Its private key.
    pub client_key_pem: String,
}

impl std::fmt::Debug for TestCertificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCertificates").finish_non_exhaustive()
    }
}

impl TestCertificates {
    /// A fresh set: a CA nobody else trusts, and the two certificates it signs.
    pub fn generate() -> io::Result<TestCertificates> {
        use rcgen::{
            BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose,
            IsCa, KeyPair, KeyUsagePurpose,
        };
        let error = |e: rcgen::Error| io::Error::other(format!("rcgen: {e}"));
        let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(error)?;
        ca.distinguished_name
            .push(DnType::CommonName, "store-api-redis test CA");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca =
            CertifiedIssuer::self_signed(ca, KeyPair::generate().map_err(error)?).map_err(error)?;
        let leaf = |names: Vec<String>, usage: ExtendedKeyUsagePurpose| {
            let mut params = CertificateParams::new(names).map_err(error)?;
            params.extended_key_usages = vec![usage];
            let key = KeyPair::generate().map_err(error)?;
            let cert = params.signed_by(&key, &ca).map_err(error)?;
            Ok::<_, io::Error>((cert.pem(), key.serialize_pem()))
        };
        let (server_cert_pem, server_key_pem) = leaf(
            vec!["127.0.0.1".to_owned(), "localhost".to_owned()],
            ExtendedKeyUsagePurpose::ServerAuth,
        )?;
        let (client_cert_pem, client_key_pem) = leaf(
            vec!["store-api-redis-test-client".to_owned()],
            ExtendedKeyUsagePurpose::ClientAuth,
        )?;
        Ok(TestCertificates {
            ca_pem: ca.pem(),
            server_cert_pem,
            server_key_pem,
            client_cert_pem,
            client_key_pem,
        })
    }
}

/// A TCP proxy on 127.0.0.1 in front of a server's port that can lose one reply: after
/// [`lose_next_reply`](Self::lose_next_reply), the next bytes the server sends back are dropped and
/// that connection is closed both ways, so the client sees its command fail although the server ran
/// it (a lost reply). Other connections and later ones pass everything through.
#[derive(Debug)]
pub struct LossyProxy {
    address: SocketAddr,
    lose: Arc<AtomicBool>,
    /// The accepted connections' sockets, shut down when the proxy is dropped.
    open: Arc<Mutex<Vec<TcpStream>>>,
    closed: Arc<AtomicBool>,
}

impl LossyProxy {
    /// Listens on a free port of 127.0.0.1 and forwards each connection to `upstream_port`.
    pub fn start(upstream_port: u16) -> io::Result<LossyProxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = listener.local_addr()?;
        let proxy = LossyProxy {
            address,
            lose: Arc::default(),
            open: Arc::default(),
            closed: Arc::default(),
        };
        let (lose, open, closed) = (proxy.lose.clone(), proxy.open.clone(), proxy.closed.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if closed.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
                    continue;
                };
                let _ = forward(client, server, &lose, &open);
            }
        });
        Ok(proxy)
    }

    /// `redis://127.0.0.1:PORT/`, the proxy's URL.
    pub fn url(&self) -> String {
        format!("redis://{}/", self.address)
    }

    /// The next reply the server sends (on any connection) is lost and its connection closed.
    pub fn lose_next_reply(&self) {
        self.lose.store(true, Ordering::SeqCst);
    }

    /// Whether the reply asked for by [`lose_next_reply`](Self::lose_next_reply) is still to be lost.
    pub fn losing(&self) -> bool {
        self.lose.load(Ordering::SeqCst)
    }
}

impl Drop for LossyProxy {
    fn drop(&mut self) {
        self.closed.store(true, Ordering::SeqCst);
        let open = std::mem::take(&mut *self.open.lock().unwrap_or_else(PoisonError::into_inner));
        for stream in open {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        // Wakes the accept loop, which then ends.
        let _ = TcpStream::connect(self.address);
    }
}

/// Copies both ways between `client` and `server` on two threads; the server-to-client side loses
/// one chunk, and closes both, when `lose` is set.
fn forward(
    client: TcpStream,
    server: TcpStream,
    lose: &Arc<AtomicBool>,
    open: &Arc<Mutex<Vec<TcpStream>>>,
) -> io::Result<()> {
    {
        let mut open = open.lock().unwrap_or_else(PoisonError::into_inner);
        open.push(client.try_clone()?);
        open.push(server.try_clone()?);
    }
    let (mut from_client, mut to_server) = (client.try_clone()?, server.try_clone()?);
    std::thread::spawn(move || {
        let _ = io::copy(&mut from_client, &mut to_server);
        let _ = to_server.shutdown(std::net::Shutdown::Write);
    });
    let (mut from_server, mut to_client) = (server, client);
    let lose = lose.clone();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            let read = match from_server.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            if lose.swap(false, Ordering::SeqCst) {
                break;
            }
            if to_client.write_all(&buffer[..read]).is_err() {
                break;
            }
        }
        let _ = to_client.shutdown(std::net::Shutdown::Both);
        let _ = from_server.shutdown(std::net::Shutdown::Both);
    });
    Ok(())
}

/// A private Redis Cluster: three primaries and three replicas on free loopback ports, each in its
/// own directory, stopped on drop. Nodes are numbered in the order given to `redis-cli --cluster
/// create`; which ones serve which slots is asked of the cluster, never assumed.
#[derive(Debug)]
pub struct RedisCluster {
    dir: tempfile::TempDir,
    nodes: Vec<ClusterNode>,
}

#[derive(Debug)]
struct ClusterNode {
    port: u16,
    bus_port: u16,
    child: Option<Child>,
}

impl RedisCluster {
    /// Starts six nodes, joins them (`--cluster-replicas 1`) and waits until the cluster is `ok`
    /// everywhere and every replica is in sync; `Ok(None)` as for [`RedisServer::start`].
    pub fn start() -> io::Result<Option<RedisCluster>> {
        if !available(&["redis-server", "redis-cli"])? {
            return Ok(None);
        }
        let ports = free_ports(12)?;
        let mut cluster = RedisCluster {
            dir: tempfile::Builder::new()
                .prefix("redis-cluster-test-")
                .tempdir()?,
            nodes: ports
                .chunks(2)
                .map(|pair| ClusterNode {
                    port: pair[0],
                    bus_port: pair[1],
                    child: None,
                })
                .collect(),
        };
        for index in 0..cluster.nodes.len() {
            cluster.spawn(index)?;
        }
        let mut create = Command::new("redis-cli");
        create.args(["--cluster", "create"]);
        for node in &cluster.nodes {
            create.arg(format!("127.0.0.1:{}", node.port));
        }
        create.args(["--cluster-replicas", "1", "--cluster-yes"]);
        let output = create.stdin(Stdio::null()).output()?;
        if !output.status.success() {
            return Err(io::Error::other(format!(
                "redis-cli --cluster create failed: {}",
                String::from_utf8_lossy(&output.stdout)
            )));
        }
        cluster.wait_until_healthy(READY_WITHIN)?;
        Ok(Some(cluster))
    }

    /// `redis://127.0.0.1:PORT/` of every node, primaries and replicas (seed nodes for a client).
    pub fn urls(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|node| format!("redis://127.0.0.1:{}/", node.port))
            .collect()
    }

    /// The node serving `key`'s slot as primary, by the cluster's own view.
    pub fn primary_of(&self, key: &str) -> io::Result<usize> {
        let mut connection = self.any_live_connection()?;
        let slot: u16 = redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query(&mut connection)
            .map_err(io::Error::other)?;
        let nodes: String = redis::cmd("CLUSTER")
            .arg("NODES")
            .query(&mut connection)
            .map_err(io::Error::other)?;
        let port = primary_port(&nodes, slot)
            .ok_or_else(|| io::Error::other(format!("no live primary serves slot {slot}")))?;
        self.nodes
            .iter()
            .position(|node| node.port == port)
            .ok_or_else(|| io::Error::other(format!("port {port} is not one of this cluster's")))
    }

    /// The replica of node `primary` (the first its `INFO replication` lists).
    pub fn replica_of(&self, primary: usize) -> io::Result<usize> {
        let text = info(self.nodes[primary].port, "replication")
            .ok_or_else(|| io::Error::other(format!("node {primary} does not answer")))?;
        let port: u16 = text
            .lines()
            .find_map(|line| {
                let fields = line.trim().strip_prefix("slave0:")?;
                fields
                    .split(',')
                    .find_map(|field| field.strip_prefix("port="))?
                    .parse()
                    .ok()
            })
            .ok_or_else(|| io::Error::other(format!("node {primary} has no replica")))?;
        self.nodes
            .iter()
            .position(|node| node.port == port)
            .ok_or_else(|| io::Error::other(format!("port {port} is not one of this cluster's")))
    }

    /// Stops node `index` (SIGSTOP): its connections stay open, it answers nothing, as a node the
    /// machine stalls. [`resume`](Self::resume) undoes it.
    pub fn pause(&self, index: usize) -> io::Result<()> {
        self.signal(index, "-STOP")
    }

    /// Lets a node stopped by [`pause`](Self::pause) run again (SIGCONT).
    pub fn resume(&self, index: usize) -> io::Result<()> {
        self.signal(index, "-CONT")
    }

    fn signal(&self, index: usize, signal: &str) -> io::Result<()> {
        let pid = self.nodes[index]
            .child
            .as_ref()
            .ok_or_else(|| io::Error::other(format!("node {index} is not running")))?
            .id();
        let status = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!("kill {signal} {pid}: {status}")))
        }
    }

    /// Kills node `index` (SIGKILL, as a crash would) and waits for it to exit.
    pub fn kill(&mut self, index: usize) {
        if let Some(mut child) = self.nodes.get_mut(index).and_then(|n| n.child.take()) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the primary of `key`'s slot; answers which node it was.
    pub fn kill_primary_of(&mut self, key: &str) -> io::Result<usize> {
        let index = self.primary_of(key)?;
        self.kill(index);
        Ok(index)
    }

    /// Waits until a live node serves `key`'s slot as primary and the cluster is `ok` on every live
    /// node (a replica was promoted); answers which node it is.
    pub fn wait_for_failover(&self, key: &str, within: Duration) -> io::Result<usize> {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(index) = self.primary_of(key)
                && self.nodes[index].child.is_some()
                && self.live_nodes().all(|n| cluster_state_ok(n.port))
            {
                return Ok(index);
            }
            if Instant::now() > deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no replica took over the slot of {key} within {within:?}"),
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until every replica has acknowledged everything its primary wrote (replication is
    /// asynchronous: what a test wrote just before killing a primary may not have reached its replica).
    pub fn wait_for_replication(&self, within: Duration) -> io::Result<()> {
        let replicated = || {
            self.live_nodes().all(|node| {
                info(node.port, "replication").is_some_and(|text| replicas_caught_up(&text))
            })
        };
        if wait_until(within, replicated) {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the replicas did not catch up in time",
            ))
        }
    }

    /// Starts a killed node again with its configuration: it rejoins as a replica of whichever node
    /// took over its slots.
    pub fn restart(&mut self, index: usize) -> io::Result<()> {
        self.kill(index);
        self.spawn(index)
    }

    /// Starts killed node `index` again and waits until it replicates the node that took over its
    /// slots (`role:slave`, link up): the promoted primary has a replica again, as an operator (or
    /// an orchestrator) brings a failed node back.
    pub fn rejoin(&mut self, index: usize, within: Duration) -> io::Result<()> {
        self.restart(index)?;
        let port = self.nodes[index].port;
        let replicating = wait_until(within, || {
            info(port, "replication").is_some_and(|text| {
                text.contains("role:slave") && text.contains("master_link_status:up")
            })
        });
        if replicating {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("cluster node {index} did not rejoin as a replica in time"),
            ))
        }
    }

    fn spawn(&mut self, index: usize) -> io::Result<()> {
        let node_dir = self.dir.path().join(format!("node-{index}"));
        std::fs::create_dir_all(&node_dir)?;
        let node = &mut self.nodes[index];
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &node.port.to_string()])
            .args(["--cluster-port", &node.bus_port.to_string()])
            .args(["--bind", "127.0.0.1", "--daemonize", "no"])
            .args(["--save", "", "--appendonly", "no"])
            .args(["--cluster-enabled", "yes"])
            .args(["--cluster-config-file", "nodes.conf"])
            .args([
                "--cluster-node-timeout",
                &CLUSTER_NODE_TIMEOUT.as_millis().to_string(),
            ])
            // A replica takes over however long ago it last heard from its primary.
            .args(["--cluster-replica-validity-factor", "0"])
            // Replicas sync at once (the default waits 5 s for more replicas to share the transfer).
            .args(["--repl-diskless-sync-delay", "0"])
            .arg("--dir")
            .arg(&node_dir);
        node.child = Some(quiet(&mut command).spawn()?);
        let address = SocketAddr::from(([127, 0, 0, 1], node.port));
        let ready = wait_until(READY_WITHIN, || {
            TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok_and(ping)
        });
        if ready {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("cluster node {index} did not answer in time"),
            ))
        }
    }

    /// Every node says `cluster_state:ok`, every replica's link to its primary is up, and every
    /// primary lists its replicas online (a `WAIT` counts only replicas the primary sees; under load
    /// the primary's side lags the replica's, and a claim then fails closed with 0 acknowledgements).
    fn wait_until_healthy(&self, within: Duration) -> io::Result<()> {
        let healthy = || {
            self.live_nodes().all(|node| {
                cluster_state_ok(node.port)
                    && info(node.port, "replication").is_some_and(|text| {
                        if text.contains("role:master") {
                            let replicas: Vec<&str> = text
                                .lines()
                                .filter(|line| line.starts_with("slave"))
                                .collect();
                            !replicas.is_empty()
                                && replicas.iter().all(|line| line.contains("state=online"))
                        } else {
                            text.contains("master_link_status:up")
                        }
                    })
            })
        };
        if wait_until(within, healthy) {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the cluster did not become healthy in time",
            ))
        }
    }

    fn live_nodes(&self) -> impl Iterator<Item = &ClusterNode> {
        self.nodes.iter().filter(|node| node.child.is_some())
    }

    fn any_live_connection(&self) -> io::Result<redis::Connection> {
        self.live_nodes()
            .find_map(|node| connect(node.port).ok())
            .ok_or_else(|| io::Error::other("no cluster node answers"))
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for index in 0..self.nodes.len() {
            self.kill(index);
        }
    }
}

/// The port of the node that `CLUSTER NODES` shows as the live primary of `slot`.
fn primary_port(nodes: &str, slot: u16) -> Option<u16> {
    nodes.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let flags = *fields.get(2)?;
        if !flags.split(',').any(|f| f == "master") || flags.contains("fail") {
            return None;
        }
        let serves = fields.iter().skip(8).any(|range| {
            let mut bounds = range.split('-').map(str::parse::<u16>);
            match (bounds.next(), bounds.next()) {
                (Some(Ok(first)), Some(Ok(last))) => (first..=last).contains(&slot),
                (Some(Ok(only)), None) => only == slot,
                _ => false,
            }
        });
        // `127.0.0.1:7000@17000`
        let address = fields.get(1)?.split('@').next()?;
        serves.then(|| address.rsplit(':').next()?.parse().ok())?
    })
}

/// Whether a primary's `INFO replication` shows every replica at its own offset (a replica's shows
/// no `slaveN` line: nothing to wait for).
fn replicas_caught_up(info: &str) -> bool {
    let Some(offset) = info.lines().find_map(|line| {
        line.trim()
            .strip_prefix("master_repl_offset:")?
            .parse::<u64>()
            .ok()
    }) else {
        return false;
    };
    info.lines()
        .filter(|line| line.starts_with("slave") && line.contains("offset="))
        .all(|line| {
            line.trim()
                .split(',')
                .find_map(|part| part.strip_prefix("offset=")?.parse::<u64>().ok())
                == Some(offset)
        })
}

fn connect(port: u16) -> redis::RedisResult<redis::Connection> {
    redis::Client::open(format!("redis://127.0.0.1:{port}/"))?
        .get_connection_with_timeout(Duration::from_millis(500))
}

fn info(port: u16, section: &str) -> Option<String> {
    let mut connection = connect(port).ok()?;
    redis::cmd("INFO").arg(section).query(&mut connection).ok()
}

fn cluster_state_ok(port: u16) -> bool {
    let Ok(mut connection) = connect(port) else {
        return false;
    };
    redis::cmd("CLUSTER")
        .arg("INFO")
        .query::<String>(&mut connection)
        .is_ok_and(|text| text.lines().any(|line| line.trim() == "cluster_state:ok"))
}

/// The Redis that `urls` names for a bench's child process: one URL (a cluster or not, as it answers),
/// or a cluster's nodes separated by commas ([`RedisCluster::urls`] joined).
pub fn config_from_urls(urls: &str) -> crate::RedisConfig {
    if urls.contains(',') {
        crate::RedisConfig::cluster(urls.split(','))
    } else {
        crate::RedisConfig::new(urls)
    }
}

/// Whether to run: every one of `programs` is installed; or not, and the caller skips (after a loud
/// message) unless `STORE_API_REQUIRE_REDIS` makes it an error.
fn available(programs: &[&str]) -> io::Result<bool> {
    let Some(missing) = programs.iter().find(|program| !on_path(program)) else {
        return Ok(true);
    };
    if std::env::var(REQUIRE_ENV).is_ok_and(|v| !v.is_empty() && v != "0") {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{missing} is not installed and {REQUIRE_ENV} is set"),
        ));
    }
    eprintln!(
        "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
         !!! SKIPPED: {missing} is not installed, so this Redis test did not run.\n\
         !!! Install it: apt-get install -y redis-server (CI does, and sets {REQUIRE_ENV}=1).\n\
         !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
    );
    Ok(false)
}

/// Whether `redis-server` is on the path.
pub fn installed() -> bool {
    on_path("redis-server")
}

fn on_path(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn quiet(command: &mut Command) -> &mut Command {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
}

/// Polls `ready` every 10 ms until it holds or `within` has passed.
fn wait_until(within: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Whether the server on `stream` answers `PING` with `PONG`.
fn ping<S: Read + Write>(mut stream: S) -> bool {
    let mut answer = [0u8; 5];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut answer).is_ok()
        && &answer == b"+PONG"
}

/// `count` distinct ports free on 127.0.0.1 now (held together while chosen, so none repeats).
fn free_ports(count: usize) -> io::Result<Vec<u16>> {
    let listeners = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<io::Result<Vec<_>>>()?;
    listeners
        .iter()
        .map(|listener| Ok(listener.local_addr()?.port()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_live_primary_of_a_slot() {
        let nodes = "\
a1 127.0.0.1:7001@17001 master,fail - 0 0 1 disconnected 0-5460
b2 127.0.0.1:7002@17002 master - 0 0 2 connected 5461-10922
c3 127.0.0.1:7003@17003 myself,master - 0 0 3 connected 10923-16382 16383
d4 127.0.0.1:7004@17004 slave b2 0 0 2 connected
e5 127.0.0.1:7005@17005 master - 0 0 7 connected 0-5460
";
        assert_eq!(primary_port(nodes, 0), Some(7005));
        assert_eq!(primary_port(nodes, 5461), Some(7002));
        assert_eq!(primary_port(nodes, 10923), Some(7003));
        assert_eq!(primary_port(nodes, 16383), Some(7003));
    }

    #[test]
    fn reads_replication_offsets() {
        let caught_up = "role:master\r\nconnected_slaves:1\r\nslave0:ip=127.0.0.1,port=7004,state=online,offset=420,lag=0\r\nmaster_repl_offset:420\r\n";
        assert!(replicas_caught_up(caught_up));
        assert!(!replicas_caught_up(
            &caught_up.replace("offset=420", "offset=400")
        ));
        assert!(replicas_caught_up("role:slave\r\nmaster_repl_offset:9\r\n"));
    }
}
