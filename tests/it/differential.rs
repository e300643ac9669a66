//! The validator and the emulator agree on random orders: whatever `validate_order` says about a request
//! (valid, or the service's message), the emulator answers the same through real HTTP. The emulator runs
//! the same rules, so this holds the whole path: the client's snapshot of the store, the emulator's view,
//! body decoding, and the order of checks. (Here, not in `store-api`: a dev-dependency of the client on
//! the emulator would close a dependency cycle; see docs/ARCHITECTURE.md.)

use std::sync::OnceLock;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};
use store_api::model::Artwork;
use store_api::{Client, Error, NewOrder, RateLimiter};
use store_api_fixtures::Emulator;
use store_api_fixtures::artwork::FakeResource;
use store_api_raw::types::ErrorMessage;
use store_api_rules::{service_message, validate_order};

struct World {
    runtime: tokio::runtime::Runtime,
    client: Client,
    artwork: Artwork,
    _emulator: Emulator,
}

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (emulator, client, artwork) = runtime.block_on(async {
            let emulator = Emulator::builder()
                .rate_limit(false)
                .network_downloads(false)
                .start()
                .await
                .unwrap();
            let store = emulator.store("store_alpha").unwrap();
            let client = Client::builder()
                .base_url(emulator.base_url())
                .store_id(&store.id)
                .api_key(&store.api_key)
                .in_process_limiter(RateLimiter::with_rate(1000, Duration::from_micros(50)))
                .build()
                .unwrap();
            let url = "https://art.example-cdn.test/logo.png";
            emulator
                .fake_hosts()
                .insert(url, FakeResource::image(PNG))
                .unwrap();
            let artwork = client.artworks().create("logo", url).await.unwrap();
            (emulator, client, artwork)
        });
        World {
            runtime,
            client,
            artwork,
            _emulator: emulator,
        }
    })
}

/// Standard line items: valid, discontinued, draft, archived, discontinued product, unknown, another
/// store's, and id/SKU pairs that match or not.
fn standard_item() -> impl Strategy<Value = Value> {
    let pick = prop_oneof![
        Just(json!({"sku": "AA-TEE-SUN-BLK-M"})),
        Just(json!({"productVariantId": "pv_aa_sun_blk_m"})),
        Just(json!({"productVariantId": "pv_aa_sun_blk_m", "sku": "AA-TEE-SUN-BLK-M"})),
        Just(json!({"productVariantId": "pv_aa_sun_blk_m", "sku": "AA-CAP-LOGO-BLK-OS"})),
        Just(json!({"sku": "AA-CAP-LOGO-BLK-OS"})),
        Just(json!({"productVariantId": "pv_aa_sun_hnv_2xl"})),
        Just(json!({"productVariantId": "pv_aa_tote_nat_os"})),
        Just(json!({"productVariantId": "pv_aa_t24_blk_s"})),
        Just(json!({"productVariantId": "pv_aa_rls_blk_s"})),
        Just(json!({"productVariantId": "pv_bg_tote_nat_os"})),
        Just(json!({"productVariantId": "pv_nope"})),
        Just(json!({})),
        Just(json!({"sku": "AA-TEE-SUN-BLK-M", "decorations": []})),
        Just(json!({"sku": "AA-TEE-SUN-BLK-M", "catalogProductVariantId": "cv_3001_blk_m"})),
    ];
    (pick, 1u32..4).prop_map(|(mut item, quantity)| {
        item["quantity"] = json!(quantity);
        item
    })
}

fn decoration(artwork_id: String) -> impl Strategy<Value = Value> {
    let location = prop_oneof![
        Just("front"),
        Just("back"),
        Just("left_chest"),
        Just("cap_front"),
        Just("pocket")
    ];
    let method = prop_oneof![
        Just("direct_to_garment"),
        Just("screen_printing"),
        Just("embroidery"),
        Just("uv_printing"),
        Just("holographic_foil"),
    ];
    let size = (0.5f64..20.0).prop_map(|v| (v * 4.0).round() / 4.0);
    (location, method, size.clone(), size, -4.0f64..4.0, 0.0f64..6.0).prop_map(move |(l, m, w, h, x, y)| {
        json!({
            "decorationLocation": l, "decorationMethod": m, "artworkId": artwork_id,
            "physicalWidth": w, "physicalHeight": h,
            "horizontalOffsetFromCenter": (x * 4.0f64).round() / 4.0, "verticalOffsetFromTop": (y * 4.0f64).round() / 4.0
        })
    })
}

/// Custom line items on valid, discontinued, private, discontinued-blank and unknown catalog variants.
fn custom_item(artwork_id: String) -> impl Strategy<Value = Value> {
    let variant = prop_oneof![
        3 => Just(Some("cv_3001_blk_m")),
        1 => Just(Some("cv_3001_red_3xl")),
        1 => Just(Some("cv_1717_pep_m")),
        1 => Just(Some("cv_980_blk_m")),
        1 => Just(Some("cv_6089m_blk_os")),
        1 => Just(Some("cv_nope")),
        1 => Just(None),
    ];
    let extra = prop_oneof![4 => Just(None), 1 => Just(Some(json!({"productVariantId": "pv_aa_sun_blk_m"})))];
    (
        variant,
        prop::collection::vec(decoration(artwork_id), 0..3),
        1u32..3,
        extra,
    )
        .prop_map(|(variant, decorations, quantity, extra)| {
            let mut item =
                json!({"isCustom": true, "quantity": quantity, "decorations": decorations});
            if let Some(variant) = variant {
                item["catalogProductVariantId"] = json!(variant);
            }
            if let Some(Value::Object(extra)) = extra {
                for (k, v) in extra {
                    item[k] = v;
                }
            }
            item
        })
}

fn order(artwork_id: String) -> impl Strategy<Value = Value> {
    let item = prop_oneof![standard_item(), custom_item(artwork_id)];
    let address = prop_oneof![
        4 => Just(("US", "TX")),
        1 => Just(("US", "Texas")),
        1 => Just(("US", "ZZ")),
        1 => Just(("DE", "")),
        1 => Just(("XX", "")),
    ];
    (prop::collection::vec(item, 1..4), address).prop_map(|(items, (country, state))| {
        json!({
            "lineItems": items,
            "shippingAddress": {"firstName": "Ada", "lastName": "Lovelace", "address": {
                "streetAddress": "1 Main St", "cityOrTown": "Austin", "stateOrProvince": state,
                "zipOrPostalCode": "78701", "country": country}}
        })
    })
}

fn messages(message: ErrorMessage) -> Vec<String> {
    match message {
        ErrorMessage::String(text) => vec![text],
        ErrorMessage::Array(list) => list,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn validator_and_emulator_agree(body in order(world().artwork.id.clone())) {
        let world = world();
        let mut request: NewOrder = serde_json::from_value(body.clone()).unwrap();
        request.external_order_id = Some(store_api::new_external_order_id().parse().unwrap());
        let (local, remote) = world.runtime.block_on(async {
            let snapshot = world.client.store_snapshot().await.unwrap();
            let local = service_message(&validate_order(&request, snapshot.as_ref()).err().unwrap_or_default())
                .map(messages);
            (local, world.client.orders().create(&request).await)
        });
        match (local, remote) {
            (None, Ok(order)) => prop_assert_eq!(order.line_items.len(), request.line_items.len()),
            (Some(expected), Err(Error::BadRequest { messages })) => prop_assert_eq!(expected, messages, "{}", body),
            (local, remote) => prop_assert!(false, "disagreement on {}: local {:?}, emulator {:?}", body, local, remote),
        }
    }
}
