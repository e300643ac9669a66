//! The client's limiter against the emulator's real limit (a burst of ten, then two per second): what a
//! counting proxy sees reach the service. Functional checks; the only timing involved is the limit's own.

use futures::future::join_all;
use store_api::Client;
use store_api_fixtures::Emulator;
use store_api_tests::proxy::{Exchange, FaultPlan, FaultProxy};
use store_api_tests::{ALPHA, emulator_with_rate_limit, key_of};

/// A client with the default settings, so with the process-wide limiter of its store and base URL.
fn default_client(emu: &Emulator, proxy: &FaultProxy) -> Client {
    Client::builder()
        .base_url(proxy.base_url())
        .store_id(ALPHA)
        .api_key(key_of(emu, ALPHA))
        .build()
        .unwrap()
}

fn statuses(exchanges: &[Exchange]) -> Vec<Option<u16>> {
    exchanges.iter().map(Exchange::upstream_status).collect()
}

#[tokio::test]
async fn sequential_calls_under_the_real_limit_never_meet_a_429() {
    let emu = emulator_with_rate_limit().await;
    let proxy = FaultProxy::start(emu.origin(), FaultPlan::none()).await;
    let client = default_client(&emu, &proxy);
    for call in 0..25 {
        client
            .status()
            .await
            .unwrap_or_else(|e| panic!("call {call}: {e}"));
    }
    // One request per call (a 429 would have been retried, adding a request), and every one a 200.
    assert_eq!(statuses(&proxy.exchanges()), vec![Some(200); 25]);
}

#[tokio::test]
async fn clients_of_one_store_built_separately_share_one_limiter() {
    let emu = emulator_with_rate_limit().await;
    let proxy = FaultProxy::start(emu.origin(), FaultPlan::none()).await;
    let first = default_client(&emu, &proxy);
    let second = default_client(&emu, &proxy);
    // Twenty calls at once, ten per client: with a limiter each, both bursts of ten would leave at once
    // and the service would refuse ten of them.
    let calls = (0..20).map(|i| {
        let client = if i % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        async move { client.status().await.map(drop) }
    });
    for result in join_all(calls).await {
        result.unwrap();
    }
    assert_eq!(statuses(&proxy.exchanges()), vec![Some(200); 20]);
}
