//! The resources of the API: catalog, products, artworks and orders.

use futures::{Stream, TryStreamExt};
use store_api_raw::types;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::model::{Artwork, CatalogProduct, Order, Product};
use crate::pages::{self, Fetcher, Page};
use crate::query::{ArtworkQuery, CatalogQuery, OrderQuery, ProductQuery, STREAM_PAGE_SIZE};
use crate::validate::artwork_url::check_url;

fn count(value: Option<i64>) -> u64 {
    value.and_then(|v| u64::try_from(v).ok()).unwrap_or(0)
}

macro_rules! page_of {
    ($list:expr, $page:expr, $map:expr) => {{
        let list = $list;
        Page {
            items: list.items.into_iter().map($map).collect(),
            total_items: count(list.total_items),
            total_pages: count(list.total_pages),
            page: $page,
        }
    }};
}

/// Streams every page of `query` with page size 100 (unless the query sets one), starting at page 1.
fn fetcher<Q, T, F, Fut>(
    client: &Client,
    query: &Q,
    set_page: fn(Q, u64, u64) -> Q,
    list: F,
) -> Fetcher<T>
where
    Q: Clone + Send + Sync + 'static,
    T: Send + 'static,
    F: Fn(Client, Q) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Page<T>>> + Send + 'static,
{
    let client = client.clone();
    let query = query.clone();
    Box::new(move |page| {
        Box::pin(list(
            client.clone(),
            set_page(query.clone(), page, STREAM_PAGE_SIZE),
        ))
    })
}

/// `GET /catalog-products`: the blanks available to the store (read-only, no prices).
#[derive(Debug, Clone, Copy)]
pub struct Catalog<'a> {
    pub(crate) client: &'a Client,
}

impl Catalog<'_> {
    /// One page of blanks.
    pub async fn list(&self, query: &CatalogQuery) -> Result<Page<CatalogProduct>> {
        list_catalog(self.client.clone(), query.clone()).await
    }

    /// One blank; a blank unavailable to the store is [`Error::NotFound`].
    pub async fn get(&self, id: &str) -> Result<CatalogProduct> {
        let inner = &self.client.inner;
        inner
            .raw
            .get_catalog_product(&inner.store_id, id)
            .await
            .map(|r| r.into_inner())
            .map_err(|e| Error::from_raw(e, true))
    }

    /// Every blank matching `query`, page after page, lazily.
    pub fn stream(
        &self,
        query: &CatalogQuery,
    ) -> impl Stream<Item = Result<CatalogProduct>> + Send + use<> {
        pages::items(fetcher(
            self.client,
            query,
            |q, page, limit| q.with_stream_page(page, limit),
            list_catalog,
        ))
    }

    /// Every page of `query`.
    pub fn pages(
        &self,
        query: &CatalogQuery,
    ) -> impl Stream<Item = Result<Page<CatalogProduct>>> + Send + use<> {
        pages::pages(fetcher(
            self.client,
            query,
            |q, page, limit| q.with_stream_page(page, limit),
            list_catalog,
        ))
    }

    /// Every blank matching `query`, collected.
    pub async fn collect_all(&self, query: &CatalogQuery) -> Result<Vec<CatalogProduct>> {
        self.stream(query).try_collect().await
    }
}

async fn list_catalog(client: Client, query: CatalogQuery) -> Result<Page<CatalogProduct>> {
    let inner = &client.inner;
    let page = query.paging.page.unwrap_or(1);
    let list = inner
        .raw
        .list_catalog_products(
            &inner.store_id,
            query.method_filter().as_deref(),
            query.product_type_filter().as_deref(),
            query.paging.limit()?,
            query.paging.page()?,
            query.sorts.created_at,
            query.sorts.name,
            query.sorts.updated_at,
        )
        .await
        .map_err(|e| Error::from_raw(e, true))?
        .into_inner();
    Ok(page_of!(list, page, |p| p))
}

/// `GET /products`: the store's products (read-only; every status).
#[derive(Debug, Clone, Copy)]
pub struct Products<'a> {
    pub(crate) client: &'a Client,
}

