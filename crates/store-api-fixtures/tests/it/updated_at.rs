//! `updatedAt` moves on every change of a product or catalog product (the app's and the provider's edits
//! through the control plane), even on a deterministic clock standing still, and `sort[updatedAt]`
//! orders by it with createdAt (desc) as the tiebreak. The catalog edit's 404 and 400s.

use chrono::{DateTime, TimeDelta, Utc};
use reqwest::Method;
use serde_json::{Value, json};
use store_api_fixtures::{DETERMINISTIC_START, Emulator};
use store_api_raw::types;

use crate::common::*;

const TEE: &str = "prod_alpha_sunset_tee";
/// A blank private to alpha (baseCost 10.95).
const PRIVATE_BLANK: &str = "cp_cc1717";
/// A public blank.
const PUBLIC_BLANK: &str = "cp_bc3001";

/// A deterministic emulator: its clock stands at [`DETERMINISTIC_START`] until advanced.
async fn standing() -> (Emulator, Api) {
    let emu = builder().deterministic(34).start().await.unwrap();
    let api = Api::new(&emu);
    (emu, api)
}

fn time(value: &Value) -> DateTime<Utc> {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("not a timestamp: {value}"));
    DateTime::parse_from_rfc3339(text).unwrap().to_utc()
}

fn ms(n: i64) -> TimeDelta {
    TimeDelta::milliseconds(n)
}

/// The items of `GET {path}?sort[updatedAt]={dir}&limit=100`, checked to be ordered by updatedAt in
/// `dir`, then by createdAt descending.
async fn by_update(api: &Api, path: &str, dir: &str) -> Vec<Value> {
    let answer = api
        .get(ALPHA, &format!("{path}?sort[updatedAt]={dir}&limit=100"))
        .await;
    let items = answer.ok(200)["items"].as_array().unwrap().clone();
    assert_eq!(
        answer.json["query"]["sort"],
        json!({ "updatedAt": dir, "createdAt": "desc" })
    );
    for pair in items.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (ua, ub) = (time(&a["updatedAt"]), time(&b["updatedAt"]));
        let in_order = if dir == "desc" { ua > ub } else { ua < ub };
        assert!(
            in_order || (ua == ub && time(&a["createdAt"]) >= time(&b["createdAt"])),
            "{path} sort[updatedAt]={dir}: {} before {}",
            a["id"],
            b["id"]
        );
    }
    items
}

fn first_id(items: &[Value]) -> &str {
    items[0]["id"].as_str().unwrap()
}

fn last_id(items: &[Value]) -> &str {
    items[items.len() - 1]["id"].as_str().unwrap()
}

#[tokio::test]
async fn a_product_update_moves_updated_at_on_a_standing_clock() {
    let (emu, api) = standing().await;
    // The product changed longest ago.
    let target = last_id(&by_update(&api, "/products", "desc").await).to_owned();
    let seeded = api
        .get(ALPHA, &format!("/products/{target}"))
        .await
        .ok(200)
        .clone();
    let mut previous = time(&seeded["updatedAt"]);
    assert!(previous < DETERMINISTIC_START, "{seeded}");

    // Over HTTP, then typed: the clock never moves, updatedAt does, one millisecond at a time.
    let mut body = seeded.clone();
    body["name"] = json!("Sunset Tee, again");
    let updated = api
        .control(
            Method::PUT,
            &format!("/stores/{ALPHA}/products/{target}"),
            Some(&body),
        )
        .await
        .ok(200)
        .clone();
    assert_eq!(time(&updated["updatedAt"]), DETERMINISTIC_START);
    assert_eq!(updated["createdAt"], seeded["createdAt"]);
    assert!(time(&updated["updatedAt"]) > previous);
    previous = time(&updated["updatedAt"]);
    assert_eq!(
        first_id(&by_update(&api, "/products", "desc").await),
        target
    );

    for round in 1..=3 {
        let mut product: types::Product = serde_json::from_value(body.clone()).unwrap();
        product.name = Some(format!("Sunset Tee {round}"));
        let product = emu.update_product(ALPHA, &target, product).unwrap();
        let stamp = product.updated_at.unwrap();
        assert_eq!(stamp, previous + ms(1), "round {round}");
        assert_eq!(emu.now(), DETERMINISTIC_START, "the clock stood still");
        previous = stamp;
        let fetched = api.get(ALPHA, &format!("/products/{target}")).await;
        assert_eq!(time(&fetched.ok(200)["updatedAt"]), stamp);
        assert_eq!(fetched.json["createdAt"], seeded["createdAt"]);
        assert_eq!(
            first_id(&by_update(&api, "/products", "desc").await),
            target
        );
        assert_eq!(last_id(&by_update(&api, "/products", "asc").await), target);
    }

    // Once the clock has moved past the stamps, a change takes the clock's time.
    emu.advance(std::time::Duration::from_secs(60)).unwrap();
    let product: types::Product = serde_json::from_value(body).unwrap();
    let product = emu.update_product(ALPHA, &target, product).unwrap();
    assert_eq!(product.updated_at, Some(emu.now()));
}

