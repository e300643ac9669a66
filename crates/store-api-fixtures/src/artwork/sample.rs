//! The sample artwork: a PNG every emulator the tools start serves from a fake public host, so a first
//! `artworks create` (the README's, the demo's) works with nothing registered.

/// Where the sample artwork is served: a host under `.test`, which never resolves, so only an emulator
/// with [`EmulatorBuilder::sample_artwork`](crate::EmulatorBuilder::sample_artwork) on serves it.
pub const SAMPLE_IMAGE_URL: &str = "https://demo-assets.example.test/sunset-3000x2400.png";

/// The sample artwork: a PNG of 3000x2400 pixels of one color (a sunset orange), 1-bit palette, a few
/// kilobytes (`assets/README.md`).
pub const SAMPLE_PNG: &[u8] = include_bytes!("../../assets/sunset-3000x2400.png");
