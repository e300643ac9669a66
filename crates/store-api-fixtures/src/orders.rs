//! Orders: creation (validation, the 409, the emulator's price model) and the lifecycle the provider
//! and the app drive (the fulfillment ladder, holds, cancellation, payment).

use serde::{Deserialize, Serialize};
use store_api::validate::{self, OrderContext};
use store_api_raw::money::Money;
use store_api_raw::open::{FulfillmentStatus, OrderStatus, PaymentStatus, WebhookTopic};
use store_api_raw::types;

use crate::error::ApiError;
use crate::events::PendingEvent;
use crate::seed::Pricing;
use crate::state::{Record, State, StoreState, new_id, now};

/// The order rules see one store's products and artworks and the blanks visible to it.
pub(crate) struct StoreView<'a> {
    pub state: &'a State,
    pub store: &'a StoreState,
}

impl OrderContext for StoreView<'_> {
    fn product_variant(
        &self,
        variant_id: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        self.store.products.iter().find_map(|p| {
            p.value
                .variants
                .iter()
                .find(|v| v.id == variant_id)
                .map(|v| (&p.value, v))
        })
    }

    fn product_variant_by_sku(
        &self,
        sku: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        self.store.products.iter().find_map(|p| {
            p.value
                .variants
                .iter()
                .find(|v| v.sku.as_deref() == Some(sku))
                .map(|v| (&p.value, v))
        })
    }

    fn catalog_variant(
        &self,
        catalog_variant_id: &str,
    ) -> Option<(&types::CatalogProduct, &types::CatalogVariant)> {
        self.state
            .visible_catalog(&self.store.id)
            .find_map(|blank| {
                blank
                    .record
                    .value
                    .variants
                    .iter()
                    .find(|v| v.id == catalog_variant_id)
                    .map(|v| (&blank.record.value, v))
            })
    }

    fn artwork_exists(&self, artwork_id: &str) -> bool {
        self.store.artworks.iter().any(|a| a.value.id == artwork_id)
    }
}

/// Creates an order from a request body, in the service's order of checks: body validation (message
/// array), then the external id (409, before the ordering rules, so that a retry of an order that was
/// created answers 409 even if a product changed since), then the ordering rules (first one, as a string).
pub(crate) fn create(
    state: &mut State,
    store_id: &str,
    request: types::CreateOrderRequest,
) -> Result<(types::Order, PendingEvent), ApiError> {
    let store = state
        .stores
        .get(store_id)
        .ok_or(ApiError::Unauthorized(crate::error::INVALID_API_KEY))?;
    let violations = validate::validate_order(&request, &StoreView { state, store });
    if violations.iter().any(|v| v.is_field_validation()) {
        return Err(into_api_error(&violations));
    }
    if let Some(external) = request.external_order_id.as_deref()
        && store.order_by_external_id(external).is_some()
    {
        return Err(ApiError::Conflict(format!(
            "An order already exists with this external order ID: {external}"
        )));
    }
    if !violations.is_empty() {
        return Err(into_api_error(&violations));
    }
    let line_items = build_line_items(state, store, &request)?;
    let pricing = &state.pricing;
    // Quantities are u64 on the wire: saturate rather than overflow (a panic in debug, wrong totals in release).
    let total_quantity = line_items
        .iter()
        .filter_map(|li| li.quantity)
        .fold(0, i64::saturating_add);
    let subtotal = line_items
        .iter()
        .filter_map(|li| li.total_cost)
        .map(Money::cents)
        .fold(0, i64::saturating_add);
    let shipping = shipping_cents(pricing, total_quantity);
    let created = now();
    let number = store.order_number + 1;
    let order = types::Order {
        id: new_id("ord"),
        name: Some(format!("#{number}")),
        external_order_id: request.external_order_id.as_ref().map(|e| e.to_string()),
        status: Some(OrderStatus::Pending),
        fulfillment_status: Some(FulfillmentStatus::Pending),
        payment_status: Some(PaymentStatus::Due),
        is_test: false,
        total_quantity: Some(total_quantity),
        subtotal_cost: Some(dollars(subtotal)),
        shipping_cost: Some(dollars(shipping)),
        total_cost: Some(dollars(subtotal.saturating_add(shipping))),
        line_items,
        shipping_address: Some(shipping_address(&request.shipping_address)),
        ordered_at: Some(request.ordered_at.unwrap_or(created)),
        created_at: Some(created),
        updated_at: Some(created),
        // Not tracked, fulfilled or canceled yet; and any field the spec adds starts empty.
        ..Default::default()
    };
    let seq = state.next_sequence();
    let store = state
        .stores
        .get_mut(store_id)
        .ok_or(ApiError::Unauthorized(crate::error::INVALID_API_KEY))?;
    store.order_number = number;
    store.orders.push(Record::new(seq, order.clone()));
    let event = PendingEvent::new(store_id, WebhookTopic::OrdersCreate, &order.id);
    Ok((order, event))
}