#[tokio::test]
async fn equal_update_stamps_fall_back_to_created_at_descending() {
    let (emu, api) = standing().await;
    let listed = by_update(&api, "/products", "desc").await;
    // Two products changed at the same (standing) instant share their stamp.
    let (older, newer) = {
        let mut two: Vec<&Value> = listed.iter().take(2).collect();
        two.sort_by_key(|p| time(&p["createdAt"]));
        (two[0].clone(), two[1].clone())
    };
    for product in [&newer, &older] {
        let id = product["id"].as_str().unwrap();
        let product: types::Product = serde_json::from_value(product.clone()).unwrap();
        let updated = emu.update_product(ALPHA, id, product).unwrap();
        assert_eq!(updated.updated_at, Some(DETERMINISTIC_START));
    }
    let listed = by_update(&api, "/products", "desc").await;
    let top: Vec<&Value> = listed.iter().take(2).map(|p| &p["id"]).collect();
    assert_eq!(top, [&newer["id"], &older["id"]]);
    let listed = by_update(&api, "/products", "asc").await;
    let bottom: Vec<&Value> = listed.iter().rev().take(2).map(|p| &p["id"]).collect();
    assert_eq!(bottom, [&older["id"], &newer["id"]]);
}

#[tokio::test]
async fn a_catalog_product_edited_in_process_keeps_its_id_price_and_privacy() {
    let (emu, api) = standing().await;
    let seeded = api
        .get(ALPHA, &format!("/catalog-products/{PRIVATE_BLANK}"))
        .await
        .ok(200)
        .clone();
    let mut previous = time(&seeded["updatedAt"]);
    assert_ne!(
        first_id(&by_update(&api, "/catalog-products", "desc").await),
        PRIVATE_BLANK
    );

    for round in 0..3 {
        let mut blank: types::CatalogProduct = serde_json::from_value(seeded.clone()).unwrap();
        // The id and the timestamps sent are not the ones kept.
        blank.id = "cp_something_else".into();
        blank.created_at = Some(DETERMINISTIC_START + ms(999_999));
        blank.updated_at = None;
        blank.name = Some(format!("Renamed blank {round}"));
        let updated = emu.update_catalog_product(PRIVATE_BLANK, blank).unwrap();
        assert_eq!(updated.id, PRIVATE_BLANK);
        assert_eq!(updated.created_at, Some(time(&seeded["createdAt"])));
        let stamp = updated.updated_at.unwrap();
        assert!(stamp > previous, "round {round}: {stamp} after {previous}");
        assert!(stamp >= emu.now());
        if round > 0 {
            assert_eq!(stamp, previous + ms(1), "the clock stands still");
        }
        previous = stamp;

        let fetched = api
            .get(ALPHA, &format!("/catalog-products/{PRIVATE_BLANK}"))
            .await;
        assert_eq!(
            fetched.ok(200)["name"],
            json!(format!("Renamed blank {round}"))
        );
        assert_eq!(time(&fetched.json["updatedAt"]), stamp);
        assert_eq!(fetched.json["createdAt"], seeded["createdAt"]);
        let listed = by_update(&api, "/catalog-products", "desc").await;
        assert_eq!(first_id(&listed), PRIVATE_BLANK);
        assert_eq!(
            last_id(&by_update(&api, "/catalog-products", "asc").await),
            PRIVATE_BLANK
        );
    }

    // Still private to alpha, and still priced at its base cost (10.95) in a custom line item.
    api.get(BETA, &format!("/catalog-products/{PRIVATE_BLANK}"))
        .await
        .error(404, Msg::Exact("Catalog product not found"));
    let art = api.create_artwork(ALPHA, "a").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let lines = json!([{
        "isCustom": true,
        "catalogProductVariantId": "cv_1717_pep_m",
        "quantity": 1,
        "decorations": [decoration(&art, "front", "screen_printing", 12.0, 16.0)]
    }]);
    let order = api.create_order(ALPHA, &order_with(None, lines)).await;
    assert_eq!(order["lineItems"][0]["catalogProductId"], PRIVATE_BLANK);
    assert_eq!(cents(&order["lineItems"][0]["unitCost"]), 1095 + 210);

    let unknown = emu
        .update_catalog_product("cp_nope", serde_json::from_value(seeded).unwrap())
        .unwrap_err();
    assert_eq!(
        (unknown.status, unknown.message.as_str()),
        (404, "Catalog product not found")
    );
}

