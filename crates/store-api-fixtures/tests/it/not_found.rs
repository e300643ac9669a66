//! 404s: each resource's own message for another store's id and a nonexistent one, private blanks, and
//! `Cannot <METHOD> <path>` for paths and methods that are not served.

use reqwest::Method;

use crate::common::*;

#[tokio::test]
async fn other_stores_ids_and_unknown_ids_give_the_resources_own_404() {
    let (_emu, api) = start().await;
    let beta_artwork = api.create_artwork(BETA, "beta art").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let beta_order = api.create_order(BETA, &beta_order(Some("b-1"))).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let alpha_order = api.create_order(ALPHA, &simple_order(Some("a-1"))).await["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // (store asking, path, message)
    let cases: Vec<(&str, String, &str)> = vec![
        (
            BETA,
            "/catalog-products/cp_cc1717".into(),
            "Catalog product not found",
        ),
        (
            BETA,
            "/catalog-products/cp_nope".into(),
            "Catalog product not found",
        ),
        (
            ALPHA,
            "/catalog-products/cv_3001_blk_m".into(),
            "Catalog product not found",
        ),
        (
            ALPHA,
            "/products/prod_beta_botanical_tote".into(),
            "Product not found",
        ),
        (
            BETA,
            "/products/prod_alpha_sunset_tee".into(),
            "Product not found",
        ),
        (ALPHA, "/products/prod_nope".into(), "Product not found"),
        (
            ALPHA,
            "/products/pv_aa_sun_blk_s".into(),
            "Product not found",
        ),
        (
            ALPHA,
            format!("/artworks/{beta_artwork}"),
            "Artwork not found",
        ),
        (ALPHA, "/artworks/art_nope".into(), "Artwork not found"),
        (ALPHA, format!("/orders/{beta_order}"), "Order not found"),
        (BETA, format!("/orders/{alpha_order}"), "Order not found"),
        (ALPHA, "/orders/ord_nope".into(), "Order not found"),
    ];
    for (store, path, message) in &cases {
        let answer = api.get(store, path).await;
        answer.error(404, Msg::Exact(message));
        // An authenticated answer carries the rate-limit headers.
        assert!(answer.header("x-ratelimit-limit").is_some(), "{path}");
    }

    // The owners see them.
    api.get(BETA, &format!("/artworks/{beta_artwork}"))
        .await
        .ok(200);
    api.get(BETA, &format!("/orders/{beta_order}"))
        .await
        .ok(200);
    api.get(ALPHA, "/catalog-products/cp_cc1717").await.ok(200);
}

#[tokio::test]
async fn a_private_blank_is_listed_only_for_its_store() {
    let (_emu, api) = start().await;
    let ids = |answer: &Answer| -> Vec<String> {
        answer.json["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let alpha = api.get(ALPHA, "/catalog-products").await;
    let beta = api.get(BETA, "/catalog-products").await;
    assert_eq!(alpha.ok(200)["totalItems"], 11);
    assert_eq!(beta.ok(200)["totalItems"], 10);
    assert!(ids(&alpha).contains(&"cp_cc1717".to_owned()));
    assert!(!ids(&beta).contains(&"cp_cc1717".to_owned()));
    // Filtering cannot reveal it either.
    let filtered = api
        .get(BETA, "/catalog-products?filter[productType]=t-shirt")
        .await;
    assert_eq!(ids(&filtered), ["cp_anvil980", "cp_bc3001"]);
}

#[tokio::test]
async fn paths_and_methods_that_are_not_served() {
    let (_emu, api) = start().await;
    let prefix = "/store-api/2026-08/stores/store_alpha";
    // (method, path, key sent)
    let cases: Vec<(Method, String, Option<&str>)> = vec![
        (Method::GET, "/".into(), None),
        (Method::GET, "/nope".into(), None),
        (Method::GET, "/store-api".into(), None),
        (Method::GET, "/store-api/2026-08".into(), Some(ALPHA_KEY)),
        (
            Method::GET,
            "/store-api/2025-01/stores/store_alpha/status".into(),
            Some(ALPHA_KEY),
        ),
        (
            Method::GET,
            "/store-api/2026-09/stores/store_alpha/orders".into(),
            Some(ALPHA_KEY),
        ),
        (Method::GET, format!("{prefix}/widgets"), Some(ALPHA_KEY)),
        (
            Method::GET,
            format!("{prefix}/orders/ord_1/items"),
            Some(ALPHA_KEY),
        ),
        (Method::GET, format!("{prefix}/stores"), Some(ALPHA_KEY)),
        (Method::DELETE, format!("{prefix}/orders"), Some(ALPHA_KEY)),
        (Method::PUT, format!("{prefix}/orders"), Some(ALPHA_KEY)),
        (
            Method::PATCH,
            format!("{prefix}/orders/ord_1"),
            Some(ALPHA_KEY),
        ),
        (
            Method::DELETE,
            format!("{prefix}/artworks/art_1"),
            Some(ALPHA_KEY),
        ),
        (Method::POST, format!("{prefix}/products"), Some(ALPHA_KEY)),
        (Method::POST, format!("{prefix}/status"), Some(ALPHA_KEY)),
        (Method::DELETE, format!("{prefix}/orders"), None),
    ];
    for (method, path, key) in cases {
        let answer = api
            .send(method.clone(), &format!("{}{path}", api.origin), key, None)
            .await;
        answer.error(404, Msg::Exact(&format!("Cannot {method} {path}")));
    }
}
