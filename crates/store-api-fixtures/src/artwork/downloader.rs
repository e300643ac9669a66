//! The emulator's downloader: fake hosts first, a pluggable real fetcher for everything else.

use std::sync::Arc;

use futures::future::BoxFuture;
use store_api_rules::artwork_url::UrlViolation;
use url::Url;

use super::fake::{FakeHosts, Lookup, Served};
use super::fetch::{ArtworkFetcher, FetchLimits, FetchedImage};
use super::real::RealFetcher;

/// Serves URLs on hosts registered in [`FakeHosts`] from the registry and passes every other URL to
/// the real fetcher.
///
/// A registered host counts as public. On it, an exact URL match serves its resource and any other
/// URL fails as a 404 would ([`UrlViolation::DownloadFailed`]), without touching the network.
/// Content is sniffed and capped at [`FetchLimits::max_bytes`] exactly like a real download; a
/// status answers no image; a delay waits `min(delay, timeout)` and then fails.
#[derive(Debug, Clone)]
pub struct Downloader {
    fake: FakeHosts,
    real: Arc<dyn ArtworkFetcher>,
    limits: FetchLimits,
}

impl Downloader {
    /// A downloader serving `fake` itself and sending other URLs to `real`. `limits` bound the fake
    /// downloads; `real` applies its own.
    pub fn new(fake: FakeHosts, real: Arc<dyn ArtworkFetcher>, limits: FetchLimits) -> Downloader {
        Downloader { fake, real, limits }
    }

    /// A downloader whose other URLs go to the network through a [`RealFetcher`] with the same limits.
    pub fn with_network(fake: FakeHosts, limits: FetchLimits) -> Downloader {
        Downloader::new(fake, Arc::new(RealFetcher::new(limits)), limits)
    }

    /// A downloader that never touches the network: other URLs fail with
    /// [`UrlViolation::DownloadFailed`] (see [`OfflineFetcher`]).
    pub fn offline(fake: FakeHosts, limits: FetchLimits) -> Downloader {
        Downloader::new(fake, Arc::new(OfflineFetcher), limits)
    }

    /// The fake host registry (shared: changes through it are seen by this downloader).
    pub fn fake_hosts(&self) -> &FakeHosts {
        &self.fake
    }

    /// The limits applied to fake downloads.
    pub fn limits(&self) -> FetchLimits {
        self.limits
    }

    async fn serve_fake(&self, served: Served) -> Result<FetchedImage, UrlViolation> {
        match served {
            Served::Content(bytes) => FetchedImage::from_bytes(bytes, self.limits),
            Served::Status(_) => Err(UrlViolation::DownloadFailed),
            Served::Delay(delay) => {
                tokio::time::sleep(delay.min(self.limits.timeout)).await;
                Err(UrlViolation::DownloadFailed)
            }
        }
    }
}

impl ArtworkFetcher for Downloader {
    fn fetch<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<FetchedImage, UrlViolation>> {
        Box::pin(async move {
            match self.fake.lookup(url) {
                Lookup::Found(served) => self.serve_fake(served).await,
                Lookup::UnknownPath => Err(UrlViolation::DownloadFailed),
                Lookup::UnknownHost => self.real.fetch(url).await,
            }
        })
    }
}

/// A fetcher for hermetic runs: it reaches nothing and fails every URL with
/// [`UrlViolation::DownloadFailed`] (the emulator truly could not download it).
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineFetcher;

