//! Typed list queries: filters, sorts and page size, checked locally before anything is sent.

use std::num::NonZeroU64;

use store_api_raw::contract::{self, Bounds};

use crate::error::{Error, Result};
use crate::model::{
    DecorationMethod, FulfillmentStatus, OrderStatus, PaymentStatus, ProductStatus, SortDirection,
};

/// Largest page size the service accepts.
pub const MAX_PAGE_SIZE: u64 = contract::PAGE_SIZE_MAX;
/// Page size when streaming every page: the largest, for the fewest requests.
pub const STREAM_PAGE_SIZE: u64 = contract::PAGE_SIZE_MAX;

/// Page number and size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Paging {
    pub page: Option<u64>,
    pub limit: Option<u64>,
}

impl Paging {
    pub fn page(&self) -> Result<Option<NonZeroU64>> {
        let Some(page) = self.page else {
            return Ok(None);
        };
        within(contract::PAGE_NUMBER, page)
            .map(Some)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "page must be at least {}",
                    min(contract::PAGE_NUMBER)
                ))
            })
    }

    pub fn limit(&self) -> Result<Option<NonZeroU64>> {
        let Some(limit) = self.limit else {
            return Ok(None);
        };
        within(contract::PAGE_SIZE, limit).map(Some).ok_or_else(|| {
            Error::invalid_argument(format!(
                "page size must be between {} and {MAX_PAGE_SIZE}, not {limit}",
                min(contract::PAGE_SIZE)
            ))
        })
    }
}

/// The value, if the spec's bounds accept it (and it is not 0, which no page or page size can be).
fn within(bounds: Bounds, value: u64) -> Option<NonZeroU64> {
    bounds.check(value).ok().and_then(NonZeroU64::new)
}

/// The smallest value the bounds accept (a page and a page size are at least 1 in any case).
fn min(bounds: Bounds) -> u64 {
    bounds.min.unwrap_or(1).max(1)
}

fn joined<T: AsRef<str>>(values: &[T]) -> Option<String> {
    (!values.is_empty()).then(|| {
        values
            .iter()
            .map(AsRef::as_ref)
            .collect::<Vec<_>>()
            .join(",")
    })
}

macro_rules! paging_methods {
    () => {
        /// The page to fetch (1-based).
        pub fn page(mut self, page: u64) -> Self {
            self.paging.page = Some(page);
            self
        }

        /// The page size, 1 to [`MAX_PAGE_SIZE`] (checked when the query is sent).
        pub fn limit(mut self, limit: u64) -> Self {
            self.paging.limit = Some(limit);
            self
        }
    };
}

/// A sortable field of catalog products and products.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProductSort {
    /// `sort[name]`.
    Name,
    /// `sort[updatedAt]`.
    UpdatedAt,
    /// `sort[createdAt]` (always applied last by the service).
    CreatedAt,
}

/// Sorts as the three optional parameters of the generated calls: (name, updatedAt, createdAt).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Sorts {
    pub name: Option<SortDirection>,
    pub updated_at: Option<SortDirection>,
    pub created_at: Option<SortDirection>,
}

/// Query of `GET /catalog-products`.
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use]
pub struct CatalogQuery {
    pub(crate) product_types: Vec<String>,
    pub(crate) methods: Vec<DecorationMethod>,
    pub(crate) sorts: Sorts,
    pub(crate) paging: Paging,
}

impl CatalogQuery {
    /// Every blank, newest first.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only blanks of these product types.
    pub fn product_type<S: Into<String>>(mut self, types: impl IntoIterator<Item = S>) -> Self {
        self.product_types.extend(types.into_iter().map(Into::into));
        self
    }

    /// Only blanks supporting any of these methods somewhere.
    pub fn decoration_method(
        mut self,
        methods: impl IntoIterator<Item = DecorationMethod>,
    ) -> Self {
        self.methods.extend(methods);
        self
    }

    /// Sort by a field.
    pub fn sort_by(mut self, field: ProductSort, direction: SortDirection) -> Self {
        set_product_sort(&mut self.sorts, field, direction);
        self
    }

    paging_methods!();

    pub(crate) fn product_type_filter(&self) -> Option<String> {
        joined(&self.product_types)
    }

    pub(crate) fn method_filter(&self) -> Option<String> {
        joined(
            &self
                .methods
                .iter()
                .map(|m| m.as_str().to_owned())
                .collect::<Vec<_>>(),
        )
    }
}

fn set_product_sort(sorts: &mut Sorts, field: ProductSort, direction: SortDirection) {
    match field {
        ProductSort::Name => sorts.name = Some(direction),
        ProductSort::UpdatedAt => sorts.updated_at = Some(direction),
        ProductSort::CreatedAt => sorts.created_at = Some(direction),
    }
}

/// Query of `GET /products`.
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use]
pub struct ProductQuery {
    pub(crate) statuses: Vec<ProductStatus>,
    pub(crate) sorts: Sorts,
    pub(crate) paging: Paging,
}

impl ProductQuery {
    /// Products of every status, newest first.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only products with any of these statuses.
    pub fn status(mut self, statuses: impl IntoIterator<Item = ProductStatus>) -> Self {
        self.statuses.extend(statuses);
        self
    }

    /// Sort by a field.
    pub fn sort_by(mut self, field: ProductSort, direction: SortDirection) -> Self {
        set_product_sort(&mut self.sorts, field, direction);
        self
    }

    paging_methods!();

