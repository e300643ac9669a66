//! Line items edited "through the app": the new items are checked by the same rules as a new order's,
//! then priced and recorded like them; the service emits `orders_update` for such an edit.

use store_api_raw::open::{FulfillmentStatus, OrderStatus, WebhookTopic};
use store_api_raw::types;
use store_api_rules as validate;

use super::creation::{into_api_error, priced_line_items};
use super::view::StoreView;
use crate::error::ApiError;
use crate::events::PendingEvent;
use crate::state::State;

/// Replaces the line items of an order that has not gone into production (the seed does not show when
/// the app allows edits; this project assumes while `fulfillmentStatus` is still `pending` and the order
/// is neither canceled nor fulfilled).
pub(crate) fn edit_line_items(
    state: &mut State,
    store_id: &str,
    order_id: &str,
    line_items: Vec<types::LineItemInput>,
) -> Result<(types::Order, PendingEvent), ApiError> {
    let updated = {
        let store = state
            .stores
            .get(store_id)
            .ok_or_else(|| ApiError::NotFound("Store not found".into()))?;
        let order = store
            .orders
            .get(order_id)
            .map(|o| &o.value)
            .ok_or_else(|| ApiError::NotFound("Order not found".into()))?;
        let editable = order.fulfillment_status == Some(FulfillmentStatus::Pending)
            && !matches!(
                order.status,
                Some(OrderStatus::Canceled | OrderStatus::Fulfilled)
            );
        if !editable {
            return Err(ApiError::Conflict(
                "The order can no longer be edited: production has started or it is closed".into(),
            ));
        }
        // The rules need a whole request: the order's own shipping address, read back as input.
        let shipping_address = serde_json::to_value(&order.shipping_address)
            .ok()
            .and_then(|value| serde_json::from_value(value).ok())
            .ok_or_else(|| {
                ApiError::BadRequest("The order's shipping address is incomplete".into())
            })?;
        let request = types::CreateOrderRequest::new(line_items, shipping_address);
        let view = StoreView { state, store };
        let resolved = validate::validate_order(&request, &view)
            .map_err(|violations| into_api_error(&violations))?;
        let (items, totals) = priced_line_items(state, &resolved);
        let mut updated = order.clone();
        updated.line_items = items;
        updated.total_quantity = Some(totals.quantity);
        updated.subtotal_cost = Some(totals.subtotal);
        updated.shipping_cost = Some(totals.shipping);
        updated.total_cost = Some(totals.total);
        updated.updated_at = Some(state.clock.now());
        updated
    };
    let mut record = state
        .stores
        .get_mut(store_id)
        .and_then(|store| store.order_mut(order_id))
        .ok_or_else(|| ApiError::NotFound("Order not found".into()))?;
    record.set(updated.clone());
    let event = PendingEvent::new(store_id, WebhookTopic::OrdersUpdate, order_id);
    Ok((updated, event))
}
