//! The order validator against the service's tables: one case per row of the order-creation and custom
//! line item 400 tables and per field rule, plus ordering, merging and a no-panic property.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use store_api_raw::open::DecorationMethod::{
    self, DirectToGarment as Dtg, Embroidery, Engraving, ScreenPrinting as Screen,
};
use store_api_raw::open::ProductStatus;
use store_api_raw::types;

use super::testing::{
    TestCatalog, bare_item, custom_item, decoration, order, product, shipping_address_in, sku_item,
    standard_item,
};
use super::*;

/// One row: an order that breaks exactly one rule, and what the validator must say about it.
struct Case {
    name: &'static str,
    order: types::CreateOrderRequest,
    kind: ViolationKind,
    path: &'static str,
    message: &'static str,
}

/// What `validate_order` reports, empty when the order resolves.
fn violations_of(order: &types::CreateOrderRequest, ctx: &TestCatalog) -> Vec<Violation> {
    validate_order(order, ctx).err().unwrap_or_default()
}

fn check(case: Case, ctx: &TestCatalog) {
    let Case {
        name,
        order,
        kind,
        path,
        message,
    } = case;
    let violations = violations_of(&order, ctx);
    assert_eq!(violations.len(), 1, "{name}: {violations:#?}");
    let violation = &violations[0];
    assert_eq!(violation.kind, kind, "{name}");
    assert_eq!(violation.path, path, "{name}");
    assert_eq!(violation.message(), message, "{name}");
    assert_eq!(
        violation.is_field_validation(),
        kind.is_field_validation(),
        "{name}"
    );
    if kind.is_field_validation() {
        assert_eq!(message, format!("{path} {}", kind.prefix()), "{name}");
        assert!(validate_fields(&order).contains(violation), "{name}");
    } else {
        assert!(message.starts_with(kind.prefix()), "{name}");
        assert!(validate_fields(&order).is_empty(), "{name}");
    }
}

fn tee_front(method: DecorationMethod, width: f64, height: f64) -> types::Decoration {
    decoration("front", method, "art_logo").size(width, height)
}

fn custom(decorations: Vec<types::Decoration>) -> types::LineItemInput {
    custom_item("cv_tee_white_m", decorations)
}

fn with<T>(mut value: T, change: impl FnOnce(&mut T)) -> T {
    change(&mut value);
    value
}

/// A valid standard item followed by `item`, so paths show the index is the offending item's.
fn after_valid(item: types::LineItemInput) -> types::CreateOrderRequest {
    order(vec![standard_item("var_tee_m", 1), item])
}

