//! List conventions on the four list endpoints: page and limit, filters (comma values match any), sorts
//! with createdAt always last, the envelope and its `query` echo.

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::*;

const LISTS: [&str; 4] = ["/catalog-products", "/products", "/artworks", "/orders"];

fn items(answer: &Answer) -> Vec<Value> {
    answer
        .json
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn ids(answer: &Answer) -> Vec<String> {
    items(answer)
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_owned())
        .collect()
}

fn field(answer: &Answer, name: &str) -> Vec<String> {
    items(answer)
        .iter()
        .map(|i| i[name].as_str().unwrap().to_owned())
        .collect()
}

/// Asserts the envelope's counters.
#[track_caller]
fn envelope(answer: &Answer, total: u64, start: u64, end: u64, pages: u64) {
    let body = answer.ok(200);
    let actual = [
        &body["totalItems"],
        &body["startItem"],
        &body["endItem"],
        &body["totalPages"],
    ];
    assert_eq!(
        actual,
        [&json!(total), &json!(start), &json!(end), &json!(pages)],
        "{body}"
    );
    let object = body.as_object().unwrap();
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    for key in keys {
        assert!(
            [
                "items",
                "totalItems",
                "startItem",
                "endItem",
                "totalPages",
                "query"
            ]
            .contains(&key),
            "{key}"
        );
    }
    assert_eq!(
        items(answer).len() as u64,
        if start == 0 { 0 } else { end - start + 1 }
    );
}

#[tokio::test]
async fn page_and_limit_are_validated_on_every_list() {
    let (_emu, api) = start().await;
    // (query, message array); None: accepted.
    let cases: &[(&str, Option<&[&str]>)] = &[
        ("", None),
        ("limit=100", None),
        ("limit=1&page=1", None),
        ("limit=101", Some(&["limit must not be greater than 100"])),
        (
            "limit=1000000",
            Some(&["limit must not be greater than 100"]),
        ),
        ("limit=0", Some(&["limit must not be less than 1"])),
        ("limit=-5", Some(&["limit must not be less than 1"])),
        ("page=0", Some(&["page must not be less than 1"])),
        ("page=-1", Some(&["page must not be less than 1"])),
        ("page=abc", Some(&["page must be an integer number"])),
        ("limit=2.5", Some(&["limit must be an integer number"])),
        ("limit=", Some(&["limit must be an integer number"])),
        (
            "page=0&limit=101",
            Some(&[
                "page must not be less than 1",
                "limit must not be greater than 100",
            ]),
        ),
        (
            "sort[createdAt]=sideways",
            Some(&["sort[createdAt] must be one of the following values: asc, desc"]),
        ),
    ];
    for list in LISTS {
        for (query, expected) in cases {
            let answer = api.get(ALPHA, &format!("{list}?{query}")).await;
            match expected {
                None => {
                    answer.ok(200);
                }
                Some(messages) => answer.error(400, Msg::List(messages)),
            }
        }
    }
}

#[tokio::test]
async fn defaults_are_echoed_and_limit_defaults_to_50_max_100() {
    let (_emu, api) = start().await;
    for list in LISTS {
        let answer = api.get(ALPHA, list).await;
        assert_eq!(
            answer.ok(200)["query"],
            json!({ "page": 1, "limit": 50, "sort": { "createdAt": "desc" } }),
            "{list}"
        );
    }
    // 60 orders: the default page holds 50, limit=100 all of them.
    for i in 0..60 {
        api.create_order(ALPHA, &simple_order(Some(&format!("bulk-{i}"))))
            .await;
    }
    let first = api.get(ALPHA, "/orders").await;
    envelope(&first, 60, 1, 50, 2);
    let second = api.get(ALPHA, "/orders?page=2").await;
    envelope(&second, 60, 51, 60, 2);
    let all = api.get(ALPHA, "/orders?limit=100").await;
    envelope(&all, 60, 1, 60, 1);
    assert_eq!([ids(&first), ids(&second)].concat(), ids(&all));
    // Newest first by default.
    let external = field(&all, "externalOrderId");
    let expected: Vec<String> = (0..60).rev().map(|i| format!("bulk-{i}")).collect();
    assert_eq!(external, expected);
}

