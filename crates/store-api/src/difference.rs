//! How an existing order differs from a request that reuses its external id: what decides that a
//! 409 found the same order (no differences) or an external id reused for another (the differences are
//! reported in [`Error::ExternalIdReused`](crate::Error::ExternalIdReused)).

use std::fmt;

use store_api_raw::types;

use crate::model::Order;

/// One way an existing order differs from a request that reuses its external id.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Difference {
    /// Where: `lineItems[1].quantity`, `lineItems[0]`, `shippingAddress.address.cityOrTown`.
    pub field: String,
    /// What the request asks for (`-` when it has no such thing).
    pub requested: String,
    /// What the existing order has (`-` when it has no such thing).
    pub existing: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: requested {}, existing {}",
            self.field, self.requested, self.existing
        )
    }
}

fn difference(
    field: impl Into<String>,
    requested: impl Into<String>,
    existing: impl Into<String>,
) -> Difference {
    Difference {
        field: field.into(),
        requested: requested.into(),
        existing: existing.into(),
    }
}

/// What matters for "the same order": line items (variant or SKU and quantity; for custom items the
/// blank variant and the decorations) and the shipping address. Costs, status and timestamps are the
/// service's and not compared.
pub(crate) fn differences(order: &types::CreateOrderRequest, existing: &Order) -> Vec<Difference> {
    let mut found = Vec::new();
    let mut unmatched: Vec<&crate::model::OrderLineItem> = existing.line_items.iter().collect();
    for (index, item) in order.line_items.iter().enumerate() {
        let position = unmatched.iter().position(|e| same_item(item, e));
        let Some(position) = position else {
            found.push(difference(
                format!("lineItems[{index}]"),
                describe_input(item),
                "-",
            ));
            continue;
        };
        let matched = unmatched.remove(position);
        let quantity = i64::try_from(item.quantity.get()).unwrap_or(i64::MAX);
        if matched.quantity != Some(quantity) {
            found.push(difference(
                format!("lineItems[{index}].quantity"),
                quantity.to_string(),
                matched.quantity.map_or("-".to_owned(), |q| q.to_string()),
            ));
        }
    }
    for extra in unmatched {
        found.push(difference("lineItems", "-", describe_existing(extra)));
    }
    let requested = serde_json::to_value(&order.shipping_address).unwrap_or_default();
    let held = serde_json::to_value(&existing.shipping_address).unwrap_or_default();
    compare_json("shippingAddress", &requested, &held, &mut found);
    found
}

fn same_item(item: &types::LineItemInput, existing: &crate::model::OrderLineItem) -> bool {
    if item.is_custom || item.catalog_product_variant_id.is_some() {
        existing.is_custom
            && item.catalog_product_variant_id == existing.catalog_product_variant_id
            && same_decorations(&item.decorations, &existing.decorations)
    } else {
        !existing.is_custom
            && ((item.product_variant_id.is_some()
                && item.product_variant_id == existing.product_variant_id)
                || (item.sku.is_some() && item.sku == existing.sku))
    }
}

fn same_decorations(requested: &[types::Decoration], existing: &[types::Decoration]) -> bool {
    let requested = serde_json::to_value(requested).unwrap_or_default();
    let existing = serde_json::to_value(existing).unwrap_or_default();
    let mut found = Vec::new();
    compare_json("decorations", &requested, &existing, &mut found);
    found.is_empty()
}

fn describe_input(item: &types::LineItemInput) -> String {
    match (
        &item.catalog_product_variant_id,
        &item.sku,
        &item.product_variant_id,
    ) {
        (Some(blank), _, _) => format!(
            "custom item on {blank} with {} decoration(s) × {}",
            item.decorations.len(),
            item.quantity
        ),
        (None, Some(sku), _) => format!("SKU {sku} × {}", item.quantity),
        (None, None, Some(variant)) => format!("variant {variant} × {}", item.quantity),
        (None, None, None) => format!("a line item × {}", item.quantity),
    }
}

fn describe_existing(item: &crate::model::OrderLineItem) -> String {
    let quantity = item.quantity.map_or("-".to_owned(), |q| q.to_string());
    match (
        &item.catalog_product_variant_id,
        &item.sku,
        &item.product_variant_id,
    ) {
        (Some(blank), _, _) if item.is_custom => format!(
            "custom item on {blank} with {} decoration(s) × {quantity}",
            item.decorations.len()
        ),
        (_, Some(sku), _) => format!("SKU {sku} × {quantity}"),
        (_, None, Some(variant)) => format!("variant {variant} × {quantity}"),
        _ => format!("a line item × {quantity}"),
    }
}

/// Records where `requested` (what the request sent) is not part of `existing` (what the service
/// holds, which may carry more fields). Strings compare trimmed and case-insensitively, as the service
/// may normalise them; numbers by value.
fn compare_json(
    field: &str,
    requested: &serde_json::Value,
    existing: &serde_json::Value,
    found: &mut Vec<Difference>,
) {
    use serde_json::Value;
    match (requested, existing) {
        (Value::Null, _) => {}
        (Value::Object(want), Value::Object(have)) => {
            for (key, value) in want {
                let held = have.get(key).unwrap_or(&Value::Null);
                compare_json(&format!("{field}.{key}"), value, held, found);
            }
        }
        (Value::Array(want), Value::Array(have)) if want.len() == have.len() => {
            for (index, (value, held)) in want.iter().zip(have).enumerate() {
                compare_json(&format!("{field}[{index}]"), value, held, found);
            }
        }
        (Value::String(want), Value::String(have))
            if want.trim().to_lowercase() == have.trim().to_lowercase() => {}
        (Value::Number(want), Value::Number(have)) if want.as_f64() == have.as_f64() => {}
        (want, have) if want == have => {}
        (want, have) => found.push(difference(field, short(want), short(have))),
    }
}

fn short(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "-".to_owned(),
        serde_json::Value::String(text) => format!("{text:?}"),
        other => other.to_string(),
    }
}
