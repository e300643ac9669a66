//! The default build speaks HTTPS: a TLS server on 127.0.0.1, with a certificate generated here (rcgen),
//! terminates TLS in front of the emulator, and the client trusts it through
//! `ClientBuilder::root_certificate_pem`. Without that trust anchor the same exchange is refused, so the
//! certificate is really verified.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use store_api::{Client, Error, RateLimiter, RetryPolicy};
use store_api_fixtures::Emulator;
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

async fn emulator() -> Emulator {
    Emulator::builder()
        .rate_limit(false)
        .network_downloads(false)
        .start()
        .await
        .unwrap()
}

fn builder(emulator: &Emulator, front: &TlsFront) -> store_api::ClientBuilder {
    let store = emulator.store("store_alpha").unwrap();
    Client::builder()
        .base_url(format!("https://127.0.0.1:{}", front.addr.port()))
        .store_id(store.id)
        .api_key(store.api_key)
        .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
        .retry_policy(RetryPolicy::default().with_max_attempts(1))
        .timeout(Duration::from_secs(10))
}

#[tokio::test]
async fn the_default_build_completes_an_https_exchange_with_a_trusted_root() {
    let emulator = emulator().await;
    let front = tls_front(emulator.addr()).await;
    let client = builder(&emulator, &front)
        .root_certificate_pem(&front.certificate_pem)
        .build()
        .unwrap();

    let status = client.status().await.unwrap();
    assert_eq!(status.version.as_deref(), Some("2026-08"));
    let page = client
        .catalog()
        .list(&store_api::CatalogQuery::default())
        .await
        .unwrap();
    assert!(!page.items.is_empty());
    assert!(front.handshakes.load(Ordering::SeqCst) >= 1);
}

#[tokio::test]
async fn an_untrusted_certificate_is_refused() {
    let emulator = emulator().await;
    let front = tls_front(emulator.addr()).await;
    let client = builder(&emulator, &front).build().unwrap();

    let error = client.status().await.unwrap_err();
    assert!(matches!(error, Error::Transport { .. }), "{error:?}");
    assert_eq!(front.handshakes.load(Ordering::SeqCst), 0);
}
