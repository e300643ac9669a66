//! [`OrderBuilder`]: a create-order request, item by item.

use store_api_raw::types;

use super::NewOrder;
use super::item::{quantity, sku_line, variant_line};
use super::{BuildError, CustomItem, IdentifiedOrder, ShipTo};
use crate::validate::validate_fields;

/// Builds a create-order request that carries its external order id, for
/// [`Orders::submit`](crate::Orders::submit).
///
/// The common cases are one line each: [`OrderBuilder::sku`] and [`OrderBuilder::variant`] for products of
/// the store, [`OrderBuilder::custom`] for a blank printed at order time. [`OrderBuilder::build`] checks
/// every body rule of the service and names the offending field.
///
/// ```
/// use store_api::{AddressLines, ShipToAddress, OrderBuilder, ShipTo, new_external_order_id};
///
/// # fn run() -> Result<(), store_api::BuildError> {
/// let external_id = new_external_order_id(); // store it with your order first
/// let address = ShipToAddress::new(AddressLines {
///     street_address: "1 Main St",
///     city_or_town: "Austin",
///     state_or_province: "TX",
///     postal_code: "78701",
///     country: "US",
/// })?;
/// let ship_to = ShipTo::new("Ada", "Lovelace", address)?;
/// let order = OrderBuilder::new(&external_id, ship_to)?.sku("AA-TEE-SUN-BLK-M", 2).build()?;
/// # let _ = order;
/// # Ok(())
/// # }
/// # run().unwrap();
/// ```
#[derive(Clone, Debug, PartialEq)]
#[must_use = "an order builder does nothing until `build`"]
pub struct OrderBuilder {
    external_order_id: types::CreateOrderRequestExternalOrderId,
    ship_to: ShipTo,
    items: Vec<Item>,
    ordered_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A line item as asked for; checked when the order is built, where its index is known.
#[derive(Clone, Debug, PartialEq)]
enum Item {
    Sku(String, u64),
    Variant(String, u64),
    Custom(CustomItem),
}

impl OrderBuilder {
    /// An order with external order id `external_order_id` (see
    /// [`new_external_order_id`](crate::new_external_order_id)) shipped to `ship_to`.
    ///
    /// Refuses an empty or over-long id, and one with a comma, which no lookup by external id could find.
    pub fn new(external_order_id: &str, ship_to: ShipTo) -> Result<Self, BuildError> {
        super::check_filterable_external_id(external_order_id)
            .map_err(|e| BuildError::at("externalOrderId", e))?;
        let external_order_id = external_order_id
            .parse()
            .map_err(|e| BuildError::at("externalOrderId", e))?;
        Ok(Self {
            external_order_id,
            ship_to,
            items: Vec::new(),
            ordered_at: None,
        })
    }

    /// Adds `quantity` units of the store's product variant with SKU `sku`.
    pub fn sku(mut self, sku: impl Into<String>, quantity: u64) -> Self {
        self.items.push(Item::Sku(sku.into(), quantity));
        self
    }

    /// Adds `quantity` units of the store's product variant `product_variant_id`.
    pub fn variant(mut self, product_variant_id: impl Into<String>, quantity: u64) -> Self {
        self.items
            .push(Item::Variant(product_variant_id.into(), quantity));
        self
    }

    /// Adds a custom item: a blank printed with designs at order time.
    pub fn custom(mut self, item: CustomItem) -> Self {
        self.items.push(Item::Custom(item));
        self
    }

    /// When the order was placed in your shop (`orderedAt`); unset, the service records the time it
    /// received it.
    pub fn ordered_at(mut self, at: chrono::DateTime<chrono::Utc>) -> Self {
        self.ordered_at = Some(at);
        self
    }

    /// The request, with every body rule of the service checked (at least one item, quantities of at
    /// least 1, designs placed inside their print areas, …). Whether the SKUs, variants, blanks and
    /// artworks exist in the store is checked by [`Orders::submit`](crate::Orders::submit)'s pre-flight.
    pub fn build(self) -> Result<IdentifiedOrder, BuildError> {
        let line_items = self
            .items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                item.to_input()
                    .map_err(|e| e.under(&format!("lineItems.{index}")))
            })
            .collect::<Result<_, _>>()?;
        let mut request = NewOrder::new(line_items, self.ship_to.0);
        request.external_order_id = Some(self.external_order_id);
        request.ordered_at = self.ordered_at;
        let violations = validate_fields(&request);
        if !violations.is_empty() {
            return Err(BuildError::Invalid { violations });
        }
        IdentifiedOrder::try_from(request)
    }
}

impl Item {
    fn to_input(&self) -> Result<types::LineItemInput, BuildError> {
        match self {
            Item::Sku(sku, count) => Ok(sku_line(sku, quantity(*count)?)),
            Item::Variant(id, count) => Ok(variant_line(id, quantity(*count)?)),
            Item::Custom(custom) => custom.to_input(),
        }
    }
}
