//! Which signature headers a verifier accepts, with one key and during a key rotation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use http::header::{HeaderMap, HeaderValue};
use store_api_webhooks::{SIGNATURE_HEADER, Topic, Verifier, WebhookError, sign};

const KEY: &str = "sk_store_current_key_0000000000000000";
const OLD_KEY: &str = "sk_store_previous_key_000000000000000";
const BODY: &[u8] = br#"{"id":"evt_1","storeId":"store_1","topic":"products_update","data":{"id":"prod_1"},"isTest":true}"#;

/// The expected outcome of verifying one header value.
#[derive(Debug, PartialEq)]
enum Outcome {
    Accepted,
    Missing,
    Malformed,
    Mismatch,
    NoKey,
}

fn outcome(result: Result<(), WebhookError>) -> Outcome {
    match result {
        Ok(()) => Outcome::Accepted,
        Err(WebhookError::MissingSignature) => Outcome::Missing,
        Err(WebhookError::MalformedSignature) => Outcome::Malformed,
        Err(WebhookError::SignatureMismatch) => Outcome::Mismatch,
        Err(WebhookError::EmptyKey) => Outcome::NoKey,
        Err(other) => panic!("unexpected error {other:?}"),
    }
}

fn check(verifier: &Verifier, header: &str, expected: Outcome) {
    assert_eq!(
        outcome(verifier.verify_signature(header, BODY)),
        expected,
        "header {header:?}"
    );
}

fn tag(key: &str) -> Vec<u8> {
    hex::decode(sign(key, BODY)).unwrap()
}

#[test]
fn signature_forms() {
    let verifier = Verifier::new(KEY);
    let hex = sign(KEY, BODY);
    let bytes = tag(KEY);
    let other_hex = sign("another key", BODY);
    let cases = [
        (hex.clone(), Outcome::Accepted),
        (hex.to_uppercase(), Outcome::Accepted),
        (format!("sha256={hex}"), Outcome::Accepted),
        (format!("Sha256={hex}"), Outcome::Accepted),
        (format!(" \t{hex} \r\n"), Outcome::Accepted),
        (STANDARD.encode(&bytes), Outcome::Accepted),
        (STANDARD_NO_PAD.encode(&bytes), Outcome::Accepted),
        (
            format!("sha256={}", STANDARD.encode(&bytes)),
            Outcome::Accepted,
        ),
        (String::new(), Outcome::Missing),
        ("   ".into(), Outcome::Missing),
        (other_hex.clone(), Outcome::Mismatch),
        (STANDARD.encode(tag("another key")), Outcome::Mismatch),
        (hex[..63].into(), Outcome::Malformed),
        (format!("{hex}0"), Outcome::Malformed),
        (format!("{hex}{hex}"), Outcome::Malformed),
        (format!("{}g", &hex[..63]), Outcome::Malformed),
        (format!("sha1={hex}"), Outcome::Malformed),
        (format!("sha256= {hex}"), Outcome::Malformed),
        (format!("{} {}", &hex[..32], &hex[32..]), Outcome::Malformed),
        (STANDARD.encode(&bytes[..31]), Outcome::Malformed),
        (
            STANDARD.encode([bytes.as_slice(), &[0]].concat()),
            Outcome::Malformed,
        ),
        // URL-safe base64 is not the standard alphabet (whenever the tag needs '+' or '/').
        (
            URL_SAFE_NO_PAD.encode(&bytes),
            if STANDARD_NO_PAD.encode(&bytes) == URL_SAFE_NO_PAD.encode(&bytes) {
                Outcome::Accepted
            } else {
                Outcome::Malformed
            },
        ),
        ("sha256=".into(), Outcome::Malformed),
        ("x".repeat(10_000), Outcome::Malformed),
        ("é".repeat(32), Outcome::Malformed),
    ];
    for (header, expected) in cases {
        check(&verifier, &header, expected);
    }
}

#[test]
fn the_signature_covers_the_exact_bytes() {
    let verifier = Verifier::new(KEY);
    let signature = sign(KEY, BODY);
    let reformatted =
        serde_json::to_vec_pretty(&serde_json::from_slice::<serde_json::Value>(BODY).unwrap())
            .unwrap();
    let mut trailing_newline = BODY.to_vec();
    trailing_newline.push(b'\n');
    for body in [reformatted, trailing_newline, Vec::new()] {
        assert!(matches!(
            verifier.verify(&signature, &body),
            Err(WebhookError::SignatureMismatch)
        ));
    }
}

