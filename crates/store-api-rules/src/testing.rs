//! Test fixtures for the order validator: an in-memory [`TestCatalog`] implementing [`OrderContext`], and
//! builders for requests, products and blanks.
//!
//! Compiled for this crate's own tests and, for other crates' tests, behind the `testing` feature:
//! `store-api-rules = { version = "…", features = ["testing"] }` in `[dev-dependencies]` (or `store-api`'s
//! own `testing` feature, which re-exports this module as `store_api::validate::testing`). Not for
//! production use: the builders panic on invalid literals.
#![allow(clippy::expect_used)]

use std::num::NonZeroU64;

use store_api_raw::open::{DecorationMethod, ProductStatus};
use store_api_raw::types;

use super::address::check_address;
use super::context::OrderContext;
use super::lookup;
use super::placement::PrintArea;

/// An in-memory store: products, blanks visible to the store, and artwork ids. Lookups scan the lists.
#[derive(Clone, Debug, Default)]
pub struct TestCatalog {
    /// The store's products.
    pub products: Vec<types::Product>,
    /// The blanks visible to the store.
    pub catalog_products: Vec<types::CatalogProduct>,
    /// Ids of the store's artworks.
    pub artwork_ids: Vec<String>,
}

impl TestCatalog {
    /// A small store covering every rule:
    ///
    /// | Product | Status | Variants (id / SKU) |
    /// |---|---|---|
    /// | `prod_tee` | active | `var_tee_s` / `TEE-S`, `var_tee_m` / `TEE-M`, `var_tee_old` / `TEE-OLD` (discontinued) |
    /// | `prod_hidden` | unlisted | `var_hidden` / `HIDDEN` |
    /// | `prod_draft` | draft | `var_draft` / `DRAFT` |
    /// | `prod_archived` | archived | `var_archived` / `ARCHIVED` |
    /// | `prod_gone` | active, discontinued | `var_gone` / `GONE` |
    /// | `prod_future` | `scheduled` (unknown to the SDK) | `var_future` / `FUTURE` |
    ///
    /// | Blank | Methods | Locations (print area, methods there) | Variants |
    /// |---|---|---|---|
    /// | `cp_tee` | direct_to_garment, screen_printing, embroidery | `front` 12 x 16 (direct_to_garment, screen_printing); `back` 12 x 16 (direct_to_garment); `left_chest` 4 x 4 (embroidery, direct_to_garment) | `cv_tee_white_m`, `cv_tee_black_m`, `cv_tee_old` (discontinued) |
    /// | `cp_retired` (discontinued) | direct_to_garment | `front` 10 x 10 (direct_to_garment) | `cv_retired` |
    ///
    /// Artworks: `art_logo`, `art_text`.
    pub fn sample() -> Self {
        use DecorationMethod::{DirectToGarment as Dtg, Embroidery, ScreenPrinting as Screen};

        let mut tee = product(
            "prod_tee",
            ProductStatus::Active,
            &[("var_tee_s", "TEE-S"), ("var_tee_m", "TEE-M")],
        );
        let mut old_tee = product_variant("var_tee_old", "TEE-OLD");
        old_tee.is_discontinued = Some(true);
        tee.variants.push(old_tee);
        let mut gone = product("prod_gone", ProductStatus::Active, &[("var_gone", "GONE")]);
        gone.is_discontinued = Some(true);

        let mut blank_tee = catalog_product(
            "cp_tee",
            vec![
                location("front", &[Dtg, Screen], PrintArea::new(12.0, 16.0)),
                location("back", &[Dtg], PrintArea::new(12.0, 16.0)),
                location("left_chest", &[Embroidery, Dtg], PrintArea::new(4.0, 4.0)),
            ],
            &["cv_tee_white_m", "cv_tee_black_m", "cv_tee_old"],
        );
        if let Some(old) = blank_tee
            .variants
            .iter_mut()
            .find(|variant| variant.id == "cv_tee_old")
        {
            old.is_discontinued = Some(true);
        }
        let mut retired = catalog_product(
            "cp_retired",
            vec![location("front", &[Dtg], PrintArea::new(10.0, 10.0))],
            &["cv_retired"],
        );
        retired.is_discontinued = Some(true);

        Self {
            products: vec![
                tee,
                product(
                    "prod_hidden",
                    ProductStatus::Unlisted,
                    &[("var_hidden", "HIDDEN")],
                ),
                product(
                    "prod_draft",
                    ProductStatus::Draft,
                    &[("var_draft", "DRAFT")],
                ),
                product(
                    "prod_archived",
                    ProductStatus::Archived,
                    &[("var_archived", "ARCHIVED")],
                ),
                gone,
                product(
                    "prod_future",
                    ProductStatus::from("scheduled"),
                    &[("var_future", "FUTURE")],
                ),
            ],
            catalog_products: vec![blank_tee, retired],
            artwork_ids: vec!["art_logo".to_owned(), "art_text".to_owned()],
        }
    }
}

