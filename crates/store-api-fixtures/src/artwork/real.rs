//! The real HTTPS artwork downloader, with the service's address, redirect, size and time rules.

use std::net::SocketAddr;

use bytes::BytesMut;
use futures::future::BoxFuture;
use store_api_rules::artwork_url::{UrlViolation, check_url};
use url::{Host, Url};

use super::address::choose_address;
use super::fetch::{ArtworkFetcher, FetchLimits, FetchedImage, exceeds};

/// Downloads artwork over the network exactly as the service does.
///
/// Steps: the host is resolved with the system resolver (a failure or no address is
/// [`UrlViolation::Unresolvable`]); if any resolved address is not public the URL is
/// [`UrlViolation::PrivateAddress`] (see [`choose_address`]); the connection then goes to that
/// checked address only (a DNS override on a client built for this one download, and no proxy), so
/// a rebinding DNS answer cannot slip in between check and connect. Redirects are not followed (a
/// 3xx is [`UrlViolation::DownloadFailed`]), as are non-2xx statuses, bodies over
/// [`FetchLimits::max_bytes`] (streamed and aborted as soon as they cross it), anything that is
/// not PNG or JPEG by its magic bytes, and a download that takes longer than
/// [`FetchLimits::timeout`] from resolution to the last byte.
///
/// TLS is only compiled in with this crate's `rustls` feature. Without it every `https` download
/// fails at connection time and is reported as [`UrlViolation::DownloadFailed`]; the address
/// checks above still run first, so `Unresolvable` and `PrivateAddress` are reported either way.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFetcher {
    limits: FetchLimits,
}

impl RealFetcher {
    /// A fetcher bounded by `limits`.
    pub fn new(limits: FetchLimits) -> RealFetcher {
        RealFetcher { limits }
    }

    /// The limits this fetcher applies.
    pub fn limits(&self) -> FetchLimits {
        self.limits
    }

    async fn fetch_checked(&self, url: &Url) -> Result<FetchedImage, UrlViolation> {
        // The trait promises a checked URL; checking again is cheap and keeps this type safe alone.
        let url = check_url(url.as_str())?;
        let port = url
            .port_or_known_default()
            .ok_or(UrlViolation::InvalidUrl)?;
        let mut builder = client_builder(self.limits);
        match url.host() {
            Some(Host::Domain(domain)) => {
                let resolved = resolve(domain, port).await?;
                let chosen = choose_address(&resolved)?;
                builder = builder.resolve(domain, chosen);
            }
            Some(Host::Ipv4(ip)) => {
                choose_address(&[SocketAddr::new(ip.into(), port)])?;
            }
            Some(Host::Ipv6(ip)) => {
                choose_address(&[SocketAddr::new(ip.into(), port)])?;
            }
            None => return Err(UrlViolation::InvalidUrl),
        }
        let client = builder.build().map_err(|error| {
            tracing::debug!(%error, "artwork download client could not be built");
            UrlViolation::DownloadFailed
        })?;
        download(&client, &url, self.limits).await
    }
}

impl ArtworkFetcher for RealFetcher {
    fn fetch<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<FetchedImage, UrlViolation>> {
        Box::pin(async move {
            // One deadline over resolution, connection and body, like the service's 30 seconds.
            tokio::time::timeout(self.limits.timeout, self.fetch_checked(url))
                .await
                .unwrap_or(Err(UrlViolation::DownloadFailed))
        })
    }
}

/// Every address `domain` resolves to.
async fn resolve(domain: &str, port: u16) -> Result<Vec<SocketAddr>, UrlViolation> {
    match tokio::net::lookup_host((domain, port)).await {
        Ok(addrs) => Ok(addrs.collect()),
        Err(error) => {
            tracing::debug!(%error, domain, "artwork host did not resolve");
            Err(UrlViolation::Unresolvable)
        }
    }
}

/// A client that follows no redirect, uses no proxy (it would connect somewhere unchecked) and
/// gives up after the download timeout.
fn client_builder(limits: FetchLimits) -> reqwest::ClientBuilder {
    // reqwest under `rustls` needs a crypto provider installed before the client is built.
    store_api_raw::tls::install_crypto_provider();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(limits.timeout)
}

