//! Pages and the stream of every item across pages.
//!
//! Paging is by page number, so a list that changes while it is walked shifts under the walker: new
//! orders arrive at the top of the default createdAt-desc order and push items already seen onto the next
//! page. The stream therefore drops items whose id it has already yielded, and when `totalItems` changes
//! mid-walk it logs it, counts it, and keeps walking to the last page of the newest count.

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;

use futures_util::Stream;

use crate::error::Result;
use store_api_raw::requests::GetById;

/// Largest page size the service accepts (the spec's `limit` maximum).
pub const MAX_PAGE_SIZE: u64 = store_api_raw::contract::PAGE_SIZE_MAX;
/// Page size when streaming every page: the largest, for the fewest requests.
pub(crate) const STREAM_PAGE_SIZE: u64 = MAX_PAGE_SIZE;

/// One page of a list, with the envelope's counts.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Page<T> {
    /// The items of this page.
    pub items: Vec<T>,
    /// Items matching the query over all pages.
    pub total_items: u64,
    /// Pages for this page size.
    pub total_pages: u64,
    /// This page's number.
    pub page: u64,
}

type FetchFuture<T> = Pin<Box<dyn Future<Output = Result<Page<T>>> + Send>>;

/// Fetches page `n` of a fixed query.
pub(crate) type Fetcher<T> = Box<dyn Fn(u64) -> FetchFuture<T> + Send + Sync>;

struct Walk<T> {
    fetch: Fetcher<T>,
    next_page: u64,
    last_page: Option<u64>,
    total: Option<u64>,
    seen: HashSet<String>,
    buffer: VecDeque<T>,
    done: bool,
}

/// A lazy stream of every item of a list, de-duplicated by id, fetching one page at a time under the
/// client's rate limiter.
pub(crate) fn items<T: GetById>(fetch: Fetcher<T>) -> impl Stream<Item = Result<T>> + Send {
    let walk = Walk {
        fetch,
        next_page: 1,
        last_page: None,
        total: None,
        seen: HashSet::new(),
        buffer: VecDeque::new(),
        done: false,
    };
    futures_util::stream::try_unfold(walk, |mut walk| async move {
        loop {
            if let Some(item) = walk.buffer.pop_front() {
                return Ok(Some((item, walk)));
            }
            if walk.done || walk.last_page.is_some_and(|last| walk.next_page > last) {
                return Ok(None);
            }
            let page = (walk.fetch)(walk.next_page).await?;
            if walk.total.is_some_and(|total| total != page.total_items) {
                tracing::warn!(
                    before = walk.total,
                    now = page.total_items,
                    "the list changed while it was walked; duplicates are dropped"
                );
            }
            walk.total = Some(page.total_items);
            walk.last_page = Some(page.total_pages);
            walk.next_page += 1;
            if page.items.is_empty() {
                walk.done = true;
            }
            for item in page.items {
                if walk.seen.insert(item.id().to_owned()) {
                    walk.buffer.push_back(item);
                }
            }
        }
    })
}

/// A lazy stream of pages.
pub(crate) fn pages<T: Send + 'static>(
    fetch: Fetcher<T>,
) -> impl Stream<Item = Result<Page<T>>> + Send {
    futures_util::stream::try_unfold(
        (fetch, 1u64, None::<u64>),
        |(fetch, next, last)| async move {
            if last.is_some_and(|last| next > last) {
                return Ok(None);
            }
            let page = fetch(next).await?;
            let last = Some(page.total_pages);
            if page.items.is_empty() && next > 1 {
                return Ok(None);
            }
            Ok(Some((page, (fetch, next + 1, last))))
        },
    )
}
