//! Creating an order: the validator decides and resolves, this records what it resolved as an `Order`.

use store_api_raw::open::{FulfillmentStatus, OrderStatus, PaymentStatus, WebhookTopic};
use store_api_raw::types;
use store_api_rules::{self as validate, ItemSource, ResolvedLineItem, ResolvedOrder};

use super::pricing::{Totals, dollars, unit_cents};
use super::view::StoreView;
use crate::error::{ApiError, INVALID_API_KEY};
use crate::events::PendingEvent;
use crate::state::{Record, State, StoreState, WriteTurn};

/// Creates an order from a request body, in the service's order of checks: body validation (message
/// array), then the external id (409, before the ordering rules, so that a retry of an order that was
/// created answers 409 even if a product changed since), then the ordering rules (first one, as a string).
pub(crate) fn create(
    turn: WriteTurn<'_>,
    store_id: &str,
    request: types::CreateOrderRequest,
    keeping: AddressKeeping,
) -> Result<(types::Order, PendingEvent), ApiError> {
    // Checked, priced and written as JSON under the read lock: no other writer can change the store
    // during this turn, so what was checked still holds when it is stored.
    let mut record = {
        let state = turn.read();
        let store = state
            .stores
            .get(store_id)
            .ok_or(ApiError::Unauthorized(INVALID_API_KEY))?;
        let view = StoreView {
            state: &state,
            store,
        };
        let checked = validate::validate_order(&request, &view);
        if let Err(violations) = &checked
            && violations.iter().any(|v| v.is_field_validation())
        {
            return Err(into_api_error(violations));
        }
        if let Some(external) = request.external_order_id.as_deref() {
            reused(store, external)?;
        }
        let resolved = checked.map_err(|violations| into_api_error(&violations))?;
        Record::new(0, build_order(&state, store, &resolved, keeping))
    };
    let mut state = turn.write();
    record.seq = state.next_sequence();
    let store = state
        .stores
        .get_mut(store_id)
        .ok_or(ApiError::Unauthorized(INVALID_API_KEY))?;
    store.order_number += 1;
    let order = record.value.clone();
    store.orders.insert(record);
    let event = PendingEvent::new(store_id, WebhookTopic::OrdersCreate, &order.id);
    Ok((order, event))
}

/// The 409 of an `externalOrderId` the store already has.
fn reused(store: &StoreState, external: &str) -> Result<(), ApiError> {
    match store.order_by_external_id(external) {
        Some(_) => Err(ApiError::Conflict(format!(
            "An order already exists with this external order ID: {external}"
        ))),
        None => Ok(()),
    }
}

/// [`Deviation::ConflictBeforeValidation`](crate::Deviation::ConflictBeforeValidation): the 409 of a
/// reused `externalOrderId`, read from the raw body (any JSON object with a string `externalOrderId`)
/// before the body is validated. A body that is not such an object is left to the validation.
pub(crate) fn conflict_before_validation(
    state: &State,
    store_id: &str,
    body: &[u8],
) -> Result<(), ApiError> {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Ok(());
    };
    match (
        value["externalOrderId"].as_str(),
        state.stores.get(store_id),
    ) {
        (Some(external), Some(store)) => reused(store, external),
        _ => Ok(()),
    }
}

/// [`Deviation::EmptyIdsRefused`](crate::Deviation::EmptyIdsRefused): an empty `productVariantId`,
/// `sku` or `catalogProductVariantId` is a validation failure (message array, every one at once),
/// where the spec counts it as absent. Applied here, after decoding and before the shared order rules,
/// so that the rules (and the client's pre-flight check, which runs them) stay as the spec says.
pub(crate) fn refuse_empty_ids(request: &types::CreateOrderRequest) -> Result<(), ApiError> {
    let mut empty = Vec::new();
    for (index, item) in request.line_items.iter().enumerate() {
        for (field, value) in [
            ("productVariantId", &item.product_variant_id),
            ("sku", &item.sku),
            ("catalogProductVariantId", &item.catalog_product_variant_id),
        ] {
            if value.as_deref() == Some("") {
                let violation = validate::Violation::new(
                    validate::ViolationKind::EmptyString,
                    format!("lineItems.{index}.{field}"),
                    "",
                );
                empty.push(violation.message());
            }
        }
    }
    if empty.is_empty() {
        Ok(())
    } else {
        Err(ApiError::Invalid(empty))
    }
}

