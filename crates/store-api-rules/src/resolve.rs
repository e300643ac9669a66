//! How a line item's ids resolve in the store: the pieces the standard-item rules, the custom-item rules
//! and [`merge_duplicates`](super::merge_duplicates) share.

use store_api_raw::types;

use super::context::OrderContext;

/// How a standard line item's `productVariantId` and `sku` resolve in the store.
pub(crate) enum Resolution<'a> {
    /// Neither was sent.
    Neither,
    /// The named field's value is not in the store.
    NotFound { field: &'static str, value: &'a str },
    /// Both were sent and name different variants.
    Mismatch { variant_id: &'a str, sku: &'a str },
    /// The variant, found by `field`.
    Found {
        field: &'static str,
        product: &'a types::Product,
        variant: &'a types::ProductVariant,
    },
}

/// Resolves the variant a standard line item names.
pub(crate) fn resolve_variant<'a, C: OrderContext + ?Sized>(
    item: &'a types::LineItemInput,
    ctx: &'a C,
) -> Resolution<'a> {
    let variant_id = non_empty(item.product_variant_id.as_deref());
    let sku = non_empty(item.sku.as_deref());
    let by_id = |value: &'a str| {
        ctx.product_variant(value).ok_or(Resolution::NotFound {
            field: "productVariantId",
            value,
        })
    };
    let by_sku = |value: &'a str| {
        ctx.product_variant_by_sku(value)
            .ok_or(Resolution::NotFound {
                field: "sku",
                value,
            })
    };
    let found = |field, (product, variant)| Resolution::Found {
        field,
        product,
        variant,
    };
    let result = match (variant_id, sku) {
        (None, None) => Ok(Resolution::Neither),
        (Some(variant_id), None) => by_id(variant_id).map(|hit| found("productVariantId", hit)),
        (None, Some(sku)) => by_sku(sku).map(|hit| found("sku", hit)),
        (Some(variant_id), Some(sku)) => by_id(variant_id).and_then(|hit_by_id| {
            let hit_by_sku = by_sku(sku)?;
            if hit_by_id.1.id == hit_by_sku.1.id {
                Ok(found("productVariantId", hit_by_id))
            } else {
                Err(Resolution::Mismatch { variant_id, sku })
            }
        }),
    };
    result.unwrap_or_else(|failure| failure)
}

/// `None` for a missing or empty string.
pub(crate) fn non_empty(value: Option<&str>) -> Option<&str> {
    value.filter(|value| !value.is_empty())
}
