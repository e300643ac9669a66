use store_api_raw::open::{DecorationMethod, FulfillmentStatus, OrderStatus, PaymentStatus};
use store_api_raw::types::Order;

/// An order as a newer service might send it: every growing enumeration carries a value this SDK does
/// not know, and there is a field the spec does not describe.
const ORDER: &str = r#"{
  "id": "ord_1",
  "externalOrderId": "shop-1001",
  "status": "awaiting_artwork_review",
  "fulfillmentStatus": "quality_check",
  "paymentStatus": "partially_refunded",
  "isTest": false,
  "totalQuantity": 1,
  "lineItems": [{
    "id": "li_1",
    "isCustom": true,
    "quantity": 1,
    "catalogProductVariantId": "cv_1",
    "decorations": [{
      "decorationLocation": "front",
      "decorationMethod": "holographic_foil",
      "artworkId": "art_1",
      "physicalWidth": 10.0,
      "physicalHeight": 8.0,
      "horizontalOffsetFromCenter": 0.0,
      "verticalOffsetFromTop": 1.5
    }]
  }],
  "createdAt": "2026-08-01T10:00:00.000Z"
}"#;

#[test]
fn unknown_enum_values_decode_and_reencode_unchanged() {
    let order: Order = serde_json::from_str(ORDER).unwrap();
    assert_eq!(
        order.status,
        Some(OrderStatus::Unknown("awaiting_artwork_review".into()))
    );
    assert_eq!(
        order.fulfillment_status,
        Some(FulfillmentStatus::Unknown("quality_check".into()))
    );
    assert_eq!(
        order.payment_status,
        Some(PaymentStatus::Unknown("partially_refunded".into()))
    );
    let method = &order.line_items[0].decorations[0].decoration_method;
    assert_eq!(
        method,
        &DecorationMethod::Unknown("holographic_foil".into())
    );

    let reencoded = serde_json::to_value(&order).unwrap();
    let original: serde_json::Value = serde_json::from_str(ORDER).unwrap();
    for pointer in [
        "/status",
        "/fulfillmentStatus",
        "/paymentStatus",
        "/lineItems/0/decorations/0/decorationMethod",
    ] {
        assert_eq!(
            reencoded.pointer(pointer),
            original.pointer(pointer),
            "{pointer}"
        );
    }
}

#[test]
fn known_values_still_decode_into_their_variants() {
    let json = ORDER
        .replace("awaiting_artwork_review", "on_hold")
        .replace("quality_check", "in_production")
        .replace("partially_refunded", "paid")
        .replace("holographic_foil", "embroidery");
    let order: Order = serde_json::from_str(&json).unwrap();
    assert_eq!(order.status, Some(OrderStatus::OnHold));
    assert_eq!(
        order.fulfillment_status,
        Some(FulfillmentStatus::InProduction)
    );
    assert_eq!(order.payment_status, Some(PaymentStatus::Paid));
    assert_eq!(
        order.line_items[0].decorations[0].decoration_method,
        DecorationMethod::Embroidery
    );
}

#[test]
fn missing_fields_are_empty_not_errors() {
    let order: Order = serde_json::from_str(r#"{"id":"ord_2"}"#).unwrap();
    assert!(order.line_items.is_empty());
    assert!(order.status.is_none() && order.tracking_info.is_none());
}
