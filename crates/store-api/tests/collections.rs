//! Every resource is the same generic collection: list, get, stream, pages and collect_all agree with
//! each other for catalog, products, artworks and orders alike.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Debug;
use std::time::Duration;

use futures::TryStreamExt;
use serde_json::json;
use store_api::{
    ArtworkQuery, CatalogQuery, Client, Collection, Listed, NewOrder, OrderQuery, ProductQuery,
    RateLimiter,
};
use store_api_fixtures::Emulator;
use store_api_fixtures::artwork::FakeResource;

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// Walks `query` (whose page size is 1) every way the collection offers and checks they agree.
async fn every_way_agrees<T: Listed + Debug + PartialEq>(
    items: Collection<'_, T>,
    query: T::Query,
) {
    let pages: Vec<_> = items.pages(&query).try_collect().await.unwrap();
    let all = items.collect_all(&query).await.unwrap();
    assert!(all.len() >= 2, "a walk of more than one page");
    assert_eq!(pages.len(), all.len(), "one item per page");
    let from_pages: Vec<T> = pages.into_iter().flat_map(|page| page.items).collect();
    assert_eq!(from_pages, all);
    let streamed: Vec<T> = items.stream(&query).try_collect().await.unwrap();
    assert_eq!(streamed, all);
    let first = items.list(&query).await.unwrap();
    assert_eq!(first.items.first(), all.first());
    assert_eq!(first.total_items, all.len() as u64);
    let got = items.get(all[1].id()).await.unwrap();
    assert_eq!(got, all[1]);
}

#[tokio::test]
async fn every_resource_lists_gets_streams_and_pages_the_same_way() {
    let emulator = Emulator::builder()
        .rate_limit(false)
        .network_downloads(false)
        .start()
        .await
        .unwrap();
    let store = emulator.store("store_alpha").unwrap();
    let client = Client::builder()
        .base_url(emulator.base_url())
        .store_id(&store.id)
        .api_key(&store.api_key)
        .rate_limiter(RateLimiter::with_rate(1000, Duration::from_micros(50)))
        .build()
        .unwrap();
    for (n, url) in [
        "https://art.example-cdn.test/a.png",
        "https://art.example-cdn.test/b.png",
    ]
    .into_iter()
    .enumerate()
    {
        emulator
            .fake_hosts()
            .insert(url, FakeResource::image(PNG))
            .unwrap();
        client
            .artworks()
            .create(&format!("art {n}"), url)
            .await
            .unwrap();
        let order: NewOrder = serde_json::from_value(json!({
            "lineItems": [{ "sku": "AA-TEE-SUN-BLK-M", "quantity": 1 }],
            "shippingAddress": {
                "firstName": "Ada",
                "lastName": "Lovelace",
                "address": {
                    "streetAddress": "1 Main St",
                    "cityOrTown": "Austin",
                    "stateOrProvince": "TX",
                    "zipOrPostalCode": "78701",
                    "country": "US"
                }
            }
        }))
        .unwrap();
        client.orders().create(&order).await.unwrap();
    }

    every_way_agrees(client.catalog(), CatalogQuery::new().limit(1)).await;
    every_way_agrees(client.products(), ProductQuery::new().limit(1)).await;
    every_way_agrees(client.artworks(), ArtworkQuery::new().limit(1)).await;
    every_way_agrees(client.orders(), OrderQuery::new().limit(1)).await;
}