pub(super) fn into_api_error(violations: &[validate::Violation]) -> ApiError {
    match validate::service_message(violations) {
        Some(types::ErrorMessage::Array(list)) => ApiError::Invalid(list),
        Some(types::ErrorMessage::String(text)) => ApiError::BadRequest(text),
        None => ApiError::BadRequest("The order is not valid".into()),
    }
}

/// The new order, numbered after the store's last one, as the service answers it.
fn build_order(
    state: &State,
    store: &StoreState,
    resolved: &ResolvedOrder<'_>,
    keeping: AddressKeeping,
) -> types::Order {
    let request = resolved.request;
    let (line_items, totals) = priced_line_items(state, resolved);
    let created = state.clock.now();
    // Not tracked, fulfilled or canceled yet; and any field the spec adds starts empty.
    let mut order = types::Order::new(state.clock.new_id("ord"));
    order.name = Some(format!("#{}", store.order_number + 1));
    order.external_order_id = request.external_order_id.as_ref().map(|e| e.to_string());
    order.status = Some(OrderStatus::Pending);
    order.fulfillment_status = Some(FulfillmentStatus::Pending);
    order.payment_status = Some(PaymentStatus::Due);
    order.is_test = false;
    order.total_quantity = Some(totals.quantity);
    order.subtotal_cost = Some(totals.subtotal);
    order.shipping_cost = Some(totals.shipping);
    order.total_cost = Some(totals.total);
    order.line_items = line_items;
    let mut address = shipping_address(&request.shipping_address);
    if keeping == AddressKeeping::Normalised {
        normalise(&mut address);
    }
    order.shipping_address = Some(address);
    order.ordered_at = Some(request.ordered_at.unwrap_or(created));
    order.created_at = Some(created);
    order.updated_at = Some(created);
    order
}

/// The order's line items from what the validator resolved, priced, with the order's totals.
pub(super) fn priced_line_items(
    state: &State,
    resolved: &ResolvedOrder<'_>,
) -> (Vec<types::OrderLineItem>, Totals) {
    let line_items: Vec<types::OrderLineItem> = resolved
        .line_items()
        .enumerate()
        .map(|(index, item)| line_item(state, index, &item))
        .collect();
    let totals = Totals::of(&state.pricing, &line_items);
    (line_items, totals)
}

/// One line item of the new order, at 0-based `index`, from what the validator resolved.
fn line_item(state: &State, index: usize, item: &ResolvedLineItem<'_>) -> types::OrderLineItem {
    let input = item.input;
    let quantity = i64::try_from(input.quantity.get()).unwrap_or(i64::MAX);
    let unit = unit_cents(state, item);
    // The rest is filled in below by kind; any field the spec adds starts empty.
    let mut line = types::OrderLineItem::new(state.clock.new_id("li"));
    line.quantity = Some(quantity);
    line.is_custom = input.is_custom;
    line.unit_cost = Some(dollars(unit));
    line.total_cost = Some(dollars(unit.saturating_mul(quantity)));
    line.position = Some(i64::try_from(index + 1).unwrap_or(i64::MAX));
    let (owner, fallback, variant_name, variant_id, color, size) = match item.source {
        ItemSource::Product { product, variant } => {
            line.product_id = Some(product.id.clone());
            line.product_variant_id = Some(variant.id.clone());
            line.sku = variant.sku.clone();
            // The product's pictures of this variant's color.
            line.images = product
                .images
                .iter()
                .filter(|image| image.color.is_some() && image.color == variant.color)
                .map(|i| line_image(&i.id, &i.color, i.position, &i.image))
                .collect();
            let (name, id) = (&variant.name, &variant.id);
            (
                &product.name,
                "Product",
                name,
                id,
                &variant.color,
                &variant.size,
            )
        }
        ItemSource::Blank { blank, variant } => {
            line.catalog_product_id = Some(blank.id.clone());
            line.catalog_product_variant_id = Some(variant.id.clone());
            line.decorations = input.decorations.clone();
            // The blank's first picture, labelled with the ordered color.
            line.images = blank
                .images
                .iter()
                .take(1)
                .map(|i| line_image(&i.id, &variant.color, i.position, &i.image))
                .collect();
            let (name, id) = (&variant.name, &variant.id);
            (
                &blank.name,
                "Custom item",
                name,
                id,
                &variant.color,
                &variant.size,
            )
        }
    };
    line.name = Some(format!(
        "{} - {}",
        owner.as_deref().unwrap_or(fallback),
        variant_name.as_deref().unwrap_or(variant_id)
    ));
    line.color = color.clone();
    line.size = size.clone();
    line
}