fn order_creation_cases() -> Vec<Case> {
    vec![
        Case {
            name: "standard item with neither id nor sku",
            order: after_valid(bare_item(1)),
            kind: ViolationKind::MissingVariantIdOrSku,
            path: "lineItems.1",
            message: "Each line item must have a product variant ID or a SKU",
        },
        Case {
            name: "empty id and sku count as absent",
            order: after_valid(with(bare_item(1), |item| {
                item.product_variant_id = Some(String::new());
                item.sku = Some(String::new());
            })),
            kind: ViolationKind::MissingVariantIdOrSku,
            path: "lineItems.1",
            message: "Each line item must have a product variant ID or a SKU",
        },
        Case {
            name: "unknown variant id",
            order: after_valid(standard_item("var_123", 1)),
            kind: ViolationKind::ProductNotFound,
            path: "lineItems.1.productVariantId",
            message: "No product found in the store for a line item: productVariantId var_123",
        },
        Case {
            name: "unknown sku",
            order: after_valid(sku_item("NOPE", 1)),
            kind: ViolationKind::ProductNotFound,
            path: "lineItems.1.sku",
            message: "No product found in the store for a line item: sku NOPE",
        },
        Case {
            name: "known id with unknown sku",
            order: after_valid(with(standard_item("var_tee_s", 1), |item| {
                item.sku = Some("NOPE".into())
            })),
            kind: ViolationKind::ProductNotFound,
            path: "lineItems.1.sku",
            message: "No product found in the store for a line item: sku NOPE",
        },
        Case {
            name: "id and sku of different variants",
            order: after_valid(with(standard_item("var_tee_s", 1), |item| {
                item.sku = Some("HIDDEN".into())
            })),
            kind: ViolationKind::VariantSkuMismatch,
            path: "lineItems.1.sku",
            message: "Product variant and SKU do not match for a line item: productVariantId var_tee_s, sku HIDDEN",
        },
        Case {
            name: "same variant by id then by sku",
            order: order(vec![standard_item("var_tee_s", 1), sku_item("TEE-S", 2)]),
            kind: ViolationKind::DuplicateVariant,
            path: "lineItems.1",
            message: "The same product variant appears in more than one line item: productVariantId var_tee_s \
                      (lineItems.0 and lineItems.1)",
        },
        Case {
            name: "draft product",
            order: after_valid(standard_item("var_draft", 1)),
            kind: ViolationKind::ProductNotOrderable,
            path: "lineItems.1.productVariantId",
            message: "Products that are not active or unlisted cannot be ordered: productVariantId var_draft \
                      (product prod_draft is draft)",
        },
        Case {
            name: "archived product by sku",
            order: after_valid(sku_item("ARCHIVED", 1)),
            kind: ViolationKind::ProductNotOrderable,
            path: "lineItems.1.sku",
            message: "Products that are not active or unlisted cannot be ordered: productVariantId var_archived \
                      (product prod_archived is archived)",
        },
        Case {
            name: "status unknown to the SDK",
            order: after_valid(standard_item("var_future", 1)),
            kind: ViolationKind::ProductNotOrderable,
            path: "lineItems.1.productVariantId",
            message: "Products that are not active or unlisted cannot be ordered: productVariantId var_future \
                      (product prod_future is scheduled)",
        },
        Case {
            name: "discontinued variant",
            order: after_valid(standard_item("var_tee_old", 1)),
            kind: ViolationKind::VariantUnavailable,
            path: "lineItems.1.productVariantId",
            message: "Discontinued or out of stock product variants cannot be ordered: productVariantId var_tee_old \
                      (the variant is discontinued)",
        },
        Case {
            name: "discontinued product",
            order: after_valid(sku_item("GONE", 1)),
            kind: ViolationKind::VariantUnavailable,
            path: "lineItems.1.sku",
            message: "Discontinued or out of stock product variants cannot be ordered: productVariantId var_gone \
                      (product prod_gone is discontinued)",
        },
    ]
}