impl Products<'_> {
    /// One page of products.
    pub async fn list(&self, query: &ProductQuery) -> Result<Page<Product>> {
        list_products(self.client.clone(), query.clone()).await
    }

    /// One product of any status; another store's product is [`Error::NotFound`].
    pub async fn get(&self, id: &str) -> Result<Product> {
        let inner = &self.client.inner;
        inner
            .raw
            .get_product(&inner.store_id, id)
            .await
            .map(|r| Product::from(r.into_inner()))
            .map_err(|e| Error::from_raw(e, true))
    }

    /// Every product matching `query`, lazily.
    pub fn stream(
        &self,
        query: &ProductQuery,
    ) -> impl Stream<Item = Result<Product>> + Send + use<> {
        pages::items(fetcher(
            self.client,
            query,
            |q, page, limit| q.with_stream_page(page, limit),
            list_products,
        ))
    }

    /// Every product matching `query`, collected.
    pub async fn collect_all(&self, query: &ProductQuery) -> Result<Vec<Product>> {
        self.stream(query).try_collect().await
    }
}

async fn list_products(client: Client, query: ProductQuery) -> Result<Page<Product>> {
    let inner = &client.inner;
    let page = query.paging.page.unwrap_or(1);
    let list = inner
        .raw
        .list_products(
            &inner.store_id,
            query.status_filter().as_deref(),
            query.paging.limit()?,
            query.paging.page()?,
            query.sorts.created_at,
            query.sorts.name,
            query.sorts.updated_at,
        )
        .await
        .map_err(|e| Error::from_raw(e, true))?
        .into_inner();
    Ok(page_of!(list, page, Product::from))
}

/// `/artworks`: images the service downloads from an HTTPS URL and stores.
#[derive(Debug, Clone, Copy)]
pub struct Artworks<'a> {
    pub(crate) client: &'a Client,
}

impl Artworks<'_> {
    /// Creates an artwork from an HTTPS URL. The URL is checked locally first (scheme, credentials,
    /// literal private addresses), so a request the service would refuse is not sent.
    ///
    /// Not idempotent: a retry can create a second artwork. This call is therefore never retried after
    /// the request may have been processed (a timeout or a 5xx comes back as an error whose
    /// [`Error::may_have_been_processed`] is true); only a 429 or a connection that could not be made is
    /// retried, because then nothing was processed.
    pub async fn create(&self, name: &str, url: &str) -> Result<Artwork> {
        check_url(url)
            .map_err(|violation| Error::InvalidArgument(format!("image.url: {violation}")))?;
        let name = types::CreateArtworkRequestName::try_from(name.to_owned())
            .map_err(|e| Error::InvalidArgument(format!("name: {e}")))?;
        let body = types::CreateArtworkRequest {
            name,
            image: types::ArtworkSource {
                url: url.to_owned(),
            },
        };
        let inner = &self.client.inner;
        inner
            .raw
            .create_artwork(&inner.store_id, &body)
            .await
            .map(|r| r.into_inner())
            .map_err(|e| Error::from_raw(e, true))
    }

    /// One page of artworks.
    pub async fn list(&self, query: &ArtworkQuery) -> Result<Page<Artwork>> {
        list_artworks(self.client.clone(), query.clone()).await
    }

    /// One artwork; another store's artwork is [`Error::NotFound`].
    pub async fn get(&self, id: &str) -> Result<Artwork> {
        let inner = &self.client.inner;
        inner
            .raw
            .get_artwork(&inner.store_id, id)
            .await
            .map(|r| r.into_inner())
            .map_err(|e| Error::from_raw(e, true))
    }

    /// Every artwork, lazily.
    pub fn stream(
        &self,
        query: &ArtworkQuery,
    ) -> impl Stream<Item = Result<Artwork>> + Send + use<> {
        pages::items(fetcher(
            self.client,
            query,
            |q, page, limit| q.with_stream_page(page, limit),
            list_artworks,
        ))
    }

    /// Every artwork, collected.
    pub async fn collect_all(&self, query: &ArtworkQuery) -> Result<Vec<Artwork>> {
        self.stream(query).try_collect().await
    }
}

