//! Properties of verification over arbitrary input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::header::{HeaderMap, HeaderValue};
use proptest::prelude::*;
use store_api_webhooks::{SIGNATURE_HEADER, Verifier, WebhookError, sign};

const KEY: &str = "sk_store_property_key_00000000000000";

proptest! {
    #[test]
    fn arbitrary_headers_and_bodies_never_panic(
        header in ".{0,200}",
        header_bytes in proptest::collection::vec(any::<u8>(), 0..200),
        body in proptest::collection::vec(any::<u8>(), 0..512),
    ) {
        let verifier = Verifier::with_keys([KEY, "other"]);
        let _ = verifier.verify(&header, &body);
        let _ = verifier.verify_signature(&header, &body);
        if let Ok(value) = HeaderValue::from_bytes(&header_bytes) {
            let mut headers = HeaderMap::new();
            headers.insert(SIGNATURE_HEADER, value);
            let _ = verifier.verify_headers(&headers, &body);
        }
    }

    #[test]
    fn a_random_header_is_never_accepted(header in ".{0,200}", body in proptest::collection::vec(any::<u8>(), 0..256)) {
        prop_assume!(header.trim().to_lowercase() != sign(KEY, &body));
        prop_assert!(Verifier::new(KEY).verify_signature(&header, &body).is_err());
    }

    #[test]
    // Any non-empty key: an empty one is refused (issue 10), see `signatures.rs`.
    fn signing_then_verifying_accepts_any_body_and_key(key in ".{1,80}", body in proptest::collection::vec(any::<u8>(), 0..1024)) {
        prop_assert!(Verifier::new(key.clone()).verify_signature(&sign(&key, &body), &body).is_ok());
    }

    #[test]
    fn any_one_bit_flip_of_the_body_is_rejected(
        body in proptest::collection::vec(any::<u8>(), 1..512),
        position in any::<proptest::sample::Index>(),
        bit in 0..8_u8,
    ) {
        let signature = sign(KEY, &body);
        let mut flipped = body.clone();
        flipped[position.index(body.len())] ^= 1 << bit;
        prop_assert!(matches!(
            Verifier::new(KEY).verify_signature(&signature, &flipped),
            Err(WebhookError::SignatureMismatch)
        ));
    }

    #[test]
    fn any_one_bit_flip_of_the_signature_is_rejected(
        body in proptest::collection::vec(any::<u8>(), 0..512),
        bit in 0..256_usize,
    ) {
        let mut tag = hex::decode(sign(KEY, &body)).unwrap();
        tag[bit / 8] ^= 1 << (bit % 8);
        prop_assert!(matches!(
            Verifier::new(KEY).verify_signature(&hex::encode(&tag), &body),
            Err(WebhookError::SignatureMismatch)
        ));
    }
}