fn custom_item_cases() -> Vec<Case> {
    let valid_decoration = || tee_front(Dtg, 10.0, 10.0);
    vec![
        Case {
            name: "custom item without a blank",
            order: after_valid(with(custom(vec![valid_decoration()]), |item| {
                item.catalog_product_variant_id = None;
            })),
            kind: ViolationKind::CustomMissingCatalogVariant,
            path: "lineItems.1.catalogProductVariantId",
            message: "A custom line item must have a catalog product variant ID",
        },
        Case {
            name: "custom item without decorations",
            order: after_valid(custom(Vec::new())),
            kind: ViolationKind::CustomMissingDecorations,
            path: "lineItems.1.decorations",
            message: "A custom line item must have at least one decoration",
        },
        Case {
            name: "custom item with a product variant id",
            order: after_valid(with(custom(vec![valid_decoration()]), |item| {
                item.product_variant_id = Some("var_tee_s".into());
            })),
            kind: ViolationKind::CustomWithProductVariantId,
            path: "lineItems.1.productVariantId",
            message: "A custom line item cannot have a product variant ID",
        },
        Case {
            name: "standard item with a catalog variant id",
            order: after_valid(with(standard_item("var_tee_s", 1), |item| {
                item.catalog_product_variant_id = Some("cv_tee_white_m".into());
            })),
            kind: ViolationKind::CustomFieldsOnStandardItem,
            path: "lineItems.1.catalogProductVariantId",
            message: "Only a custom line item can have a catalog product variant ID or decorations",
        },
        Case {
            name: "standard item with decorations",
            order: after_valid(with(standard_item("var_tee_s", 1), |item| {
                item.decorations = vec![valid_decoration()];
            })),
            kind: ViolationKind::CustomFieldsOnStandardItem,
            path: "lineItems.1.decorations",
            message: "Only a custom line item can have a catalog product variant ID or decorations",
        },
        Case {
            name: "mixed methods",
            order: after_valid(custom(vec![
                valid_decoration(),
                decoration("back", Dtg, "art_logo").size(4.0, 4.0),
                decoration("left_chest", Embroidery, "art_logo").size(4.0, 4.0),
            ])),
            kind: ViolationKind::MixedDecorationMethods,
            path: "lineItems.1.decorations.2.decorationMethod",
            message: "All decorations of a line item must use the same decoration method",
        },
        Case {
            name: "location repeated",
            order: after_valid(custom(vec![
                valid_decoration(),
                decoration("back", Dtg, "art_logo").size(4.0, 4.0),
                decoration("front", Dtg, "art_text").size(2.0, 2.0),
            ])),
            kind: ViolationKind::DuplicateDecorationLocation,
            path: "lineItems.1.decorations.2.decorationLocation",
            message: "Decoration locations must be unique within a line item",
        },
        Case {
            name: "unknown catalog variant",
            order: after_valid(custom_item("cv_nope", vec![valid_decoration()])),
            kind: ViolationKind::CatalogVariantNotFound,
            path: "lineItems.1.catalogProductVariantId",
            message: "No catalog product variant found for a line item: catalogProductVariantId cv_nope",
        },
        Case {
            name: "a product variant id is not a catalog variant id",
            order: after_valid(custom_item("var_tee_s", vec![valid_decoration()])),
            kind: ViolationKind::CatalogVariantNotFound,
            path: "lineItems.1.catalogProductVariantId",
            message: "No catalog product variant found for a line item: catalogProductVariantId var_tee_s",
        },
        Case {
            name: "discontinued catalog variant",
            order: after_valid(custom_item("cv_tee_old", vec![valid_decoration()])),
            kind: ViolationKind::CatalogVariantUnavailable,
            path: "lineItems.1.catalogProductVariantId",
            message: "Discontinued or out of stock product variants cannot be ordered: catalogProductVariantId \
                      cv_tee_old (the catalog variant is discontinued)",
        },
        Case {
            name: "discontinued blank",
            order: after_valid(custom_item(
                "cv_retired",
                vec![decoration("front", Dtg, "art_logo").size(5.0, 5.0)],
            )),
            kind: ViolationKind::CatalogVariantUnavailable,
            path: "lineItems.1.catalogProductVariantId",
            message: "Discontinued or out of stock product variants cannot be ordered: catalogProductVariantId \
                      cv_retired (catalog product cp_retired is discontinued)",
        },
        Case {
            name: "artworks of another store",
            order: after_valid(custom(vec![
                valid_decoration(),
                decoration("back", Dtg, "art_other").size(4.0, 4.0),
                decoration("left_chest", Dtg, "art_gone").size(4.0, 4.0),
            ])),
            kind: ViolationKind::ArtworksNotFound,
            path: "lineItems.1.decorations.1.artworkId",
            message: "Artworks not found in the store: art_other, art_gone",
        },
        Case {
            name: "method the blank lacks",
            order: after_valid(custom(vec![tee_front(Engraving, 4.0, 4.0)])),
            kind: ViolationKind::MethodNotAvailableForProduct,
            path: "lineItems.1.decorations.0.decorationMethod",
            message: "The print method is not available for the catalog product: decorationMethod engraving, \
                      catalog product cp_tee",
        },
        Case {
            name: "method unknown to the SDK",
            order: after_valid(custom(vec![tee_front(
                DecorationMethod::from("laser_etch"),
                4.0,
                4.0,
            )])),
            kind: ViolationKind::MethodNotAvailableForProduct,
            path: "lineItems.1.decorations.0.decorationMethod",
            message: "The print method is not available for the catalog product: decorationMethod laser_etch, \
                      catalog product cp_tee",
        },
        Case {
            name: "location the blank lacks",
            order: after_valid(custom(vec![
                decoration("cap_front", Dtg, "art_logo").size(4.0, 4.0),
            ])),
            kind: ViolationKind::LocationNotAvailableForProduct,
            path: "lineItems.1.decorations.0.decorationLocation",
            message: "The print location is not available for the catalog product: decorationLocation cap_front, \
                      catalog product cp_tee",
        },
        Case {
            name: "method on the blank but not at the location",
            order: after_valid(custom(vec![tee_front(Embroidery, 4.0, 4.0)])),
            kind: ViolationKind::MethodNotAvailableForLocation,
            path: "lineItems.1.decorations.0.decorationMethod",
            message: "The print method is not available for the print location: decorationMethod embroidery, \
                      decorationLocation front",
        },
        Case {
            name: "design wider than the area",
            order: after_valid(custom(vec![tee_front(Screen, 12.5, 10.0)])),
            kind: ViolationKind::DesignLargerThanPrintArea,
            path: "lineItems.1.decorations.0.physicalWidth",
            message: "The design is larger than the print area for the print location: decorationLocation front, \
                      physicalWidth 12.5 exceeds the print area width 12",
        },
        Case {
            name: "design taller than the area",
            order: after_valid(custom(vec![
                decoration("left_chest", Embroidery, "art_logo").size(3.0, 4.5),
            ])),
            kind: ViolationKind::DesignLargerThanPrintArea,
            path: "lineItems.1.decorations.0.physicalHeight",
            message: "The design is larger than the print area for the print location: decorationLocation \
                      left_chest, physicalHeight 4.5 exceeds the print area height 4",
        },
        Case {
            name: "design past the bottom edge",
            order: after_valid(custom(vec![with(tee_front(Dtg, 10.0, 10.0), |d| {
                d.vertical_offset_from_top = 6.5;
            })])),
            kind: ViolationKind::DesignOutsidePrintArea,
            path: "lineItems.1.decorations.0.verticalOffsetFromTop",
            message: "The design is placed outside the print area for the print location: decorationLocation \
                      front, verticalOffsetFromTop 6.5 + physicalHeight 10 exceeds the print area height 16",
        },
        Case {
            name: "design past a side edge (negative offset)",
            order: after_valid(custom(vec![with(tee_front(Dtg, 10.0, 10.0), |d| {
                d.horizontal_offset_from_center = -1.5;
            })])),
            kind: ViolationKind::DesignOutsidePrintArea,
            path: "lineItems.1.decorations.0.horizontalOffsetFromCenter",
            message: "The design is placed outside the print area for the print location: decorationLocation \
                      front, physicalWidth/2 5 + |horizontalOffsetFromCenter| 1.5 exceeds half the print area \
                      width 6",
        },
    ]
}