async fn list_artworks(client: Client, query: ArtworkQuery) -> Result<Page<Artwork>> {
    let inner = &client.inner;
    let page = query.paging.page.unwrap_or(1);
    let list = inner
        .raw
        .list_artworks(
            &inner.store_id,
            query.paging.limit()?,
            query.paging.page()?,
            query.sorts.created_at,
            query.sorts.name,
        )
        .await
        .map_err(|e| Error::from_raw(e, true))?
        .into_inner();
    Ok(page_of!(list, page, |a| a))
}

/// `/orders`: create (exactly once with [`Orders::submit`]), read and list orders.
#[derive(Debug, Clone, Copy)]
pub struct Orders<'a> {
    pub(crate) client: &'a Client,
}

impl Orders<'_> {
    /// One page of orders.
    pub async fn list(&self, query: &OrderQuery) -> Result<Page<Order>> {
        list_orders(self.client.clone(), query.clone()).await
    }

    /// One order; another store's order is [`Error::NotFound`].
    pub async fn get(&self, id: &str) -> Result<Order> {
        let inner = &self.client.inner;
        inner
            .raw
            .get_order(&inner.store_id, id)
            .await
            .map(|r| Order::from(r.into_inner()))
            .map_err(|e| Error::from_raw(e, true))
    }

    /// The order with this external order id, if any.
    pub async fn find_by_external_id(&self, external_order_id: &str) -> Result<Option<Order>> {
        let page = self
            .list(
                &OrderQuery::new()
                    .external_order_id(external_order_id)
                    .limit(1),
            )
            .await?;
        Ok(page
            .items
            .into_iter()
            .find(|o| o.external_order_id.as_deref() == Some(external_order_id)))
    }

    /// Every order matching `query`, lazily, de-duplicated across pages.
    pub fn stream(&self, query: &OrderQuery) -> impl Stream<Item = Result<Order>> + Send + use<> {
        pages::items(fetcher(
            self.client,
            query,
            |q, page, limit| q.with_stream_page(page, limit),
            list_orders,
        ))
    }

    /// Every page of `query`.
    pub fn pages(
        &self,
        query: &OrderQuery,
    ) -> impl Stream<Item = Result<Page<Order>>> + Send + use<> {
        pages::pages(fetcher(
            self.client,
            query,
            |q, page, limit| q.with_stream_page(page, limit),
            list_orders,
        ))
    }

    /// Every order matching `query`, collected.
    pub async fn collect_all(&self, query: &OrderQuery) -> Result<Vec<Order>> {
        self.stream(query).try_collect().await
    }
}

async fn list_orders(client: Client, query: OrderQuery) -> Result<Page<Order>> {
    let inner = &client.inner;
    let page = query.paging.page.unwrap_or(1);
    let [external, fulfillment, payment, status] = query.filters()?;
    let list = inner
        .raw
        .list_orders(
            &inner.store_id,
            external.as_deref(),
            fulfillment.as_deref(),
            payment.as_deref(),
            status.as_deref(),
            query.paging.limit()?,
            query.paging.page()?,
            query.sorts.created_at,
            query.sorts.updated_at,
        )
        .await
        .map_err(|e| Error::from_raw(e, true))?
        .into_inner();
    Ok(page_of!(list, page, Order::from))
}

/// Streaming walks pages from 1 with the query's page size, or 100.
macro_rules! stream_page {
    ($($query:ty),*) => {$(
        impl $query {
            pub(crate) fn with_stream_page(mut self, page: u64, default_limit: u64) -> Self {
                self.paging.page = Some(page);
                self.paging.limit = Some(self.paging.limit.unwrap_or(default_limit));
                self
            }
        }
    )*};
}
stream_page!(CatalogQuery, ProductQuery, ArtworkQuery, OrderQuery);