/// GETs `url` and returns its body as an image, streaming it so an oversized body is cut off early.
async fn download(
    client: &reqwest::Client,
    url: &Url,
    limits: FetchLimits,
) -> Result<FetchedImage, UrlViolation> {
    let failed = |error: reqwest::Error| {
        tracing::debug!(%error, "artwork download failed");
        UrlViolation::DownloadFailed
    };
    let mut response = client.get(url.clone()).send().await.map_err(failed)?;
    if !response.status().is_success() {
        tracing::debug!(status = %response.status(), "artwork download refused by status");
        return Err(UrlViolation::DownloadFailed);
    }
    if response
        .content_length()
        .is_some_and(|len| len > limits.max_bytes)
    {
        return Err(UrlViolation::DownloadFailed);
    }
    let mut body = BytesMut::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        if exceeds(body.len().saturating_add(chunk.len()), limits.max_bytes) {
            return Err(UrlViolation::DownloadFailed);
        }
        body.extend_from_slice(&chunk);
    }
    FetchedImage::from_bytes(body.freeze(), limits)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::time::{Duration, Instant};

    use axum::Router;
    use axum::body::Body;
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    use axum::routing::get;

    use super::*;

    const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
    const JPEG: &[u8] = &[0xFF, 0xD8, 0xFF, 0xE0, 0, 16, b'J', b'F', b'I', b'F'];

    fn limits(timeout_ms: u64, max_bytes: u64) -> FetchLimits {
        FetchLimits::new(Duration::from_millis(timeout_ms), max_bytes)
    }

    async fn fetch_real(raw: &str, limits: FetchLimits) -> Result<FetchedImage, UrlViolation> {
        let url = Url::parse(raw).unwrap();
        RealFetcher::new(limits).fetch(&url).await
    }

    #[tokio::test]
    async fn localhost_is_refused_after_resolution() {
        let result = fetch_real("https://localhost/x.png", limits(5_000, 1_000)).await;
        assert_eq!(result, Err(UrlViolation::PrivateAddress));
    }

    #[tokio::test]
    async fn reserved_invalid_tld_does_not_resolve() {
        // `.invalid` never resolves (RFC 6761), so this asks no one on the internet for anything.
        let result = fetch_real(
            "https://does-not-exist.invalid/x.png",
            limits(10_000, 1_000),
        )
        .await;
        assert_eq!(result, Err(UrlViolation::Unresolvable));
    }

    #[tokio::test]
    async fn unchecked_urls_are_checked_again() {
        let cases = [
            ("https://127.0.0.1/x.png", UrlViolation::PrivateAddress),
            ("https://[::1]:8443/x.png", UrlViolation::PrivateAddress),
            ("http://example.com/x.png", UrlViolation::NotHttps),
            (
                "https://user:pw@example.com/x.png",
                UrlViolation::Credentials,
            ),
        ];
        for (raw, expected) in cases {
            assert_eq!(
                fetch_real(raw, limits(5_000, 1_000)).await,
                Err(expected),
                "url {raw}"
            );
        }
    }

    /// A plain-HTTP server on 127.0.0.1 serving canned responses; `download` is what runs after the
    /// address checks, so it is exercised here without them.
    async fn serve() -> Url {
        let chunked_body = || {
            let chunks = (0..50).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from_static(PNG)));
            Body::from_stream(futures::stream::iter(chunks))
        };
        let router = Router::new()
            .route(
                "/png",
                get(|| async { ([(header::CONTENT_TYPE, "image/gif")], PNG) }),
            )
            .route("/jpeg", get(|| async { JPEG }))
            .route("/gif", get(|| async { &b"GIF89a\x01\x00\x01\x00"[..] }))
            .route("/text", get(|| async { "hello" }))
            .route("/missing", get(|| async { (StatusCode::NOT_FOUND, PNG) }))
            .route(
                "/redirect",
                get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/png")]) }),
            )
            .route("/chunked", get(move || async move { chunked_body() }))
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    PNG.into_response()
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        Url::parse(&format!("http://{addr}/")).unwrap()
    }

    /// The sniffed content type and the body length, or the refusal.
    type Expected = Result<(&'static str, usize), UrlViolation>;

    #[tokio::test]
    async fn download_rules_over_a_local_server() {
        let base = serve().await;
        let ok = limits(5_000, 10_000);
        // Expected: the sniffed type and the body length.
        let cases: &[(&str, FetchLimits, Expected)] = &[
            // The type comes from the bytes, not from the misleading Content-Type header.
            ("png", ok, Ok(("image/png", 12))),
            ("jpeg", ok, Ok(("image/jpeg", 10))),
            ("gif", ok, Err(UrlViolation::DownloadFailed)),
            ("text", ok, Err(UrlViolation::DownloadFailed)),
            ("missing", ok, Err(UrlViolation::DownloadFailed)),
            ("redirect", ok, Err(UrlViolation::DownloadFailed)),
            // 50 chunks of 12 bytes, no Content-Length: cut off while streaming.
            ("chunked", ok, Ok(("image/png", 600))),
            ("chunked", limits(5_000, 600), Ok(("image/png", 600))),
            (
                "chunked",
                limits(5_000, 599),
                Err(UrlViolation::DownloadFailed),
            ),
            // Content-Length above the cap is refused before reading.
            ("png", limits(5_000, 11), Err(UrlViolation::DownloadFailed)),
            ("png", limits(5_000, 12), Ok(("image/png", 12))),
        ];
        for (path, limits, expected) in cases {
            let limits = *limits;
            let client = client_builder(limits).build().unwrap();
            let url = base.join(path).unwrap();
            let actual = download(&client, &url, limits)
                .await
                .map(|image| (image.content_type, image.bytes.len()));
            assert_eq!(actual, expected.clone(), "path {path} with {limits:?}");
        }
    }

    #[tokio::test]
    async fn slow_download_times_out() {
        let base = serve().await;
        let limits = limits(50, 10_000);
        let client = client_builder(limits).build().unwrap();
        let started = Instant::now();
        let result = download(&client, &base.join("slow").unwrap(), limits).await;
        assert_eq!(result, Err(UrlViolation::DownloadFailed));
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