fn line_image(
    id: &Option<String>,
    color: &Option<String>,
    position: Option<i64>,
    image: &Option<types::ImageRef>,
) -> types::LineItemImage {
    let mut line_image = types::LineItemImage::new();
    line_image.id = id.clone();
    line_image.color = color.clone();
    line_image.position = position;
    line_image.image = image.clone();
    line_image
}

/// How an order's shipping address is kept: as sent (the spec's `address-as-sent` assumption), or
/// normalised ([`Deviation::NormalisesAddresses`](crate::deviation::Deviation::NormalisesAddresses)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddressKeeping {
    AsSent,
    Normalised,
}

impl AddressKeeping {
    pub fn of(deviations: crate::deviation::Deviations) -> AddressKeeping {
        if deviations.has(crate::deviation::Deviation::NormalisesAddresses) {
            AddressKeeping::Normalised
        } else {
            AddressKeeping::AsSent
        }
    }
}

/// What a service that normalises addresses keeps: text trimmed with whitespace runs as one space, a
/// US state's name as its USPS code, a phone's digits (and its leading `+`), empty fields omitted.
fn normalise(shipping: &mut types::ShippingAddress) {
    let text = |value: &mut Option<String>| {
        *value = value
            .take()
            .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|v| !v.is_empty());
    };
    text(&mut shipping.first_name);
    text(&mut shipping.last_name);
    text(&mut shipping.email);
    shipping.phone = shipping.phone.take().and_then(|phone| {
        let digits: String = phone.chars().filter(char::is_ascii_digit).collect();
        let plus = if phone.trim_start().starts_with('+') {
            "+"
        } else {
            ""
        };
        (!digits.is_empty()).then(|| format!("{plus}{digits}"))
    });
    if let Some(address) = &mut shipping.address {
        for field in [
            &mut address.street_address,
            &mut address.apartment_or_suite,
            &mut address.city_or_town,
            &mut address.state_or_province,
            &mut address.zip_or_postal_code,
            &mut address.country,
        ] {
            text(field);
        }
        if address.country.as_deref() == Some("US")
            && let Some(code) = address
                .state_or_province
                .as_deref()
                .and_then(store_api_rules::countries::us_state_code)
        {
            address.state_or_province = Some(code.to_owned());
        }
    }
}

fn shipping_address(input: &types::ShippingAddressInput) -> types::ShippingAddress {
    let address = &input.address;
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let mut out = types::Address::new();
    out.street_address = non_empty(&address.street_address);
    out.apartment_or_suite = address.apartment_or_suite.clone();
    out.city_or_town = non_empty(&address.city_or_town);
    out.state_or_province = non_empty(&address.state_or_province);
    out.zip_or_postal_code = non_empty(&address.zip_or_postal_code);
    out.country = non_empty(&address.country);
    let mut shipping = types::ShippingAddress::new();
    shipping.first_name = non_empty(&input.first_name);
    shipping.last_name = non_empty(&input.last_name);
    shipping.email = input.email.clone();
    shipping.phone = input.phone.clone();
    shipping.address = Some(out);
    shipping
}
