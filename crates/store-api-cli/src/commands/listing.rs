//! What the list commands share: page options, fetching every page with a spinner, the footer.

use futures::{Stream, TryStreamExt as _};
use store_api::{
    ListArtworksQuery, ListCatalogProductsQuery, ListOrdersQuery, ListProductsQuery, Page,
};

use crate::cli::PagingArgs;
use crate::error::CliError;
use crate::output::{Output, count, page_footer};
use crate::progress;

/// A list query that can be paged.
pub trait Paged: Sized {
    /// The query for page `page`.
    fn with_page(self, page: u64) -> Self;
    /// The query with page size `limit`.
    fn with_limit(self, limit: u64) -> Self;

    /// The query with the page options of the command line.
    fn paged(self, paging: &PagingArgs) -> Self {
        let query = match paging.page {
            Some(page) => self.with_page(page),
            None => self,
        };
        match paging.limit {
            Some(limit) => query.with_limit(limit),
            None => query,
        }
    }
}

macro_rules! paged {
    ($($query:ty),*) => {$(
        impl Paged for $query {
            fn with_page(self, page: u64) -> Self {
                <$query>::page(self, page)
            }
            fn with_limit(self, limit: u64) -> Self {
                <$query>::limit(self, limit)
            }
        }
    )*};
}
paged!(
    ListCatalogProductsQuery,
    ListProductsQuery,
    ListArtworksQuery,
    ListOrdersQuery
);

/// The items a list command shows, and the footer line for humans.
#[derive(Debug)]
pub struct Listed<T> {
    /// The items.
    pub items: Vec<T>,
    /// `page 1 of 3, ...` or `12 orders (every page)`.
    pub footer: String,
}

impl<T> Listed<T> {
    /// One page.
    pub fn page(page: Page<T>, noun: &str) -> Self {
        let footer = page_footer(page.page, page.total_pages, page.total_items, noun);
        Listed {
            items: page.items,
            footer,
        }
    }
}

/// Every item of a stream, with a spinner counting them on a terminal.
pub async fn every_page<T>(
    stream: impl Stream<Item = store_api::Result<T>>,
    out: Output,
    noun: &str,
) -> Result<Listed<T>, CliError> {
    let bar = progress::spinner(out, format!("fetching every page of {noun}s"));
    let mut stream = std::pin::pin!(stream);
    let mut items = Vec::new();
    loop {
        match stream.try_next().await {
            Ok(Some(item)) => {
                items.push(item);
                let fetched = u64::try_from(items.len()).unwrap_or(u64::MAX);
                bar.set_message(format!("fetched {}", count(fetched, noun)));
            }
            Ok(None) => break,
            Err(error) => {
                bar.finish_and_clear();
                return Err(error.into());
            }
        }
    }
    bar.finish_and_clear();
    let footer = format!(
        "{} (every page)",
        count(u64::try_from(items.len()).unwrap_or(u64::MAX), noun)
    );
    Ok(Listed { items, footer })
}