#[tokio::test]
async fn pages_count_and_a_page_past_the_end_is_empty() {
    let (_emu, api) = start().await;
    let all = api.get(ALPHA, "/products").await;
    envelope(&all, 10, 1, 10, 1);
    let mut seen = Vec::new();
    for (page, start, end) in [(1, 1, 3), (2, 4, 6), (3, 7, 9), (4, 10, 10)] {
        let answer = api
            .get(ALPHA, &format!("/products?limit=3&page={page}"))
            .await;
        envelope(&answer, 10, start, end, 4);
        assert_eq!(
            answer.json["query"],
            json!({ "page": page, "limit": 3, "sort": { "createdAt": "desc" } })
        );
        seen.extend(ids(&answer));
    }
    assert_eq!(seen, ids(&all));
    let past = api.get(ALPHA, "/products?limit=3&page=5").await;
    envelope(&past, 10, 0, 0, 4);
    let far = api.get(ALPHA, "/products?page=99").await;
    envelope(&far, 10, 0, 0, 1);

    // An empty list.
    let none = api.get(ALPHA, "/artworks").await;
    envelope(&none, 0, 0, 0, 0);
}

#[tokio::test]
async fn filters_take_comma_separated_values_and_match_any() {
    let (_emu, api) = start().await;
    // (store, path, expected ids in default order, filter echo)
    let cases: &[(&str, &str, &[&str], Value)] = &[
        (
            ALPHA,
            "/products?filter[status]=draft,archived",
            &[
                "prod_alpha_monogram_case",
                "prod_alpha_wave_tote",
                "prod_alpha_tour24_tee",
            ],
            json!({ "status": ["draft", "archived"] }),
        ),
        (
            ALPHA,
            "/products?filter%5Bstatus%5D=unlisted",
            &["prod_alpha_members_tee", "prod_alpha_fuel_mug"],
            json!({ "status": ["unlisted"] }),
        ),
        (
            BETA,
            "/products?filter[status]=draft",
            &["prod_beta_fern_poster"],
            json!({ "status": ["draft"] }),
        ),
        (
            ALPHA,
            "/products?filter[status]=unknown_status",
            &[],
            json!({ "status": ["unknown_status"] }),
        ),
        (
            ALPHA,
            "/catalog-products?filter[productType]=mug,tote",
            &["cp_lb8502", "cp_mug11"],
            json!({ "productType": ["mug", "tote"] }),
        ),
        (
            ALPHA,
            "/catalog-products?filter[decorationMethod]=engraving,liquid_3d",
            &["cp_case_ip15", "cp_tumbler20"],
            json!({ "decorationMethod": ["engraving", "liquid_3d"] }),
        ),
        (
            ALPHA,
            "/catalog-products?filter[decorationMethod]=embroidery",
            &[
                "cp_cc1717",
                "cp_lb8502",
                "cp_yp6089m",
                "cp_bc3501",
                "cp_g18500",
                "cp_bc3001",
            ],
            json!({ "decorationMethod": ["embroidery"] }),
        ),
        (
            BETA,
            "/catalog-products?filter[decorationMethod]=embroidery",
            &[
                "cp_lb8502",
                "cp_yp6089m",
                "cp_bc3501",
                "cp_g18500",
                "cp_bc3001",
            ],
            json!({ "decorationMethod": ["embroidery"] }),
        ),
        (
            ALPHA,
            "/catalog-products?filter[productType]=t-shirt&filter[decorationMethod]=embroidery,uv_printing",
            &["cp_cc1717", "cp_bc3001"],
            json!({ "productType": ["t-shirt"], "decorationMethod": ["embroidery", "uv_printing"] }),
        ),
    ];
    for (store, path, expected, echo) in cases {
        let answer = api.get(store, path).await;
        assert_eq!(ids(&answer), *expected, "{path}");
        assert_eq!(answer.json["totalItems"], json!(expected.len()), "{path}");
        assert_eq!(answer.json["query"]["filter"], *echo, "{path}");
        assert_eq!(
            answer.json["query"]["sort"],
            json!({ "createdAt": "desc" }),
            "{path}"
        );
    }
    // Every blank matched by decorationMethod supports one of the methods somewhere.
    let answer = api
        .get(
            ALPHA,
            "/catalog-products?filter[decorationMethod]=heat_seal_patch,direct_to_film",
        )
        .await;
    let matched = items(&answer);
    assert_eq!(
        matched.len(),
        8,
        "every blank but the poster, the tumbler and the phone case"
    );
    for blank in matched {
        let methods = blank["decorationMethods"].as_array().unwrap();
        assert!(
            methods.contains(&json!("heat_seal_patch"))
                || methods.contains(&json!("direct_to_film"))
        );
    }
}

