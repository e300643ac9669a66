//! The whole create-order check, and the rules of standard line items (products built in advance).

use store_api_raw::open::ProductStatus;
use store_api_raw::types;

use super::context::OrderContext;
use super::custom::check_custom_item;
use super::duplicates::FirstSeen;
use super::fields::validate_fields;
use super::paths;
use super::resolve::{Resolution, non_empty, resolve_variant};
use super::resolved::ResolvedOrder;
use super::violation::{Violation, ViolationKind};

/// Checks a create-order request against every rule the service enforces before it creates an order.
/// `Ok` holds what the order buys (each line item's resolved variant or blank, borrowed from the store);
/// `Err` the violations the service would report (a reused `externalOrderId`, which gives 409, aside).
///
/// The order of the violations is the service's: the body-validation failures of [`validate_fields`] first
/// (reported all together as a message array), then the ordering-rule violations in line-item order (the
/// service reports the first as a message string; see [`service_message`](super::service_message)).
///
/// Rule numbers are the specification's, from its "Rules for a custom line item"; the other checks come
/// from its line item tables and the sentences beside them, which it does not number.
///
/// Standard line items (`isCustom` false), in this order:
/// - rule 1: no `catalogProductVariantId` or non-empty `decorations`;
/// - `productVariantId` or `sku` present, naming a variant of the store; when both are sent, the same one;
/// - the variant is not already in an earlier line item (merge them: [`merge_duplicates`](super::merge_duplicates));
/// - the product's status is active or unlisted. A status this SDK does not know, or a missing one, is
///   treated as not orderable: nothing shows that it is;
/// - neither the product nor the variant is discontinued.
///
/// Custom line items (`isCustom` true), in this order:
/// - rule 1: no `productVariantId` (a `sku` on a custom item is not named by any rule and is ignored);
/// - a `catalogProductVariantId`, and at least one decoration;
/// - rules 2 and 3: one decoration method for all decorations, and no location twice (each reported once,
///   at the first decoration that breaks it);
/// - the catalog variant is visible to the store, and neither it nor its blank is discontinued (reported
///   with the standard items' "Discontinued or out of stock ..." message: the service shows none of its
///   own);
/// - rule 6: every `artworkId` is one of the store's artworks (one violation listing the missing ids);
/// - per decoration, rule 4: the method is on the blank's product-level list; the location is on the
///   blank; if both hold, the method is on the location's own list; and when the location exists, rule 5:
///   the placement fits the print area ([`Placement::check`](super::Placement::check)).
///
/// An empty `productVariantId`, `sku` or `catalogProductVariantId` counts as absent (an assumption: the
/// specification does not say; an empty id names nothing either way); `decorations: []` on a standard item is indistinguishable from no
/// decorations. Checks that depend on a failed lookup are skipped: an unknown variant or blank reports only
/// that it is unknown, and a placement with invalid numbers is reported once, as a field violation.
///
/// ```
/// use std::num::NonZeroU64;
///
/// use store_api_raw::types;
/// use store_api_rules::{OrderContext, ViolationKind, validate_order};
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
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let address = types::AddressInput::new(types::AddressInputRequired {
///     city_or_town: "Springfield".parse()?,
///     country: "US".parse()?,
///     state_or_province: "IL".into(),
///     street_address: "1 Main St".parse()?,
///     zip_or_postal_code: "62701".into(),
/// });
/// let ship_to = types::ShippingAddressInput::new(address, "Ada".into(), "Lovelace".parse()?);
/// let mut item = types::LineItemInput::new(NonZeroU64::new(2).ok_or("zero")?);
/// item.product_variant_id = Some("var_123".into());
/// let order = types::CreateOrderRequest::new(vec![item], ship_to);
///
/// let violations = validate_order(&order, &EmptyStore).err().unwrap_or_default();
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
pub fn validate_order<'a, C: OrderContext>(
    order: &'a types::CreateOrderRequest,
    ctx: &'a C,
) -> Result<ResolvedOrder<'a>, Vec<Violation>> {
    let mut out = validate_fields(order);
    // Variant id -> index of the first line item naming it.
    let mut first_item_of_variant = FirstSeen::new();
    for (index, input) in order.line_items.iter().enumerate() {
        if input.is_custom {
            check_custom_item(index, input, ctx, &mut out);
        } else {
            check_standard_item(index, input, ctx, &mut first_item_of_variant, &mut out);
        }
    }
    // Every item that does not resolve has pushed a violation, so a clean order's items all resolve.
    if out.is_empty() {
        Ok(ResolvedOrder::new(order, ctx))
    } else {
        Err(out)
    }
}

/// Checks one standard line item, appending its violations to `out`.
fn check_standard_item<'a>(
    index: usize,
    item: &'a types::LineItemInput,
    ctx: &'a impl OrderContext,
    first_item_of_variant: &mut FirstSeen<'a>,
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
    if let Some(first) = first_item_of_variant.first_or_insert(variant.id.as_str(), index) {
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
