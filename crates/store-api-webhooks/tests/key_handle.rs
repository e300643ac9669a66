//! A verifier built on a `KeyHandle` follows its rotations at once, with no overlap.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use http::header::{HeaderMap, HeaderValue};
use store_api_raw::KeyHandle;
use store_api_webhooks::{SIGNATURE_HEADER, Verifier, WebhookError, sign};

const BODY: &[u8] =
    br#"{"id":"evt_1","storeId":"store_1","topic":"orders_create","data":{"id":"ord_1"}}"#;

fn headers(key: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        SIGNATURE_HEADER,
        HeaderValue::from_str(&sign(key, BODY)).unwrap(),
    );
    headers
}

#[test]
fn a_live_verifier_accepts_only_the_key_the_handle_holds_now() {
    let handle = KeyHandle::new("csk_first_0123456789");
    let verifier = Verifier::from_key_handle(handle.clone());
    let clone = verifier.clone();
    assert!(
        verifier
            .verify_headers(&headers("csk_first_0123456789"), BODY)
            .is_ok()
    );
    assert_eq!(verifier.key_count(), 1);

    handle.rotate("csk_second_0123456789");
    for verifier in [&verifier, &clone] {
        assert!(
            verifier
                .verify_headers(&headers("csk_second_0123456789"), BODY)
                .is_ok()
        );
        assert!(matches!(
            verifier.verify_headers(&headers("csk_first_0123456789"), BODY),
            Err(WebhookError::SignatureMismatch)
        ));
    }
    assert!(verifier.key_handle().unwrap().same_handle(&handle));
    assert!(!format!("{verifier:?}").contains("0123456789"));

    // A fixed rotation window can still be made from it: the new key and the handle's key now.
    let window = verifier.rotated("csk_third_0123456789");
    assert_eq!(window.key_count(), 2);
    assert!(
        window
            .verify_headers(&headers("csk_second_0123456789"), BODY)
            .is_ok()
    );
    assert!(
        window
            .verify_headers(&headers("csk_third_0123456789"), BODY)
            .is_ok()
    );
    assert!(window.key_handle().is_none());

    handle.rotate("");
    assert_eq!(verifier.key_count(), 0);
    assert!(matches!(
        verifier.verify_headers(&headers(""), BODY),
        Err(WebhookError::EmptyKey)
    ));
}