#[tokio::test]
async fn a_catalog_product_edited_over_http_moves_updated_at_and_sends_no_webhook() {
    let (emu, api) = standing().await;
    let receiver = Receiver::start().await;
    let topics = [
        "products_create",
        "products_update",
        "products_delete",
        "orders_create",
        "orders_update",
    ];
    let urls: serde_json::Map<String, Value> = topics
        .iter()
        .map(|t| (t.to_string(), json!(receiver.url(&format!("/{t}")))))
        .collect();
    api.webhooks(ALPHA, &Value::Object(urls)).await;

    let seeded = api
        .get(ALPHA, &format!("/catalog-products/{PUBLIC_BLANK}"))
        .await
        .ok(200)
        .clone();
    let mut previous = time(&seeded["updatedAt"]);
    let path = format!("/catalog-products/{PUBLIC_BLANK}");
    for round in 0..3 {
        // The path names the blank: the body needs no id, and its timestamps are not kept.
        let mut body = seeded.clone();
        let object = body.as_object_mut().unwrap();
        object.remove("id");
        object.insert("createdAt".into(), json!("2030-01-01T00:00:00.000Z"));
        object.insert("updatedAt".into(), json!("1999-01-01T00:00:00.000Z"));
        object.insert("isDiscontinued".into(), json!(round % 2 == 0));
        let updated = api.control(Method::PUT, &path, Some(&body)).await;
        let updated = updated.ok(200).clone();
        assert_eq!(updated["id"], PUBLIC_BLANK);
        assert_eq!(updated["createdAt"], seeded["createdAt"]);
        assert_eq!(updated["isDiscontinued"], json!(round % 2 == 0));
        let stamp = time(&updated["updatedAt"]);
        assert!(stamp > previous, "round {round}: {stamp} after {previous}");
        if round > 0 {
            assert_eq!(stamp, previous + ms(1), "the clock stands still");
        }
        previous = stamp;
        assert_eq!(emu.now(), DETERMINISTIC_START);

        let fetched = api
            .get(ALPHA, &format!("/catalog-products/{PUBLIC_BLANK}"))
            .await;
        assert_eq!(fetched.ok(200), &updated);
        // Public: every store sees the change.
        assert_eq!(
            api.get(BETA, &format!("/catalog-products/{PUBLIC_BLANK}"))
                .await
                .ok(200),
            &updated
        );
        let listed = by_update(&api, "/catalog-products", "desc").await;
        assert_eq!(first_id(&listed), PUBLIC_BLANK);
    }

    // No catalog topic: the first event after the edits is the product update's.
    let product = api
        .get(ALPHA, &format!("/products/{TEE}"))
        .await
        .ok(200)
        .clone();
    api.control(
        Method::PUT,
        &format!("/stores/{ALPHA}/products/{TEE}"),
        Some(&product),
    )
    .await
    .ok(200);
    receiver.wait_for(1).await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let topics: Vec<Value> = receiver
        .received()
        .iter()
        .map(|r| r.json["topic"].clone())
        .collect();
    assert_eq!(topics, [json!("products_update")]);
}

#[tokio::test]
async fn a_catalog_edit_of_an_unknown_blank_is_404_and_a_malformed_one_400() {
    let (_emu, api) = standing().await;
    let seeded = api
        .get(ALPHA, &format!("/catalog-products/{PUBLIC_BLANK}"))
        .await
        .ok(200)
        .clone();
    api.control(Method::PUT, "/catalog-products/cp_nope", Some(&seeded))
        .await
        .error(404, Msg::Exact("Catalog product not found"));

    let path = format!("/catalog-products/{PUBLIC_BLANK}");
    // Not JSON at all.
    let answer = api
        .http
        .put(format!("{}/_emulator{path}", api.origin))
        .header("content-type", "application/json")
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);
    let envelope: Value = answer.json().await.unwrap();
    assert!(
        envelope["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("The request body is not valid JSON")),
        "{envelope}"
    );

    // A body not declared as JSON is refused before it is read, as on every control route.
    let answer = api
        .http
        .put(format!("{}/_emulator{path}", api.origin))
        .header("content-type", "text/plain")
        .body(seeded.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 415);

    // JSON of the wrong shape: one message naming the field.
    let cases = [
        (json!([seeded.clone()]), ""),
        (json!({ "name": null }), "name"),
        (json!({ "variants": "many" }), "variants"),
        (json!({ "isDiscontinued": "yes" }), "isDiscontinued"),
        (
            json!({ "colorMetadata": [{ "color": 7 }] }),
            "colorMetadata.0.color",
        ),
        (json!({ "createdAt": "yesterday" }), "createdAt"),
    ];
    for (body, field) in cases {
        let answer = api.control(Method::PUT, &path, Some(&body)).await;
        assert_eq!(answer.status, 400, "{body}: {}", answer.json);
        assert_eq!(answer.json["error"], "Bad Request");
        let message = &answer.json["message"];
        let lines = message
            .as_array()
            .unwrap_or_else(|| panic!("{body}: {message}"));
        assert!(
            lines.len() == 1 && lines[0].as_str().is_some_and(|m| m.contains(field)),
            "{body}: {message}"
        );
    }

    // Nothing was changed by the refused edits.
    let fetched = api.get(ALPHA, &path).await;
    assert_eq!(fetched.ok(200), &seeded);
}
