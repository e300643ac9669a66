//! The default build speaks HTTPS: a TLS server on 127.0.0.1, with a certificate generated here (rcgen),
//! terminates TLS in front of a plain-HTTP stand-in for the service (two canned answers; this crate's
//! tests do not use the emulator, which is tested with the client in `tests/`), and the client trusts it through
//! `ClientBuilder::root_certificate_pem`. Without that trust anchor the same exchange is refused, so the
//! certificate is really verified.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use store_api::{Client, Error, RateLimiter, RetryPolicy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A TLS terminator on 127.0.0.1 in front of `upstream` (plain HTTP).
struct TlsFront {
    addr: SocketAddr,
    certificate_pem: String,
    /// Completed TLS handshakes.
    handshakes: Arc<AtomicUsize>,
}

async fn tls_front(upstream: SocketAddr) -> TlsFront {
    // A certificate for the IP address the client connects to (an IP SAN; rustls checks it).
    let generated =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .unwrap();
    let certificate_pem = generated.cert.pem();
    let chain = vec![CertificateDer::from(generated.cert.der().to_vec())];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        generated.signing_key.serialize_der(),
    ));
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handshakes = Arc::new(AtomicUsize::new(0));
    let counter = handshakes.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let counter = counter.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                counter.fetch_add(1, Ordering::SeqCst);
                let Ok(mut plain) = TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    TlsFront {
        addr,
        certificate_pem,
        handshakes,
    }
}

/// What the stand-in answers to `GET …/status`.
const STATUS: &str = r#"{"status":"ok","version":"2026-08"}"#;
/// What the stand-in answers to `GET …/catalog-products`: a page of one blank.
const CATALOG: &str =
    r#"{"items":[{"id":"cp_tls"}],"startItem":1,"endItem":1,"totalItems":1,"totalPages":1}"#;

/// A plain-HTTP stand-in for the service on 127.0.0.1: `GET …/status` and `GET …/catalog-products` answered
/// with [`STATUS`] and [`CATALOG`], anything else with a 404; one request per connection.
async fn upstream() -> SocketAddr {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buffer = [0; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(read) => head.extend_from_slice(&buffer[..read]),
                    }
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split_whitespace().nth(1).unwrap_or_default();
                let path = path.split('?').next().unwrap_or_default();
                let (status, body) = if path.ends_with("/status") {
                    ("200 OK", STATUS)
                } else if path.ends_with("/catalog-products") {
                    ("200 OK", CATALOG)
                } else {
                    (
                        "404 Not Found",
                        r#"{"statusCode":404,"message":"Not found"}"#,
                    )
                };
                let answer = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    addr
}

fn builder(front: &TlsFront) -> store_api::ClientBuilder {
    Client::builder()
        .base_url(format!("https://127.0.0.1:{}", front.addr.port()))
        .store_id("store_alpha")
        .api_key("csk_https_test_key_0123456789abcdef")
        .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
        .retry_policy(RetryPolicy::default().with_max_attempts(1))
        .timeout(Duration::from_secs(10))
}

#[tokio::test]
async fn the_default_build_completes_an_https_exchange_with_a_trusted_root() {
    let front = tls_front(upstream().await).await;
    let client = builder(&front)
        .root_certificate_pem(&front.certificate_pem)
        .build()
        .unwrap();

    let status = client.status().await.unwrap();
    assert_eq!(status.version.as_deref(), Some("2026-08"));
    let page = client
        .catalog()
        .list(&store_api::ListCatalogProductsQuery::default())
        .await
        .unwrap();
    assert!(!page.items.is_empty());
    assert!(front.handshakes.load(Ordering::SeqCst) >= 1);
}

#[tokio::test]
async fn an_untrusted_certificate_is_refused() {
    let front = tls_front(upstream().await).await;
    let client = builder(&front).build().unwrap();

    let error = client.status().await.unwrap_err();
    assert!(matches!(error, Error::Transport { .. }), "{error:?}");
    assert_eq!(front.handshakes.load(Ordering::SeqCst), 0);
}
