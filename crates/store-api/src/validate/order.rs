//! The whole create-order check, and the rules of standard line items (products built in advance).

use std::collections::HashMap;

use store_api_raw::open::ProductStatus;
use store_api_raw::types;

use super::custom::check_custom_item;
use super::fields::validate_fields;
use super::paths;
use super::{OrderContext, Violation, ViolationKind};

/// Checks a create-order request against every rule the service enforces before it creates an order,
/// returning the violations the service would report (empty means the order would be accepted, 409 on a
/// reused `externalOrderId` aside).
///
/// The order of the result is the service's: the body-validation failures of [`validate_fields`] first
/// (reported all together as a message array), then the ordering-rule violations in line-item order (the
/// service reports the first as a message string; see [`service_message`](super::service_message)).
///
/// Standard line items (`isCustom` false), in this order:
/// 1. no `catalogProductVariantId` or non-empty `decorations`;
/// 2. `productVariantId` or `sku` present, naming a variant of the store; when both are sent, the same one;
/// 3. the variant is not already in an earlier line item (merge them: [`merge_duplicates`](super::merge_duplicates));
/// 4. the product's status is active or unlisted. A status this SDK does not know, or a missing one, is
///    treated as not orderable: nothing shows that it is;
/// 5. neither the product nor the variant is discontinued.
///
/// Custom line items (`isCustom` true), in this order:
/// 1. no `productVariantId` (a `sku` on a custom item is not named by any rule and is ignored);
/// 2. a `catalogProductVariantId`, and at least one decoration;
/// 3. one decoration method for all decorations, and no location twice (each reported once, at the first
///    decoration that breaks it);
/// 4. the catalog variant is visible to the store, and neither it nor its blank is discontinued (reported
///    with the standard items' "Discontinued or out of stock ..." message: the service shows none of its
///    own);
/// 5. every `artworkId` is one of the store's artworks (one violation listing the missing ids);
/// 6. per decoration: the method is on the blank's product-level list; the location is on the blank; if
///    both hold, the method is on the location's own list; and when the location exists, the placement
///    satisfies rule 5 ([`Placement::check`](super::Placement::check)).
///
/// An empty `productVariantId`, `sku` or `catalogProductVariantId` counts as absent (an assumption: the
/// specification does not say; an empty id names nothing either way); `decorations: []` on a standard item is indistinguishable from no
/// decorations. Checks that depend on a failed lookup are skipped: an unknown variant or blank reports only
/// that it is unknown, and a placement with invalid numbers is reported once, as a field violation.
///
/// ```
/// use store_api::validate::{OrderContext, ViolationKind, validate_order};
/// use store_api_raw::types;
///
/// /// A store with no products, blanks or artworks.
/// struct EmptyStore;
///
/// impl OrderContext for EmptyStore {
///     fn product_variant(&self, _: &str) -> Option<(&types::Product, &types::ProductVariant)> { None }
///     fn product_variant_by_sku(&self, _: &str) -> Option<(&types::Product, &types::ProductVariant)> { None }
///     fn catalog_variant(&self, _: &str) -> Option<(&types::CatalogProduct, &types::CatalogVariant)> { None }
///     fn artwork_exists(&self, _: &str) -> bool { false }
/// }
///
/// # fn main() -> Result<(), serde_json::Error> {
/// let order: types::CreateOrderRequest = serde_json::from_value(serde_json::json!({
///     "externalOrderId": "1001",
///     "lineItems": [{ "productVariantId": "var_123", "quantity": 2 }],
///     "shippingAddress": {
///         "firstName": "Ada", "lastName": "Lovelace",
///         "address": {
///             "streetAddress": "1 Main St", "cityOrTown": "Springfield",
///             "stateOrProvince": "IL", "zipOrPostalCode": "62701", "country": "US"
///         }
///     }
/// }))?;
///
/// let violations = validate_order(&order, &EmptyStore);
/// assert_eq!(violations.len(), 1);
/// assert_eq!(violations[0].kind, ViolationKind::ProductNotFound);
/// assert_eq!(violations[0].path, "lineItems.0.productVariantId");
/// assert_eq!(
///     violations[0].message(),
///     "No product found in the store for a line item: productVariantId var_123"
/// );
/// assert!(!violations[0].is_field_validation());
/// # Ok(())
/// # }
/// ```
pub fn validate_order(
    order: &types::CreateOrderRequest,
    ctx: &impl OrderContext,
) -> Vec<Violation> {
    let mut out = validate_fields(order);
    // Variant id -> index of the first line item naming it.
    let mut first_item_of_variant: HashMap<&str, usize> = HashMap::new();
    for (index, item) in order.line_items.iter().enumerate() {
        if item.is_custom {
            check_custom_item(index, item, ctx, &mut out);
        } else {
            check_standard_item(index, item, ctx, &mut first_item_of_variant, &mut out);
        }
    }
    out
}

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
pub(crate) fn resolve_variant<'a>(
    item: &'a types::LineItemInput,
    ctx: &'a impl OrderContext,
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

