//! Instruction counts of the client with no subscriber and no meter (issue 37 point 6); `run.sh`
//! builds and runs it. N typed list calls (`GET /orders?limit=100`) or N submissions (pre-flight
//! against the warm snapshot cache, one POST) against the in-process emulator, on a current-thread
//! runtime. Under `valgrind --tool=callgrind --toggle-collect='*Counted*'` with `list N` or `submit N`
//! only the client's side of the calls is counted: the emulator and hyper's connection tasks run as
//! tasks of their own, outside these futures' polls.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

mod common;

use common::{order, set_up};
use store_api::{IdentifiedOrder, ListOrdersQuery};

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
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (emu, client, _) = set_up().await;
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
                let page = Counted(Box::pin(client.orders().list(&query)))
                    .await
                    .unwrap();
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
