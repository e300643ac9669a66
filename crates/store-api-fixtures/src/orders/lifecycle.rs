//! An order's lifecycle after creation: the fulfillment ladder the provider drives, and the holds,
//! cancellation and payment moves the app makes.

use serde::{Deserialize, Serialize};
use store_api_raw::open::{FulfillmentStatus, OrderStatus, PaymentStatus};
use store_api_raw::types;

use crate::clock::Clock;
use crate::error::ApiError;

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
pub(crate) fn advance(order: &mut types::Order, clock: &Clock) -> Result<(), ApiError> {
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
        .and_then(|rung| FulfillmentStatus::LADDER.get(rung + 1))
        .cloned()
        .ok_or_else(|| ApiError::Conflict(format!("The order is {current} and cannot advance")))?;
    let at = clock.now();
    if next == FulfillmentStatus::Fulfilled {
        let number = format!("1Z{:016X}", clock.random_u64());
        let mut tracking = types::TrackingInfo::new();
        tracking.carrier = Some("UPS".into());
        tracking.tracking_url = Some(format!("https://tracking.emulator.invalid/{number}"));
        tracking.tracking_number = Some(number);
        order.tracking_info = Some(tracking);
        order.fulfilled_at = Some(at);
    }
    order.status = Some(OrderStatus::from(next.as_str()));
    order.fulfillment_status = Some(next);
    order.updated_at = Some(at);
    Ok(())
}

/// Applies an app-side action. Transitions the seed does not show are the emulator's documented model.
pub(crate) fn apply(
    order: &mut types::Order,
    action: AppAction,
    clock: &Clock,
) -> Result<(), ApiError> {
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
    let at = clock.now();
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

    fn advance(order: &mut types::Order) -> Result<(), ApiError> {
        super::advance(order, &Clock::default())
    }

    fn apply(order: &mut types::Order, action: AppAction) -> Result<(), ApiError> {
        super::apply(order, action, &Clock::default())
    }

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
}
