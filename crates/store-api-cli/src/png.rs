//! The pixel size read back from a PNG's header (the demo shows the size of the image it uploads).

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// The pixel size in a PNG's IHDR, or `None` when `bytes` is not a PNG.
pub fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let rest = bytes.strip_prefix(&SIGNATURE)?;
    // The IHDR chunk comes first: length (4), type (4), then width and height.
    if rest.get(4..8)? != b"IHDR" {
        return None;
    }
    let width = u32::from_be_bytes(rest.get(8..12)?.try_into().ok()?);
    let height = u32::from_be_bytes(rest.get(12..16)?.try_into().ok()?);
    Some((width, height))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_image_is_a_small_png_of_its_size() {
        let png = crate::session::SAMPLE_PNG;
        assert_eq!(dimensions(png), Some((3000, 2400)));
        assert!(png.len() < 8 * 1024, "{} bytes", png.len());
        assert!(png.ends_with(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xAE, 0x42, 0x60, 0x82]));
    }

    #[test]
    fn non_png_bytes_have_no_dimensions() {
        assert_eq!(dimensions(b"GIF89a"), None);
        assert_eq!(dimensions(&SIGNATURE), None);
    }
}
