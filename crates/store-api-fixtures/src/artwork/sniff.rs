//! Image type sniffing from magic bytes (headers are never trusted).

const PNG_SIGNATURE: [u8; 8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A];
const JPEG_SIGNATURE: [u8; 3] = [0xFF, 0xD8, 0xFF];

/// `"image/png"` or `"image/jpeg"` when `bytes` starts with that format's signature, else `None`.
///
/// ```
/// use store_api_fixtures::artwork::sniff_image_type;
///
/// assert_eq!(sniff_image_type(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
/// assert_eq!(sniff_image_type(b"GIF89a"), None);
/// ```
pub fn sniff_image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&PNG_SIGNATURE) {
        Some("image/png")
    } else if bytes.starts_with(&JPEG_SIGNATURE) {
        Some("image/jpeg")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_table() {
        let cases: &[(&[u8], Option<&str>)] = &[
            (
                &[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A],
                Some("image/png"),
            ),
            (
                &[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 1, 2],
                Some("image/png"),
            ),
            (&[0xFF, 0xD8, 0xFF], Some("image/jpeg")),
            (&[0xFF, 0xD8, 0xFF, 0xDB, 0, 0x43], Some("image/jpeg")),
            // Truncated signatures.
            (&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A], None),
            (&[0xFF, 0xD8], None),
            (b"GIF89a\x01\x00", None),
            (b"RIFF\x00\x00\x00\x00WEBPVP8 ", None),
            (b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>", None),
            (b"hello", None),
            (b"", None),
        ];
        for &(bytes, expected) in cases {
            assert_eq!(sniff_image_type(bytes), expected, "bytes {bytes:?}");
        }
    }
}