    pub(crate) fn status_filter(&self) -> Option<String> {
        joined(
            &self
                .statuses
                .iter()
                .map(|s| s.as_str().to_owned())
                .collect::<Vec<_>>(),
        )
    }
}

/// A sortable field of artworks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArtworkSort {
    /// `sort[name]`.
    Name,
    /// `sort[createdAt]`.
    CreatedAt,
}

/// Query of `GET /artworks` (no filters).
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use]
pub struct ArtworkQuery {
    pub(crate) sorts: Sorts,
    pub(crate) paging: Paging,
}

impl ArtworkQuery {
    /// Every artwork, newest first.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sort by a field.
    pub fn sort_by(mut self, field: ArtworkSort, direction: SortDirection) -> Self {
        match field {
            ArtworkSort::Name => self.sorts.name = Some(direction),
            ArtworkSort::CreatedAt => self.sorts.created_at = Some(direction),
        }
        self
    }

    paging_methods!();
}

/// A sortable field of orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OrderSort {
    /// `sort[updatedAt]`.
    UpdatedAt,
    /// `sort[createdAt]`.
    CreatedAt,
}

/// Query of `GET /orders`.
///
/// ```
/// use store_api::{OrderQuery, OrderSort, model::{OrderStatus, SortDirection}};
/// let query = OrderQuery::new()
///     .status([OrderStatus::Pending, OrderStatus::OnHold])
///     .sort_by(OrderSort::UpdatedAt, SortDirection::Desc)
///     .limit(100);
/// # let _ = query;
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use]
pub struct OrderQuery {
    pub(crate) statuses: Vec<OrderStatus>,
    pub(crate) fulfillment: Vec<FulfillmentStatus>,
    pub(crate) payment: Vec<PaymentStatus>,
    pub(crate) external_ids: Vec<String>,
    pub(crate) sorts: Sorts,
    pub(crate) paging: Paging,
}

impl OrderQuery {
    /// Every order, newest first.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only orders with any of these statuses.
    pub fn status(mut self, statuses: impl IntoIterator<Item = OrderStatus>) -> Self {
        self.statuses.extend(statuses);
        self
    }

    /// Only orders at any of these fulfillment stages.
    pub fn fulfillment_status(
        mut self,
        statuses: impl IntoIterator<Item = FulfillmentStatus>,
    ) -> Self {
        self.fulfillment.extend(statuses);
        self
    }

    /// Only orders with any of these payment statuses.
    pub fn payment_status(mut self, statuses: impl IntoIterator<Item = PaymentStatus>) -> Self {
        self.payment.extend(statuses);
        self
    }

    /// Only the order with this external order id (exact match). An id containing a comma cannot be
    /// filtered on (commas separate filter values).
    pub fn external_order_id(mut self, id: impl Into<String>) -> Self {
        self.external_ids.push(id.into());
        self
    }

    /// Sort by a field.
    pub fn sort_by(mut self, field: OrderSort, direction: SortDirection) -> Self {
        match field {
            OrderSort::UpdatedAt => self.sorts.updated_at = Some(direction),
            OrderSort::CreatedAt => self.sorts.created_at = Some(direction),
        }
        self
    }

    paging_methods!();

    pub(crate) fn filters(&self) -> Result<[Option<String>; 4]> {
        for id in &self.external_ids {
            check_filterable_external_id(id)?;
        }
        Ok([
            joined(&self.external_ids),
            joined(
                &self
                    .fulfillment
                    .iter()
                    .map(|s| s.as_str().to_owned())
                    .collect::<Vec<_>>(),
            ),
            joined(
                &self
                    .payment
                    .iter()
                    .map(|s| s.as_str().to_owned())
                    .collect::<Vec<_>>(),
            ),
            joined(
                &self
                    .statuses
                    .iter()
                    .map(|s| s.as_str().to_owned())
                    .collect::<Vec<_>>(),
            ),
        ])
    }
}

/// An external order id can be looked up only without a comma: `filter[externalOrderId]=a,b` means "a or
/// b". The one rule for lookups and for [`Orders::submit`](crate::Orders::submit), which must be able to
/// look its order up.
pub(crate) fn check_filterable_external_id(id: &str) -> Result<()> {
    if id.contains(',') {
        return Err(Error::invalid_argument(format!(
            "external order id {id:?} contains a comma, which the service's filter[externalOrderId] reads as a separator of values: the order could never be looked up by it (nothing was sent)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_size_is_checked_locally() {
        for ok in [1, 50, 100] {
            assert!(
                Paging {
                    page: None,
                    limit: Some(ok)
                }
                .limit()
                .is_ok()
            );
        }
        for bad in [0, 101, 1000] {
            assert!(matches!(
                Paging {
                    page: None,
                    limit: Some(bad)
                }
                .limit(),
                Err(Error::InvalidArgument { .. })
            ));
        }
        assert!(
            Paging {
                page: Some(0),
                limit: None
            }
            .page()
            .is_err()
        );
    }

    #[test]
    fn filters_are_joined_with_commas() {
        let q = OrderQuery::new()
            .status([OrderStatus::Pending, OrderStatus::Unknown("new_one".into())])
            .payment_status([PaymentStatus::Due]);
        let [external, fulfillment, payment, status] = q.filters().unwrap();
        assert_eq!(status.as_deref(), Some("pending,new_one"));
        assert_eq!(payment.as_deref(), Some("due"));
        assert!(external.is_none() && fulfillment.is_none());
        assert!(
            OrderQuery::new()
                .external_order_id("a,b")
                .filters()
                .is_err()
        );
    }
}