fn into_api_error(violations: &[validate::Violation]) -> ApiError {
    match validate::service_message(violations) {
        Some(types::ErrorMessage::Array(list)) => ApiError::Invalid(list),
        Some(types::ErrorMessage::String(text)) => ApiError::BadRequest(text),
        None => ApiError::BadRequest("The order is not valid".into()),
    }
}

fn build_line_items(
    state: &State,
    store: &StoreState,
    request: &types::CreateOrderRequest,
) -> Result<Vec<types::OrderLineItem>, ApiError> {
    let view = StoreView { state, store };
    let mut items = Vec::with_capacity(request.line_items.len());
    for (index, input) in request.line_items.iter().enumerate() {
        let quantity = i64::try_from(input.quantity.get()).unwrap_or(i64::MAX);
        let position = i64::try_from(index + 1).unwrap_or(i64::MAX);
        let item = if input.is_custom {
            let (blank, variant) = input
                .catalog_product_variant_id
                .as_deref()
                .and_then(|id| view.catalog_variant(id))
                .ok_or_else(|| {
                    ApiError::BadRequest("No catalog product variant found for a line item".into())
                })?;
            let base = state
                .catalog
                .iter()
                .find(|b| b.record.value.id == blank.id)
                .map_or(0.0, |b| b.base_cost);
            let decorations: i64 = input
                .decorations
                .iter()
                .map(|d| {
                    cents(decoration_cost(
                        &state.pricing,
                        d.decoration_method.as_str(),
                    ))
                })
                .sum();
            let unit = cents(base) + decorations;
            types::OrderLineItem {
                id: new_id("li"),
                name: Some(format!(
                    "{} - {}",
                    blank.name.as_deref().unwrap_or("Custom item"),
                    variant.name.as_deref().unwrap_or(&variant.id)
                )),
                color: variant.color.clone(),
                size: variant.size.clone(),
                quantity: Some(quantity),
                is_custom: true,
                unit_cost: Some(dollars(unit)),
                total_cost: Some(dollars(unit.saturating_mul(quantity))),
                images: blank
                    .images
                    .iter()
                    .take(1)
                    .map(|image| types::LineItemImage {
                        id: image.id.clone(),
                        color: variant.color.clone(),
                        position: image.position,
                        image: image.image.clone(),
                    })
                    .collect(),
                position: Some(position),
                catalog_product_id: Some(blank.id.clone()),
                catalog_product_variant_id: Some(variant.id.clone()),
                decorations: input.decorations.clone(),
                // A custom item has no product, product variant or SKU.
                ..Default::default()
            }
        } else {
            let (product, variant) = input
                .product_variant_id
                .as_deref()
                .and_then(|id| view.product_variant(id))
                .or_else(|| {
                    input
                        .sku
                        .as_deref()
                        .and_then(|sku| view.product_variant_by_sku(sku))
                })
                .ok_or_else(|| {
                    ApiError::BadRequest("No product found in the store for a line item".into())
                })?;
            let unit = variant.cost.map_or(0, Money::cents);
            types::OrderLineItem {
                id: new_id("li"),
                product_id: Some(product.id.clone()),
                product_variant_id: Some(variant.id.clone()),
                sku: variant.sku.clone(),
                name: Some(format!(
                    "{} - {}",
                    product.name.as_deref().unwrap_or("Product"),
                    variant.name.as_deref().unwrap_or(&variant.id)
                )),
                color: variant.color.clone(),
                size: variant.size.clone(),
                quantity: Some(quantity),
                is_custom: false,
                unit_cost: Some(dollars(unit)),
                total_cost: Some(dollars(unit.saturating_mul(quantity))),
                images: product
                    .images
                    .iter()
                    .filter(|image| image.color.is_some() && image.color == variant.color)
                    .map(|image| types::LineItemImage {
                        id: image.id.clone(),
                        color: image.color.clone(),
                        position: image.position,
                        image: image.image.clone(),
                    })
                    .collect(),
                position: Some(position),
                // A standard item has no blank and no decorations.
                ..Default::default()
            }
        };
        items.push(item);
    }
    Ok(items)
}

