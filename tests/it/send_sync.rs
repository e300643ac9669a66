//! Compile-time checks: the client, its errors and pages cross threads, and so do the futures and streams
//! of its calls (so they can be spawned on a multi-threaded runtime).

use std::future::Future;

use futures::Stream;
use store_api::model::Order;
use store_api::{Client, Error, ListOrdersQuery, Page, Submission};

fn send_sync<T: Send + Sync>() {}
fn send_future<F: Future + Send>(_: &F) {}
fn send_stream<S: Stream + Send>(_: &S) {}

#[test]
fn client_errors_and_pages_are_send_and_sync() {
    send_sync::<Client>();
    send_sync::<Error>();
    send_sync::<Page<Order>>();
    send_sync::<Submission>();
    send_sync::<store_api::RateLimiter>();
}

#[allow(dead_code, reason = "only type-checked: the futures are never polled")]
fn the_calls_futures_and_streams_are_send(client: &Client, order: &store_api::IdentifiedOrder) {
    send_future(&client.status());
    send_future(&client.orders().submit(order));
    send_future(&client.orders().list(&ListOrdersQuery::new()));
    send_future(&client.catalog().get("cp_bc3001"));
    send_stream(&client.orders().stream(&ListOrdersQuery::new()));
    send_stream(&client.orders().pages(&ListOrdersQuery::new()));
}
