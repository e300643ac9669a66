use store_api_raw::types;

use super::*;
use crate::model::DecorationMethod;
use crate::validate::{Align, ImageSize, Placement, PlacementError, PrintArea, ViolationKind};
use store_api_rules::testing::TestCatalog;
use store_api_rules::validate_order;

/// A placement from its four numbers (width, height, horizontal and vertical offset).
fn placement(width: f64, height: f64, horizontal: f64, vertical: f64) -> Placement {
    Placement {
        width,
        height,
        horizontal_offset_from_center: horizontal,
        vertical_offset_from_top: vertical,
    }
}

const DTG: DecorationMethod = DecorationMethod::DirectToGarment;

fn ada() -> ShipTo {
    ShipTo::new(
        "Ada",
        "Lovelace",
        ShipToAddress::new(AddressLines {
            street_address: "1 Main St",
            city_or_town: "Springfield",
            state_or_province: "IL",
            postal_code: "62701",
            country: "US",
        })
        .unwrap(),
    )
    .unwrap()
}

fn front() -> PrintArea {
    PrintArea::new(12.0, 16.0)
}

/// The field an error names, for an order of `item` (after one valid item) or a whole order.
fn field_of(result: Result<IdentifiedOrder, BuildError>) -> String {
    result.unwrap_err().field().to_owned()
}

#[test]
fn every_error_names_its_field() {
    let cases: Vec<(&str, Result<IdentifiedOrder, BuildError>)> = vec![
        (
            "externalOrderId",
            OrderBuilder::new("", ada())
                .map(|b| b.sku("TEE-S", 1))
                .and_then(OrderBuilder::build),
        ),
        (
            "externalOrderId",
            OrderBuilder::new("a,b", ada()).and_then(OrderBuilder::build),
        ),
        (
            "lineItems",
            OrderBuilder::new("ext-1", ada()).and_then(OrderBuilder::build),
        ),
        (
            "lineItems.1.quantity",
            OrderBuilder::new("ext-1", ada())
                .and_then(|b| b.sku("TEE-S", 1).variant("var_tee_m", 0).build()),
        ),
        (
            "lineItems.1.quantity",
            OrderBuilder::new("ext-1", ada()).and_then(|b| {
                b.sku("TEE-S", 1)
                    .custom(CustomItem::new("cv_tee_white_m").quantity(0))
                    .build()
            }),
        ),
        (
            "lineItems.0.decorations.1.physicalWidth",
            OrderBuilder::new("ext-1", ada()).and_then(|b| {
                b.custom(
                    CustomItem::new("cv_tee_white_m")
                        .design(Design::new("art_logo", "front", DTG).fit(
                            front(),
                            ImageSize::new(100, 100),
                            Align::Top,
                        ))
                        .design(Design::new("art_text", "back", DTG).center(front(), 13.0, 2.0)),
                )
                .build()
            }),
        ),
        (
            "lineItems.0.decorations.0.physicalHeight",
            OrderBuilder::new("ext-1", ada()).and_then(|b| {
                b.custom(
                    CustomItem::new("cv_tee_white_m")
                        .design(Design::new("art_logo", "front", DTG).center(front(), 2.0, 17.0)),
                )
                .build()
            }),
        ),
        (
            "lineItems.0.decorations.0.physicalWidth",
            OrderBuilder::new("ext-1", ada()).and_then(|b| {
                b.custom(CustomItem::new("cv_tee_white_m").design(
                    Design::new("art_logo", "front", DTG).fit(
                        front(),
                        ImageSize::new(0, 10),
                        Align::Top,
                    ),
                ))
                .build()
            }),
        ),
        (
            "lineItems.0.decorations.0.physicalWidth",
            OrderBuilder::new("ext-1", ada()).and_then(|b| {
                b.custom(CustomItem::new("cv").design(Design::new("art_logo", "front", DTG)))
                    .build()
            }),
        ),
        (
            "lineItems.0.decorations.0.verticalOffsetFromTop",
            OrderBuilder::new("ext-1", ada()).and_then(|b| {
                b.custom(CustomItem::new("cv").design(
                    Design::new("art_logo", "front", DTG).at(placement(4.0, 4.0, 0.0, -1.0)),
                ))
                .build()
            }),
        ),
        (
            "lineItems.0.decorations.0.horizontalOffsetFromCenter",
            OrderBuilder::new("ext-1", ada()).and_then(|b| {
                b.custom(
                    CustomItem::new("cv").design(
                        Design::new("art_logo", "front", DTG)
                            .at(placement(4.0, 4.0, 5.0, 0.0))
                            .within(front()),
                    ),
                )
                .build()
            }),
        ),
    ];
    for (field, result) in cases {
        assert_eq!(field_of(result), field);
    }

    let address_errors = [
        (
            "shippingAddress.address.streetAddress",
            ShipToAddress::new(AddressLines {
                street_address: "",
                city_or_town: "Austin",
                state_or_province: "TX",
                postal_code: "78701",
                country: "US",
            }),
        ),
        (
            "shippingAddress.address.cityOrTown",
            ShipToAddress::new(AddressLines {
                street_address: "1 Main St",
                city_or_town: "",
                state_or_province: "TX",
                postal_code: "78701",
                country: "US",
            }),
        ),
        (
            "shippingAddress.address.stateOrProvince",
            ShipToAddress::new(AddressLines {
                street_address: "1 Main St",
                city_or_town: "Austin",
                state_or_province: "Texass",
                postal_code: "78701",
                country: "US",
            }),
        ),
        (
            "shippingAddress.address.country",
            ShipToAddress::new(AddressLines {
                street_address: "1 Main St",
                city_or_town: "Austin",
                state_or_province: "",
                postal_code: "78701",
                country: "USA",
            }),
        ),
        (
            "shippingAddress.address.country",
            ShipToAddress::new(AddressLines {
                street_address: "1 Main St",
                city_or_town: "Austin",
                state_or_province: "",
                postal_code: "78701",
                country: "us",
            }),
        ),
        (
            "shippingAddress.address.country",
            ShipToAddress::new(AddressLines {
                street_address: "1 Main St",
                city_or_town: "Austin",
                state_or_province: "",
                postal_code: "78701",
                country: "XK",
            }),
        ),
    ];
    for (field, result) in address_errors {
        let error = result.unwrap_err();
        assert_eq!(error.field(), field, "{error}");
        assert!(error.to_string().contains(field), "{error}");
    }
    let address = ShipToAddress::new(AddressLines {
        street_address: "1 Main St",
        city_or_town: "Austin",
        state_or_province: "TX",
        postal_code: "78701",
        country: "US",
    })
    .unwrap();
    assert_eq!(
        ShipTo::new("Ada", "", address).unwrap_err().field(),
        "shippingAddress.lastName"
    );
}