impl OrderContext for TestCatalog {
    fn product_variant(
        &self,
        variant_id: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        lookup::product_variant(&self.products, variant_id)
    }

    fn product_variant_by_sku(
        &self,
        sku: &str,
    ) -> Option<(&types::Product, &types::ProductVariant)> {
        lookup::product_variant_by_sku(&self.products, sku)
    }

    fn catalog_variant(
        &self,
        catalog_variant_id: &str,
    ) -> Option<(&types::CatalogProduct, &types::CatalogVariant)> {
        lookup::catalog_variant(&self.catalog_products, catalog_variant_id)
    }

    fn artwork_exists(&self, artwork_id: &str) -> bool {
        self.artwork_ids.iter().any(|id| id == artwork_id)
    }
}

/// A product with `status` and one variant per `(id, sku)`.
pub fn product(id: &str, status: ProductStatus, variants: &[(&str, &str)]) -> types::Product {
    let mut product = types::Product::new(id.to_owned());
    product.is_discontinued = Some(false);
    product.name = Some(format!("Product {id}"));
    product.status = Some(status);
    product.variants = variants
        .iter()
        .map(|(variant_id, sku)| product_variant(variant_id, sku))
        .collect();
    product
}

/// A product variant that is not discontinued.
pub fn product_variant(id: &str, sku: &str) -> types::ProductVariant {
    let mut variant = types::ProductVariant::new(id.to_owned());
    variant.cost = Some(10.0.into());
    variant.is_discontinued = Some(false);
    variant.name = Some(format!("Variant {id}"));
    variant.sku = Some(sku.to_owned());
    variant
}

/// A blank with `locations` (its decoration methods: every method of its locations, in the order
/// first met) and one variant per id, none discontinued.
pub fn catalog_product(
    id: &str,
    locations: Vec<types::DecorationLocation>,
    variant_ids: &[&str],
) -> types::CatalogProduct {
    let mut blank = types::CatalogProduct::new(id.to_owned());
    for method in locations.iter().flat_map(|l| &l.decoration_methods) {
        if !blank.decoration_methods.contains(method) {
            blank.decoration_methods.push(method.clone());
        }
    }
    blank.decoration_locations = locations;
    blank.is_discontinued = Some(false);
    blank.name = Some(format!("Blank {id}"));
    blank.variants = variant_ids
        .iter()
        .map(|variant_id| {
            let mut variant = types::CatalogVariant::new((*variant_id).to_owned());
            variant.is_discontinued = Some(false);
            variant
        })
        .collect();
    blank
}

/// A decoration location named `name`, of the size of `area`, allowing `methods`.
pub fn location(
    name: &str,
    methods: &[DecorationMethod],
    area: PrintArea,
) -> types::DecorationLocation {
    let mut location = types::DecorationLocation::new();
    location.decoration_location = Some(name.to_owned());
    location.decoration_methods = methods.to_vec();
    location.physical_height = Some(area.height);
    location.physical_width = Some(area.width);
    location
}

/// `quantity` as the request's type; 0 (which the type cannot carry) becomes 1.
fn non_zero(quantity: u64) -> NonZeroU64 {
    NonZeroU64::new(quantity).unwrap_or(NonZeroU64::MIN)
}

/// A line item with nothing set but its quantity; set the fields a test needs.
pub fn bare_item(quantity: u64) -> types::LineItemInput {
    types::LineItemInput::new(non_zero(quantity))
}

