//! Authentication: `Invalid API key` and `The store is not active`, never 403.

use reqwest::Method;
use serde_json::json;

use crate::common::*;

const INVALID: Msg<'static> = Msg::Exact("Invalid API key");
const INACTIVE: Msg<'static> = Msg::Exact("The store is not active");

#[tokio::test]
async fn the_two_401s_for_every_way_a_key_can_be_wrong() {
    let (_emu, api) = start().await;
    // (store in the path, key sent, expected message)
    let cases: &[(&str, Option<&str>, Msg<'_>)] = &[
        (ALPHA, None, INVALID),
        (ALPHA, Some(""), INVALID),
        (ALPHA, Some("csk_00000000000000000000000000000000"), INVALID),
        (ALPHA, Some(&ALPHA_KEY[..35]), INVALID),
        (ALPHA, Some(BETA_KEY), INVALID),
        (BETA, Some(ALPHA_KEY), INVALID),
        ("store_nope", Some(ALPHA_KEY), INVALID),
        ("store_nope", None, INVALID),
        // Another store's key for the inactive store: the key does not match, so not "not active".
        (GAMMA, Some(ALPHA_KEY), INVALID),
        (GAMMA, Some(GAMMA_KEY), INACTIVE),
    ];
    for (store, key, message) in cases {
        for (method, path, body) in [
            (Method::GET, "/status", None),
            (Method::GET, "/products/prod_alpha_sunset_tee", None),
            (Method::GET, "/orders", None),
            (Method::POST, "/orders", Some(simple_order(Some("auth-1")))),
        ] {
            let answer = api
                .call(method.clone(), store, *key, path, body.as_ref())
                .await;
            assert_ne!(answer.status, 403, "never 403");
            answer.error(401, *message);
        }
    }
    assert_eq!(_emu.order_count(ALPHA), 0);
}

#[tokio::test]
async fn the_right_key_answers_the_status_result() {
    let (_emu, api) = start().await;
    for store in [ALPHA, BETA] {
        let answer = api.get(store, "/status").await;
        let body = answer.ok(200);
        assert_eq!(body["status"], "ok");
        assert_eq!(body["version"], "2026-08");
        assert_eq!(body["store"], json!({ "id": store }));
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert_timestamp(&body["checkedAt"], "checkedAt");
    }
}

#[tokio::test]
async fn deactivating_a_store_gives_not_active_and_reactivating_restores_it() {
    let (_emu, api) = start().await;
    let set_active = |active: bool| {
        let api = api.clone();
        async move {
            let answer = api
                .control(
                    Method::PUT,
                    "/stores/store_beta/active",
                    Some(&json!({ "active": active })),
                )
                .await;
            assert_eq!(answer.status, 204, "{}", answer.json);
        }
    };
    set_active(false).await;
    api.get(BETA, "/status").await.error(401, INACTIVE);
    api.post(BETA, "/orders", &beta_order(None))
        .await
        .error(401, INACTIVE);
    // A wrong key is still the other message.
    api.call(Method::GET, BETA, Some(ALPHA_KEY), "/status", None)
        .await
        .error(401, INVALID);
    // Other stores are unaffected.
    api.get(ALPHA, "/status").await.ok(200);
    let stores = api.control(Method::GET, "/stores", None).await;
    let beta = stores
        .json
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == BETA)
        .unwrap()
        .clone();
    assert_eq!(
        beta,
        json!({ "id": BETA, "apiKey": BETA_KEY, "active": false })
    );

    set_active(true).await;
    api.get(BETA, "/status").await.ok(200);
    assert_eq!(_emu.order_count(BETA), 0);
}

#[tokio::test]
async fn the_store_list_shows_the_seeded_credentials() {
    let (emu, api) = start().await;
    let stores = api.control(Method::GET, "/stores", None).await;
    assert_eq!(
        stores.ok(200),
        &json!([
            { "id": ALPHA, "apiKey": ALPHA_KEY, "active": true },
            { "id": BETA, "apiKey": BETA_KEY, "active": true },
            { "id": GAMMA, "apiKey": GAMMA_KEY, "active": false },
        ])
    );
    assert_eq!(emu.active_store().unwrap().id, ALPHA);
    assert!(
        emu.stores()
            .iter()
            .all(|s| s.api_key.len() == 36 && s.api_key.starts_with("csk_"))
    );
}

#[tokio::test]
async fn unauthenticated_floods_get_401_not_429_and_do_not_drain_the_bucket() {
    let emu = builder().rate_limit(true).start().await.unwrap();
    let api = Api::new(&emu);
    for i in 0..30 {
        let key = if i % 2 == 0 { None } else { Some(BETA_KEY) };
        let answer = api.call(Method::GET, ALPHA, key, "/status", None).await;
        answer.error(401, INVALID);
        assert!(answer.header("retry-after").is_none());
    }
    for _ in 0..5 {
        api.call(Method::GET, GAMMA, Some(GAMMA_KEY), "/status", None)
            .await
            .error(401, INACTIVE);
    }
    // The store's own bucket is still full.
    let answer = api.get(ALPHA, "/status").await;
    answer.ok(200);
    assert_eq!(answer.header("x-ratelimit-remaining"), Some("9"));
}
