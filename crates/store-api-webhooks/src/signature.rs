//! The signature itself: how the service signs a body, and how a header value is read back into bytes.
//!
//! The specification says only "HMAC-SHA256 in header X-Service-Signature, keyed with the store API key".
//! This crate assumes the MAC covers the exact raw request body, is keyed with the key's UTF-8 bytes and is
//! sent as lowercase hex. Reading is lenient (either hex case, standard base64, a `sha256=` prefix), since
//! none of that is shown and accepting an encoding costs no security: the bytes still have to match.

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::WebhookError;

/// Name of the header that carries the signature of a delivery.
pub const SIGNATURE_HEADER: &str = "X-Service-Signature";

/// HMAC-SHA256 keyed with a store's API key.
pub(crate) type HmacSha256 = Hmac<Sha256>;

/// Length of an HMAC-SHA256 tag in bytes.
const TAG_LEN: usize = 32;

/// Longest header value worth decoding: 64 hex digits plus a prefix and some whitespace.
const MAX_SIGNATURE_CHARS: usize = 128;

/// Standard base64 that takes the signature with or without its trailing `=`.
const LENIENT_BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Signs `body` the way the service does: HMAC-SHA256 over the exact bytes, keyed with the UTF-8 bytes
/// of `key`, as 64 lowercase hex digits.
///
/// The local emulator signs its deliveries with this function, so it and [`Verifier`](crate::Verifier)
/// cannot disagree.
///
/// ```
/// let signature = store_api_webhooks::sign("key", b"{}");
/// assert_eq!(signature.len(), 64);
/// assert!(signature.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)));
/// ```
pub fn sign(key: &str, body: &[u8]) -> String {
    hex::encode(keyed_mac(key).chain_update(body).finalize().into_bytes())
}

/// A MAC keyed with `key`, ready to take a body.
pub(crate) fn keyed_mac(key: &str) -> HmacSha256 {
    match HmacSha256::new_from_slice(key.as_bytes()) {
        Ok(mac) => mac,
        // HMAC takes keys of any length (longer ones are hashed first); the error is never returned.
        Err(_) => unreachable!("HMAC-SHA256 accepts keys of any length"),
    }
}

/// A decoded signature: the 32 bytes of an HMAC-SHA256 tag.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Signature([u8; TAG_LEN]);

impl Signature {
    /// Reads a header value: surrounding whitespace trimmed, an optional `sha256=` prefix (any case), then
    /// 64 hex digits in either case or standard base64 of 32 bytes.
    pub(crate) fn parse(value: &str) -> Result<Self, WebhookError> {
        let value = value.trim();
        if value.is_empty() {
            return Err(WebhookError::MissingSignature);
        }
        if value.len() > MAX_SIGNATURE_CHARS {
            return Err(WebhookError::MalformedSignature);
        }
        let encoded = strip_prefix_ignore_case(value, "sha256=").unwrap_or(value);
        let mut tag = [0_u8; TAG_LEN];
        if encoded.len() == 2 * TAG_LEN {
            hex::decode_to_slice(encoded, &mut tag)
                .map_err(|_| WebhookError::MalformedSignature)?;
            return Ok(Self(tag));
        }
        // 43 or 44 characters of base64 hold 32 bytes. The buffer has room to spare for the decoder's
        // estimate; anything that decodes to another length (or does not fit) is malformed.
        let mut buffer = [0_u8; 2 * TAG_LEN];
        match LENIENT_BASE64.decode_slice(encoded, &mut buffer) {
            Ok(TAG_LEN) => {
                tag.copy_from_slice(&buffer[..TAG_LEN]);
                Ok(Self(tag))
            }
            _ => Err(WebhookError::MalformedSignature),
        }
    }

    /// The tag bytes.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// `value` without `prefix`, compared ASCII-case-insensitively.
fn strip_prefix_ignore_case<'a>(value: &'a str, prefix: &str) -> Option<&'a str> {
    let head = value.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &value[prefix.len()..])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sign_matches_a_published_hmac_sha256_vector() {
        // RFC 4231 test case 2.
        assert_eq!(
            sign("Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn every_accepted_form_decodes_to_the_same_bytes() {
        let hex_lower = sign("k", b"body");
        let bytes = hex::decode(&hex_lower).unwrap();
        let forms = [
            hex_lower.clone(),
            hex_lower.to_uppercase(),
            format!("sha256={hex_lower}"),
            format!("SHA256={}", hex_lower.to_uppercase()),
            format!("  \t{hex_lower}\n"),
            base64::engine::general_purpose::STANDARD.encode(&bytes),
            base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes),
            format!(
                "sha256={}",
                base64::engine::general_purpose::STANDARD.encode(&bytes)
            ),
        ];
        for form in forms {
            assert_eq!(
                Signature::parse(&form).unwrap().as_bytes(),
                &bytes[..],
                "{form:?}"
            );
        }
    }
}
