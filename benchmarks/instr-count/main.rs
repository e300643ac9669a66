//! Instruction counts of the client with no subscriber and no meter (issue 37 point 6); `run.sh`
//! builds and runs it. N typed list calls (`GET /orders?limit=100`) or N submissions (pre-flight
//! against the warm snapshot cache, one POST) against the in-process emulator, on a current-thread
//! runtime. Under `valgrind --tool=callgrind --toggle-collect='*Counted*'` with `list N` or `submit N`
//! only the client's side of the calls is counted: the emulator and hyper's connection tasks run as
//! tasks of their own, outside these futures' polls.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use store_api::{Client, IdentifiedOrder, ListOrdersQuery, NewOrder, RateLimiter};
use store_api_fixtures::Emulator;

const ALPHA: &str = "store_alpha";

fn order(external_id: &str) -> NewOrder {
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

/// Polls its future in a function of its own, the one callgrind's `--toggle-collect` names.
struct Counted<F>(Pin<Box<F>>);

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;

    #[inline(never)]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.0.as_mut().poll(cx)
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let n: usize = std::env::args().nth(2).map_or(200, |a| a.parse().unwrap());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let emu = Emulator::builder().rate_limit(false).network_downloads(false).start().await.unwrap();
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
            client.orders().create(&order(&format!("seed-{i}"))).await.unwrap();
        }
        let query = ListOrdersQuery::new().limit(100);
        // Warm: the connection, the snapshot cache, every lazily built thing, outside the counted polls.
        for i in 0..5 {
            client.orders().list(&query).await.unwrap();
            let o = IdentifiedOrder::try_from(order(&format!("warm-{i}"))).unwrap();
            client.orders().submit(&o).await.unwrap();
        }
        let orders: Vec<IdentifiedOrder> = (0..n)
            .map(|i| IdentifiedOrder::try_from(order(&format!("bench-{i}"))).unwrap())
            .collect();
        if mode == "list" {
            for _ in 0..n {
                let page = Counted(Box::pin(client.orders().list(&query))).await.unwrap();
                assert_eq!(page.items.len(), 100);
            }
        } else {
            for o in &orders {
                Counted(Box::pin(client.orders().submit(o))).await.unwrap();
            }
        }
        drop(client);
        emu.shutdown().await;
    });
}