#[tokio::test]
async fn order_filters_including_the_external_order_id() {
    let (_emu, api) = start().await;
    let mut orders = Vec::new();
    for ext in ["X-1", "X-2", "X-3", "X-10"] {
        orders.push(api.create_order(ALPHA, &simple_order(Some(ext))).await);
    }
    let id = |i: usize| orders[i]["id"].as_str().unwrap().to_owned();
    api.advance(ALPHA, &id(1)).await.ok(200);
    api.app_action(ALPHA, &id(2), "mark_paid").await.ok(200);
    api.app_action(ALPHA, &id(3), "hold").await.ok(200);
    // (query, expected orders, newest first)
    let cases: &[(&str, &[usize])] = &[
        ("filter[externalOrderId]=X-1", &[0]),
        ("filter[externalOrderId]=X-1,X-3", &[2, 0]),
        // Exact match only.
        ("filter[externalOrderId]=X", &[]),
        ("filter[externalOrderId]=x-1", &[]),
        ("filter[status]=pending", &[2, 0]),
        ("filter[status]=pending,on_hold", &[3, 2, 0]),
        ("filter[fulfillmentStatus]=production_requested", &[1]),
        ("filter[fulfillmentStatus]=pending", &[3, 2, 0]),
        ("filter[paymentStatus]=paid", &[2]),
        ("filter[paymentStatus]=due,paid", &[3, 2, 1, 0]),
        ("filter[status]=pending&filter[paymentStatus]=due", &[0]),
        ("filter[status]=canceled", &[]),
    ];
    for (query, expected) in cases {
        let answer = api.get(ALPHA, &format!("/orders?{query}")).await;
        let expected: Vec<String> = expected.iter().map(|&i| id(i)).collect();
        assert_eq!(ids(&answer), expected, "{query}");
    }
    let echo = api
        .get(
            ALPHA,
            "/orders?filter[externalOrderId]=X-1,X-3&filter[status]=pending",
        )
        .await;
    assert_eq!(
        echo.json["query"]["filter"],
        json!({ "externalOrderId": ["X-1", "X-3"], "status": ["pending"] })
    );
    // Another store's list does not include these orders.
    assert_eq!(
        api.get(BETA, "/orders?filter[externalOrderId]=X-1")
            .await
            .json["totalItems"],
        0
    );
}

