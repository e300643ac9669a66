//! Every row of the seed's "Order creation 400s and 409" and "Custom line item 400s" tables, with real
//! seeded ids, each through `POST /orders`.

use serde_json::{Value, json};

use crate::common::*;

/// A custom line item of `quantity` 1.
fn custom(variant: Option<&str>, decorations: Value) -> Value {
    let mut item = json!({ "isCustom": true, "quantity": 1, "decorations": decorations });
    if let Some(variant) = variant {
        item["catalogProductVariantId"] = json!(variant);
    }
    item
}

/// One table row: the line items (ALPHA store), and the whole expected message.
struct Row {
    lines: Value,
    message: String,
}

fn row(lines: Value, message: impl Into<String>) -> Row {
    Row {
        lines,
        message: message.into(),
    }
}

async fn check(api: &Api, store: &str, rows: &[Row]) {
    for (i, row) in rows.iter().enumerate() {
        let body = order_with(Some(&format!("rule-{i}")), row.lines.clone());
        let answer = api.post(store, "/orders", &body).await;
        answer.error(400, Msg::Exact(&row.message));
    }
}

#[tokio::test]
async fn order_creation_400s() {
    let (emu, api) = start().await;
    let rows = [
        row(
            json!([{ "quantity": 1 }]),
            "Each line item must have a product variant ID or a SKU",
        ),
        row(
            json!([{ "productVariantId": "", "sku": "", "quantity": 1 }]),
            "Each line item must have a product variant ID or a SKU",
        ),
        row(
            json!([{ "productVariantId": "pv_nope", "quantity": 1 }]),
            "No product found in the store for a line item: productVariantId pv_nope",
        ),
        // Another store's variant is not in this store.
        row(
            json!([{ "productVariantId": "pv_bg_tote_nat_os", "quantity": 1 }]),
            "No product found in the store for a line item: productVariantId pv_bg_tote_nat_os",
        ),
        row(
            json!([{ "sku": "BG-TOTE-BOT-NAT-OS", "quantity": 1 }]),
            "No product found in the store for a line item: sku BG-TOTE-BOT-NAT-OS",
        ),
        // A catalog variant id is not a product variant id.
        row(
            json!([{ "productVariantId": "cv_3001_blk_m", "quantity": 1 }]),
            "No product found in the store for a line item: productVariantId cv_3001_blk_m",
        ),
        row(
            json!([{ "productVariantId": "pv_aa_sun_blk_s", "sku": "AA-TEE-SUN-BLK-M", "quantity": 1 }]),
            "Product variant and SKU do not match for a line item: productVariantId pv_aa_sun_blk_s, sku AA-TEE-SUN-BLK-M",
        ),
        row(
            json!([{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 1 }, { "sku": "AA-TEE-SUN-BLK-S", "quantity": 2 }]),
            "The same product variant appears in more than one line item: productVariantId pv_aa_sun_blk_s (lineItems.0 and lineItems.1)",
        ),
        row(
            json!([{ "productVariantId": "pv_aa_tote_nat_os", "quantity": 1 }]),
            "Products that are not active or unlisted cannot be ordered: productVariantId pv_aa_tote_nat_os (product prod_alpha_wave_tote is draft)",
        ),
        row(
            json!([{ "sku": "AA-CASE-MONO-BLK-IP15", "quantity": 1 }]),
            "Products that are not active or unlisted cannot be ordered: productVariantId pv_aa_case_blk_ip15 (product prod_alpha_monogram_case is draft)",
        ),
        row(
            json!([{ "productVariantId": "pv_aa_t24_blk_s", "quantity": 1 }]),
            "Products that are not active or unlisted cannot be ordered: productVariantId pv_aa_t24_blk_s (product prod_alpha_tour24_tee is archived)",
        ),
        row(
            json!([{ "productVariantId": "pv_aa_sun_hnv_2xl", "quantity": 1 }]),
            "Discontinued or out of stock product variants cannot be ordered: productVariantId pv_aa_sun_hnv_2xl (the variant is discontinued)",
        ),
        row(
            json!([{ "productVariantId": "pv_aa_rls_blk_s", "quantity": 1 }]),
            "Discontinued or out of stock product variants cannot be ordered: productVariantId pv_aa_rls_blk_s (product prod_alpha_retro_ls is discontinued)",
        ),
        // The first failing line item is reported, after valid ones.
        row(
            json!([{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 1 }, { "productVariantId": "pv_aa_t24_blk_m", "quantity": 1 }, { "quantity": 1 }]),
            "Products that are not active or unlisted cannot be ordered: productVariantId pv_aa_t24_blk_m (product prod_alpha_tour24_tee is archived)",
        ),
    ];
    check(&api, ALPHA, &rows).await;
    // A discontinued variant of store_beta.
    check(
        &api,
        BETA,
        &[row(
            json!([{ "productVariantId": "pv_bg_mug_blk_11oz", "quantity": 1 }]),
            "Discontinued or out of stock product variants cannot be ordered: productVariantId pv_bg_mug_blk_11oz (the variant is discontinued)",
        )],
    )
    .await;
    assert_eq!(emu.order_count(ALPHA) + emu.order_count(BETA), 0);
}

