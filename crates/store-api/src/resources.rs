//! The resources of the API: catalog, products, artworks and orders.
//!
//! Each is a [`Collection`] of its item type: list, get, stream, pages and collect_all are written once
//! here, and an item type says only how one page and one item are fetched ([`Listed`]).

use std::marker::PhantomData;

use futures_util::{Stream, TryStreamExt};
use store_api_raw::requests::{self, GetById, ListOrdersQuery, ListPage, ListQuery, Listable};
use store_api_raw::types;
use store_api_rules::artwork_url::check_url;

use crate::error::{Error, Result};
use crate::handle::Client;
use crate::model::{Artwork, CatalogProduct, Order, Product};
use crate::operation::built;
use crate::pages::{self, Fetcher, Page, STREAM_PAGE_SIZE};

/// An item type the API lists by page and reads by id: every [`Listable`] type of the generated
/// requests (the spec's list-and-get pairs: [`CatalogProduct`], [`Product`], [`Artwork`], [`Order`], and
/// whatever the spec adds). [`Client::collection`] lists, streams and reads any of them; name it to
/// write code generic over collections (`fn walk<T: Listed>(items: Collection<'_, T>, query: T::Query)`).
///
/// Implemented for every [`Listable`] type and nothing else (a blanket impl), so a method added to it
/// is not a breaking change.
pub trait Listed: Listable + Send + Sized + 'static {}

impl<T: Listable + Send + Sized + 'static> Listed for T {}

/// The items of one resource of the store: `list`, `get`, `stream`, `pages` and `collect_all`.
pub struct Collection<'a, T> {
    pub(crate) client: &'a Client,
    // `fn() -> T`: the collection holds no `T`, so it is `Send`, `Sync` and `Copy` whatever `T` is.
    item: PhantomData<fn() -> T>,
}

/// `GET /catalog-products`: the blanks available to the store (read-only, no prices).
pub type Catalog<'a> = Collection<'a, CatalogProduct>;
/// `GET /products`: the store's products (read-only; every status).
pub type Products<'a> = Collection<'a, Product>;
/// `/artworks`: images the service downloads from an HTTPS URL and stores.
pub type Artworks<'a> = Collection<'a, Artwork>;
/// `/orders`: create (exactly once with [`Orders::submit`]), read and list orders.
pub type Orders<'a> = Collection<'a, Order>;

impl<T> Clone for Collection<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Collection<'_, T> {}

impl<T> std::fmt::Debug for Collection<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collection")
            .field("item", &std::any::type_name::<T>())
            .field("client", self.client)
            .finish()
    }
}

impl<'a, T> Collection<'a, T> {
    pub(crate) fn new(client: &'a Client) -> Self {
        Collection {
            client,
            item: PhantomData,
        }
    }
}

impl<T: Listed> Collection<'_, T> {
    /// One page of `query`.
    pub async fn list(&self, query: &T::Query) -> Result<Page<T>> {
        list_page(self.client.clone(), query.clone()).await
    }

    /// One item by id; an item of another store (or unavailable to this one) is [`Error::NotFound`].
    pub async fn get(&self, id: &str) -> Result<T> {
        get_by_id(self.client, id).await
    }

    /// Every item matching `query`, page after page, lazily, de-duplicated across pages.
    pub fn stream(&self, query: &T::Query) -> impl Stream<Item = Result<T>> + Send + use<T> {
        pages::items(self.fetcher(query))
    }

    /// Every page of `query`.
    pub fn pages(&self, query: &T::Query) -> impl Stream<Item = Result<Page<T>>> + Send + use<T> {
        pages::pages(self.fetcher(query))
    }

    /// Every item matching `query`, collected.
    pub async fn collect_all(&self, query: &T::Query) -> Result<Vec<T>> {
        self.stream(query).try_collect().await
    }

    /// Fetches page `n` of `query` with the stream page size (unless the query sets one).
    fn fetcher(&self, query: &T::Query) -> Fetcher<T> {
        let client = self.client.clone();
        let query = query.clone();
        Box::new(move |page| {
            let query = query.clone().at_page(page, STREAM_PAGE_SIZE);
            Box::pin(list_page(client.clone(), query))
        })
    }
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
            .map_err(|violation| Error::invalid_argument(format!("image.url: {violation}")))?;
        let name = types::CreateArtworkRequestName::try_from(name.to_owned())
            .map_err(|e| Error::invalid_argument(format!("name: {e}")))?;
        let body =
            types::CreateArtworkRequest::new(types::ArtworkSource::new(url.to_owned()), name);
        let client = self.client;
        let request = built(requests::create_artwork(
            &client.inner.base_url,
            &client.inner.store_id,
            &body,
        ))?;
        crate::operation::send(client, request).await
    }
}

impl Orders<'_> {
    /// The order with this external order id, if any.
    pub async fn find_by_external_id(&self, external_order_id: &str) -> Result<Option<Order>> {
        let page = self
            .list(
                &ListOrdersQuery::new()
                    .external_order_id([external_order_id])
                    .limit(1),
            )
            .await?;
        Ok(page
            .items
            .into_iter()
            .find(|o| o.external_order_id.as_deref() == Some(external_order_id)))
    }
}

fn count(value: Option<i64>) -> u64 {
    value.and_then(|v| u64::try_from(v).ok()).unwrap_or(0)
}

/// Refuses an answer that says it is another page, or pages of another size, than asked for (a cache on
/// the way that ignores the query string serves one): its items are not this page's.
fn same_page(answered: Option<&types::ListQuery>, page: u64, limit: Option<u64>) -> Result<()> {
    let Some(answered) = answered else {
        return Ok(());
    };
    let other_page = answered
        .page
        .is_some_and(|number| u64::try_from(number).ok() != Some(page));
    let other_size = match (answered.limit, limit) {
        (Some(size), Some(asked)) => u64::try_from(size).ok() != Some(asked),
        _ => false,
    };
    if other_page || other_size {
        return Err(Error::decode(format!(
            "the answer is page {:?} of {:?} per page, not the page asked for (page {page}{})",
            answered.page,
            answered.limit,
            limit.map(|l| format!(" of {l}")).unwrap_or_default()
        )));
    }
    Ok(())
}

/// One page of `query`, with the generated request of its list.
async fn list_page<T: Listed>(client: Client, query: T::Query) -> Result<Page<T>> {
    let inner = &client.inner;
    let request = built(query.request(&inner.base_url, &inner.store_id))?;
    let list: <T::Query as ListQuery>::Page = crate::operation::send(&client, request).await?;
    let page = query.page_number().unwrap_or(1);
    let parts = list.into_parts();
    same_page(parts.query.as_ref(), page, query.page_size())?;
    Ok(Page {
        items: parts.items,
        total_items: count(parts.total_items),
        total_pages: count(parts.total_pages),
        page,
    })
}

/// One item by id, with the generated request of its type.
async fn get_by_id<T: GetById>(client: &Client, id: &str) -> Result<T> {
    let inner = &client.inner;
    let request = built(T::request(&inner.base_url, &inner.store_id, id))?;
    let item: T = crate::operation::send(client, request).await?;
    // An answer about another resource (or none: every field is optional) is not this one.
    if item.id() != id {
        return Err(Error::decode(format!(
            "the answer does not carry the requested resource {id:?} (its id is {:?})",
            item.id()
        )));
    }
    Ok(item)
}
