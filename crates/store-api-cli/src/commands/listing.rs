//! What the list commands share: page options, fetching every page with a spinner, the footer, and
//! the one JSON form of every list.
//!
//! **The JSON form of a list** (`--json`, `--jq`, `api --paginate`): one object,
//! `{"items": [...], "totalItems": N, "page": P, "totalPages": T}`, where `totalItems` counts every
//! item matching the query over all pages; with `--all` (every page) it is `{"items": [...],
//! "totalItems": N}`, N being the items printed. Chosen over a stream of one object a line because
//! a page's totals are what a script pages with, and the object is the API's own list envelope.

use futures::{Stream, TryStreamExt as _};
use serde::Serialize;
use store_api::{
    ListArtworksQuery, ListCatalogProductsQuery, ListOrdersQuery, ListProductsQuery, Page,
};

use crate::cli::PagingArgs;
use crate::error::CliError;
use crate::output::{Output, Table, count, page_footer};
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

/// The items a list command shows, their totals, and the footer line for humans.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listed<T> {
    /// The items.
    pub items: Vec<T>,
    /// Items matching the query over all pages (with `--all`, the items fetched).
    pub total_items: u64,
    /// This page's number (absent with `--all`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    /// Pages for this page size (absent with `--all`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_pages: Option<u64>,
    /// `page 1 of 3, ...` or `12 orders (every page)`.
    #[serde(skip)]
    pub footer: String,
}

impl<T: Serialize> Listed<T> {
    /// One page.
    pub fn page(page: Page<T>, noun: &str) -> Self {
        let footer = page_footer(page.page, page.total_pages, page.total_items, noun);
        Listed {
            items: page.items,
            total_items: page.total_items,
            page: Some(page.page),
            total_pages: Some(page.total_pages),
            footer,
        }
    }

    /// Prints the list: its JSON form, or the table `render` draws with the footer.
    pub fn show(&self, out: Output, render: impl FnOnce(&[T]) -> Table) -> Result<(), CliError> {
        out.json(self)?;
        if !out.json {
            out.table(&render(&self.items));
            out.footer(&self.footer);
        }
        Ok(())
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
    let total_items = u64::try_from(items.len()).unwrap_or(u64::MAX);
    let footer = format!("{} (every page)", count(total_items, noun));
    Ok(Listed {
        items,
        total_items,
        page: None,
        total_pages: None,
        footer,
    })
}
