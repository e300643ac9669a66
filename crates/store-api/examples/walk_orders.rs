//! Walks every order of the store, page after page, with [`Orders::stream`](store_api::Orders::stream).
//!
//! `cargo run -p store-api --example walk_orders` lists the orders of the store named by
//! `STORE_API_KEY`, `STORE_API_STORE_ID` and `STORE_API_BASE_URL` ([`Client::from_env`]), oldest first.
//! `cargo test -p store-api --example walk_orders` runs the same function against an in-process
//! emulator holding more orders than one page, and checks each one is seen exactly once.

use std::error::Error;

use futures::TryStreamExt;
use store_api::model::{Order, SortDirection};
use store_api::{Client, OrderQuery, OrderSort};

/// Every order, oldest first, fetched `page_size` at a time; prints one line per order.
async fn walk_orders(client: &Client, page_size: u64) -> Result<Vec<Order>, Box<dyn Error>> {
    let query = OrderQuery::new()
        .limit(page_size)
        .sort_by(OrderSort::CreatedAt, SortDirection::Asc);
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

    use store_api::{OrderBuilder, ShipTo, ShipToAddress};
    use store_api_fixtures::Emulator;

    use super::*;

    #[tokio::test]
    async fn sees_every_order_once_across_pages() {
        let emu = Emulator::builder().rate_limit(false).start().await.unwrap();
        let client = emu.client("store_alpha").unwrap();
        let before = emu.order_count("store_alpha");
        let address = ShipToAddress::us("1 Main St", "Austin", "TX", "78701").unwrap();
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