fn field_cases() -> Vec<Case> {
    let decorated = |change: fn(&mut types::Decoration)| {
        after_valid(custom(vec![
            decoration("back", Dtg, "art_logo").size(4.0, 4.0),
            with(tee_front(Dtg, 10.0, 10.0), change),
        ]))
    };
    vec![
        Case {
            name: "no line items",
            order: order(Vec::new()),
            kind: ViolationKind::EmptyLineItems,
            path: "lineItems",
            message: "lineItems must contain at least 1 elements",
        },
        Case {
            name: "lower-case country",
            order: with(order(vec![standard_item("var_tee_s", 1)]), |o| {
                o.shipping_address = shipping_address_in("us", "IL");
            }),
            kind: ViolationKind::InvalidCountry,
            path: "shippingAddress.address.country",
            message: "shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code",
        },
        Case {
            name: "reserved country code",
            order: with(order(vec![standard_item("var_tee_s", 1)]), |o| {
                o.shipping_address = shipping_address_in("UK", "London");
            }),
            kind: ViolationKind::InvalidCountry,
            path: "shippingAddress.address.country",
            message: "shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code",
        },
        Case {
            name: "US territory as a state",
            order: with(order(vec![standard_item("var_tee_s", 1)]), |o| {
                o.shipping_address = shipping_address_in("US", "PR");
            }),
            kind: ViolationKind::UnknownUsState,
            path: "shippingAddress.address.stateOrProvince",
            message: "shippingAddress.address.stateOrProvince must be an existing US state",
        },
        Case {
            name: "empty US state",
            order: with(order(vec![standard_item("var_tee_s", 1)]), |o| {
                o.shipping_address = shipping_address_in("US", "");
            }),
            kind: ViolationKind::UnknownUsState,
            path: "shippingAddress.address.stateOrProvince",
            message: "shippingAddress.address.stateOrProvince must be an existing US state",
        },
        Case {
            name: "zero width",
            order: decorated(|d| d.physical_width = 0.0),
            kind: ViolationKind::NonPositiveSize,
            path: "lineItems.1.decorations.1.physicalWidth",
            message: "lineItems.1.decorations.1.physicalWidth must be a positive number",
        },
        Case {
            name: "negative height",
            order: decorated(|d| d.physical_height = -2.0),
            kind: ViolationKind::NonPositiveSize,
            path: "lineItems.1.decorations.1.physicalHeight",
            message: "lineItems.1.decorations.1.physicalHeight must be a positive number",
        },
        Case {
            name: "negative vertical offset",
            order: decorated(|d| d.vertical_offset_from_top = -0.5),
            kind: ViolationKind::NegativeOffset,
            path: "lineItems.1.decorations.1.verticalOffsetFromTop",
            message: "lineItems.1.decorations.1.verticalOffsetFromTop must not be less than 0",
        },
        Case {
            name: "NaN horizontal offset",
            order: decorated(|d| d.horizontal_offset_from_center = f64::NAN),
            kind: ViolationKind::NotFiniteNumber,
            path: "lineItems.1.decorations.1.horizontalOffsetFromCenter",
            message: "lineItems.1.decorations.1.horizontalOffsetFromCenter must be a finite number",
        },
        Case {
            name: "infinite width",
            order: decorated(|d| d.physical_width = f64::INFINITY),
            kind: ViolationKind::NotFiniteNumber,
            path: "lineItems.1.decorations.1.physicalWidth",
            message: "lineItems.1.decorations.1.physicalWidth must be a finite number",
        },
    ]
}

