//! Domain types: the wire types, with money as [`Decimal`] rounded to cents.
//!
//! Resources without money are the generated wire types themselves (re-exported). Orders and products
//! carry costs and prices, so they have their own types here, decoded through the wire type
//! (`#[serde(from = ...)]`) so that one definition of the wire shape serves both.

use chrono::{DateTime, Utc};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use store_api_raw::types;

pub use store_api_raw::open::{
    DecorationMethod, FulfillmentStatus, OrderStatus, PaymentStatus, ProductStatus, WebhookTopic,
};
pub use store_api_raw::types::{
    Address, Artwork, CatalogImage, CatalogProduct, CatalogVariant, ColorMetadata, Decoration,
    DecorationLocation, ImageRef, LineItemImage, ProductImage, ShippingAddress, SortDirection,
    StatusResult, TrackingInfo,
};

/// Rounds a wire amount to cents, as the seed asks clients to do before display or storage.
/// Non-finite numbers (never sent by the service) become zero rather than an error.
pub fn to_cents(amount: f64) -> Decimal {
    Decimal::from_f64_retain(amount)
        .map(|d| d.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero))
        .unwrap_or_default()
}

fn money(amount: Option<f64>) -> Option<Decimal> {
    amount.map(to_cents)
}

fn wire(amount: Option<Decimal>) -> Option<f64> {
    amount.and_then(|d| d.to_string().parse().ok())
}

/// An order. Costs are what the provider bills the merchant, in US dollars, rounded to cents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "types::Order", into = "types::Order")]
#[non_exhaustive]
pub struct Order {
    /// Id of the order.
    pub id: String,
    /// Human-readable order name.
    pub name: Option<String>,
    /// The merchant's own order number.
    pub external_order_id: Option<String>,
    /// Status (an unknown value is kept as `Unknown`).
    pub status: Option<OrderStatus>,
    /// Position on the production ladder.
    pub fulfillment_status: Option<FulfillmentStatus>,
    /// What the store owes the provider.
    pub payment_status: Option<PaymentStatus>,
    /// Whether this is a test order (meaning not shown by the service).
    pub is_test: bool,
    /// Sum of the line item quantities.
    pub total_quantity: Option<i64>,
    /// Sum of the line item costs.
    pub subtotal_cost: Option<Decimal>,
    /// Shipping cost.
    pub shipping_cost: Option<Decimal>,
    /// Subtotal plus shipping.
    pub total_cost: Option<Decimal>,
    /// The line items.
    pub line_items: Vec<OrderLineItem>,
    /// Where the order ships.
    pub shipping_address: Option<ShippingAddress>,
    /// Present once shipped.
    pub tracking_info: Option<TrackingInfo>,
    /// When the order was placed.
    pub ordered_at: Option<DateTime<Utc>>,
    /// Set when fulfilled.
    pub fulfilled_at: Option<DateTime<Utc>>,
    /// Set when canceled.
    pub canceled_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_at: Option<DateTime<Utc>>,
    /// Last update time.
    pub updated_at: Option<DateTime<Utc>>,
}

/// A line item of an order.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct OrderLineItem {
    /// Id of the line item.
    pub id: String,
    /// Product id (absent for custom items).
    pub product_id: Option<String>,
    /// Product variant id.
    pub product_variant_id: Option<String>,
    /// SKU.
    pub sku: Option<String>,
    /// Name.
    pub name: Option<String>,
    /// Color.
    pub color: Option<String>,
    /// Size.
    pub size: Option<String>,
    /// Units.
    pub quantity: Option<i64>,
    /// True for a custom line item.
    pub is_custom: bool,
    /// Cost of one unit.
    pub unit_cost: Option<Decimal>,
    /// Unit cost times quantity.
    pub total_cost: Option<Decimal>,
    /// Images.
    pub images: Vec<LineItemImage>,
    /// Display order.
    pub position: Option<i64>,
    /// Blank of a custom item.
    pub catalog_product_id: Option<String>,
    /// Catalog variant of a custom item.
    pub catalog_product_variant_id: Option<String>,
    /// Decorations of a custom item.
    pub decorations: Vec<Decoration>,
}

impl From<types::OrderLineItem> for OrderLineItem {
    fn from(w: types::OrderLineItem) -> Self {
        OrderLineItem {
            id: w.id,
            product_id: w.product_id,
            product_variant_id: w.product_variant_id,
            sku: w.sku,
            name: w.name,
            color: w.color,
            size: w.size,
            quantity: w.quantity,
            is_custom: w.is_custom.unwrap_or(false),
            unit_cost: money(w.unit_cost),
            total_cost: money(w.total_cost),
            images: w.images,
            position: w.position,
            catalog_product_id: w.catalog_product_id,
            catalog_product_variant_id: w.catalog_product_variant_id,
            decorations: w.decorations,
        }
    }
}

