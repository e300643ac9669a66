//! Fetching what an event is about. The payload says a resource changed, not how, so a receiver reads
//! the current resource (the seed's "Receiver action" column).

use store_api::Client;
use store_api::model::{Order, Product};

use crate::event::{Event, Resource};

/// The current state of the resource an event is about.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FollowUp {
    /// `products_create` / `products_update`: the product as it is now.
    Product(Box<Product>),
    /// `products_delete`, or a product event whose product is gone by now: remove it locally.
    ProductDeleted(String),
    /// `orders_create` / `orders_update`: the order as it is now (status, fulfillmentStatus, trackingInfo).
    Order(Box<Order>),
    /// A topic this SDK does not know: the specification says to ignore it.
    Ignored,
}

/// Fetches the resource `event` is about through `client` (one request, under the client's rate limit).
///
/// An event of another store than the client's is refused ([`store_api::Error::InvalidArgument`]) without
/// a request: its ids mean nothing in this store, and a verified event of store A must not make a
/// receiver act on store B's data.
///
/// ```no_run
/// # async fn run(client: store_api::Client, event: store_api_webhooks::Event) -> Result<(), store_api::Error> {
/// use store_api_webhooks::{FollowUp, follow_up};
/// match follow_up(&client, &event).await? {
///     FollowUp::Order(order) => println!("{} is {:?}", order.id, order.fulfillment_status),
///     FollowUp::Product(product) => println!("product {} changed", product.id),
///     FollowUp::ProductDeleted(id) => println!("forget product {id}"),
///     _ => {}
/// }
/// # Ok(())
/// # }
/// ```
pub async fn follow_up(client: &Client, event: &Event) -> Result<FollowUp, store_api::Error> {
    if event.store_id != client.store_id() {
        return Err(store_api::Error::InvalidArgument {
            message: format!(
                "the event belongs to store {} but the client works for store {}; nothing was fetched",
                event.store_id,
                client.store_id()
            ),
            source: None,
        });
    }
    match event.resource() {
        Resource::Order(id) => client
            .orders()
            .get(id)
            .await
            .map(|o| FollowUp::Order(Box::new(o))),
        Resource::Product(id) if event.topic == crate::Topic::ProductsDelete => {
            Ok(FollowUp::ProductDeleted(id.to_owned()))
        }
        Resource::Product(id) => match client.products().get(id).await {
            Ok(product) => Ok(FollowUp::Product(Box::new(product))),
            Err(store_api::Error::NotFound { .. }) => Ok(FollowUp::ProductDeleted(id.to_owned())),
            Err(error) => Err(error),
        },
        _ => Ok(FollowUp::Ignored),
    }
}

/// [`follow_up`], and the product it brings folded into the client's copy of the store (the one
/// pre-flight validation checks orders against): a created or changed product is put in as it is now,
/// a deleted one removed. With a receiver that calls this for every product event, the copy sees
/// removals at once instead of at its next full read (see `store_api::store_cache`). Events of other
/// topics are followed up and change nothing.
///
/// ```no_run
/// # async fn run(client: store_api::Client, event: store_api_webhooks::Event) -> Result<(), store_api::Error> {
/// // In the receiver's handler, after the delivery was verified:
/// store_api_webhooks::keep_store_cache(&client, &event).await?;
/// # Ok(())
/// # }
/// ```
pub async fn keep_store_cache(
    client: &Client,
    event: &Event,
) -> Result<FollowUp, store_api::Error> {
    let followed = follow_up(client, event).await?;
    match &followed {
        FollowUp::Product(product) => {
            client.store_cache().put_product(Product::clone(product));
        }
        FollowUp::ProductDeleted(id) => {
            client.store_cache().remove_product(id);
        }
        _ => {}
    }
    Ok(followed)
}