#[test]
fn every_row_of_the_order_creation_table() {
    let ctx = TestCatalog::sample();
    for case in order_creation_cases() {
        check(case, &ctx);
    }
}

#[test]
fn every_row_of_the_custom_line_item_table() {
    let ctx = TestCatalog::sample();
    for case in custom_item_cases() {
        check(case, &ctx);
    }
}

#[test]
fn every_field_rule() {
    let ctx = TestCatalog::sample();
    for case in field_cases() {
        check(case, &ctx);
    }
}

#[test]
fn the_tables_cover_every_kind_validate_order_can_produce() {
    let covered: Vec<ViolationKind> = order_creation_cases()
        .into_iter()
        .chain(custom_item_cases())
        .chain(field_cases())
        .map(|case| case.kind)
        .collect();
    // Unreachable through the typed request (the generated types refuse them when built or decoded) or
    // outside the validator's knowledge (past orders); the emulator reports them with `Violation::new`.
    let not_producible = [
        ViolationKind::DuplicateExternalOrderId,
        ViolationKind::MissingField,
        ViolationKind::EmptyString,
        ViolationKind::QuantityBelowOne,
    ];
    for kind in ViolationKind::ALL {
        assert_eq!(
            covered.contains(kind),
            !not_producible.contains(kind),
            "{kind:?}"
        );
    }
}

#[test]
fn messages_of_kinds_reported_by_the_emulator() {
    let cases = [
        (
            Violation::new(
                ViolationKind::DuplicateExternalOrderId,
                "externalOrderId",
                "",
            ),
            "An order already exists with this external order ID",
        ),
        (
            Violation::new(ViolationKind::QuantityBelowOne, "lineItems.0.quantity", "0"),
            "lineItems.0.quantity must not be less than 1",
        ),
        (
            Violation::new(ViolationKind::EmptyString, "shippingAddress.lastName", ""),
            "shippingAddress.lastName should not be empty",
        ),
        (
            Violation::new(ViolationKind::MissingField, "shippingAddress.address", ""),
            "shippingAddress.address should not be null or undefined",
        ),
    ];
    for (violation, message) in cases {
        assert_eq!(violation.message(), message);
    }
}

