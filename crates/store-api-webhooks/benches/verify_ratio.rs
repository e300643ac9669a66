//! Verification cost against the floor: `Verifier::verify_signature` (no parse) on a typical ~300-byte
//! event, divided by a bare `Hmac<Sha256>` over the same bytes, measured side by side in one run.
//!
//! The bare baseline is the least a receiver can do: key an HMAC-SHA256, feed it the body and compare
//! the tag in constant time against bytes decoded beforehand. `verify_signature` does more (it reads the
//! hex header value and checks the body size) and one thing less (its keys are hashed into the MAC state
//! once, in `Verifier::new`). A third side, a clone of a pre-keyed MAC, shows the wrapper's own cost
//! (`webhook_verify_ratio_prekeyed`); it is reported, not the target. The sides are timed in alternating
//! batches, each round flipping which goes first, so all see the same machine noise; a ratio is the sum
//! of one side's batches over the sum of the other's.
//! Parsing (`serde_json` into `Event`) is timed separately and is not part of the ratio.
//!
//! Run with `cargo bench -p store-api-webhooks --bench verify_ratio` (add `-- --quick` for a short run;
//! without `--bench`, as under `cargo test --benches`, it runs a few rounds as a smoke test). Prints
//! machine-readable `webhook_*=VALUE` lines; `cargo xtask bench` reads them. The criterion bench `verify`
//! has per-function statistics of the same operations.

use std::error::Error;
use std::hint::black_box;
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::Sha256;
use store_api_webhooks::{Event, Verifier, sign};

type BoxError = Box<dyn Error + Send + Sync>;

const KEY: &str = "csk_ce4d6676e735329b21b3d864ca427df5";
/// Calls per timed batch: long enough that the clock's resolution does not matter.
const BATCH: u32 = 2_000;
/// The issue's target for verify ÷ bare HMAC.
const TARGET_RATIO: f64 = 1.10;

/// A typical event as the service sends it (~300 bytes, one field a newer service might add).
const BODY: &[u8] = br#"{"id":"evt_01J9Z8Q4W7X2K5M3N6P8R0T1V4","storeId":"store_alpha","topic":"orders_update","data":{"id":"ord_01J9Z8PZK3H6B2C4D7E9F1G3J5"},"isTest":false,"createdAt":"2026-08-14T09:26:53.123Z","extraForwardCompatibleField":{"note":"ignored by receivers","version":2,"source":"store-api-2026-08-emulator"}}"#;

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let smoke_test = !args.iter().any(|a| a == "--bench");
    let rounds = if smoke_test {
        5
    } else if args.iter().any(|a| a == "--quick") {
        200
    } else {
        2_000
    };

    let signature = sign(KEY, BODY);
    let tag = hex::decode(&signature)?;
    let verifier = Verifier::new(KEY);
    check_agreement(&verifier, &signature, &tag)?;

    let verify = || {
        verifier
            .verify_signature(black_box(&signature), black_box(BODY))
            .is_ok()
    };
    let bare = || bare_hmac(black_box(KEY.as_bytes()), black_box(BODY), black_box(&tag));
    let keyed = keyed_mac(KEY)?;
    let prekeyed = || prekeyed_hmac(black_box(&keyed), black_box(BODY), black_box(&tag));
    let parse = || serde_json::from_slice::<Event>(black_box(BODY)).is_ok();
    let verify_and_parse = || {
        verifier
            .verify(black_box(&signature), black_box(BODY))
            .is_ok()
    };

    // Warm caches and the CPU's clock before anything is recorded.
    for _ in 0..rounds.min(50) {
        batch(&verify);
        batch(&bare);
    }
    let (mut verify_total, mut bare_total, mut prekeyed_total) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    for round in 0..rounds {
        if round % 2 == 0 {
            verify_total += batch(&verify);
            bare_total += batch(&bare);
            prekeyed_total += batch(&prekeyed);
        } else {
            prekeyed_total += batch(&prekeyed);
            bare_total += batch(&bare);
            verify_total += batch(&verify);
        }
    }
    let side_rounds = (rounds / 4).max(1);
    let parse_total: Duration = (0..side_rounds).map(|_| batch(&parse)).sum();
    let full_total: Duration = (0..side_rounds).map(|_| batch(&verify_and_parse)).sum();

    let per_call_us = |total: Duration, rounds: u32| {
        total.as_secs_f64() * 1e6 / f64::from(rounds) / f64::from(BATCH)
    };
    let ratio = verify_total.as_secs_f64() / bare_total.as_secs_f64();
    let prekeyed_ratio = verify_total.as_secs_f64() / prekeyed_total.as_secs_f64();
    let verdict = if ratio <= TARGET_RATIO {
        "PASS"
    } else {
        "MISS"
    };
    println!(
        "webhook verification, {}-byte body, {rounds} rounds of {BATCH} calls each, alternating:",
        BODY.len()
    );
    println!(
        "  verify_signature      {:>8.3} µs/call",
        per_call_us(verify_total, rounds)
    );
    println!(
        "  bare Hmac<Sha256>     {:>8.3} µs/call",
        per_call_us(bare_total, rounds)
    );
    println!("  ratio                 {ratio:>8.3}  target <= {TARGET_RATIO}  {verdict}");
    println!(
        "  pre-keyed Hmac clone  {:>8.3} µs/call  (verify ÷ this: {prekeyed_ratio:.3}, the wrapper's own cost)",
        per_call_us(prekeyed_total, rounds)
    );
    println!(
        "  parse (separately)    {:>8.3} µs/call",
        per_call_us(parse_total, side_rounds)
    );
    println!(
        "  verify (sig + parse)  {:>8.3} µs/call",
        per_call_us(full_total, side_rounds)
    );
    println!("webhook_body_bytes={}", BODY.len());
    println!("webhook_verify_us={:.4}", per_call_us(verify_total, rounds));
    println!(
        "webhook_bare_hmac_us={:.4}",
        per_call_us(bare_total, rounds)
    );
    println!("webhook_verify_ratio={ratio:.4}");
    println!(
        "webhook_prekeyed_hmac_us={:.4}",
        per_call_us(prekeyed_total, rounds)
    );
    println!("webhook_verify_ratio_prekeyed={prekeyed_ratio:.4}");
    println!(
        "webhook_parse_us={:.4}",
        per_call_us(parse_total, side_rounds)
    );
    println!(
        "webhook_verify_and_parse_us={:.4}",
        per_call_us(full_total, side_rounds)
    );
    Ok(())
}

