//! The rules of custom line items: a blank, decorations and artworks assembled at order time.

use store_api_raw::types;

use super::context::OrderContext;
use super::duplicates::first_repeat;
use super::paths;
use super::placement::{Placement, PrintArea};
use super::resolve::non_empty;
use super::violation::{Violation, ViolationKind};

/// Checks one custom line item, appending its violations to `out`, in the order documented on
/// [`validate_order`](super::validate_order).
pub(crate) fn check_custom_item(
    index: usize,
    item: &types::LineItemInput,
    ctx: &impl OrderContext,
    out: &mut Vec<Violation>,
) {
    if non_empty(item.product_variant_id.as_deref()).is_some() {
        out.push(Violation::new(
            ViolationKind::CustomWithProductVariantId,
            paths::line_item_field(index, "productVariantId"),
            "",
        ));
    }
    let catalog_variant_id = non_empty(item.catalog_product_variant_id.as_deref());
    if catalog_variant_id.is_none() {
        out.push(Violation::new(
            ViolationKind::CustomMissingCatalogVariant,
            paths::line_item_field(index, "catalogProductVariantId"),
            "",
        ));
    }
    if item.decorations.is_empty() {
        out.push(Violation::new(
            ViolationKind::CustomMissingDecorations,
            paths::line_item_field(index, "decorations"),
            "",
        ));
    }
    check_same_method(index, &item.decorations, out);
    check_unique_locations(index, &item.decorations, out);

    let blank = catalog_variant_id.and_then(|id| {
        let found = ctx.catalog_variant(id);
        if found.is_none() {
            out.push(Violation::new(
                ViolationKind::CatalogVariantNotFound,
                paths::line_item_field(index, "catalogProductVariantId"),
                format!("catalogProductVariantId {id}"),
            ));
        }
        found
    });
    if let Some((catalog_product, catalog_variant)) = blank {
        check_blank_available(index, catalog_product, catalog_variant, out);
    }
    check_artworks(index, &item.decorations, ctx, out);
    if let Some((catalog_product, _)) = blank {
        for (decoration_index, decoration) in item.decorations.iter().enumerate() {
            check_decoration_on_blank(index, decoration_index, decoration, catalog_product, out);
        }
    }
}

/// Rule 2 of custom line items: one decoration method per line item.
fn check_same_method(index: usize, decorations: &[types::Decoration], out: &mut Vec<Violation>) {
    let Some(first) = decorations.first() else {
        return;
    };
    let different = decorations
        .iter()
        .position(|decoration| decoration.decoration_method != first.decoration_method);
    if let Some(decoration_index) = different {
        out.push(Violation::new(
            ViolationKind::MixedDecorationMethods,
            paths::decoration_field(index, decoration_index, "decorationMethod"),
            "",
        ));
    }
}

/// Rule 3 of custom line items: each location at most once per line item.
fn check_unique_locations(
    index: usize,
    decorations: &[types::Decoration],
    out: &mut Vec<Violation>,
) {
    let repeat = first_repeat(decorations, |decoration| {
        decoration.decoration_location.as_str()
    });
    if let Some(decoration_index) = repeat {
        out.push(Violation::new(
            ViolationKind::DuplicateDecorationLocation,
            paths::decoration_field(index, decoration_index, "decorationLocation"),
            "",
        ));
    }
}

/// A discontinued blank or catalog variant cannot be ordered.
fn check_blank_available(
    index: usize,
    catalog_product: &types::CatalogProduct,
    catalog_variant: &types::CatalogVariant,
    out: &mut Vec<Violation>,
) {
    let reason = if catalog_product.is_discontinued == Some(true) {
        format!("catalog product {} is discontinued", catalog_product.id)
    } else if catalog_variant.is_discontinued == Some(true) {
        "the catalog variant is discontinued".to_owned()
    } else {
        return;
    };
    out.push(Violation::new(
        ViolationKind::CatalogVariantUnavailable,
        paths::line_item_field(index, "catalogProductVariantId"),
        format!("catalogProductVariantId {} ({reason})", catalog_variant.id),
    ));
}

/// Rule 6 of custom line items: every artwork belongs to this store.
fn check_artworks(
    index: usize,
    decorations: &[types::Decoration],
    ctx: &impl OrderContext,
    out: &mut Vec<Violation>,
) {
    let mut missing: Vec<&str> = Vec::new();
    let mut first_missing = None;
    for (decoration_index, decoration) in decorations.iter().enumerate() {
        let artwork_id = decoration.artwork_id.as_str();
        if !ctx.artwork_exists(artwork_id) {
            first_missing.get_or_insert(decoration_index);
            if !missing.contains(&artwork_id) {
                missing.push(artwork_id);
            }
        }
    }
    if let Some(decoration_index) = first_missing {
        out.push(Violation::new(
            ViolationKind::ArtworksNotFound,
            paths::decoration_field(index, decoration_index, "artworkId"),
            missing.join(", "),
        ));
    }
}

/// Rules 4 (method and location) and 5 (placement) of custom line items for one decoration on a known blank.
fn check_decoration_on_blank(
    index: usize,
    decoration_index: usize,
    decoration: &types::Decoration,
    catalog_product: &types::CatalogProduct,
    out: &mut Vec<Violation>,
) {
    let method = &decoration.decoration_method;
    let location_name = decoration.decoration_location.as_str();
    let path = |field: &str| paths::decoration_field(index, decoration_index, field);

    let method_on_blank = catalog_product.decoration_methods.contains(method);
    if !method_on_blank {
        out.push(Violation::new(
            ViolationKind::MethodNotAvailableForProduct,
            path("decorationMethod"),
            format!(
                "decorationMethod {method}, catalog product {}",
                catalog_product.id
            ),
        ));
    }
    let Some(location) = catalog_product
        .decoration_locations
        .iter()
        .find(|location| location.decoration_location.as_deref() == Some(location_name))
    else {
        out.push(Violation::new(
            ViolationKind::LocationNotAvailableForProduct,
            path("decorationLocation"),
            format!(
                "decorationLocation {location_name}, catalog product {}",
                catalog_product.id
            ),
        ));
        return;
    };
    if method_on_blank && !location.decoration_methods.contains(method) {
        out.push(Violation::new(
            ViolationKind::MethodNotAvailableForLocation,
            path("decorationMethod"),
            format!("decorationMethod {method}, decorationLocation {location_name}"),
        ));
    }

    let placement = Placement::from(decoration);
    if !placement.numbers_are_valid() {
        // Already reported by the body validation.
        return;
    }
    if let Err(error) = placement.check(PrintArea::from(location)) {
        out.push(Violation::new(
            error.violation_kind(),
            path(error.field()),
            format!("decorationLocation {location_name}, {error}"),
        ));
    }
}
