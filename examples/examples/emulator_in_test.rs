//! Your own code tested against the emulator started inside the test: the pattern to copy into your
//! crate's tests (`cargo add store-api-fixtures --dev`).
//!
//! The code under test is [`shipping_update`], what a shop would tell its customer about an order.
//! `cargo run -p store-api-examples --example emulator_in_test` prints it for the order `ORDER_ID` on the
//! service named by `STORE_API_KEY`, `STORE_API_STORE_ID` and `STORE_API_BASE_URL`
//! ([`Client::from_env`]). `cargo test -p store-api-examples --example emulator_in_test` starts an
//! [`Emulator`](store_api_fixtures::Emulator) on 127.0.0.1, builds a client from its base URL and a
//! store's credentials, seeds an order as the app would, moves it up the fulfillment ladder, makes the
//! service fail once on purpose, and checks what the customer is told at each step.

use std::error::Error;

use store_api::Client;
use store_api::model::{FulfillmentStatus, Order, OrderStatus};

/// One line for the customer about the order `order_id`, read from the service.
async fn shipping_update(client: &Client, order_id: &str) -> Result<String, store_api::Error> {
    let order = client.orders().get(order_id).await?;
    Ok(describe(&order))
}

/// What the customer is told: shipped with tracking, canceled, or how far production has come.
fn describe(order: &Order) -> String {
    let name = order.name.as_deref().unwrap_or(&order.id);
    if order.status == Some(OrderStatus::Canceled) {
        return format!("order {name} was canceled");
    }
    match (&order.fulfillment_status, &order.tracking_info) {
        (Some(FulfillmentStatus::Fulfilled), Some(tracking)) => format!(
            "order {name} shipped with {}: {}",
            tracking.carrier.as_deref().unwrap_or("the carrier"),
            tracking
                .tracking_number
                .as_deref()
                .unwrap_or("no tracking number yet"),
        ),
        (Some(FulfillmentStatus::Pending), _) | (None, _) => {
            format!("order {name} is received and waits for production")
        }
        _ => format!("order {name} is being made"),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let client = Client::from_env()?;
    let order_id = std::env::var("ORDER_ID").map_err(|_| "set ORDER_ID to an order's id")?;
    println!("{}", shipping_update(&client, &order_id).await?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use store_api::{AddressLines, NewOrder, OrderBuilder, RateLimiter, ShipTo, ShipToAddress};
    use store_api_fixtures::{AppAction, Emulator, Fault, FaultKind};

    use super::*;

    const STORE: &str = "store_alpha";

    /// A client of `store_id` on `emu`: all it takes is the emulator's base URL and the store's key.
    /// The emulator's rate limit is off, so the client's own limiter is relaxed too (it keeps the
    /// service's two requests a second otherwise).
    fn client_of(emu: &Emulator, store_id: &str) -> Client {
        let store = emu.store(store_id).expect("a store of the built-in seed");
        Client::builder()
            .base_url(emu.base_url())
            .store_id(&store.id)
            .api_key(store.api_key)
            .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(100)))
            .build()
            .expect("a valid client")
    }

    /// Two black M Sunset Tees (a product of `store_alpha` in the built-in seed) for Austin.
    fn tee_order(external_id: &str) -> NewOrder {
        let address = ShipToAddress::new(AddressLines {
            street_address: "1 Main St",
            city_or_town: "Austin",
            state_or_province: "TX",
            postal_code: "78701",
            country: "US",
        })
        .unwrap();
        let ship_to = ShipTo::new("Ada", "Lovelace", address).unwrap();
        OrderBuilder::new(external_id, ship_to)
            .unwrap()
            .sku("AA-TEE-SUN-BLK-M", 2)
            .build()
            .unwrap()
            .into_request()
    }

    #[tokio::test]
    async fn tells_the_customer_how_the_order_moves() {
        // Loopback only, a port of its own: tests run in parallel without sharing anything.
        let emu = Emulator::builder()
            .rate_limit(false)
            .network_downloads(false)
            .start()
            .await
            .unwrap();
        let client = client_of(&emu, STORE);

        // Seed: an order placed in the app, as a customer's checkout would have made it.
        let order = emu
            .create_order_in_app(STORE, tee_order("shop-1001"))
            .unwrap();
        let name = order.name.clone().unwrap();
        assert_eq!(
            shipping_update(&client, &order.id).await.unwrap(),
            format!("order {name} is received and waits for production")
        );

        // Trigger: the provider moves it up the ladder (`store-api emulator advance` does the same).
        emu.advance_order(STORE, &order.id).unwrap();
        assert_eq!(
            shipping_update(&client, &order.id).await.unwrap(),
            format!("order {name} is being made")
        );
        while emu
            .advance_order(STORE, &order.id)
            .unwrap()
            .fulfillment_status
            != Some(FulfillmentStatus::Fulfilled)
        {}

        // A failure on purpose: the next read answers 503 once; the client retries it.
        emu.inject_fault(
            Fault::new(FaultKind::Status { status: 503 })
                .operation("get_order")
                .times(1),
        )
        .unwrap();
        let shipped = shipping_update(&client, &order.id).await.unwrap();
        let tracking = emu.orders(STORE)[0].tracking_info.clone().unwrap();
        assert_eq!(
            shipped,
            format!(
                "order {name} shipped with UPS: {}",
                tracking.tracking_number.unwrap()
            )
        );
        assert!(
            emu.pending_faults().is_empty(),
            "the 503 was answered, and retried"
        );
    }

    #[tokio::test]
    async fn says_canceled_and_keeps_stores_apart() {
        let emu = Emulator::builder()
            .rate_limit(false)
            .network_downloads(false)
            .start()
            .await
            .unwrap();
        let order = emu
            .create_order_in_app(STORE, tee_order("shop-1002"))
            .unwrap();
        emu.app_action(STORE, &order.id, AppAction::Cancel).unwrap();
        assert_eq!(
            shipping_update(&client_of(&emu, STORE), &order.id)
                .await
                .unwrap(),
            format!("order {} was canceled", order.name.unwrap())
        );

        // Store isolation holds: `store_beta`'s key cannot read `store_alpha`'s order.
        let error = shipping_update(&client_of(&emu, "store_beta"), &order.id)
            .await
            .unwrap_err();
        assert!(
            matches!(error, store_api::Error::NotFound { .. }),
            "{error:?}"
        );
    }
}