impl From<OrderLineItem> for types::OrderLineItem {
    fn from(d: OrderLineItem) -> Self {
        types::OrderLineItem {
            id: d.id,
            product_id: d.product_id,
            product_variant_id: d.product_variant_id,
            sku: d.sku,
            name: d.name,
            color: d.color,
            size: d.size,
            quantity: d.quantity,
            is_custom: Some(d.is_custom),
            unit_cost: wire(d.unit_cost),
            total_cost: wire(d.total_cost),
            images: d.images,
            position: d.position,
            catalog_product_id: d.catalog_product_id,
            catalog_product_variant_id: d.catalog_product_variant_id,
            decorations: d.decorations,
        }
    }
}

impl From<types::Order> for Order {
    fn from(w: types::Order) -> Self {
        Order {
            id: w.id,
            name: w.name,
            external_order_id: w.external_order_id,
            status: w.status,
            fulfillment_status: w.fulfillment_status,
            payment_status: w.payment_status,
            is_test: w.is_test.unwrap_or(false),
            total_quantity: w.total_quantity,
            subtotal_cost: money(w.subtotal_cost),
            shipping_cost: money(w.shipping_cost),
            total_cost: money(w.total_cost),
            line_items: w.line_items.into_iter().map(Into::into).collect(),
            shipping_address: w.shipping_address,
            tracking_info: w.tracking_info,
            ordered_at: w.ordered_at,
            fulfilled_at: w.fulfilled_at,
            canceled_at: w.canceled_at,
            created_at: w.created_at,
            updated_at: w.updated_at,
        }
    }
}

impl From<Order> for types::Order {
    fn from(d: Order) -> Self {
        types::Order {
            id: d.id,
            name: d.name,
            external_order_id: d.external_order_id,
            status: d.status,
            fulfillment_status: d.fulfillment_status,
            payment_status: d.payment_status,
            is_test: Some(d.is_test),
            total_quantity: d.total_quantity,
            subtotal_cost: wire(d.subtotal_cost),
            shipping_cost: wire(d.shipping_cost),
            total_cost: wire(d.total_cost),
            line_items: d.line_items.into_iter().map(Into::into).collect(),
            shipping_address: d.shipping_address,
            tracking_info: d.tracking_info,
            ordered_at: d.ordered_at,
            fulfilled_at: d.fulfilled_at,
            canceled_at: d.canceled_at,
            created_at: d.created_at,
            updated_at: d.updated_at,
        }
    }
}

/// A product built in the app, with its variants' prices as decimals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "types::Product", into = "types::Product")]
#[non_exhaustive]
pub struct Product {
    /// The product as on the wire, with its variants' money fields rounded to cents in
    /// [`Product::variants`].
    pub wire: types::Product,
    /// The variants with money as decimals.
    pub variants: Vec<ProductVariant>,
}

/// A variant of a product.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ProductVariant {
    /// Id (the `productVariantId` of a standard line item).
    pub id: String,
    /// SKU.
    pub sku: Option<String>,
    /// Name.
    pub name: Option<String>,
    /// Color.
    pub color: Option<String>,
    /// Size.
    pub size: Option<String>,
    /// Retail price for display (currency not shown by the service).
    pub price: Option<Decimal>,
    /// Retail comparison price.
    pub compare_at_price: Option<Decimal>,
    /// What the provider charges the merchant, US dollars.
    pub cost: Option<Decimal>,
    /// Discontinued or out of stock: cannot be ordered.
    pub is_discontinued: bool,
    /// Display order.
    pub position: Option<i64>,
}

impl Product {
    /// Id of the product.
    pub fn id(&self) -> &str {
        &self.wire.id
    }

    /// Name of the product.
    pub fn name(&self) -> Option<&str> {
        self.wire.name.as_deref()
    }

    /// Status (an unknown value is kept as `Unknown`).
    pub fn status(&self) -> Option<&ProductStatus> {
        self.wire.status.as_ref()
    }
}

impl From<types::Product> for Product {
    fn from(wire: types::Product) -> Self {
        let variants = wire
            .variants
            .iter()
            .map(|v| ProductVariant {
                id: v.id.clone(),
                sku: v.sku.clone(),
                name: v.name.clone(),
                color: v.color.clone(),
                size: v.size.clone(),
                price: money(v.price),
                compare_at_price: money(v.compare_at_price),
                cost: money(v.cost),
                is_discontinued: v.is_discontinued.unwrap_or(false),
                position: v.position,
            })
            .collect();
        Product { wire, variants }
    }
}

impl From<Product> for types::Product {
    fn from(product: Product) -> Self {
        product.wire
    }
}

/// Something with an id (for de-duplicating pages).
pub trait Identified {
    /// The resource's id.
    fn id(&self) -> &str;
}

impl Identified for Order {
    fn id(&self) -> &str {
        &self.id
    }
}
impl Identified for Product {
    fn id(&self) -> &str {
        &self.wire.id
    }
}
impl Identified for CatalogProduct {
    fn id(&self) -> &str {
        &self.id
    }
}
impl Identified for Artwork {
    fn id(&self) -> &str {
        &self.id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_is_rounded_to_cents() {
        assert_eq!(to_cents(11.449999999).to_string(), "11.45");
        assert_eq!(to_cents(0.125).to_string(), "0.13");
        assert_eq!(to_cents(23.0).to_string(), "23");
        assert_eq!(to_cents(f64::NAN), Decimal::ZERO);
    }

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
    }
}
