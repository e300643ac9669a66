//! Record a session once, keep the cassette as an insta snapshot, replay it in every `cargo test` with
//! no server and no key: `store-api-cassette`'s [`Recorder`] and [`Replayer`] networks.
//!
//! The code under test is [`checkout`]: it places an order exactly once and reads it back.
//!
//! - `cargo test -p store-api-examples --example cassette_replay` records the session against an
//!   in-process emulator in deterministic mode (so the cassette is the same text on every run) and
//!   checks it against `examples/examples/snapshots/cassette_replay__checkout.snap` (`cargo insta review`
//!   accepts a change); then it replays that snapshot with no server at all.
//! - `cargo run -p store-api-examples --example cassette_replay` replays the committed snapshot, with
//!   no server and no variables. With `STORE_API_RECORD=1` it records the session against the service
//!   named by `STORE_API_KEY`, `STORE_API_STORE_ID` and `STORE_API_BASE_URL` instead and writes the
//!   cassette to `CASSETTE` (default `checkout.cassette.json`): no key in it, customer data as
//!   placeholders. Read it before you commit it.

use std::error::Error;
use std::sync::Arc;

use store_api::model::Order;
use store_api::{
    AddressLines, Client, ClientBuilder, OrderBuilder, ShipTo, ShipToAddress, new_external_order_id,
};
use store_api_cassette::{Cassette, RecordOptions, Recorder, Replayer};

/// The committed cassette: an insta snapshot, which [`Cassette::load`] reads as a cassette.
const SNAPSHOT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/snapshots/cassette_replay__checkout.snap"
);

/// The code under test: places two black M Sunset Tees under `external_id` and reads the order back.
async fn checkout(client: &Client, external_id: &str) -> Result<Order, Box<dyn Error>> {
    let address = ShipToAddress::new(AddressLines {
        street_address: "1 Main St",
        city_or_town: "Austin",
        state_or_province: "TX",
        postal_code: "78701",
        country: "US",
    })?;
    let order = OrderBuilder::new(external_id, ShipTo::new("Ada", "Lovelace", address)?)?
        .sku("AA-TEE-SUN-BLK-M", 2)
        .build()?;
    let placed = client.orders().submit(&order).await?;
    Ok(client.orders().get(&placed.order().id).await?)
}

/// A client that answers from `cassette` alone: the base URL is never dialled and any key does. The
/// store id must be the recorded one (it is part of every path).
fn replaying(cassette: Cassette, store_id: &str) -> Result<Client, store_api::Error> {
    Client::builder()
        .base_url("http://127.0.0.1:9")
        .store_id(store_id)
        .api_key("not-needed-for-a-replay")
        .network(Arc::new(Replayer::new(cassette)))
        .build()
}

/// `builder` recording through a new [`Recorder`] over the real network.
fn recording(builder: ClientBuilder) -> Result<(Client, Arc<Recorder>), store_api::Error> {
    let recorder = Arc::new(Recorder::reqwest(RecordOptions::default())?);
    let client = builder.network(recorder.clone()).build()?;
    Ok((client, recorder))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let external_id = new_external_order_id();
    if std::env::var("STORE_API_RECORD").is_ok_and(|value| value == "1") {
        let (client, recorder) = recording(ClientBuilder::from_env()?)?;
        let order = checkout(&client, &external_id).await?;
        let path = std::env::var("CASSETTE").unwrap_or_else(|_| "checkout.cassette.json".into());
        recorder.recording().cassette().save(&path)?;
        println!("placed {}; recorded to {path}", order.id);
    } else {
        // A fresh external id matches the recorded one: the replay binds it as a variable.
        let client = replaying(Cassette::load(SNAPSHOT)?, "store_alpha")?;
        let order = checkout(&client, &external_id).await?;
        println!(
            "replayed {} ({:?}), externalOrderId {:?}, total {:?}",
            order.id, order.status, order.external_order_id, order.total_cost
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use store_api_fixtures::Emulator;

    use super::*;

    #[tokio::test]
    async fn the_recorded_session_is_the_snapshot() {
        // Deterministic: the same ids, timestamps and keys on every run, so the cassette is stable.
        let emu = Emulator::builder()
            .deterministic(7)
            .rate_limit(false)
            .network_downloads(false)
            .start()
            .await
            .unwrap();
        let store = emu.store("store_alpha").unwrap();
        let builder = Client::builder()
            .base_url(emu.base_url())
            .store_id(&store.id)
            .api_key(&store.api_key);
        let (client, recorder) = recording(builder).unwrap();
        let order = checkout(&client, "checkout-1").await.unwrap();
        assert_eq!(order.external_order_id.as_deref(), Some("checkout-1"));

        let text = recorder.recording().cassette().to_text();
        assert!(!text.contains(&store.api_key), "the key is never written");
        assert!(!text.contains("Lovelace"), "customer data is redacted");
        insta::with_settings!({ prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!("cassette_replay__checkout", text);
        });
    }

    #[tokio::test]
    async fn replays_the_snapshot_with_no_server() {
        let cassette = Cassette::load(SNAPSHOT).unwrap();
        let client = replaying(cassette, "store_alpha").unwrap();

        // Another external id than the recorded one: bound to it, and carried back into the answers.
        let order = checkout(&client, "checkout-replayed").await.unwrap();
        assert_eq!(
            order.external_order_id.as_deref(),
            Some("checkout-replayed")
        );
        assert_eq!(order.line_items.len(), 1);
        assert_eq!(order.total_quantity, Some(2));

        // A request the cassette does not hold is refused, never sent; its error names it.
        let missed = client.orders().get("ord_not_recorded").await.unwrap_err();
        let store_api::Error::Refused { source } = &missed else {
            panic!("not a replay miss: {missed:?}");
        };
        let miss = source
            .downcast_ref::<store_api_cassette::ReplayError>()
            .expect("the replay's own error");
        assert!(miss.to_string().contains("ord_not_recorded"), "{miss}");
    }
}