/// HMAC-SHA256 keyed with `key` over `body`, compared in constant time with `tag`.
fn bare_hmac(key: &[u8], body: &[u8], tag: &[u8]) -> bool {
    match Hmac::<Sha256>::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(body);
            mac.verify_slice(tag).is_ok()
        }
        Err(_) => false,
    }
}

/// An HMAC-SHA256 keyed once, as `Verifier::new` does.
fn keyed_mac(key: &str) -> Result<Hmac<Sha256>, BoxError> {
    Hmac::<Sha256>::new_from_slice(key.as_bytes()).map_err(|e| e.to_string().into())
}

/// A clone of the keyed MAC over `body`, compared in constant time with `tag`: the verifier's own core.
fn prekeyed_hmac(keyed: &Hmac<Sha256>, body: &[u8], tag: &[u8]) -> bool {
    keyed.clone().chain_update(body).verify_slice(tag).is_ok()
}

/// Times `BATCH` calls of `work`.
fn batch(work: &impl Fn() -> bool) -> Duration {
    let started = Instant::now();
    for _ in 0..BATCH {
        black_box(work());
    }
    started.elapsed()
}

/// Both sides accept the real signature and refuse a wrong one, so neither is timing a shortcut.
fn check_agreement(verifier: &Verifier, signature: &str, tag: &[u8]) -> Result<(), BoxError> {
    let mut wrong_tag = tag.to_vec();
    if let Some(first) = wrong_tag.first_mut() {
        *first ^= 1;
    }
    let wrong_signature = hex::encode(&wrong_tag);
    let accepted = verifier.verify_signature(signature, BODY).is_ok()
        && bare_hmac(KEY.as_bytes(), BODY, tag)
        && serde_json::from_slice::<Event>(BODY).is_ok();
    let refused = verifier.verify_signature(&wrong_signature, BODY).is_err()
        && !bare_hmac(KEY.as_bytes(), BODY, &wrong_tag);
    if accepted && refused {
        Ok(())
    } else {
        Err("the verifier and the bare HMAC disagree on the test signature".into())
    }
}
