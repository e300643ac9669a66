//! Folding line items that name the same product variant into one, as the service requires.

use std::collections::HashMap;

use store_api_raw::types;

use super::context::OrderContext;
use super::resolve::{Resolution, non_empty, resolve_variant};

/// Merges standard line items that name the same product variant, by id or by SKU, into the first of
/// them by adding their quantities (saturating at `u64::MAX`). Returns how many line items were removed.
///
/// The service refuses an order in which a variant appears in more than one line item; this makes such an
/// order acceptable without changing what it buys. Only items whose variant resolves in `ctx` are merged:
/// custom items, items that carry custom fields, and items with an unknown variant or a mismatched
/// `productVariantId`/`sku` pair are left as they are for [`validate_order`](super::validate_order) to
/// report. The first item keeps its own `productVariantId` and `sku`; the order of items is otherwise kept.
pub fn merge_duplicates(order: &mut types::CreateOrderRequest, ctx: &impl OrderContext) -> usize {
    let variant_ids: Vec<Option<String>> = order
        .line_items
        .iter()
        .map(|item| mergeable_variant_id(item, ctx))
        .collect();

    let mut kept: Vec<types::LineItemInput> = Vec::with_capacity(order.line_items.len());
    // Variant id -> index in `kept` of the item that absorbs the others.
    let mut absorber: HashMap<String, usize> = HashMap::new();
    let mut merged = 0;
    for (item, variant_id) in order.line_items.drain(..).zip(variant_ids) {
        if let Some(variant_id) = variant_id {
            if let Some(target) = absorber.get(&variant_id).and_then(|&at| kept.get_mut(at)) {
                target.quantity = target.quantity.saturating_add(item.quantity.get());
                merged += 1;
                continue;
            }
            absorber.insert(variant_id, kept.len());
        }
        kept.push(item);
    }
    order.line_items = kept;
    merged
}

/// The variant id of a plain standard line item whose variant resolves, else `None`.
fn mergeable_variant_id(item: &types::LineItemInput, ctx: &impl OrderContext) -> Option<String> {
    let plain_standard = !item.is_custom
        && non_empty(item.catalog_product_variant_id.as_deref()).is_none()
        && item.decorations.is_empty();
    if !plain_standard {
        return None;
    }
    match resolve_variant(item, ctx) {
        Resolution::Found { variant, .. } => Some(variant.id.clone()),
        _ => None,
    }
}
