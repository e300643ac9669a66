//! The context-free (body-validation) rules of a create-order request.

use store_api_raw::types;

use super::address::check_shipping_address;
use super::paths;
use super::placement::Placement;
use super::{Violation, ViolationKind};

/// Checks the rules that need no store data: the service's body validation, which it reports as a
/// message array. In the wire's field order:
///
/// - `externalOrderId`, when sent, is not empty;
/// - `lineItems` has at least one item (quantities of at least 1 are guaranteed by the type);
/// - every decoration's numbers are finite, `physicalWidth` and `physicalHeight` positive and
///   `verticalOffsetFromTop` not negative;
/// - the shipping address: see [`ViolationKind::EmptyString`], [`ViolationKind::InvalidCountry`] and
///   [`ViolationKind::UnknownUsState`].
///
/// Every returned violation has [`Violation::is_field_validation`] true. Empty means the body is valid.
pub fn validate_fields(order: &types::CreateOrderRequest) -> Vec<Violation> {
    let mut out = Vec::new();
    if order
        .external_order_id
        .as_ref()
        .is_some_and(|external_order_id| external_order_id.is_empty())
    {
        out.push(Violation::new(
            ViolationKind::EmptyString,
            "externalOrderId",
            "",
        ));
    }
    if order.line_items.is_empty() {
        out.push(Violation::new(
            ViolationKind::EmptyLineItems,
            "lineItems",
            "",
        ));
    }
    for (item_index, item) in order.line_items.iter().enumerate() {
        for (decoration_index, decoration) in item.decorations.iter().enumerate() {
            for error in Placement::from(decoration).number_errors() {
                out.push(Violation::new(
                    error.violation_kind(),
                    paths::decoration_field(item_index, decoration_index, error.field()),
                    error.to_string(),
                ));
            }
        }
    }
    check_shipping_address(&order.shipping_address, &mut out);
    out
}
