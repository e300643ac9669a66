//! Cost of verifying a typical delivery, against a bare HMAC-SHA256 over the same bytes, and of parsing.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use store_api_webhooks::{Event, Verifier, sign};

const KEY: &str = "sk_store_0123456789abcdefghijklmnopq";

/// A ~300-byte event, as the service sends it.
fn typical_body() -> Vec<u8> {
    let body = br#"{"id":"evt_01J9Z8Q4W7X2K5M3N6P8R0T1V4","storeId":"store_8f3a2c1e9b7d4a6f","topic":"orders_update","data":{"id":"ord_01J9Z8PZK3H6B2C4D7E9F1G3J5"},"isTest":false,"createdAt":"2026-08-14T09:26:53.123Z","extraForwardCompatibleField":{"note":"ignored by receivers"}}"#;
    body.to_vec()
}

fn verification(c: &mut Criterion) {
    let body = typical_body();
    let signature = sign(KEY, &body);
    let verifier = Verifier::new(KEY);
    let rotating = Verifier::with_keys([KEY, "sk_store_previous_key_000000000000000"]);
    let Ok(expected) = hex::decode(&signature) else {
        return;
    };

    let mut group = c.benchmark_group("verify");
    group.bench_function("verify_signature", |b| {
        b.iter(|| verifier.verify_signature(black_box(&signature), black_box(&body)))
    });
    group.bench_function("verify_signature_two_keys", |b| {
        b.iter(|| rotating.verify_signature(black_box(&signature), black_box(&body)))
    });
    group.bench_function("bare_hmac_sha256", |b| {
        b.iter(|| {
            let mut mac = match Hmac::<Sha256>::new_from_slice(black_box(KEY.as_bytes())) {
                Ok(mac) => mac,
                Err(_) => return false,
            };
            mac.update(black_box(&body));
            mac.verify_slice(&expected).is_ok()
        })
    });
    group.finish();

    c.bench_function("parse_event", |b| {
        b.iter(|| serde_json::from_slice::<Event>(black_box(&body)).is_ok())
    });
}

criterion_group!(benches, verification);
criterion_main!(benches);