/// Checks one standard line item, appending its violations to `out`.
fn check_standard_item<'a>(
    index: usize,
    item: &'a types::LineItemInput,
    ctx: &'a impl OrderContext,
    first_item_of_variant: &mut HashMap<&'a str, usize>,
    out: &mut Vec<Violation>,
) {
    let custom_field = if non_empty(item.catalog_product_variant_id.as_deref()).is_some() {
        Some("catalogProductVariantId")
    } else if !item.decorations.is_empty() {
        Some("decorations")
    } else {
        None
    };
    if let Some(field) = custom_field {
        out.push(Violation::new(
            ViolationKind::CustomFieldsOnStandardItem,
            paths::line_item_field(index, field),
            "",
        ));
    }

    let (field, product, variant) = match resolve_variant(item, ctx) {
        Resolution::Neither => {
            out.push(Violation::new(
                ViolationKind::MissingVariantIdOrSku,
                paths::line_item(index),
                "",
            ));
            return;
        }
        Resolution::NotFound { field, value } => {
            out.push(Violation::new(
                ViolationKind::ProductNotFound,
                paths::line_item_field(index, field),
                format!("{field} {value}"),
            ));
            return;
        }
        Resolution::Mismatch { variant_id, sku } => {
            out.push(Violation::new(
                ViolationKind::VariantSkuMismatch,
                paths::line_item_field(index, "sku"),
                format!("productVariantId {variant_id}, sku {sku}"),
            ));
            return;
        }
        Resolution::Found {
            field,
            product,
            variant,
        } => (field, product, variant),
    };

    let path = paths::line_item_field(index, field);
    if let Some(&first) = first_item_of_variant.get(variant.id.as_str()) {
        // The earlier item already reported the variant's own problems.
        out.push(Violation::new(
            ViolationKind::DuplicateVariant,
            paths::line_item(index),
            format!(
                "productVariantId {} (lineItems.{first} and lineItems.{index})",
                variant.id
            ),
        ));
        return;
    }
    first_item_of_variant.insert(variant.id.as_str(), index);

    let status_problem = match &product.status {
        Some(ProductStatus::Active | ProductStatus::Unlisted) => None,
        Some(status) => Some(format!("is {status}")),
        None => Some("has no status".to_owned()),
    };
    if let Some(problem) = status_problem {
        out.push(Violation::new(
            ViolationKind::ProductNotOrderable,
            path.clone(),
            format!(
                "productVariantId {} (product {} {problem})",
                variant.id, product.id
            ),
        ));
    }

    let discontinued = if product.is_discontinued == Some(true) {
        Some(format!("product {} is discontinued", product.id))
    } else if variant.is_discontinued == Some(true) {
        Some("the variant is discontinued".to_owned())
    } else {
        None
    };
    if let Some(reason) = discontinued {
        out.push(Violation::new(
            ViolationKind::VariantUnavailable,
            path,
            format!("productVariantId {} ({reason})", variant.id),
        ));
    }
}