#[test]
fn a_rotation_keyring_accepts_either_key_and_nothing_else() {
    let keyring = Verifier::with_keys([KEY, OLD_KEY]);
    check(&keyring, &sign(KEY, BODY), Outcome::Accepted);
    check(&keyring, &sign(OLD_KEY, BODY), Outcome::Accepted);
    check(&keyring, &sign("a third key", BODY), Outcome::Mismatch);

    // rotated(): the new key and the current one; the one before is dropped.
    let rotated = Verifier::new(OLD_KEY).rotated(KEY);
    assert_eq!(rotated.key_count(), 2);
    check(&rotated, &sign(KEY, BODY), Outcome::Accepted);
    check(&rotated, &sign(OLD_KEY, BODY), Outcome::Accepted);
    let again = rotated.rotated("a third key");
    check(&again, &sign("a third key", BODY), Outcome::Accepted);
    check(&again, &sign(KEY, BODY), Outcome::Accepted);
    check(&again, &sign(OLD_KEY, BODY), Outcome::Mismatch);

    // Once the window is over, the old key is refused.
    check(&Verifier::new(KEY), &sign(OLD_KEY, BODY), Outcome::Mismatch);
    // An empty keyring refuses everything, saying why.
    check(
        &Verifier::with_keys(Vec::<String>::new()),
        &sign(KEY, BODY),
        Outcome::NoKey,
    );
    // An empty key among others is left out; the others still verify.
    check(
        &Verifier::with_keys(["", KEY]),
        &sign(KEY, BODY),
        Outcome::Accepted,
    );
    check(
        &Verifier::with_keys(["", KEY]),
        &sign("", BODY),
        Outcome::Mismatch,
    );
}

#[test]
fn verify_parses_only_after_the_signature_checks_out() {
    let verifier = Verifier::new(KEY);
    let garbage = b"not json at all";
    assert!(matches!(
        verifier.verify(&sign("wrong", garbage), garbage),
        Err(WebhookError::SignatureMismatch)
    ));
    assert!(matches!(
        verifier.verify(&sign(KEY, garbage), garbage),
        Err(WebhookError::MalformedPayload(_))
    ));
    let event = verifier.verify(&sign(KEY, BODY), BODY).unwrap();
    assert_eq!(event.topic, Topic::ProductsUpdate);
    assert!(event.is_test);
}

#[test]
fn headers_are_read_case_insensitively_and_a_missing_one_is_reported() {
    let verifier = Verifier::new(KEY);
    let mut headers = HeaderMap::new();
    assert!(matches!(
        verifier.verify_headers(&headers, BODY),
        Err(WebhookError::MissingSignature)
    ));
    headers.insert(
        "x-service-signature",
        HeaderValue::from_str(&sign(KEY, BODY)).unwrap(),
    );
    assert_eq!(
        verifier.verify_headers(&headers, BODY).unwrap().data.id,
        "prod_1"
    );
    headers.insert(
        SIGNATURE_HEADER,
        HeaderValue::from_bytes(b"\xff\xfe").unwrap(),
    );
    assert!(matches!(
        verifier.verify_headers(&headers, BODY),
        Err(WebhookError::MalformedSignature)
    ));
}

#[test]
fn a_body_over_the_limit_is_refused_before_hashing() {
    let verifier = Verifier::new(KEY).with_max_body_bytes(BODY.len() - 1);
    assert!(matches!(
        verifier.verify(&sign(KEY, BODY), BODY),
        Err(WebhookError::BodyTooLarge { limit }) if limit == BODY.len() - 1
    ));
    let exact = Verifier::new(KEY).with_max_body_bytes(BODY.len());
    assert!(exact.verify(&sign(KEY, BODY), BODY).is_ok());
}

#[test]
fn neither_errors_nor_debug_reveal_the_key_or_the_expected_signature() {
    let verifier = Verifier::with_keys([KEY, OLD_KEY]);
    let expected = [sign(KEY, BODY), sign(OLD_KEY, BODY)];
    let wrong = sign("wrong", BODY);
    let mut shown = vec![format!("{verifier:?}")];
    for header in [wrong.as_str(), "", "zz", &expected[0][..40]] {
        if let Err(error) = verifier.verify(header, BODY) {
            shown.push(error.to_string());
            shown.push(format!("{error:?}"));
        }
    }
    let payload = b"[1,2]";
    if let Err(error) = verifier.verify(&sign(KEY, payload), payload) {
        shown.push(error.to_string());
    }
    assert!(shown.len() >= 8, "{shown:?}");
    for text in shown {
        for secret in [KEY, OLD_KEY, &expected[0], &expected[1]] {
            assert!(!text.contains(secret), "{text:?} reveals a secret");
        }
        assert!(
            !text.to_lowercase().contains(&expected[0][..16]),
            "{text:?}"
        );
    }
}

// Issue 10: `Verifier::new("")` (an unset environment variable) accepted HMAC("", body), which anyone
// can compute.
#[test]
fn an_empty_key_verifies_nothing() {
    let forged = sign("", BODY);
    let error = Verifier::new("")
        .verify_signature(&forged, BODY)
        .expect_err("an empty key must refuse");
    assert!(error.to_string().contains("empty"), "{error}");
    assert!(matches!(error, WebhookError::EmptyKey));
    assert!(matches!(Verifier::try_new(""), Err(WebhookError::EmptyKey)));
}
