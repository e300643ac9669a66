//! What the emulator benches share: the emulator they measure and the orders they create.

use serde_json::{Value, json};
use store_api_fixtures::{Emulator, StoreCredentials};

/// An emulator that measures only itself (no rate limit, no network downloads), and `store_alpha`.
pub async fn quiet_emulator()
-> Result<(Emulator, StoreCredentials), Box<dyn std::error::Error + Send + Sync>> {
    let emulator = Emulator::builder()
        .rate_limit(false)
        .network_downloads(false)
        .start()
        .await?;
    let store = emulator
        .store("store_alpha")
        .ok_or("store_alpha is not in the seed")?;
    Ok((emulator, store))
}

/// Orderable SKUs of `store_alpha` (seed/README.md).
pub const SKUS: &[&str] = &[
    "AA-TEE-SUN-BLK-S",
    "AA-TEE-SUN-BLK-M",
    "AA-TEE-SUN-BLK-L",
    "AA-HOOD-MTN-BLK-M",
    "AA-CAP-LOGO-BLK-OS",
    "AA-MUG-FUEL-WHT-11OZ",
    "AA-PSTR-CITY-BWH-12X18",
    "AA-TEE-MEM-PEP-M",
];

/// A valid order of one to three line items, cycling through the orderable SKUs.
pub fn order_body(external_id: &str, n: u64) -> Value {
    let count = (n % 3) as usize + 1;
    let line_items: Vec<Value> = (0..count)
        .map(|i| json!({ "sku": SKUS[(n as usize + i) % SKUS.len()], "quantity": (n % 4) + 1 }))
        .collect();
    json!({
        "externalOrderId": external_id,
        "lineItems": line_items,
        "shippingAddress": {
            "firstName": "Ada",
            "lastName": "Lovelace",
            "address": {
                "streetAddress": "1 Main St",
                "cityOrTown": "Springfield",
                "stateOrProvince": "NY",
                "zipOrPostalCode": "12345",
                "country": "US"
            }
        }
    })
}