#[test]
fn a_valid_mixed_order_passes() {
    let ctx = TestCatalog::sample();
    let valid = with(
        order(vec![
            standard_item("var_tee_s", 2),
            with(sku_item("HIDDEN", 1), |item| {
                item.product_variant_id = Some("var_hidden".into())
            }),
            custom(vec![
                tee_front(Dtg, 12.0, 16.0),
                with(
                    decoration("left_chest", Dtg, "art_text").size(3.0, 2.0),
                    |d| {
                        d.horizontal_offset_from_center = -0.5;
                        d.vertical_offset_from_top = 2.0;
                    },
                ),
            ]),
            // A sku on a custom item is not named by any rule.
            with(
                custom(vec![
                    decoration("left_chest", Embroidery, "art_logo").size(4.0, 4.0),
                ]),
                |item| {
                    item.sku = Some("TEE-S".into());
                },
            ),
        ]),
        |o| o.shipping_address = shipping_address_in("US", "illinois"),
    );
    assert_eq!(violations_of(&valid, &ctx), Vec::<Violation>::new());
    let resolved = validate_order(&valid, &ctx).unwrap_or_else(|v| panic!("{v:#?}"));
    let sources: Vec<String> = resolved
        .line_items()
        .map(|item| match item.source {
            ItemSource::Product { product, variant } => format!("{} {}", product.id, variant.id),
            ItemSource::Blank { blank, variant } => format!("{} {}", blank.id, variant.id),
        })
        .collect();
    assert_eq!(
        sources,
        [
            "prod_tee var_tee_s",
            "prod_hidden var_hidden",
            "cp_tee cv_tee_white_m",
            "cp_tee cv_tee_white_m"
        ]
    );
    assert!(
        resolved
            .line_items()
            .zip(&valid.line_items)
            .all(|(item, input)| std::ptr::eq(item.input, input)),
        "each resolved item borrows its own input"
    );

    let abroad = with(order(vec![standard_item("var_tee_s", 1)]), |o| {
        o.shipping_address = shipping_address_in("DE", "");
    });
    assert_eq!(violations_of(&abroad, &ctx), Vec::<Violation>::new());
}

#[test]
fn a_missing_status_is_not_orderable() {
    let mut ctx = TestCatalog::sample();
    let mut no_status = product(
        "prod_blank_status",
        ProductStatus::Active,
        &[("var_blank_status", "BS")],
    );
    no_status.status = None;
    ctx.products.push(no_status);
    let violations = violations_of(&order(vec![standard_item("var_blank_status", 1)]), &ctx);
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].kind, ViolationKind::ProductNotOrderable);
    assert!(
        violations[0]
            .detail
            .ends_with("(product prod_blank_status has no status)")
    );
}

#[test]
fn fields_come_first_then_rules_in_line_item_order() {
    let ctx = TestCatalog::sample();
    let request = with(
        order(vec![
            standard_item("var_draft", 1),
            custom(vec![with(tee_front(Dtg, 10.0, 10.0), |d| {
                d.physical_width = -1.0
            })]),
            bare_item(1),
        ]),
        |o| o.shipping_address = shipping_address_in("ZZ", ""),
    );
    let violations = violations_of(&request, &ctx);
    let summary: Vec<(ViolationKind, &str)> = violations
        .iter()
        .map(|v| (v.kind, v.path.as_str()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                ViolationKind::NonPositiveSize,
                "lineItems.1.decorations.0.physicalWidth"
            ),
            (
                ViolationKind::InvalidCountry,
                "shippingAddress.address.country"
            ),
            (
                ViolationKind::ProductNotOrderable,
                "lineItems.0.productVariantId"
            ),
            (ViolationKind::MissingVariantIdOrSku, "lineItems.2"),
        ]
    );
    assert_eq!(
        service_message(&violations),
        Some(types::ErrorMessage::Array(vec![
            "lineItems.1.decorations.0.physicalWidth must be a positive number".into(),
            "shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code".into(),
        ]))
    );
    let rules_only: Vec<Violation> = violations
        .into_iter()
        .filter(|v| !v.is_field_validation())
        .collect();
    assert_eq!(
        service_message(&rules_only),
        Some(types::ErrorMessage::String(
            "Products that are not active or unlisted cannot be ordered: productVariantId var_draft \
             (product prod_draft is draft)"
                .into()
        ))
    );
}

