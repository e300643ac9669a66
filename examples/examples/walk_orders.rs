//! Walks every order of the store, page after page, with [`Orders::stream`](store_api::Orders::stream).
//!
//! `cargo run -p store-api-examples --example walk_orders` lists the orders of the store named by
//! `STORE_API_KEY`, `STORE_API_STORE_ID` and `STORE_API_BASE_URL` ([`Client::from_env`]), oldest first.
//! `cargo test -p store-api-examples --example walk_orders` runs the same function against an
//! in-process emulator holding more orders than one page, and checks each one is seen exactly once.

use std::error::Error;

use futures::TryStreamExt;
use store_api::model::{Order, SortDirection};
use store_api::{Client, ListOrdersQuery};

/// Every order, oldest first, fetched `page_size` at a time; prints one line per order.
async fn walk_orders(client: &Client, page_size: u64) -> Result<Vec<Order>, Box<dyn Error>> {
    let query = ListOrdersQuery::new()
        .limit(page_size)
        .sort_created_at(SortDirection::Asc);
    let mut orders = std::pin::pin!(client.orders().stream(&query));
    let mut seen = Vec::new();
    while let Some(order) = orders.try_next().await? {
        println!(
            "{}  {:<24} {:?}",
            order.id,
            order.external_order_id.as_deref().unwrap_or("-"),
            order.status
        );
        seen.push(order);
    }
    println!("{} orders", seen.len());
    Ok(seen)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let client = Client::from_env()?;
    walk_orders(&client, 100).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use store_api::{AddressLines, OrderBuilder, RateLimiter, ShipTo, ShipToAddress};
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
    async fn sees_every_order_once_across_pages() {
        let emu = Emulator::builder().rate_limit(false).start().await.unwrap();
        let client = client_of(&emu);
        let before = emu.order_count("store_alpha");
        let address = ShipToAddress::new(AddressLines {
            street_address: "1 Main St",
            city_or_town: "Austin",
            state_or_province: "TX",
            postal_code: "78701",
            country: "US",
        })
        .unwrap();
        let ship_to = ShipTo::new("Ada", "Lovelace", address).unwrap();
        for n in 0..7 {
            let order = OrderBuilder::new(&format!("walk-{n}"), ship_to.clone())
                .unwrap()
                .sku("AA-TEE-SUN-BLK-M", 1)
                .build()
                .unwrap();
            client.orders().submit(&order).await.unwrap();
        }

        let seen = walk_orders(&client, 3).await.unwrap();
        let ids: BTreeSet<&str> = seen.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids.len(), seen.len(), "no order twice");
        assert_eq!(seen.len(), before + 7, "every order");
        let placed: BTreeSet<String> = (0..7).map(|n| format!("walk-{n}")).collect();
        let found: BTreeSet<String> = seen
            .iter()
            .filter_map(|o| o.external_order_id.clone())
            .collect();
        assert!(placed.is_subset(&found), "{found:?}");
    }
}
