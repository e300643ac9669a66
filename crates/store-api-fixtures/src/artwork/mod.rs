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
//! use store_api_rules::artwork_url::check_url;
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
mod fetch;
mod real;
mod sample;
mod sniff;

pub use address::choose_address;
pub use downloader::{Downloader, OfflineFetcher};
pub use fake::{FakeHostError, FakeHosts, FakeResource};
pub use fetch::{ArtworkFetcher, FetchLimits, FetchedImage};
pub use real::RealFetcher;
pub use sample::{SAMPLE_IMAGE_URL, SAMPLE_PNG};
pub use sniff::sniff_image_type;
pub use store_api_rules::artwork_url::UrlViolation;
