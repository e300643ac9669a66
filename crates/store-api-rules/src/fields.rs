//! The context-free (body-validation) rules of a create-order request.

use store_api_raw::rule::BodyRules;
use store_api_raw::types;

use super::Violation;
use super::address::check_address;
use super::violation::rule_violation;

/// Checks the rules that need no store data: the service's body validation, which it reports as a
/// message array. In the wire's field order:
///
/// - the rules of the spec's request schemas that the typed request does not enforce by itself,
///   generated from the spec (`store_api_raw::rule::BodyRules`): `externalOrderId`, when sent, is not
///   empty; `lineItems` has at least one item; every decoration's numbers are finite,
///   `physicalWidth` and `physicalHeight` positive and `verticalOffsetFromTop` not negative;
///   `lastName`, `streetAddress` and `cityOrTown` are not empty;
/// - what the spec cannot express, on the shipping address: see [`ViolationKind::InvalidCountry`]
///   and [`ViolationKind::UnknownUsState`].
///
/// Every returned violation has [`Violation::is_field_validation`] true. Empty means the body is valid;
/// a valid body allocates nothing.
///
/// [`ViolationKind::InvalidCountry`]: super::ViolationKind::InvalidCountry
/// [`ViolationKind::UnknownUsState`]: super::ViolationKind::UnknownUsState
pub fn validate_fields(order: &types::CreateOrderRequest) -> Vec<Violation> {
    let mut failures = Vec::new();
    order.check(&mut failures);
    // Every rule the typed checks can report is worded as a kind: a test holds `rule_kind` to
    // `CreateOrderRequest::TYPED_RULES`, so a new bound in the spec fails the build's tests, not silently.
    let mut out: Vec<Violation> = failures.iter().filter_map(rule_violation).collect();
    check_address(&order.shipping_address.address, &mut out);
    out
}
