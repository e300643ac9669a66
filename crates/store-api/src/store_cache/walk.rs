//! One read of a collection sorted by `updatedAt`, newest first: every page (a full read), or only
//! the pages down to what the copy already holds (an incremental read). Pure paging; what the pages
//! mean for the copy is `merge`'s job.

use std::time::Duration;

use super::report::Progress;
use super::versioned::{Held, Versioned, reaches_known};
use crate::error::Result;
use crate::handle::Client;
use crate::model::{CatalogProduct, Product, SortDirection};
use crate::pages::MAX_PAGE_SIZE;
use crate::resources::Listed;
use store_api_raw::requests::{ListCatalogProductsQuery, ListProductsQuery};

/// A collection that lists newest change first.
pub(crate) trait NewestFirst: Versioned + Listed {
    /// Page `page` of the whole collection, newest change first, largest pages.
    fn newest_first(page: u64) -> Self::Query;
}

impl NewestFirst for CatalogProduct {
    fn newest_first(page: u64) -> ListCatalogProductsQuery {
        ListCatalogProductsQuery::new()
            .sort_updated_at(SortDirection::Desc)
            .limit(MAX_PAGE_SIZE)
            .page(page)
    }
}

impl NewestFirst for Product {
    fn newest_first(page: u64) -> ListProductsQuery {
        ListProductsQuery::new()
            .sort_updated_at(SortDirection::Desc)
            .limit(MAX_PAGE_SIZE)
            .page(page)
    }
}

/// Which pages a read takes.
pub(crate) enum Reach<'a> {
    /// Every page (a fill or a reconciliation), pausing this long between pages.
    Whole { pause: Duration },
    /// Pages until one [`reaches_known`] the copy.
    Changes(&'a Held),
}

/// How far a read got.
#[derive(Debug)]
pub(crate) struct Walked<T> {
    /// The items read, newest change first, each once (the first sighting: the newest).
    pub items: Vec<T>,
    /// Pages requested.
    pub pages: u32,
    /// The collection's size by the last page read.
    pub total_items: u64,
}

/// Reads `T`'s collection newest change first as far as `reach` says, telling `progress` after each
/// page.
pub(crate) async fn walk<T: NewestFirst>(
    client: &Client,
    reach: Reach<'_>,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Walked<T>> {
    let mut walked = Walked {
        items: Vec::new(),
        pages: 0,
        total_items: 0,
    };
    let mut seen = std::collections::HashSet::new();
    for number in 1.. {
        if let Reach::Whole { pause } = reach
            && number > 1
            && !pause.is_zero()
        {
            tokio::time::sleep(pause).await;
        }
        let page = client
            .collection::<T>()
            .list(&T::newest_first(number))
            .await?;
        walked.pages += 1;
        walked.total_items = page.total_items;
        let done = page.items.is_empty()
            || number >= page.total_pages
            || matches!(reach, Reach::Changes(held) if reaches_known(&page.items, held));
        for item in page.items {
            // An item changed mid-read moves to the top and shows again on a later page: the first
            // sighting is the newer one.
            if seen.insert(item.id().to_owned()) {
                walked.items.push(item);
            }
        }
        progress(Progress {
            collection: T::COLLECTION,
            read: walked.items.len() as u64,
            total: walked.total_items,
        });
        if done {
            break;
        }
    }
    Ok(walked)
}