#[test]
fn independent_problems_of_one_item_are_all_reported_and_dependent_ones_skipped() {
    let ctx = TestCatalog::sample();
    // Unknown blank: its artworks are still checked, its decorations against the blank are not.
    let unknown_blank = order(vec![custom_item(
        "cv_nope",
        vec![decoration("cap_front", Engraving, "art_other").size(40.0, 40.0)],
    )]);
    let kinds: Vec<ViolationKind> = violations_of(&unknown_blank, &ctx)
        .iter()
        .map(|v| v.kind)
        .collect();
    assert_eq!(
        kinds,
        vec![
            ViolationKind::CatalogVariantNotFound,
            ViolationKind::ArtworksNotFound
        ]
    );

    // Method and location both missing from the blank: both reported, the location's own list is not.
    let both_missing = order(vec![custom(vec![
        decoration("cap_front", Engraving, "art_logo").size(4.0, 4.0),
    ])]);
    let kinds: Vec<ViolationKind> = violations_of(&both_missing, &ctx)
        .iter()
        .map(|v| v.kind)
        .collect();
    assert_eq!(
        kinds,
        vec![
            ViolationKind::MethodNotAvailableForProduct,
            ViolationKind::LocationNotAvailableForProduct
        ]
    );

    // A duplicate reports only the duplication, not the variant's own problems a second time.
    let twice_draft = order(vec![standard_item("var_draft", 1), sku_item("DRAFT", 1)]);
    let kinds: Vec<ViolationKind> = violations_of(&twice_draft, &ctx)
        .iter()
        .map(|v| v.kind)
        .collect();
    assert_eq!(
        kinds,
        vec![
            ViolationKind::ProductNotOrderable,
            ViolationKind::DuplicateVariant
        ]
    );
}

#[test]
fn merge_duplicates_sums_quantities_by_variant() {
    let ctx = TestCatalog::sample();
    let mut request = order(vec![
        standard_item("var_tee_s", 2),
        custom(vec![tee_front(Dtg, 4.0, 4.0)]),
        sku_item("TEE-S", 3),
        standard_item("var_tee_m", 1),
        standard_item("var_nope", 1),
        standard_item("var_nope", 1),
        with(standard_item("var_tee_s", 1), |item| {
            item.sku = Some("TEE-S".into())
        }),
        with(standard_item("var_tee_m", u64::MAX), |item| {
            item.sku = Some("TEE-S".into())
        }),
        custom(vec![tee_front(Dtg, 4.0, 4.0)]),
        standard_item("var_tee_m", u64::MAX),
    ]);
    assert!(
        violations_of(&request, &ctx)
            .iter()
            .any(|v| v.kind == ViolationKind::DuplicateVariant)
    );

    let merged = merge_duplicates(&mut request, &ctx);

    assert_eq!(merged, 3);
    let summary: Vec<(Option<&str>, Option<&str>, bool, u64)> = request
        .line_items
        .iter()
        .map(|item| {
            (
                item.product_variant_id.as_deref(),
                item.sku.as_deref(),
                item.is_custom,
                item.quantity.get(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (Some("var_tee_s"), None, false, 6),
            (None, None, true, 1),
            (Some("var_tee_m"), None, false, u64::MAX),
            // Unknown and mismatched variants, and custom items, are left for the validator to report.
            (Some("var_nope"), None, false, 1),
            (Some("var_nope"), None, false, 1),
            (Some("var_tee_m"), Some("TEE-S"), false, u64::MAX),
            (None, None, true, 1),
        ]
    );
    assert!(
        !violations_of(&request, &ctx)
            .iter()
            .any(|v| v.kind == ViolationKind::DuplicateVariant)
    );
    assert_eq!(merge_duplicates(&mut request, &ctx), 0);
}

// ---------------------------------------------------------------- never panics

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        prop::sample::select(vec![
            "var_tee_s",
            "var_tee_m",
            "var_draft",
            "var_gone",
            "var_future",
            "TEE-S",
            "HIDDEN",
            "cv_tee_white_m",
            "cv_tee_old",
            "cv_retired",
            "front",
            "back",
            "left_chest",
            "cap_front",
            "art_logo",
            "art_text",
        ])
        .prop_map(str::to_owned),
        ".{0,12}",
    ]
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        -20.0f64..20.0,
        Just(f64::NAN),
        Just(f64::NEG_INFINITY),
        Just(0.0)
    ]
}

