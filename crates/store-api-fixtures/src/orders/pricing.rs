//! The emulator's price model (the service's is not published): a variant's cost, or a blank's base cost
//! plus one price per decoration, and shipping per item. Money is computed in whole cents so totals are
//! exact and consistent, then served as dollars.

use store_api_raw::money::Money;
use store_api_raw::types;
use store_api_rules::{ItemSource, ResolvedLineItem};

use crate::seed::Pricing;
use crate::state::State;

/// What the store pays for one unit of a resolved line item, in cents.
pub(super) fn unit_cents(state: &State, item: &ResolvedLineItem<'_>) -> i64 {
    match item.source {
        ItemSource::Product { variant, .. } => variant.cost.map_or(0, Money::cents),
        ItemSource::Blank { blank, .. } => {
            let decorations: i64 = item
                .input
                .decorations
                .iter()
                .map(|d| {
                    cents(decoration_cost(
                        &state.pricing,
                        d.decoration_method.as_str(),
                    ))
                })
                .sum();
            cents(base_cost(state, blank)) + decorations
        }
    }
}

/// The blank's base cost from the emulator's price list, which lives beside the catalog rather than in
/// the wire type (the service does not show it); 0 for a blank without one.
fn base_cost(state: &State, blank: &types::CatalogProduct) -> f64 {
    state
        .catalog
        .iter()
        .find(|b| b.record.value.id == blank.id)
        .map_or(0.0, |b| b.base_cost)
}

/// The cost of one decoration: the seed's per-method price, or its default for a method added later.
fn decoration_cost(pricing: &Pricing, method: &str) -> f64 {
    pricing
        .decoration_cost
        .get(method)
        .copied()
        .unwrap_or(pricing.default_decoration_cost)
}

/// An order's totals, from its priced line items.
pub(super) struct Totals {
    pub quantity: i64,
    pub subtotal: Money,
    pub shipping: Money,
    pub total: Money,
}

impl Totals {
    pub fn of(pricing: &Pricing, line_items: &[types::OrderLineItem]) -> Totals {
        // Quantities are u64 on the wire: saturate rather than overflow (a panic in debug, wrong totals in release).
        let quantity = line_items
            .iter()
            .filter_map(|li| li.quantity)
            .fold(0, i64::saturating_add);
        let subtotal = line_items
            .iter()
            .filter_map(|li| li.total_cost)
            .map(Money::cents)
            .fold(0, i64::saturating_add);
        let shipping = shipping_cents(pricing, quantity);
        Totals {
            quantity,
            subtotal: dollars(subtotal),
            shipping: dollars(shipping),
            total: dollars(subtotal.saturating_add(shipping)),
        }
    }
}

fn shipping_cents(pricing: &Pricing, total_quantity: i64) -> i64 {
    if total_quantity <= 0 {
        return 0;
    }
    cents(pricing.shipping.first_item)
        .saturating_add(cents(pricing.shipping.additional_item).saturating_mul(total_quantity - 1))
}

/// Dollars to whole cents; 0 for a value that is not a number.
fn cents(dollars: f64) -> i64 {
    if dollars.is_finite() {
        (dollars * 100.0).round() as i64
    } else {
        0
    }
}

/// Whole cents as the wire's money.
pub(super) fn dollars(cents: i64) -> Money {
    Money::from_cents(cents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_is_exact_in_cents() {
        assert_eq!(cents(0.1 + 0.2), 30);
        assert_eq!(dollars(cents(8.25) + cents(3.25) * 2).to_f64(), 14.75);
        assert_eq!(cents(f64::NAN), 0);
    }
}
