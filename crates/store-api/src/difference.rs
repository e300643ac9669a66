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
/// holds, which may carry more fields). Only a difference the service cannot have made by normalising
/// what it was sent counts (see [`same_text`]); numbers compare by value.
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
        (Value::String(want), Value::String(have)) if same_text(field, want, have) => {}
        // The service omits empty fields from its answers (the seed's conventions): an empty string
        // sent is an absent field held.
        (Value::String(want), Value::Null) if canonical(want).is_empty() => {}
        (Value::Number(want), Value::Number(have)) if want.as_f64() == have.as_f64() => {}
        (want, have) if want == have => {}
        (want, have) => found.push(difference(field, short(want), short(have))),
    }
}

/// Whether the service may have stored `requested` as `held`. The seed does not say how it keeps the
/// text of an address, so every normalisation a service commonly applies is allowed for: surrounding and
/// repeated whitespace, letter case, a US state's full name kept as its USPS code
/// ([`us_state_code`](store_api_rules::countries::us_state_code)), a phone number's punctuation. "Reused"
/// then needs a difference no normalisation makes (another street, city, name or number).
fn same_text(field: &str, requested: &str, held: &str) -> bool {
    let (requested, held) = (canonical(requested), canonical(held));
    if requested == held {
        return true;
    }
    if field.ends_with(".stateOrProvince") {
        let code = store_api_rules::countries::us_state_code;
        return code(&requested).is_some() && code(&requested) == code(&held);
    }
    if field.ends_with(".phone") {
        let digits = |text: &str| {
            text.chars()
                .filter(char::is_ascii_digit)
                .collect::<String>()
        };
        return !digits(&requested).is_empty() && digits(&requested) == digits(&held);
    }
    false
}

/// Text as a normalising service could keep it: trimmed, whitespace runs as one space, lower case.
fn canonical(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn short(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "-".to_owned(),
        serde_json::Value::String(text) => format!("{text:?}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(address: serde_json::Value) -> types::CreateOrderRequest {
        serde_json::from_value(json!({
            "externalOrderId": "1001",
            "lineItems": [{ "sku": "TEE-M", "quantity": 2 }],
            "shippingAddress": address,
        }))
        .unwrap()
    }

    fn held(address: serde_json::Value) -> Order {
        serde_json::from_value(json!({
            "id": "ord_1",
            "externalOrderId": "1001",
            "lineItems": [{ "id": "li_1", "sku": "TEE-M", "quantity": 2 }],
            "shippingAddress": address,
        }))
        .unwrap()
    }

    fn address(
        first: &str,
        state: &str,
        phone: Option<&str>,
        apartment: &str,
    ) -> serde_json::Value {
        let mut address = json!({
            "firstName": first,
            "lastName": "Lovelace",
            "address": {
                "streetAddress": "1 Main St",
                "apartmentOrSuite": apartment,
                "cityOrTown": "Austin",
                "stateOrProvince": state,
                "zipOrPostalCode": "78701",
                "country": "US",
            },
        });
        if let Some(phone) = phone {
            address["phone"] = json!(phone);
        }
        if apartment.is_empty() {
            // What a service that omits empty fields answers.
            address["address"]
                .as_object_mut()
                .unwrap()
                .remove("apartmentOrSuite");
        }
        address
    }

    /// Issue 35, defect 14: a service that normalises what it keeps must not turn a rerun after a lost
    /// 201 into "externalOrderId reused".
    #[test]
    fn what_a_service_may_normalise_is_no_difference() {
        // (requested, held)
        let same = [
            (
                address("Ada", "texas", None, ""),
                address("Ada", "TX", None, ""),
            ),
            (
                address("  Ada ", "Texas", Some("+1 (512) 555-0100"), ""),
                address("ada", "tx", Some("+15125550100"), ""),
            ),
            (
                // An empty apartment sent, none held: the service omits empty fields.
                {
                    let mut sent = address("Ada", "TX", None, "x");
                    sent["address"]["apartmentOrSuite"] = json!("");
                    sent
                },
                address("Ada", "TX", None, ""),
            ),
        ];
        for (requested, existing) in same {
            let found = differences(&request(requested.clone()), &held(existing.clone()));
            assert_eq!(found, Vec::new(), "{requested} against {existing}");
        }
    }

    #[test]
    fn a_difference_no_normalisation_makes_still_counts() {
        // (requested, held, the field that differs)
        let differ = [
            (
                address("Ada", "TX", None, ""),
                address("Grace", "TX", None, ""),
                "shippingAddress.firstName",
            ),
            (
                address("Ada", "Texas", None, ""),
                address("Ada", "OK", None, ""),
                "shippingAddress.address.stateOrProvince",
            ),
            (
                address("Ada", "TX", Some("+1 512 555 0100"), ""),
                address("Ada", "TX", Some("+1 512 555 0199"), ""),
                "shippingAddress.phone",
            ),
            (
                address("Ada", "TX", None, "Apt 4"),
                address("Ada", "TX", None, ""),
                "shippingAddress.address.apartmentOrSuite",
            ),
        ];
        for (requested, existing, field) in differ {
            let found = differences(&request(requested), &held(existing));
            let fields: Vec<&str> = found.iter().map(|d| d.field.as_str()).collect();
            assert_eq!(fields, [field]);
        }
    }
}
