//! What every fetcher shares: the [`ArtworkFetcher`] trait, its [`FetchLimits`] and the
//! [`FetchedImage`] it hands back.

use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use store_api_rules::artwork_url::UrlViolation;
use url::Url;

use super::sniff::sniff_image_type;

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
pub(super) fn exceeds(len: usize, max_bytes: u64) -> bool {
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
/// [`check_url`](store_api_rules::artwork_url::check_url).
///
/// Failures are the service's own refusals: [`UrlViolation::Unresolvable`],
/// [`UrlViolation::PrivateAddress`] or [`UrlViolation::DownloadFailed`].
pub trait ArtworkFetcher: Send + Sync + std::fmt::Debug {
    /// Fetches the image at `url`.
    fn fetch<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<FetchedImage, UrlViolation>>;
}