/// A standard line item naming its variant by id.
pub fn standard_item(variant_id: &str, quantity: u64) -> types::LineItemInput {
    let mut item = bare_item(quantity);
    item.product_variant_id = Some(variant_id.to_owned());
    item
}

/// A standard line item naming its variant by SKU.
pub fn sku_item(sku: &str, quantity: u64) -> types::LineItemInput {
    let mut item = bare_item(quantity);
    item.sku = Some(sku.to_owned());
    item
}

/// A custom line item of one unit on catalog variant `catalog_variant_id`.
///
/// The decorations are taken as given, unchecked (tests build invalid ones on purpose); code that
/// places orders uses `store_api::CustomItem`.
pub fn custom_item(
    catalog_variant_id: &str,
    decorations: Vec<types::Decoration>,
) -> types::LineItemInput {
    let mut item = bare_item(1);
    item.is_custom = true;
    item.catalog_product_variant_id = Some(catalog_variant_id.to_owned());
    item.decorations = decorations;
    item
}

/// A decoration of `artwork_id` at `location`, printed with `method`; [`DecorationDraft::size`]
/// sizes it.
pub fn decoration<'a>(
    location: &'a str,
    method: DecorationMethod,
    artwork_id: &'a str,
) -> DecorationDraft<'a> {
    DecorationDraft {
        location,
        method,
        artwork_id,
    }
}

/// A [`decoration`] without its size yet.
#[derive(Debug, Clone)]
#[must_use]
pub struct DecorationDraft<'a> {
    location: &'a str,
    method: DecorationMethod,
    artwork_id: &'a str,
}

impl DecorationDraft<'_> {
    /// The decoration, `width` by `height` inches, at the top of the location, horizontally centered.
    pub fn size(self, width: f64, height: f64) -> types::Decoration {
        let DecorationDraft {
            location,
            method,
            artwork_id,
        } = self;
        let mut decoration = types::Decoration::new(types::DecorationRequired {
            artwork_id: artwork_id.to_owned(),
            decoration_location: location.to_owned(),
            decoration_method: method,
            physical_height: height,
            physical_width: width,
        });
        decoration.horizontal_offset_from_center = 0.0;
        decoration.vertical_offset_from_top = 0.0;
        decoration
    }
}

/// A valid US shipping address (Springfield, IL): Ada Lovelace, 1 Main St, 62701, checked by the same
/// address rules as `store_api::ShipTo` and `store_api::Address`.
///
/// # Panics
///
/// Never: the literals are valid (a test of this crate holds them to the address rules).
pub fn shipping_address() -> types::ShippingAddressInput {
    let address = types::AddressInput::new(types::AddressInputRequired {
        city_or_town: "Springfield".parse().expect("a non-empty city"),
        country: "US".parse().expect("a two-character country"),
        state_or_province: "IL".to_owned(),
        street_address: "1 Main St".parse().expect("a non-empty street"),
        zip_or_postal_code: "62701".to_owned(),
    });
    let mut violations = Vec::new();
    check_address(&address, &mut violations);
    assert!(violations.is_empty(), "{violations:?}");
    types::ShippingAddressInput::new(
        address,
        "Ada".to_owned(),
        "Lovelace".parse().expect("a non-empty last name"),
    )
}

/// A shipping address in `country`, state `state`, otherwise valid; neither is checked (tests build
/// invalid ones on purpose).
///
/// # Panics
///
/// If `country` is not two characters long (the request type cannot carry it).
pub fn shipping_address_in(country: &str, state: &str) -> types::ShippingAddressInput {
    let mut shipping = shipping_address();
    shipping.address.country = country.parse().expect("a two-character country");
    shipping.address.state_or_province = state.to_owned();
    shipping
}

/// An order of `line_items` to [`shipping_address`], with external order id `ext-1`.
pub fn order(line_items: Vec<types::LineItemInput>) -> types::CreateOrderRequest {
    let mut order = types::CreateOrderRequest::new(line_items, shipping_address());
    order.external_order_id = Some("ext-1".parse().expect("a non-empty literal"));
    order
}
