//! How each resource looks for humans: list tables and detail views.

use store_api::model::{
    Artwork, CatalogProduct, FulfillmentStatus, Order, Product, ShippingAddress,
};
use store_api_webhooks::Event;

use crate::output::{Table, fields, joined, or_dash, table, time, usd, yes_no};

/// Blanks, one per row.
pub fn catalog_list(items: &[CatalogProduct]) -> Table {
    let mut t = table(&[
        "ID",
        "NAME",
        "TYPE",
        "METHODS",
        "LOCATIONS",
        "VARIANTS",
        "DISCONTINUED",
    ]);
    for p in items {
        t.add_row(vec![
            p.id.clone(),
            or_dash(p.name.as_deref()),
            or_dash(p.product_type.as_deref()),
            p.decoration_methods.len().to_string(),
            joined(
                p.decoration_locations
                    .iter()
                    .filter_map(|l| l.decoration_location.as_deref()),
            ),
            p.variants.len().to_string(),
            yes_no(p.is_discontinued.unwrap_or(false)).to_owned(),
        ]);
    }
    t
}

/// One blank: its fields, then its print locations.
pub fn catalog_detail(p: &CatalogProduct) -> (Table, Table) {
    let discontinued_variants: Vec<&str> = p
        .variants
        .iter()
        .filter(|v| v.is_discontinued.unwrap_or(false))
        .map(|v| v.id.as_str())
        .collect();
    let summary = fields([
        ("id", p.id.clone()),
        ("name", or_dash(p.name.as_deref())),
        (
            "brand / style",
            format!(
                "{} / {}",
                or_dash(p.brand.as_deref()),
                or_dash(p.style.as_deref())
            ),
        ),
        ("product type", or_dash(p.product_type.as_deref())),
        (
            "discontinued",
            yes_no(p.is_discontinued.unwrap_or(false)).to_owned(),
        ),
        ("colors", joined(&p.colors)),
        ("sizes", joined(&p.sizes)),
        ("methods", joined(&p.decoration_methods)),
        (
            "variants",
            format!(
                "{} (e.g. {}); discontinued: {}",
                p.variants.len(),
                or_dash(p.variants.first().map(|v| v.id.as_str())),
                joined(discontinued_variants)
            ),
        ),
    ]);
    let mut locations = table(&["LOCATION", "PRINT AREA (in)", "METHODS"]);
    for l in &p.decoration_locations {
        locations.add_row(vec![
            or_dash(l.decoration_location.as_deref()),
            format!(
                "{} x {}",
                or_dash(l.physical_width),
                or_dash(l.physical_height)
            ),
            joined(&l.decoration_methods),
        ]);
    }
    (summary, locations)
}

/// Products, one per row.
pub fn product_list(items: &[Product]) -> Table {
    let mut t = table(&[
        "ID",
        "NAME",
        "TYPE",
        "STATUS",
        "VARIANTS",
        "FROM (cost USD)",
    ]);
    for p in items {
        t.add_row(vec![
            p.id.clone(),
            or_dash(p.name.as_deref()),
            or_dash(p.product_type.as_deref()),
            or_dash(p.status.as_ref()),
            p.variants.len().to_string(),
            usd(p.variants.iter().filter_map(|v| v.cost).min()),
        ]);
    }
    t
}

/// One product: its fields, then its variants.
pub fn product_detail(p: &Product) -> (Table, Table) {
    let summary = fields([
        ("id", p.id.clone()),
        ("name", or_dash(p.name.as_deref())),
        ("vendor", or_dash(p.vendor.as_deref())),
        ("product type", or_dash(p.product_type.as_deref())),
        ("status", or_dash(p.status.as_ref())),
        (
            "discontinued",
            yes_no(p.is_discontinued.unwrap_or(false)).to_owned(),
        ),
        ("tags", joined(&p.tags)),
        ("updated", time(p.updated_at)),
    ]);
    let mut variants = table(&[
        "VARIANT",
        "SKU",
        "COLOR",
        "SIZE",
        "PRICE",
        "COMPARE AT",
        "COST (USD)",
        "DISCONTINUED",
    ]);
    for v in &p.variants {
        variants.add_row(vec![
            v.id.clone(),
            or_dash(v.sku.as_deref()),
            or_dash(v.color.as_deref()),
            or_dash(v.size.as_deref()),
            usd(v.price),
            usd(v.compare_at_price),
            usd(v.cost),
            yes_no(v.is_discontinued.unwrap_or(false)).to_owned(),
        ]);
    }
    (summary, variants)
}

/// Artworks, one per row.
pub fn artwork_list(items: &[Artwork]) -> Table {
    let mut t = table(&["ID", "NAME", "CREATED", "STORED COPY"]);
    for a in items {
        t.add_row(vec![
            a.id.clone(),
            or_dash(a.name.as_deref()),
            time(a.created_at),
            or_dash(a.image.as_ref().and_then(|i| i.url.as_deref())),
        ]);
    }
    t
}