#[tokio::test]
async fn sorts_in_both_directions_with_created_at_echoed_and_last() {
    let (_emu, api) = start().await;
    let sorted = |mut v: Vec<String>, desc: bool| {
        v.sort();
        if desc {
            v.reverse();
        }
        v
    };
    for (dir, desc) in [("asc", false), ("desc", true)] {
        let products = api.get(ALPHA, &format!("/products?sort[name]={dir}")).await;
        let names = field(&products, "name");
        assert_eq!(names.len(), 10);
        assert_eq!(names, sorted(names.clone(), desc));
        assert_eq!(
            products.json["query"]["sort"],
            json!({ "name": dir, "createdAt": "desc" })
        );

        let catalog = api
            .get(ALPHA, &format!("/catalog-products?sort[updatedAt]={dir}"))
            .await;
        let updated = field(&catalog, "updatedAt");
        assert_eq!(updated, sorted(updated.clone(), desc));
        assert_eq!(
            catalog.json["query"]["sort"],
            json!({ "updatedAt": dir, "createdAt": "desc" })
        );

        let catalog = api
            .get(
                ALPHA,
                &format!("/catalog-products?sort[name]={dir}&limit=100"),
            )
            .await;
        let names = field(&catalog, "name");
        assert_eq!(names, sorted(names.clone(), desc));

        let created = api
            .get(ALPHA, &format!("/products?sort[createdAt]={dir}"))
            .await;
        let times = field(&created, "createdAt");
        assert_eq!(times, sorted(times.clone(), desc));
        assert_eq!(created.json["query"]["sort"], json!({ "createdAt": dir }));
    }
    // Default: createdAt descending.
    let default = api.get(ALPHA, "/products").await;
    let times = field(&default, "createdAt");
    assert_eq!(times, sorted(times.clone(), true));
}

#[tokio::test]
async fn created_at_breaks_ties_whatever_the_parameter_order() {
    let (_emu, api) = start().await;
    for (id, created) in [
        ("prod_tie_b", "2026-01-02T00:00:00.000Z"),
        ("prod_tie_a", "2026-01-01T00:00:00.000Z"),
        ("prod_tie_c", "2026-01-03T00:00:00.000Z"),
    ] {
        let product =
            json!({ "id": id, "name": "Tie Tee", "status": "active", "createdAt": created });
        let answer = api
            .control(Method::POST, "/stores/store_alpha/products", Some(&product))
            .await;
        answer.ok(201);
    }
    let tie_ids = |answer: &Answer| -> Vec<String> {
        ids(answer)
            .into_iter()
            .filter(|id| id.starts_with("prod_tie_"))
            .collect()
    };
    // (query, tied ids in the expected order)
    let cases: &[(&str, [&str; 3])] = &[
        ("sort[name]=asc", ["prod_tie_c", "prod_tie_b", "prod_tie_a"]),
        (
            "sort[name]=asc&sort[createdAt]=asc",
            ["prod_tie_a", "prod_tie_b", "prod_tie_c"],
        ),
        // createdAt given first is still applied last: name decides first.
        (
            "sort[createdAt]=asc&sort[name]=desc",
            ["prod_tie_a", "prod_tie_b", "prod_tie_c"],
        ),
        (
            "sort[name]=desc&sort[createdAt]=desc",
            ["prod_tie_c", "prod_tie_b", "prod_tie_a"],
        ),
    ];
    for (query, expected) in cases {
        let answer = api.get(ALPHA, &format!("/products?{query}")).await;
        assert_eq!(tie_ids(&answer), expected, "{query}");
        let names = field(&answer, "name");
        let position = names.iter().position(|n| n == "Tie Tee").unwrap();
        assert_eq!(
            &names[position..position + 3],
            ["Tie Tee"; 3],
            "{query}: ties are adjacent"
        );
    }
    let answer = api
        .get(ALPHA, "/products?sort[createdAt]=asc&sort[name]=desc")
        .await;
    assert_eq!(
        answer.json["query"]["sort"],
        json!({ "name": "desc", "createdAt": "asc" })
    );
}