fn decoration_strategy() -> impl Strategy<Value = types::Decoration> {
    let method = prop_oneof![
        prop::sample::select(DecorationMethod::KNOWN.to_vec()),
        ".{0,8}".prop_map(DecorationMethod::from),
    ];
    (
        text(),
        method,
        text(),
        number(),
        number(),
        number(),
        number(),
    )
        .prop_map(
            |(location, method, artwork, width, height, horizontal, vertical)| {
                let mut decoration = types::Decoration::new(types::DecorationRequired {
                    artwork_id: artwork,
                    decoration_location: location,
                    decoration_method: method,
                    physical_height: height,
                    physical_width: width,
                });
                decoration.horizontal_offset_from_center = horizontal;
                decoration.vertical_offset_from_top = vertical;
                decoration
            },
        )
}

fn line_item_strategy() -> impl Strategy<Value = types::LineItemInput> {
    (
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        any::<bool>(),
        1u64..=u64::MAX,
        prop::collection::vec(decoration_strategy(), 0..4),
    )
        .prop_map(
            |(variant_id, sku, catalog_variant_id, is_custom, quantity, decorations)| {
                let mut item =
                    types::LineItemInput::new(std::num::NonZeroU64::new(quantity).unwrap());
                item.catalog_product_variant_id = catalog_variant_id;
                item.decorations = decorations;
                item.is_custom = is_custom;
                item.product_variant_id = variant_id;
                item.sku = sku;
                item
            },
        )
}

fn order_strategy() -> impl Strategy<Value = types::CreateOrderRequest> {
    let country = prop_oneof![
        Just("US".to_owned()),
        Just("DE".to_owned()),
        "..".prop_map(|s: String| s)
    ];
    (
        prop::collection::vec(line_item_strategy(), 0..6),
        country,
        text(),
    )
        .prop_map(|(line_items, country, state)| {
            with(order(line_items), |o| {
                o.shipping_address = shipping_address_in(&country, &state);
            })
        })
}

proptest! {
    #[test]
    fn validate_order_and_merge_never_panic(request in order_strategy()) {
        let ctx = TestCatalog::sample();
        let violations = violations_of(&request, &ctx);
        // Field violations always come first.
        let first_rule = violations.iter().position(|v| !v.is_field_validation()).unwrap_or(violations.len());
        prop_assert!(violations[first_rule..].iter().all(|v| !v.is_field_validation()));
        let field_violations = validate_fields(&request);
        prop_assert_eq!(&violations[..first_rule], field_violations.as_slice());
        for violation in &violations {
            prop_assert!(violation.path == "lineItems" || violation.path.starts_with("lineItems.")
                || violation.path.starts_with("shippingAddress.") || violation.path == "externalOrderId");
        }

        let mut merged = request.clone();
        let removed = merge_duplicates(&mut merged, &ctx);
        prop_assert_eq!(merged.line_items.len() + removed, request.line_items.len());
        // Standard items carrying custom fields are invalid anyway and never merged (that would drop fields).
        let all_plain = merged.line_items.iter().all(|item| {
            item.is_custom
                || (item.decorations.is_empty() && resolve::non_empty(item.catalog_product_variant_id.as_deref()).is_none())
        });
        if all_plain {
            prop_assert!(!violations_of(&merged, &ctx).iter().any(|v| v.kind == ViolationKind::DuplicateVariant));
        }
    }
}
