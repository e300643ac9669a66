//! What both instruction-count programs share (`main.rs`, `otel/main.rs`): the emulator and client
//! they count against, and the order they submit. Copied beside each as `src/common.rs` by its script.

use std::time::Duration;

use store_api::{Client, NewOrder, RateLimiter};
use store_api_fixtures::Emulator;

pub const ALPHA: &str = "store_alpha";

/// An emulator (its rate limit off) whose `store_alpha` holds 100 orders, a client of it with a limiter
/// that does not bind, and the store's key.
pub async fn set_up() -> (Emulator, Client, String) {
    let emu = Emulator::builder()
        .rate_limit(false)
        .network_downloads(false)
        .start()
        .await
        .unwrap();
    let key = emu.store(ALPHA).unwrap().api_key;
    let client = Client::builder()
        .base_url(emu.base_url())
        .store_id(ALPHA)
        .api_key(&key)
        .timeout(Duration::from_secs(30))
        .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
        .build()
        .unwrap();
    for i in 0..100 {
        client
            .orders()
            .create(&order(&format!("seed-{i}")))
            .await
            .unwrap();
    }
    (emu, client, key)
}

/// An order of the seed's Sunset Tee to Austin, with `external_id`.
pub fn order(external_id: &str) -> NewOrder {
    serde_json::from_value(serde_json::json!({
        "lineItems": [{ "sku": "AA-TEE-SUN-BLK-M", "quantity": 1 }],
        "shippingAddress": {
            "firstName": "Ada", "lastName": "Lovelace",
            "address": { "streetAddress": "1 Main St", "cityOrTown": "Austin",
                "stateOrProvince": "TX", "zipOrPostalCode": "78701", "country": "US" }
        },
        "externalOrderId": external_id,
    }))
    .unwrap()
}