impl ArtworkFetcher for OfflineFetcher {
    fn fetch<'a>(&'a self, _url: &'a Url) -> BoxFuture<'a, Result<FetchedImage, UrlViolation>> {
        Box::pin(async { Err(UrlViolation::DownloadFailed) })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;
    use bytes::Bytes;
    use store_api_rules::artwork_url::check_url;

    use super::*;
    use crate::artwork::fake::FakeResource;

    const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
    const JPEG: &[u8] = &[0xFF, 0xD8, 0xFF, 0xE0, 0, 16, b'J', b'F', b'I', b'F'];

    /// A real fetcher stand-in that records the URLs it was asked for.
    #[derive(Debug, Default)]
    struct Recording {
        asked: Mutex<Vec<String>>,
    }

    impl ArtworkFetcher for Recording {
        fn fetch<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<FetchedImage, UrlViolation>> {
            self.asked.lock().unwrap().push(url.to_string());
            Box::pin(async {
                FetchedImage::from_bytes(Bytes::from_static(JPEG), FetchLimits::SERVICE)
            })
        }
    }

    /// The sniffed content type and bytes, or the refusal.
    type Expected = Result<(&'static str, &'static [u8]), UrlViolation>;

    fn test_limits() -> FetchLimits {
        FetchLimits::new(Duration::from_millis(50), 64)
    }

    fn downloader(resources: &[(&str, FakeResource)]) -> (Downloader, Arc<Recording>) {
        let hosts = FakeHosts::new();
        for (url, resource) in resources {
            hosts.insert(url, resource.clone()).unwrap();
        }
        let recording = Arc::new(Recording::default());
        (
            Downloader::new(hosts, recording.clone(), test_limits()),
            recording,
        )
    }

    async fn fetch(downloader: &Downloader, raw: &str) -> Result<FetchedImage, UrlViolation> {
        downloader.fetch(&check_url(raw).unwrap()).await
    }

    #[tokio::test]
    async fn fake_resources_table() {
        let claimed_png = FakeResource::Content {
            content_base64: BASE64.encode(JPEG),
            content_type: Some("image/png".into()),
        };
        let (downloader, recording) = downloader(&[
            ("https://cdn.example.com/a.png", FakeResource::image(PNG)),
            ("https://cdn.example.com/b.jpg", claimed_png),
            (
                "https://cdn.example.com/c.gif",
                FakeResource::image(b"GIF89a\x01\x00\x01\x00"),
            ),
            (
                "https://cdn.example.com/d.txt",
                FakeResource::image(b"hello"),
            ),
            ("https://cdn.example.com/empty", FakeResource::image(b"")),
            ("https://cdn.example.com/404", FakeResource::status(404)),
            ("https://cdn.example.com/200", FakeResource::status(200)),
            ("https://cdn.example.com/301", FakeResource::status(301)),
            (
                "https://cdn.example.com/exact",
                FakeResource::image(&[PNG, &[0; 52]].concat()),
            ),
            (
                "https://cdn.example.com/big",
                FakeResource::image(&[PNG, &[0; 53]].concat()),
            ),
        ]);
        let cases: &[(&str, Expected)] = &[
            ("https://cdn.example.com/a.png", Ok(("image/png", PNG))),
            // Sniffed from the bytes: the claimed image/png of a JPEG body is ignored.
            ("https://cdn.example.com/b.jpg", Ok(("image/jpeg", JPEG))),
            (
                "https://cdn.example.com/c.gif",
                Err(UrlViolation::DownloadFailed),
            ),
            (
                "https://cdn.example.com/d.txt",
                Err(UrlViolation::DownloadFailed),
            ),
            (
                "https://cdn.example.com/empty",
                Err(UrlViolation::DownloadFailed),
            ),
            (
                "https://cdn.example.com/404",
                Err(UrlViolation::DownloadFailed),
            ),
            (
                "https://cdn.example.com/200",
                Err(UrlViolation::DownloadFailed),
            ),
            (
                "https://cdn.example.com/301",
                Err(UrlViolation::DownloadFailed),
            ),
            // 64 bytes is exactly the cap; 65 is over it.
            (
                "https://cdn.example.com/big",
                Err(UrlViolation::DownloadFailed),
            ),
            // Another path on a registered host is a 404, not a real download.
            (
                "https://cdn.example.com/nope.png",
                Err(UrlViolation::DownloadFailed),
            ),
        ];
        for (raw, expected) in cases {
            let actual = fetch(&downloader, raw).await;
            let actual = actual
                .as_ref()
                .map(|i| (i.content_type, &i.bytes[..]))
                .map_err(Clone::clone);
            assert_eq!(actual, expected.clone(), "url {raw}");
        }
        let exact = fetch(&downloader, "https://cdn.example.com/exact")
            .await
            .unwrap();
        assert_eq!((exact.content_type, exact.bytes.len()), ("image/png", 64));
        assert!(recording.asked.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn delay_beyond_the_timeout_fails_after_the_timeout() {
        let (downloader, _) = downloader(&[(
            "https://slow.example.com/a.png",
            FakeResource::delay(Duration::from_secs(40)),
        )]);
        let started = Instant::now();
        let result = fetch(&downloader, "https://slow.example.com/a.png").await;
        let elapsed = started.elapsed();
        assert_eq!(result, Err(UrlViolation::DownloadFailed));
        assert!(elapsed >= Duration::from_millis(50), "{elapsed:?}");
        assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    }

    #[tokio::test]
    async fn unregistered_hosts_go_to_the_real_fetcher() {
        let (downloader, recording) =
            downloader(&[("https://cdn.example.com/a.png", FakeResource::image(PNG))]);
        let image = fetch(&downloader, "https://elsewhere.example.com/x.jpg")
            .await
            .unwrap();
        assert_eq!(image.content_type, "image/jpeg");
        assert_eq!(
            *recording.asked.lock().unwrap(),
            ["https://elsewhere.example.com/x.jpg"]
        );
    }

    #[tokio::test]
    async fn registry_changes_are_seen_by_the_downloader() {
        let (downloader, recording) = downloader(&[]);
        downloader
            .fake_hosts()
            .insert("https://cdn.example.com/a.png", FakeResource::image(PNG))
            .unwrap();
        let image = fetch(&downloader, "https://cdn.example.com/a.png")
            .await
            .unwrap();
        assert_eq!(image.content_type, "image/png");
        downloader.fake_hosts().clear();
        fetch(&downloader, "https://cdn.example.com/a.png")
            .await
            .unwrap();
        assert_eq!(recording.asked.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn with_network_refuses_localhost_after_resolution() {
        let downloader = Downloader::with_network(
            FakeHosts::new(),
            FetchLimits::new(Duration::from_secs(5), 1024),
        );
        let cases = [
            ("https://localhost/x.png", UrlViolation::PrivateAddress),
            (
                "https://does-not-exist.invalid/x.png",
                UrlViolation::Unresolvable,
            ),
        ];
        for (raw, expected) in cases {
            assert_eq!(fetch(&downloader, raw).await, Err(expected), "url {raw}");
        }
    }

    #[tokio::test]
    async fn a_registered_host_is_public_even_if_it_would_resolve_privately() {
        let hosts = FakeHosts::new();
        hosts
            .insert("https://localhost/x.png", FakeResource::image(PNG))
            .unwrap();
        let downloader = Downloader::with_network(hosts, test_limits());
        let image = fetch(&downloader, "https://localhost/x.png").await.unwrap();
        assert_eq!(image.content_type, "image/png");
        // Another path on that host is a fake 404, not a refused private address.
        assert_eq!(
            fetch(&downloader, "https://localhost/y.png").await,
            Err(UrlViolation::DownloadFailed)
        );
    }

    #[tokio::test]
    async fn offline_fetcher_fails_everything() {
        let downloader = Downloader::offline(FakeHosts::new(), test_limits());
        assert_eq!(
            fetch(&downloader, "https://cdn.example.com/a.png").await,
            Err(UrlViolation::DownloadFailed)
        );
    }
}
