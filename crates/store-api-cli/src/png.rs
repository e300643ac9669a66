//! A tiny but valid PNG of any pixel size, made in code, and the pixel size read back from a PNG's
//! header. The demo's artwork is one: a one-color image of 3000x2400 pixels takes a few kilobytes,
//! because a single-color 1-bit palette image compresses to almost nothing.

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// A PNG of `width` x `height` pixels, all of color `rgb` (1-bit palette, zlib with fixed Huffman codes).
pub fn solid(width: u32, height: u32, rgb: [u8; 3]) -> Vec<u8> {
    let row_bytes = 1 + u64::from(width).div_ceil(8); // the filter byte, then 1 bit per pixel
    let raw_len = row_bytes * u64::from(height);

    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    // Bit depth 1, color type 3 (palette), deflate, adaptive filtering, no interlace.
    ihdr.extend_from_slice(&[1, 3, 0, 0, 0]);

    let mut png = SIGNATURE.to_vec();
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"PLTE", &rgb);
    chunk(&mut png, b"IDAT", &zlib_zeros(raw_len));
    chunk(&mut png, b"IEND", &[]);
    png
}

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

fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    let length = u32::try_from(data.len()).unwrap_or(u32::MAX);
    png.extend_from_slice(&length.to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32(&png[start..]);
    png.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream of `len` zero bytes: one fixed-Huffman deflate block of a literal 0 followed by
/// back-references of length 258 at distance 1, and literals for the rest.
fn zlib_zeros(len: u64) -> Vec<u8> {
    let mut bits = BitWriter::default();
    bits.put(1, 1); // BFINAL
    bits.put(0b01, 2); // BTYPE: fixed Huffman codes
    let mut remaining = len;
    if remaining > 0 {
        bits.put_code(0b0011_0000, 8); // literal 0
        remaining -= 1;
    }
    while remaining >= 258 {
        bits.put_code(0b1100_0101, 8); // length code 285: 258 bytes, no extra bits
        bits.put_code(0, 5); // distance code 0: distance 1
        remaining -= 258;
    }
    for _ in 0..remaining {
        bits.put_code(0b0011_0000, 8);
    }
    bits.put_code(0, 7); // end of block (256)
    let mut out = vec![0x78, 0x01];
    out.extend_from_slice(&bits.finish());
    // Adler-32 of zeros: a stays 1, b adds 1 per byte.
    let b = u32::try_from(len % 65_521).unwrap_or(0);
    out.extend_from_slice(&((b << 16) | 1).to_be_bytes());
    out
}

/// Deflate's bit order: values least significant bit first, Huffman codes most significant bit first.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    current: u8,
    used: u8,
}

impl BitWriter {
    fn put(&mut self, value: u32, count: u8) {
        for i in 0..count {
            let bit = u8::from((value >> i) & 1 == 1);
            self.current |= bit << self.used;
            self.used += 1;
            if self.used == 8 {
                self.bytes.push(self.current);
                self.current = 0;
                self.used = 0;
            }
        }
    }

    fn put_code(&mut self, code: u32, length: u8) {
        let reversed = (0..length).fold(0, |acc, i| (acc << 1) | ((code >> i) & 1));
        self.put(reversed, length);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.used > 0 {
            self.bytes.push(self.current);
        }
        self.bytes
    }
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_carries_the_size_and_the_file_is_small() {
        let png = solid(3000, 2400, [1, 2, 3]);
        assert_eq!(dimensions(&png), Some((3000, 2400)));
        assert!(png.len() < 8 * 1024, "{} bytes", png.len());
        assert!(png.ends_with(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xAE, 0x42, 0x60, 0x82]));
    }

    #[test]
    fn crc_matches_the_reference_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn non_png_bytes_have_no_dimensions() {
        assert_eq!(dimensions(b"GIF89a"), None);
        assert_eq!(dimensions(&SIGNATURE), None);
    }

    #[test]
    fn the_zlib_stream_ends_with_the_adler_checksum_of_its_zeros() {
        let stream = zlib_zeros(10);
        let adler = u32::from_be_bytes(stream[stream.len() - 4..].try_into().unwrap());
        assert_eq!(adler, (10 << 16) | 1);
    }
}
