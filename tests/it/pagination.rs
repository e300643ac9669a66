//! Walking every page of a store with 250 orders, also while new orders arrive between pages.

use std::collections::HashSet;
use std::fmt::Debug;
use std::pin::pin;

use futures::{StreamExt, TryStreamExt};
use store_api::model::Order;
use store_api::{
    Client, Collection, ListArtworksQuery, ListCatalogProductsQuery, ListOrdersQuery,
    ListProductsQuery, Listed, new_external_order_id,
};
use store_api_fixtures::artwork::FakeResource;
use store_api_tests::{ALPHA, PNG_1X1, client, emulator, tee_order};

const ORDERS: usize = 250;

/// Creates `count` orders of store_alpha, a few at a time.
async fn create_orders(client: &Client, count: usize) -> Vec<Order> {
    futures::stream::iter(0..count)
        .map(|_| {
            let client = client.clone();
            async move {
                client
                    .orders()
                    .create(&tee_order(Some(&new_external_order_id())))
                    .await
                    .unwrap()
            }
        })
        .buffer_unordered(8)
        .collect()
        .await
}

fn ids(orders: &[Order]) -> HashSet<String> {
    orders.iter().map(|o| o.id.clone()).collect()
}

#[tokio::test]
async fn streaming_yields_every_order_once() {
    let emu = emulator().await;
    let alpha = client(&emu, ALPHA);
    let created = create_orders(&alpha, ORDERS).await;

    let streamed: Vec<Order> = alpha
        .orders()
        .stream(&ListOrdersQuery::new())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(streamed.len(), ORDERS);
    assert_eq!(ids(&streamed), ids(&created));
    let created_at: Vec<_> = streamed.iter().map(|o| o.created_at).collect();
    assert!(created_at.windows(2).all(|w| w[0] >= w[1]), "newest first");

    let pages: Vec<_> = alpha
        .orders()
        .pages(&ListOrdersQuery::new())
        .try_collect()
        .await
        .unwrap();
    let sizes: Vec<_> = pages
        .iter()
        .map(|p| (p.page, p.items.len(), p.total_pages))
        .collect();
    assert_eq!(sizes, [(1, 100, 3), (2, 100, 3), (3, 50, 3)]);

    let small_pages: Vec<Order> = alpha
        .orders()
        .stream(&ListOrdersQuery::new().limit(7))
        .try_collect()
        .await
        .unwrap();
    assert_eq!(
        ids(&small_pages),
        ids(&created),
        "the query's page size is kept while streaming"
    );
}

#[tokio::test]
async fn orders_created_between_pages_are_not_yielded_twice() {
    let emu = emulator().await;
    let alpha = client(&emu, ALPHA);
    let originals = ids(&create_orders(&alpha, ORDERS).await);

    // Orders arriving at the top of the createdAt-desc order push seen items onto later pages.
    let mut yielded = Vec::new();
    let mut stream = pin!(alpha.orders().stream(&ListOrdersQuery::new()));
    while let Some(order) = stream.try_next().await.unwrap() {
        yielded.push(order.id);
        match yielded.len() {
            1 => drop(create_orders(&alpha, 30).await), // after page 1 was fetched
            150 => drop(create_orders(&alpha, 20).await), // after page 2 was fetched
            _ => {}
        }
    }
    let unique: HashSet<_> = yielded.iter().cloned().collect();
    assert_eq!(unique.len(), yielded.len(), "an order was yielded twice");
    let missing: Vec<_> = originals.difference(&unique).collect();
    assert!(
        missing.is_empty(),
        "orders that existed at the start were not yielded: {missing:?}"
    );

    // The same walk page by page, without de-duplication, does repeat orders: the stream's work was real.
    let mut repeated = 0;
    let mut seen = HashSet::new();
    let mut pages = pin!(alpha.orders().pages(&ListOrdersQuery::new()));
    while let Some(page) = pages.try_next().await.unwrap() {
        repeated += page
            .items
            .iter()
            .filter(|o| !seen.insert(o.id.clone()))
            .count();
        if page.page == 1 {
            create_orders(&alpha, 30).await;
        }
    }
    assert_eq!(repeated, 30);
}

/// Property: whatever the page size, streaming yields every order exactly once, newest first.
#[test]
fn any_page_size_streams_every_order_once() {
    use proptest::test_runner::{Config, TestRunner};
    // Declared first so it is dropped last: the emulator shuts down inside it.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (_emu, alpha, created) = runtime.block_on(async {
        let emu = emulator().await;
        let alpha = client(&emu, ALPHA);
        let created = ids(&create_orders(&alpha, ORDERS).await);
        (emu, alpha, created)
    });
    let mut runner = TestRunner::new(Config {
        cases: 12,
        ..Config::default()
    });
    runner
        .run(&(1u64..=100), |limit| {
            let query = ListOrdersQuery::new().limit(limit);
            let streamed: Vec<Order> = runtime
                .block_on(alpha.orders().stream(&query).try_collect())
                .unwrap();
            proptest::prop_assert_eq!(streamed.len(), ORDERS);
            proptest::prop_assert_eq!(ids(&streamed), created.clone());
            let newest_first = streamed
                .windows(2)
                .all(|w| w[0].created_at >= w[1].created_at);
            proptest::prop_assert!(newest_first);
            Ok(())
        })
        .unwrap();
}

/// Walks `query` (whose page size is 1) every way a collection offers and checks that they agree.
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
    assert_eq!(items.get(all[1].id()).await.unwrap(), all[1]);
}

/// Every resource is the same generic collection: list, get, stream, pages and collect_all agree for
/// catalog, products, artworks and orders alike.
#[tokio::test]
async fn every_resource_lists_gets_streams_and_pages_the_same_way() {
    let emu = emulator().await;
    let alpha = client(&emu, ALPHA);
    let url = "https://art.example.com/logo.png";
    emu.fake_hosts()
        .insert(url, FakeResource::image(PNG_1X1))
        .unwrap();
    for name in ["one", "two"] {
        alpha.artworks().create(name, url).await.unwrap();
    }
    create_orders(&alpha, 2).await;

    every_way_agrees(alpha.catalog(), ListCatalogProductsQuery::new().limit(1)).await;
    every_way_agrees(alpha.products(), ListProductsQuery::new().limit(1)).await;
    every_way_agrees(alpha.artworks(), ListArtworksQuery::new().limit(1)).await;
    every_way_agrees(alpha.orders(), ListOrdersQuery::new().limit(1)).await;
}
