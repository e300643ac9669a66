//! Domain types: the generated wire types, re-exported.
//!
//! Money fields are [`Money`] (a decimal rounded to cents) in the wire types themselves, because the spec
//! marks them with its `Money` schema and the code generator maps that schema to
//! [`store_api_raw::money::Money`]; a field added to the spec appears here after `cargo xtask codegen`.
//!
//! Every body type is `#[non_exhaustive]`, so that a field the spec adds within the version breaks no
//! dependent: build one (in a test, say) with its `new(required fields…)` and assign the fields you need
//! (the store-api-raw README, "Growth within the version"). Open enumerations have no order of their own;
//! [`FulfillmentStatus`] compares by its rung on the production ladder.
//!
//! ```
//! use store_api::model::{FulfillmentStatus, Order};
//!
//! let mut order = Order::new("ord_1".into());
//! order.fulfillment_status = Some(FulfillmentStatus::InProduction);
//! assert!(FulfillmentStatus::InProduction > FulfillmentStatus::Pending);
//! ```

pub use store_api_raw::money::{Money, to_cents};
pub use store_api_raw::open::{
    DecorationMethod, FulfillmentStatus, OrderStatus, PaymentStatus, ProductStatus, WebhookTopic,
};
pub use store_api_raw::types::{
    Address, Artwork, CatalogImage, CatalogProduct, CatalogVariant, ColorMetadata, Decoration,
    DecorationLocation, ImageRef, LineItemImage, Order, OrderLineItem, Product, ProductImage,
    ProductVariant, ShippingAddress, SortDirection, StatusResult, TrackingInfo,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_round_trips_through_the_wire_shape() {
        let json = r#"{"id":"o1","status":"new_status","totalCost":27.49000001,"lineItems":[{"id":"l1","unitCost":11.5}]}"#;
        let order: Order = serde_json::from_str(json).unwrap();
        assert_eq!(order.total_cost.unwrap().to_string(), "27.49");
        assert_eq!(
            order.status,
            Some(OrderStatus::Unknown("new_status".into()))
        );
        let back = serde_json::to_value(&order).unwrap();
        assert_eq!(back["status"], "new_status");
        assert_eq!(back["totalCost"], 27.49);
        assert_eq!(back["isTest"], false);
        assert_eq!(back["lineItems"][0]["isCustom"], false);
    }
}
