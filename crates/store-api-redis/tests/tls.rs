//! `rediss://` through rustls against a private `redis-server --tls-port`, with certificates made by
//! rcgen: a custom CA, a client certificate when the server asks for one, and refusals of a server the
//! client does not trust and of a client the server does not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use store_api::Limiter;
use store_api_redis::testing::{RedisServer, TestCertificates};
use store_api_redis::{RedisConfig, RedisDedupe, RedisLimiter};
use store_api_webhooks::dedupe::{Claim, Dedupe};

fn tls_server(client_auth: bool) -> Option<RedisServer> {
    RedisServer::start_tls(client_auth).expect("cannot start redis-server with TLS")
}

fn dedupe(config: RedisConfig) -> RedisDedupe {
    RedisDedupe::builder(config, "store_tls")
        .command_timeout(Duration::from_secs(2))
        .build()
        .unwrap()
}

/// Why a claim failed, as text (the TLS error is somewhere in it).
async fn refusal(dedupe: &RedisDedupe) -> String {
    match dedupe.begin("evt_refused").await {
        Ok(claim) => panic!("the exchange should have been refused, got {claim:?}"),
        Err(error) => format!("{:?}", error.into_inner()),
    }
}

#[tokio::test]
async fn a_server_signed_by_a_custom_ca_is_trusted() {
    let Some(server) = tls_server(false) else {
        return;
    };
    let certificates = server.certificates().unwrap();
    let config =
        RedisConfig::new(server.tls_url().unwrap()).ca_certificate(certificates.ca_pem.clone());
    let limiter = RedisLimiter::builder(config.clone(), "https://api.example.com", "store_tls")
        .command_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    limiter.acquire().await;
    assert!(!limiter.in_outage(), "the limiter reached Redis over TLS");
    let dedupe = dedupe(config);
    let Claim::Fresh(token) = dedupe.begin("evt_1").await.unwrap() else {
        panic!("a fresh claim")
    };
    assert!(dedupe.complete("evt_1", token).await.unwrap());
    assert_eq!(dedupe.begin("evt_1").await.unwrap(), Claim::Duplicate);
}

#[tokio::test]
async fn an_untrusted_server_certificate_is_refused() {
    let Some(server) = tls_server(false) else {
        return;
    };
    let url = server.tls_url().unwrap();
    // Signed by a CA the client was not given: refused, whether it trusts another CA or the system's.
    let stranger = TestCertificates::generate().unwrap();
    let other_ca = dedupe(RedisConfig::new(url.as_str()).ca_certificate(stranger.ca_pem));
    let why = refusal(&other_ca).await;
    assert!(why.contains("invalid peer certificate"), "{why}");
    let system_roots = dedupe(RedisConfig::new(url.as_str()));
    let why = refusal(&system_roots).await;
    assert!(
        why.contains("invalid peer certificate: UnknownIssuer"),
        "{why}"
    );
    // The limiter falls back rather than send without the shared state.
    let limiter = RedisLimiter::builder(
        RedisConfig::new(url.as_str()).ca_certificate(TestCertificates::generate().unwrap().ca_pem),
        "https://api.example.com",
        "store_tls",
    )
    .command_timeout(Duration::from_millis(500))
    .build()
    .unwrap();
    tokio::time::timeout(Duration::from_secs(5), limiter.acquire())
        .await
        .expect("falls back");
    assert!(limiter.in_outage());
}

#[tokio::test]
async fn a_client_certificate_is_presented_when_the_server_asks() {
    let Some(server) = tls_server(true) else {
        return;
    };
    let certificates = server.certificates().unwrap();
    let trusting =
        RedisConfig::new(server.tls_url().unwrap()).ca_certificate(certificates.ca_pem.clone());
    // Without one, the server ends the handshake.
    let anonymous = dedupe(trusting.clone());
    let why = refusal(&anonymous).await;
    assert!(why.contains("CertificateRequired"), "{why}");
    let identified = dedupe(trusting.client_certificate(
        certificates.client_cert_pem.clone(),
        certificates.client_key_pem.clone(),
    ));
    assert!(matches!(
        identified.begin("evt_2").await.unwrap(),
        Claim::Fresh(_)
    ));
    // A certificate from another CA is refused too.
    let stranger = TestCertificates::generate().unwrap();
    let impostor = dedupe(
        RedisConfig::new(server.tls_url().unwrap())
            .ca_certificate(certificates.ca_pem.clone())
            .client_certificate(stranger.client_cert_pem, stranger.client_key_pem),
    );
    let why = refusal(&impostor).await;
    assert!(why.contains("received fatal alert"), "{why}");
}