/// One artwork.
pub fn artwork_detail(a: &Artwork) -> Table {
    fields([
        ("id", a.id.clone()),
        ("name", or_dash(a.name.as_deref())),
        ("image id", or_dash(a.image.as_ref().map(|i| i.id.as_str()))),
        (
            "stored copy",
            or_dash(a.image.as_ref().and_then(|i| i.url.as_deref())),
        ),
        ("created", time(a.created_at)),
    ])
}

/// Orders, one per row.
pub fn order_list(items: &[Order]) -> Table {
    let mut t = table(&[
        "ID",
        "NAME",
        "EXTERNAL ID",
        "STATUS",
        "FULFILLMENT",
        "PAYMENT",
        "QTY",
        "TOTAL (USD)",
        "CREATED",
    ]);
    for o in items {
        t.add_row(vec![
            o.id.clone(),
            or_dash(o.name.as_deref()),
            or_dash(o.external_order_id.as_deref()),
            or_dash(o.status.as_ref()),
            or_dash(o.fulfillment_status.as_ref()),
            or_dash(o.payment_status.as_ref()),
            or_dash(o.total_quantity),
            usd(o.total_cost),
            time(o.created_at),
        ]);
    }
    t
}

/// One order: its fields, then its line items.
pub fn order_detail(o: &Order) -> (Table, Table) {
    let tracking = o.tracking_info.as_ref().map(|t| {
        format!(
            "{} {} {}",
            or_dash(t.carrier.as_deref()),
            or_dash(t.tracking_number.as_deref()),
            or_dash(t.tracking_url.as_deref())
        )
    });
    let summary = fields([
        ("id", o.id.clone()),
        ("name", or_dash(o.name.as_deref())),
        ("external id", or_dash(o.external_order_id.as_deref())),
        ("status", or_dash(o.status.as_ref())),
        ("fulfillment", ladder_text(o.fulfillment_status.as_ref())),
        ("payment", or_dash(o.payment_status.as_ref())),
        (
            "cost (USD)",
            format!(
                "subtotal {} + shipping {} = total {}",
                usd(o.subtotal_cost),
                usd(o.shipping_cost),
                usd(o.total_cost)
            ),
        ),
        ("ship to", address(o.shipping_address.as_ref())),
        ("tracking", or_dash(tracking)),
        ("ordered", time(o.ordered_at)),
        ("fulfilled", time(o.fulfilled_at)),
        ("canceled", time(o.canceled_at)),
    ]);
    let mut items = table(&[
        "#",
        "ITEM",
        "SKU / BLANK VARIANT",
        "QTY",
        "UNIT (USD)",
        "TOTAL (USD)",
        "DECORATIONS",
    ]);
    for (index, item) in o.line_items.iter().enumerate() {
        let decorations = joined(item.decorations.iter().map(|d| {
            format!(
                "{} {} {}x{} in",
                d.decoration_location, d.decoration_method, d.physical_width, d.physical_height
            )
        }));
        items.add_row(vec![
            (index + 1).to_string(),
            or_dash(item.name.as_deref()),
            if item.is_custom {
                format!(
                    "custom {}",
                    or_dash(item.catalog_product_variant_id.as_deref())
                )
            } else {
                or_dash(item.sku.as_deref().or(item.product_variant_id.as_deref()))
            },
            or_dash(item.quantity),
            usd(item.unit_cost),
            usd(item.total_cost),
            decorations,
        ]);
    }
    (summary, items)
}

/// `3/5 sent_to_production`: the stage and its rung on the ladder.
pub fn ladder_text(stage: Option<&FulfillmentStatus>) -> String {
    match stage {
        None => "-".to_owned(),
        Some(stage) => match stage.rung() {
            Some(rung) => format!("{}/{} {stage}", rung + 1, FulfillmentStatus::LADDER.len()),
            None => stage.to_string(),
        },
    }
}

fn address(shipping: Option<&ShippingAddress>) -> String {
    let Some(s) = shipping else {
        return "-".to_owned();
    };
    let name = [s.first_name.as_deref(), s.last_name.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let place = s.address.as_ref().map(|a| {
        [
            a.street_address.as_deref(),
            a.city_or_town.as_deref(),
            a.state_or_province.as_deref(),
            a.zip_or_postal_code.as_deref(),
            a.country.as_deref(),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
    });
    format!("{name}, {}", or_dash(place))
}

/// A verified webhook event.
pub fn event_detail(event: &Event) -> Table {
    fields([
        ("event id", event.id.clone()),
        ("store", event.store_id.clone()),
        ("topic", event.topic.to_string()),
        ("resource id", event.data.id.clone()),
        ("test", yes_no(event.is_test).to_owned()),
        ("created", time(event.created_at)),
    ])
}