#[tokio::test]
async fn custom_line_item_400s() {
    let (emu, api) = start().await;
    let art = api.create_artwork(ALPHA, "alpha art").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let beta_art = api.create_artwork(BETA, "beta art").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let dec =
        |location: &str, method: &str, w: f64, h: f64| decoration(&art, location, method, w, h);
    let dtg_front = dec("front", "direct_to_garment", 10.0, 10.0);
    let placed = |w: f64, h: f64, x: f64, y: f64| {
        let mut d = dec("front", "direct_to_garment", w, h);
        d["horizontalOffsetFromCenter"] = json!(x);
        d["verticalOffsetFromTop"] = json!(y);
        d
    };
    let rows = [
        row(
            json!([custom(None, json!([dtg_front]))]),
            "A custom line item must have a catalog product variant ID",
        ),
        row(
            json!([custom(Some("cv_3001_blk_m"), json!([]))]),
            "A custom line item must have at least one decoration",
        ),
        row(
            json!([{ "isCustom": true, "catalogProductVariantId": "cv_3001_blk_m", "quantity": 1 }]),
            "A custom line item must have at least one decoration",
        ),
        row(
            json!([{ "isCustom": true, "productVariantId": "pv_aa_sun_blk_s", "catalogProductVariantId": "cv_3001_blk_m", "quantity": 1, "decorations": [dtg_front] }]),
            "A custom line item cannot have a product variant ID",
        ),
        row(
            json!([{ "productVariantId": "pv_aa_sun_blk_s", "catalogProductVariantId": "cv_3001_blk_m", "quantity": 1 }]),
            "Only a custom line item can have a catalog product variant ID or decorations",
        ),
        row(
            json!([{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 1, "decorations": [dtg_front] }]),
            "Only a custom line item can have a catalog product variant ID or decorations",
        ),
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([dtg_front, dec("back", "direct_to_film", 10.0, 10.0)])
            )]),
            "All decorations of a line item must use the same decoration method",
        ),
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([dtg_front, dec("front", "direct_to_garment", 4.0, 4.0)])
            )]),
            "Decoration locations must be unique within a line item",
        ),
        row(
            json!([custom(Some("cv_nope"), json!([dtg_front]))]),
            "No catalog product variant found for a line item: catalogProductVariantId cv_nope",
        ),
        // A product variant id is not a catalog variant id.
        row(
            json!([custom(Some("pv_aa_sun_blk_s"), json!([dtg_front]))]),
            "No catalog product variant found for a line item: catalogProductVariantId pv_aa_sun_blk_s",
        ),
        row(
            json!([custom(Some("cv_980_blk_m"), json!([dtg_front]))]),
            "Discontinued or out of stock product variants cannot be ordered: catalogProductVariantId cv_980_blk_m (catalog product cp_anvil980 is discontinued)",
        ),
        row(
            json!([custom(Some("cv_3001_ath_3xl"), json!([dtg_front]))]),
            "Discontinued or out of stock product variants cannot be ordered: catalogProductVariantId cv_3001_ath_3xl (the catalog variant is discontinued)",
        ),
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([decoration(
                    "art_nope",
                    "front",
                    "direct_to_garment",
                    4.0,
                    4.0
                )])
            )]),
            "Artworks not found in the store: art_nope",
        ),
        // Another store's artwork.
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([decoration(
                    &beta_art,
                    "front",
                    "direct_to_garment",
                    4.0,
                    4.0
                )])
            )]),
            format!("Artworks not found in the store: {beta_art}"),
        ),
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([dec("front", "engraving", 4.0, 4.0)])
            )]),
            "The print method is not available for the catalog product: decorationMethod engraving, catalog product cp_bc3001",
        ),
        row(
            json!([custom(
                Some("cv_mug11_wht_11oz"),
                json!([dec("front", "embroidery", 3.0, 3.0)])
            )]),
            "The print method is not available for the catalog product: decorationMethod embroidery, catalog product cp_mug11",
        ),
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([dec("cap_front", "direct_to_garment", 4.0, 2.0)])
            )]),
            "The print location is not available for the catalog product: decorationLocation cap_front, catalog product cp_bc3001",
        ),
        // On the blank, but not at this location: embroidery only on the chest of the 3001.
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([dec("front", "embroidery", 4.0, 4.0)])
            )]),
            "The print method is not available for the print location: decorationMethod embroidery, decorationLocation front",
        ),
        row(
            json!([custom(
                Some("cv_6089m_blk_os"),
                json!([dec("cap_side", "embroidery", 2.0, 1.0)])
            )]),
            "The print method is not available for the print location: decorationMethod embroidery, decorationLocation cap_side",
        ),
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([dec("front", "direct_to_garment", 13.0, 10.0)])
            )]),
            "The design is larger than the print area for the print location: decorationLocation front, physicalWidth 13 exceeds the print area width 12",
        ),
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([dec("left_chest", "direct_to_garment", 4.0, 4.5)])
            )]),
            "The design is larger than the print area for the print location: decorationLocation left_chest, physicalHeight 4.5 exceeds the print area height 4",
        ),
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([placed(10.0, 10.0, 2.0, 0.0)])
            )]),
            "The design is placed outside the print area for the print location: decorationLocation front, physicalWidth/2 5 + |horizontalOffsetFromCenter| 2 exceeds half the print area width 6",
        ),
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([placed(10.0, 10.0, -1.5, 0.0)])
            )]),
            "The design is placed outside the print area for the print location: decorationLocation front, physicalWidth/2 5 + |horizontalOffsetFromCenter| 1.5 exceeds half the print area width 6",
        ),
        row(
            json!([custom(
                Some("cv_3001_blk_m"),
                json!([placed(10.0, 10.0, 0.0, 7.0)])
            )]),
            "The design is placed outside the print area for the print location: decorationLocation front, verticalOffsetFromTop 7 + physicalHeight 10 exceeds the print area height 16",
        ),
    ];
    check(&api, ALPHA, &rows).await;

    // The private blank of store_alpha does not exist for store_beta.
    let beta_dec = decoration(&beta_art, "front", "direct_to_garment", 4.0, 4.0);
    check(
        &api,
        BETA,
        &[row(
            json!([custom(Some("cv_1717_pep_m"), json!([beta_dec]))]),
            "No catalog product variant found for a line item: catalogProductVariantId cv_1717_pep_m",
        )],
    )
    .await;
    assert_eq!(emu.order_count(ALPHA) + emu.order_count(BETA), 0);

    // Placements exactly on the edges are accepted, and so is the private blank for its store.
    let ok = [
        custom(Some("cv_3001_blk_m"), json!([placed(12.0, 16.0, 0.0, 0.0)])),
        custom(
            Some("cv_3001_blk_l"),
            json!([placed(10.0, 6.0, -1.0, 10.0)]),
        ),
        custom(
            Some("cv_1717_pep_m"),
            json!([dec("left_chest", "embroidery", 4.0, 4.0)]),
        ),
    ];
    for line in ok {
        api.create_order(ALPHA, &order_with(None, json!([line])))
            .await;
    }
    api.create_order(
        BETA,
        &order_with(
            None,
            json!([custom(Some("cv_3001_blk_m"), json!([beta_dec]))]),
        ),
    )
    .await;
}