#[tokio::test]
async fn artwork_and_order_sorts() {
    let (_emu, api) = start().await;
    let mut artworks = Vec::new();
    for name in ["banana", "apple", "cherry"] {
        artworks.push(api.create_artwork(ALPHA, name).await);
    }
    let by_name = api.get(ALPHA, "/artworks?sort[name]=asc").await;
    assert_eq!(field(&by_name, "name"), ["apple", "banana", "cherry"]);
    assert_eq!(
        by_name.json["query"]["sort"],
        json!({ "name": "asc", "createdAt": "desc" })
    );
    let newest = api.get(ALPHA, "/artworks").await;
    assert_eq!(field(&newest, "name"), ["cherry", "apple", "banana"]);
    let oldest = api.get(ALPHA, "/artworks?sort[createdAt]=asc").await;
    assert_eq!(field(&oldest, "name"), ["banana", "apple", "cherry"]);
    // Filters the endpoint does not have are ignored.
    assert_eq!(
        api.get(ALPHA, "/artworks?filter[name]=apple").await.json["totalItems"],
        3
    );

    let first = api.create_order(ALPHA, &simple_order(Some("S-1"))).await;
    let second = api.create_order(ALPHA, &simple_order(Some("S-2"))).await;
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    api.advance(ALPHA, first["id"].as_str().unwrap())
        .await
        .ok(200);
    let by_update = api.get(ALPHA, "/orders?sort[updatedAt]=desc").await;
    assert_eq!(
        ids(&by_update),
        [&first["id"], &second["id"]].map(|v| v.as_str().unwrap().to_owned())
    );
    let by_update = api.get(ALPHA, "/orders?sort[updatedAt]=asc").await;
    assert_eq!(
        ids(&by_update),
        [&second["id"], &first["id"]].map(|v| v.as_str().unwrap().to_owned())
    );
    assert_eq!(
        by_update.json["query"]["sort"],
        json!({ "updatedAt": "asc", "createdAt": "desc" })
    );
}

/// The same list asked again is answered from the page kept for it; every kind of change to the
/// store's orders (a new order, a lifecycle step, an app action, an edit of line items) is seen by the
/// very next ask of that same query, and the kept answer of one store never answers another.
#[tokio::test]
async fn a_repeated_list_sees_every_change_to_the_orders() {
    let (emu, api) = start().await;
    const QUERY: &str = "/orders?limit=100&filter[status]=pending,on_hold,canceled,in_production";
    let first = api.create_order(ALPHA, &simple_order(Some("K-1"))).await;
    let id = first["id"].as_str().unwrap().to_owned();
    let asked = api.get(ALPHA, QUERY).await;
    assert_eq!(ids(&asked), vec![id.clone()]);
    assert_eq!(api.get(ALPHA, QUERY).await.json, asked.json, "asked twice");

    let second = api.create_order(ALPHA, &simple_order(Some("K-2"))).await;
    let second = second["id"].as_str().unwrap().to_owned();
    assert_eq!(
        ids(&api.get(ALPHA, QUERY).await),
        [second.clone(), id.clone()]
    );

    api.app_action(ALPHA, &id, "hold").await.ok(200);
    assert_eq!(
        field(&api.get(ALPHA, QUERY).await, "status"),
        ["pending", "on_hold"]
    );

    api.app_action(ALPHA, &second, "cancel").await.ok(200);
    assert_eq!(
        field(&api.get(ALPHA, QUERY).await, "status"),
        ["canceled", "on_hold"]
    );

    let third = api.create_order(ALPHA, &simple_order(Some("K-3"))).await;
    let third = third["id"].as_str().unwrap().to_owned();
    let before = api.get(ALPHA, QUERY).await;
    api.advance(ALPHA, &third).await.ok(200);
    let after = api.get(ALPHA, QUERY).await;
    assert_ne!(before.json, after.json, "a lifecycle step");

    // An edit of line items in the app (the in-process control surface).
    let fourth = api.create_order(ALPHA, &simple_order(Some("K-4"))).await;
    let fourth = fourth["id"].as_str().unwrap().to_owned();
    let before = api.get(ALPHA, QUERY).await;
    let items: Vec<store_api_raw::types::LineItemInput> =
        serde_json::from_value(json!([{ "productVariantId": "pv_aa_sun_blk_s", "quantity": 3 }]))
            .unwrap();
    emu.edit_line_items(ALPHA, &fourth, items).unwrap();
    let after = api.get(ALPHA, QUERY).await;
    assert_ne!(before.json, after.json, "an edit of line items");
    assert_eq!(after.json["items"][0]["lineItems"][0]["quantity"], 3);

    // Another store asked the same query has its own (empty) list.
    assert_eq!(api.get(BETA, QUERY).await.json["totalItems"], 0);
}
