//! A private `redis-server` for tests and benches (feature `testing`).
//!
//! [`RedisServer::start`] runs `redis-server` on a Unix socket in a temporary directory (no port to
//! find, nothing shared with another test) and stops it on drop. When `redis-server` is not installed
//! it returns `Ok(None)` after a loud message, so a developer without Redis still runs the rest of the
//! suite; with `STORE_API_REQUIRE_REDIS=1` (set by `.ci/run`) that is an error instead, so CI never
//! skips.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The variable under which a missing `redis-server` fails instead of skipping.
pub const REQUIRE_ENV: &str = "STORE_API_REQUIRE_REDIS";

/// A running private `redis-server`.
#[derive(Debug)]
pub struct RedisServer {
    dir: tempfile::TempDir,
    child: Option<Child>,
    persistent: bool,
}

impl RedisServer {
    /// Starts a server without persistence, or `Ok(None)` (after a loud message on stderr) when
    /// `redis-server` is not installed and `STORE_API_REQUIRE_REDIS` is not set.
    pub fn start() -> io::Result<Option<RedisServer>> {
        Self::start_with(false)
    }

    /// Like [`start`](Self::start), with the append-only file on and fsynced at every write, so a
    /// restart loses nothing (what the dedupe needs to keep its guarantee across a restart).
    pub fn start_persistent() -> io::Result<Option<RedisServer>> {
        Self::start_with(true)
    }

    fn start_with(persistent: bool) -> io::Result<Option<RedisServer>> {
        if !installed() {
            if std::env::var(REQUIRE_ENV).is_ok_and(|v| !v.is_empty() && v != "0") {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("redis-server is not installed and {REQUIRE_ENV} is set"),
                ));
            }
            eprintln!(
                "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
                 !!! SKIPPED: redis-server is not installed, so this Redis test did not run.\n\
                 !!! Install it: apt-get install -y redis-server (CI does, and sets {REQUIRE_ENV}=1).\n\
                 !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
            );
            return Ok(None);
        }
        let mut server = RedisServer {
            dir: tempfile::Builder::new().prefix("redis-test-").tempdir()?,
            child: None,
            persistent,
        };
        server.spawn()?;
        Ok(Some(server))
    }

    /// The URL of the server (`redis+unix:///…/r.sock`).
    pub fn url(&self) -> String {
        format!("redis+unix://{}", self.socket().display())
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
        command
            .args(["--port", "0", "--save", "", "--daemonize", "no"])
            .arg("--unixsocket")
            .arg(self.socket())
            .arg("--dir")
            .arg(dir)
            .args(if self.persistent {
                ["--appendonly", "yes", "--appendfsync", "always"]
            } else {
                ["--appendonly", "no", "--appendfsync", "everysec"]
            })
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = command.spawn()?;
        self.child = Some(child);
        // Ready when it answers PING with PONG: it accepts connections while still loading its
        // append-only file, and answers `-LOADING` until then.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if ping(&self.socket()) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.stop();
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "redis-server did not open its socket within 10 s",
        ))
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn ping(socket: &Path) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::os::unix::net::UnixStream::connect(socket) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut answer = [0u8; 5];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut answer).is_ok()
        && &answer == b"+PONG"
}

/// Whether `redis-server` is on the path.
pub fn installed() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