#[test]
fn a_placement_error_carries_the_rule() {
    let error = OrderBuilder::new("ext-1", ada())
        .unwrap()
        .custom(
            CustomItem::new("cv").design(Design::new("art", "front", DTG).center(
                front(),
                13.0,
                2.0,
            )),
        )
        .build()
        .unwrap_err();
    assert!(
        matches!(
            error,
            BuildError::Placement {
                source: PlacementError::WiderThanArea { .. },
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn a_built_order_passes_the_validator_on_the_sample_catalog() {
    let order = OrderBuilder::new("ext-1", ada().email("ada@example.com").phone("+1 555 0100"))
        .unwrap()
        .sku("TEE-S", 2)
        .variant("var_tee_m", 1)
        .custom(
            CustomItem::new("cv_tee_white_m")
                .quantity(3)
                .design(Design::new("art_logo", "front", DTG).fit(
                    front(),
                    ImageSize::new(1200, 600),
                    Align::Top,
                ))
                .design(Design::new("art_text", "back", DTG).center(front(), 10.0, 4.0))
                .design(
                    Design::new("art_logo", "left_chest", DTG)
                        .at(placement(3.0, 3.0, 0.5, 0.5))
                        .within(PrintArea::new(4.0, 4.0)),
                ),
        )
        .ordered_at("2026-11-24T02:00:00Z".parse().unwrap())
        .build()
        .unwrap();
    let catalog = TestCatalog::sample();
    let resolved = validate_order(order.as_request(), &catalog);
    assert!(resolved.is_ok(), "{resolved:?}");
    assert_eq!(order.external_order_id(), "ext-1");
    let custom = &order.as_request().line_items[2];
    assert_eq!(
        (
            custom.decorations[0].physical_width,
            custom.decorations[0].physical_height
        ),
        (12.0, 6.0)
    );
    assert_eq!(custom.decorations[1].vertical_offset_from_top, 6.0);
}

#[test]
fn the_validator_still_finds_what_only_the_store_knows() {
    let order = OrderBuilder::new("ext-1", ada())
        .unwrap()
        .sku("NO-SUCH-SKU", 1)
        .build()
        .unwrap();
    let violations = validate_order(order.as_request(), &TestCatalog::sample()).unwrap_err();
    assert_eq!(violations[0].path, "lineItems.0.sku");
}

/// The spec's example requests of `createOrder`, by name.
fn spec_example(name: &str) -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../spec/store-api.yaml");
    let spec: serde_json::Value =
        serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    spec.pointer(&format!(
        "/paths/~1stores~1{{storeId}}~1orders/post/requestBody/content/application~1json/examples/{name}/value"
    ))
    .unwrap_or_else(|| panic!("no example {name:?}"))
    .clone()
}

#[test]
fn built_orders_serialize_as_the_spec_examples() {
    let ship_to = ShipTo::new(
        "Ada",
        "Lovelace",
        ShipToAddress::new(AddressLines {
            street_address: "1 Main Street",
            city_or_town: "Austin",
            state_or_province: "TX",
            postal_code: "78701",
            country: "US",
        })
        .unwrap(),
    )
    .unwrap()
    .email("ada@example.com");
    let standard = OrderBuilder::new("shop-1001", ship_to)
        .unwrap()
        .sku("AA-TEE-SUN-BLK-M", 2)
        .build()
        .unwrap();
    assert_same_request(&standard, spec_example("standard"));

    let ship_to = ShipTo::new(
        "Grace",
        "Hopper",
        ShipToAddress::new(AddressLines {
            street_address: "2 Harbor Road",
            city_or_town: "Portland",
            state_or_province: "ME",
            postal_code: "04101",
            country: "US",
        })
        .unwrap(),
    )
    .unwrap();
    let custom = OrderBuilder::new("shop-1002", ship_to)
        .unwrap()
        .custom(
            CustomItem::new("cv_3001_blk_m").design(
                Design::new("art_0000000000000001", "front", DTG)
                    .at(placement(10.0, 8.0, 0.0, 1.0))
                    .within(front()),
            ),
        )
        .build()
        .unwrap();
    assert_same_request(&custom, spec_example("custom"));
}

/// `built` serializes to `example`: every value the example states is there (numbers compared as
/// numbers: the YAML's `10` is the request's `10.0`), and nothing else but the defaults the wire type
/// writes out (`isCustom: false`).
fn assert_same_request(built: &IdentifiedOrder, example: serde_json::Value) {
    let actual = serde_json::to_value(built).unwrap();
    assert_contains(&actual, &example, "");
    let normalized: types::CreateOrderRequest = serde_json::from_value(example).unwrap();
    assert_eq!(actual, serde_json::to_value(normalized).unwrap());
}

fn assert_contains(actual: &serde_json::Value, expected: &serde_json::Value, path: &str) {
    use serde_json::Value;
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => {
            for (key, value) in e {
                let child = a.get(key).unwrap_or_else(|| panic!("{path}.{key} missing"));
                assert_contains(child, value, &format!("{path}.{key}"));
            }
        }
        (Value::Array(a), Value::Array(e)) => {
            assert_eq!(a.len(), e.len(), "{path}");
            for (index, (a, e)) in a.iter().zip(e).enumerate() {
                assert_contains(a, e, &format!("{path}.{index}"));
            }
        }
        (Value::Number(a), Value::Number(e)) => assert_eq!(a.as_f64(), e.as_f64(), "{path}"),
        _ => assert_eq!(actual, expected, "{path}"),
    }
}

#[test]
fn an_order_read_from_json_needs_an_external_id_to_be_submitted() {
    let mut read: types::CreateOrderRequest =
        serde_json::from_value(spec_example("standard")).unwrap();
    let identified = IdentifiedOrder::try_from(read.clone()).unwrap();
    assert_eq!(identified.external_order_id(), "shop-1001");
    read.external_order_id = None;
    assert_eq!(
        IdentifiedOrder::try_from(read.clone()).unwrap_err().field(),
        "externalOrderId"
    );
    read.external_order_id = Some("a,b".parse().unwrap());
    assert_eq!(
        IdentifiedOrder::try_from(read).unwrap_err().field(),
        "externalOrderId"
    );
    let error = serde_json::from_value::<IdentifiedOrder>(serde_json::json!({
        "lineItems": [{"sku": "TEE-S", "quantity": 1}],
        "shippingAddress": spec_example("standard")["shippingAddress"],
    }))
    .unwrap_err();
    assert!(
        error.to_string().starts_with("externalOrderId: missing"),
        "{error}"
    );
}

#[test]
fn a_violation_from_the_body_rules_names_its_path() {
    // A negative width given explicitly, with no print area to check against: the body rule reports it.
    let error = OrderBuilder::new("ext-1", ada())
        .unwrap()
        .custom(
            CustomItem::new("cv")
                .design(Design::new("art", "front", DTG).at(placement(-1.0, 2.0, 0.0, 0.0))),
        )
        .build()
        .unwrap_err();
    assert_eq!(error.field(), "lineItems.0.decorations.0.physicalWidth");
    let invalid = OrderBuilder::new("ext-1", ada())
        .unwrap()
        .build()
        .unwrap_err();
    assert!(
        matches!(&invalid, BuildError::Invalid { violations } if violations[0].kind == ViolationKind::EmptyLineItems),
        "{invalid:?}"
    );
}

#[test]
fn a_build_error_converts_into_the_client_error_keeping_its_field() {
    let field: crate::Error = ShipToAddress::new(AddressLines {
        street_address: "1 Main St",
        city_or_town: "Austin",
        state_or_province: "TX",
        postal_code: "78701",
        country: "US",
    })
    .and_then(|address| ShipTo::new("Ada", "", address))
    .unwrap_err()
    .into();
    assert!(
        matches!(&field, crate::Error::InvalidArgument { message: text, .. } if text.starts_with("shippingAddress.lastName: ")),
        "{field:?}"
    );
    let rules: crate::Error = OrderBuilder::new("ext-1", ada())
        .unwrap()
        .build()
        .unwrap_err()
        .into();
    assert!(
        matches!(&rules, crate::Error::Invalid { violations } if violations[0].path == "lineItems"),
        "{rules:?}"
    );
}
