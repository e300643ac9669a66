//! Places one order exactly once, built in code with [`OrderBuilder`]: the README's first example.
//!
//! `cargo run -p store-api-examples --example place_order` places it on the service named by
//! `STORE_API_KEY`, `STORE_API_STORE_ID` and `STORE_API_BASE_URL` ([`Client::from_env`]), with the
//! external order id in `EXTERNAL_ORDER_ID` (a new one when unset: store it with your order before
//! sending, so a rerun sends the same id and cannot bill twice). `cargo test -p store-api-examples
//! --example place_order` runs the same function against an in-process emulator, twice with one id,
//! and checks one order was billed.

use std::error::Error;

use store_api::{
    AddressLines, Client, OrderBuilder, ShipTo, ShipToAddress, Submission, Submitted,
    new_external_order_id,
};

/// Places two black M Sunset Tees for Ada Lovelace in Austin under `external_id`.
async fn place_order(client: &Client, external_id: &str) -> Result<Submission, Box<dyn Error>> {
    let ship_to = ShipTo::new(
        "Ada",
        "Lovelace",
        ShipToAddress::new(AddressLines {
            street_address: "1 Main St",
            city_or_town: "Austin",
            state_or_province: "TX",
            postal_code: "78701",
            country: "US",
        })?,
    )?;
    let order = OrderBuilder::new(external_id, ship_to)?
        .sku("AA-TEE-SUN-BLK-M", 2)
        .build()?;
    let submission = client.orders().submit(&order).await?;
    if let Submitted::AlreadyExisted(existing) = &submission.submitted {
        println!("order {} was already placed", existing.id);
    }
    println!("total billed: {:?} USD", submission.order().total_cost);
    Ok(submission)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let client = Client::from_env()?;
    let external_id =
        std::env::var("EXTERNAL_ORDER_ID").unwrap_or_else(|_| new_external_order_id());
    println!("externalOrderId {external_id}");
    place_order(&client, &external_id).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use store_api::RateLimiter;
    use store_api_fixtures::Emulator;

    use super::*;

    /// A client of `store_alpha` on `emu`: all it takes is the emulator's base URL and the store's
    /// key. The emulator's rate limit is off, so the client's own limiter is relaxed too (it keeps the
    /// service's two requests a second otherwise).
    fn client_of(emu: &Emulator) -> Client {
        let store = emu.store("store_alpha").unwrap();
        Client::builder()
            .base_url(emu.base_url())
            .store_id(&store.id)
            .api_key(store.api_key)
            .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn places_the_order_once_however_often_it_runs() {
        let emu = Emulator::builder().rate_limit(false).start().await.unwrap();
        let client = client_of(&emu);
        let external_id = new_external_order_id();

        let first = place_order(&client, &external_id).await.unwrap();
        assert!(
            matches!(first.submitted, Submitted::Created(_)),
            "{first:?}"
        );
        assert_eq!(
            first.order().external_order_id.as_deref(),
            Some(external_id.as_str())
        );

        // A rerun after a crash: the same id finds the order instead of billing a second one.
        let rerun = place_order(&client, &external_id).await.unwrap();
        assert!(
            matches!(rerun.submitted, Submitted::AlreadyExisted(_)),
            "{rerun:?}"
        );
        assert_eq!(rerun.order().id, first.order().id);
        assert_eq!(emu.order_count("store_alpha"), 1);
    }
}