fn shipping_address(input: &types::ShippingAddressInput) -> types::ShippingAddress {
    let address = &input.address;
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    types::ShippingAddress {
        first_name: non_empty(&input.first_name),
        last_name: non_empty(&input.last_name),
        email: input.email.clone(),
        phone: input.phone.clone(),
        address: Some(types::Address {
            street_address: non_empty(&address.street_address),
            apartment_or_suite: address.apartment_or_suite.clone(),
            city_or_town: non_empty(&address.city_or_town),
            state_or_province: non_empty(&address.state_or_province),
            zip_or_postal_code: non_empty(&address.zip_or_postal_code),
            country: non_empty(&address.country),
        }),
    }
}

/// The cost of one decoration: the seed's per-method price, or its default for a method added later.
fn decoration_cost(pricing: &Pricing, method: &str) -> f64 {
    pricing
        .decoration_cost
        .get(method)
        .copied()
        .unwrap_or(pricing.default_decoration_cost)
}

fn shipping_cents(pricing: &Pricing, total_quantity: i64) -> i64 {
    if total_quantity <= 0 {
        return 0;
    }
    cents(pricing.shipping.first_item)
        .saturating_add(cents(pricing.shipping.additional_item).saturating_mul(total_quantity - 1))
}

/// Money is computed in whole cents so totals are exact and consistent, then served as dollars.
fn cents(dollars: f64) -> i64 {
    if dollars.is_finite() {
        (dollars * 100.0).round() as i64
    } else {
        0
    }
}

fn dollars(cents: i64) -> Money {
    Money::from_cents(cents)
}

/// What the app can do to an order (control endpoint `app-action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AppAction {
    /// Pause: status on_hold, the fulfillment stage is kept.
    Hold,
    /// Resume a held order: status returns to the fulfillment stage.
    Release,
    /// status cancellation_requested.
    RequestCancellation,
    /// status canceled, canceledAt set; a due invoice is canceled, a paid one refunded.
    Cancel,
    /// paymentStatus paid (from due or failed).
    MarkPaid,
    /// paymentStatus failed (from due).
    MarkPaymentFailed,
    /// paymentStatus refunded (from paid).
    Refund,
}

/// Moves an order one rung up the fulfillment ladder, as the provider does.
pub(crate) fn advance(order: &mut types::Order) -> Result<(), ApiError> {
    let status = order.status.clone().unwrap_or(OrderStatus::Pending);
    if matches!(
        status,
        OrderStatus::Canceled | OrderStatus::OnHold | OrderStatus::CancellationRequested
    ) {
        return Err(ApiError::Conflict(format!(
            "The order is {status} and cannot advance"
        )));
    }
    let current = order
        .fulfillment_status
        .clone()
        .unwrap_or(FulfillmentStatus::Pending);
    let next = current
        .rung()
        .and_then(|rung| FulfillmentStatus::KNOWN.get(rung + 1))
        .cloned()
        .ok_or_else(|| ApiError::Conflict(format!("The order is {current} and cannot advance")))?;
    let at = now();
    if next == FulfillmentStatus::Fulfilled {
        let number = format!("1Z{:016X}", rand::random::<u64>());
        order.tracking_info = Some(types::TrackingInfo {
            carrier: Some("UPS".into()),
            tracking_url: Some(format!("https://tracking.emulator.invalid/{number}")),
            tracking_number: Some(number),
        });
        order.fulfilled_at = Some(at);
    }
    order.status = Some(OrderStatus::from(next.as_str()));
    order.fulfillment_status = Some(next);
    order.updated_at = Some(at);
    Ok(())
}

