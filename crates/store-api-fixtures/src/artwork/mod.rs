//! The emulator's artwork downloader for `POST /artworks`.
//!
//! The emulator never reaches the internet on its own: downloading goes through the pluggable
//! [`ArtworkFetcher`] trait. [`Downloader`] serves URLs of hosts registered in [`FakeHosts`] (what
//! tests and the demo use, fed by `PUT /_emulator/artwork-hosts`) and hands every other URL to a
//! real fetcher: [`RealFetcher`] (actual HTTPS, with the service's address rules) or
//! [`OfflineFetcher`] (refuses everything, for hermetic runs).
//!
//! ```
//! use std::sync::Arc;
//! use store_api_fixtures::artwork::{
//!     ArtworkFetcher, Downloader, FakeHosts, FakeResource, FetchLimits, OfflineFetcher,
//! };
//! use store_api::validate::artwork_url::check_url;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let hosts = FakeHosts::new();
//! let png = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0];
//! hosts.insert("https://cdn.example.com/art.png", FakeResource::image(&png))?;
//!
//! let downloader = Downloader::new(hosts, Arc::new(OfflineFetcher), FetchLimits::default());
//! let url = check_url("https://cdn.example.com/art.png")?;
//! let image = downloader.fetch(&url).await?;
//! assert_eq!(image.content_type, "image/png");
//! # Ok(())
//! # }
//! ```

mod address;
mod downloader;
mod fake;
mod real;
mod sniff;

use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
pub use store_api::validate::artwork_url::UrlViolation;
use url::Url;

pub use address::choose_address;
pub use downloader::{Downloader, OfflineFetcher};
pub use fake::{FakeHostError, FakeHosts, FakeResource};
pub use real::RealFetcher;
pub use sniff::sniff_image_type;

/// A downloaded artwork image.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedImage {
    /// The image bytes, exactly as downloaded.
    pub bytes: Bytes,
    /// `"image/png"` or `"image/jpeg"`, sniffed from the magic bytes, never taken from headers.
    pub content_type: &'static str,
}

impl FetchedImage {
    /// Wraps downloaded bytes, or refuses them with [`UrlViolation::DownloadFailed`] when they are
    /// neither PNG nor JPEG or are longer than `limits.max_bytes`.
    pub fn from_bytes(bytes: Bytes, limits: FetchLimits) -> Result<FetchedImage, UrlViolation> {
        if exceeds(bytes.len(), limits.max_bytes) {
            return Err(UrlViolation::DownloadFailed);
        }
        let content_type = sniff_image_type(&bytes).ok_or(UrlViolation::DownloadFailed)?;
        Ok(FetchedImage {
            bytes,
            content_type,
        })
    }
}

/// Whether `len` bytes are more than `max_bytes` allows.
fn exceeds(len: usize, max_bytes: u64) -> bool {
    u64::try_from(len).map_or(true, |len| len > max_bytes)
}

/// Bounds on one artwork download (seed §8 Limits).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchLimits {
    /// Total time for a download, from resolving the host to the last body byte. Default 30 s.
    pub timeout: Duration,
    /// Largest accepted image, in bytes. Default 50 MB read as 50 MiB (`50 * 1024 * 1024`): the seed
    /// says "up to 50 MB" without the unit base, and the larger reading never refuses an image the
    /// service would accept.
    pub max_bytes: u64,
}

impl FetchLimits {
    /// The service's limits: 30 seconds and 50 MB.
    pub const SERVICE: FetchLimits = FetchLimits {
        timeout: Duration::from_secs(30),
        max_bytes: 50 * 1024 * 1024,
    };

    /// Limits with the given timeout and size cap (tests use short and small ones).
    pub fn new(timeout: Duration, max_bytes: u64) -> FetchLimits {
        FetchLimits { timeout, max_bytes }
    }
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits::SERVICE
    }
}

/// Downloads an artwork image from a URL that already passed
/// [`check_url`](store_api::validate::artwork_url::check_url).
///
/// Failures are the service's own refusals: [`UrlViolation::Unresolvable`],
/// [`UrlViolation::PrivateAddress`] or [`UrlViolation::DownloadFailed`].
pub trait ArtworkFetcher: Send + Sync + std::fmt::Debug {
    /// Fetches the image at `url`.
    fn fetch<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<FetchedImage, UrlViolation>>;
}
