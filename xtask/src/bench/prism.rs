//! Prism's mock server of the same spec, as the yardstick of the emulator's throughput: installed with
//! npm into `.tools/prism`, started on 127.0.0.1, and loaded by the throughput bench's own generator.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::BenchError;
use super::runner::show;

/// The pinned release (later ones need Node 24 or newer).
pub const VERSION: &str = "5.14.2";
/// Where it is installed, relative to the workspace root.
pub const PREFIX: &str = ".tools/prism";
/// The request both servers answer: one page of 100 orders of the seeded store. Prism mishandles
/// bracketed query names such as `filter[status]`, so the query has none.
pub const ORDERS_PATH: &str = "/stores/store_alpha/orders?limit=100";
/// `store_alpha`'s key in the emulator's seed (Prism only checks that one is sent).
pub const API_KEY: &str = "csk_ce4d6676e735329b21b3d864ca427df5";
/// How long Prism may take to load the spec and listen.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The `prism` executable, installing the pinned version first when it is missing.
pub fn install(root: &Path) -> Result<PathBuf, BenchError> {
    let prefix = root.join(PREFIX);
    let binary = prefix.join("node_modules/.bin/prism");
    let manifest = prefix.join("node_modules/@stoplight/prism-cli/package.json");
    let installed = std::fs::read_to_string(&manifest)
        .is_ok_and(|text| text.contains(&format!("\"version\": \"{VERSION}\"")));
    if installed && binary.exists() {
        return Ok(binary);
    }
    let mut command = Command::new("npm");
    command
        .current_dir(root)
        .args(["install", "--prefix", PREFIX, "--no-audit", "--no-fund"])
        .arg(format!("@stoplight/prism-cli@{VERSION}"))
        .stdout(Stdio::null());
    eprintln!("==> installing Prism: {}", show(&command));
    let status = command
        .status()
        .map_err(|e| BenchError::Io("running npm (is Node.js installed?)".to_owned(), e))?;
    if !status.success() || !binary.exists() {
        return Err(BenchError::Command {
            command: show(&command),
            detail: status.to_string(),
        });
    }
    Ok(binary)
}

/// A running `prism mock`; dropping it stops the process.
#[derive(Debug)]
pub struct MockServer {
    child: Child,
    addr: SocketAddr,
    /// The path under which Prism answers [`ORDERS_PATH`].
    pub orders_path: String,
    /// The spec's base path (`servers[0].url`'s path).
    base_path: String,
}

impl MockServer {
    /// Starts `prism mock SPEC` on a free port of 127.0.0.1, logging to `log`, and waits until it
    /// answers the orders page, under the spec's base path or without it.
    pub fn start(binary: &Path, spec: &Path, log: &Path) -> Result<MockServer, BenchError> {
        let spec_text = std::fs::read_to_string(spec)
            .map_err(|e| BenchError::Io(format!("reading {}", spec.display()), e))?;
        let base_path =
            crate::contract::version_prefix(&spec_text).map_err(|e| BenchError::Command {
                command: "reading the spec's base path".to_owned(),
                detail: e.to_string(),
            })?;
        let port = free_port()?;
        let log_file = std::fs::File::create(log)
            .map_err(|e| BenchError::Io(format!("creating {}", log.display()), e))?;
        let log_err = log_file
            .try_clone()
            .map_err(|e| BenchError::Io(format!("opening {}", log.display()), e))?;
        let mut command = Command::new(binary);
        command
            .arg("mock")
            .arg(spec)
            .args(["-p", &port.to_string(), "-h", "127.0.0.1"])
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err);
        eprintln!("==> starting Prism: {}", show(&command));
        let child = command
            .spawn()
            .map_err(|e| BenchError::Io(format!("starting {}", binary.display()), e))?;
        let mut server = MockServer {
            child,
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            orders_path: String::new(),
            base_path,
        };
        server.orders_path = server.wait_until_serving(log)?;
        Ok(server)
    }

    /// The URL of the orders page.
    pub fn orders_url(&self) -> String {
        format!("http://{}{}", self.addr, self.orders_path)
    }

    /// Polls until one of the two candidate paths answers 200; returns it.
    fn wait_until_serving(&mut self, log: &Path) -> Result<String, BenchError> {
        // Prism may or may not put the spec's base path before the paths.
        let candidates = [
            ORDERS_PATH.to_owned(),
            format!("{}{ORDERS_PATH}", self.base_path),
        ];
        let started = Instant::now();
        let mut last = String::from("no answer");
        while started.elapsed() < START_TIMEOUT {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(BenchError::Command {
                    command: "prism mock".to_owned(),
                    detail: format!("exited with {status} (see {})", log.display()),
                });
            }
            for path in &candidates {
                match get_status(self.addr, path) {
                    Ok(200) => return Ok(path.clone()),
                    Ok(status) => last = format!("GET {path} answered {status}"),
                    Err(error) => last = format!("GET {path}: {error}"),
                }
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Err(BenchError::Command {
            command: "prism mock".to_owned(),
            detail: format!(
                "did not serve the orders page within {} s ({last}; see {})",
                START_TIMEOUT.as_secs(),
                log.display()
            ),
        })
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        // Our own child, by its handle; it runs in one process (no workers).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port that was free a moment ago.
fn free_port() -> Result<u16, BenchError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(|e| BenchError::Io("finding a free port".to_owned(), e))?;
    listener
        .local_addr()
        .map(|addr| addr.port())
        .map_err(|e| BenchError::Io("finding a free port".to_owned(), e))
}

/// The status code of `GET path` with the API key, over a fresh connection.
fn get_status(addr: SocketAddr, path: &str) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    // One write: a request split over several packets is still valid, but there is no need for it.
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nX-API-Key: {API_KEY}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes())?;
    let mut head = [0_u8; 12];
    stream.read_exact(&mut head)?;
    status_of(&head).ok_or_else(|| std::io::Error::other("not an HTTP/1.1 status line"))
}

/// The status code in the first bytes of an HTTP/1.x answer (`HTTP/1.1 200`).
fn status_of(head: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(head).ok()?;
    let rest = text.strip_prefix("HTTP/1.")?;
    rest.get(2..5)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_status_line() {
        assert_eq!(status_of(b"HTTP/1.1 200"), Some(200));
        assert_eq!(status_of(b"HTTP/1.0 404"), Some(404));
        assert_eq!(status_of(b"HTTP/2 200 O"), None);
        assert_eq!(status_of(b"garbage data"), None);
    }

    #[test]
    fn probes_a_local_server() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut chunk = [0_u8; 1024];
            while !request.ends_with(b"\r\n\r\n") {
                let read = stream.read(&mut chunk).unwrap();
                assert!(read > 0, "the probe closed before ending its request");
                request.extend_from_slice(&chunk[..read]);
            }
            stream
                .write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n")
                .unwrap();
            String::from_utf8(request).unwrap()
        });
        assert_eq!(get_status(addr, ORDERS_PATH).unwrap(), 401);
        let request = server.join().unwrap();
        assert!(request.starts_with(&format!("GET {ORDERS_PATH} HTTP/1.1\r\n")));
        assert!(request.contains(&format!("X-API-Key: {API_KEY}\r\n")));
    }
}