/// Applies an app-side action. Transitions the seed does not show are the emulator's documented model.
pub(crate) fn apply(order: &mut types::Order, action: AppAction) -> Result<(), ApiError> {
    let status = order.status.clone().unwrap_or(OrderStatus::Pending);
    let stage = order
        .fulfillment_status
        .clone()
        .unwrap_or(FulfillmentStatus::Pending);
    let payment = order.payment_status.clone().unwrap_or(PaymentStatus::Due);
    let refuse = |what: &str| {
        Err(ApiError::Conflict(format!(
            "Cannot {what}: the order is {status}"
        )))
    };
    let closed = matches!(status, OrderStatus::Canceled | OrderStatus::Fulfilled);
    let at = now();
    match action {
        AppAction::Hold if !closed && status != OrderStatus::OnHold => {
            order.status = Some(OrderStatus::OnHold)
        }
        AppAction::Release if status == OrderStatus::OnHold => {
            order.status = Some(OrderStatus::from(stage.as_str()));
        }
        AppAction::RequestCancellation
            if !closed && status != OrderStatus::CancellationRequested =>
        {
            order.status = Some(OrderStatus::CancellationRequested);
        }
        AppAction::Cancel if !closed => {
            order.status = Some(OrderStatus::Canceled);
            order.canceled_at = Some(at);
            order.payment_status = Some(match payment {
                PaymentStatus::Paid => PaymentStatus::Refunded,
                PaymentStatus::Due | PaymentStatus::Failed => PaymentStatus::Canceled,
                other => other,
            });
        }
        AppAction::MarkPaid if matches!(payment, PaymentStatus::Due | PaymentStatus::Failed) => {
            order.payment_status = Some(PaymentStatus::Paid);
        }
        AppAction::MarkPaymentFailed if payment == PaymentStatus::Due => {
            order.payment_status = Some(PaymentStatus::Failed);
        }
        AppAction::Refund if payment == PaymentStatus::Paid => {
            order.payment_status = Some(PaymentStatus::Refunded)
        }
        AppAction::MarkPaid | AppAction::MarkPaymentFailed | AppAction::Refund => {
            return Err(ApiError::Conflict(format!(
                "Cannot apply {action:?}: the payment status is {payment}"
            )));
        }
        _ => return refuse(&format!("{action:?}")),
    }
    order.updated_at = Some(at);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order() -> types::Order {
        serde_json::from_str(r#"{"id":"ord_1","status":"pending","fulfillmentStatus":"pending","paymentStatus":"due"}"#)
            .unwrap()
    }

    #[test]
    fn the_ladder_moves_one_rung_at_a_time_and_sets_tracking_at_the_top() {
        let mut o = order();
        let mut seen = Vec::new();
        while advance(&mut o).is_ok() {
            seen.push(o.fulfillment_status.clone().unwrap().to_string());
            assert_eq!(
                o.status.as_ref().map(|s| s.to_string()),
                seen.last().cloned()
            );
        }
        assert_eq!(
            seen,
            [
                "production_requested",
                "sent_to_production",
                "in_production",
                "fulfilled"
            ]
        );
        assert!(o.tracking_info.is_some() && o.fulfilled_at.is_some());
        assert!(matches!(advance(&mut o), Err(ApiError::Conflict(_))));
    }

    #[test]
    fn hold_keeps_the_stage_and_release_restores_it() {
        let mut o = order();
        advance(&mut o).unwrap();
        apply(&mut o, AppAction::Hold).unwrap();
        assert_eq!(o.status, Some(OrderStatus::OnHold));
        assert_eq!(
            o.fulfillment_status,
            Some(FulfillmentStatus::ProductionRequested)
        );
        assert!(advance(&mut o).is_err(), "a held order does not move");
        apply(&mut o, AppAction::Release).unwrap();
        assert_eq!(o.status, Some(OrderStatus::ProductionRequested));
    }

    #[test]
    fn cancel_sets_canceled_at_and_cancels_the_invoice() {
        let mut o = order();
        apply(&mut o, AppAction::Cancel).unwrap();
        assert_eq!(o.status, Some(OrderStatus::Canceled));
        assert_eq!(o.payment_status, Some(PaymentStatus::Canceled));
        assert!(o.canceled_at.is_some());
        assert!(apply(&mut o, AppAction::Hold).is_err());
        assert!(advance(&mut o).is_err());
    }

    #[test]
    fn payment_moves() {
        let mut o = order();
        assert!(apply(&mut o, AppAction::Refund).is_err());
        apply(&mut o, AppAction::MarkPaymentFailed).unwrap();
        apply(&mut o, AppAction::MarkPaid).unwrap();
        apply(&mut o, AppAction::Refund).unwrap();
        assert_eq!(o.payment_status, Some(PaymentStatus::Refunded));
    }

    #[test]
    fn money_is_exact_in_cents() {
        assert_eq!(cents(0.1 + 0.2), 30);
        assert_eq!(dollars(cents(8.25) + cents(3.25) * 2).to_f64(), 14.75);
        assert_eq!(cents(f64::NAN), 0);
    }
}
