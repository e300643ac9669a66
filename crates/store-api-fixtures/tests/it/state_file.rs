//! `.state_file(path)`: the state is written after changes and on shutdown (atomically) and loaded on
//! the next start.

use reqwest::Method;
use serde_json::json;

use crate::common::*;

#[tokio::test]
async fn orders_artworks_and_keys_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");

    let emu = builder().state_file(&path).start().await.unwrap();
    let api = Api::new(&emu);
    let order = api
        .create_order(ALPHA, &simple_order(Some("persist-1")))
        .await;
    let order_id = order["id"].as_str().unwrap().to_owned();
    let advanced = api.advance(ALPHA, &order_id).await.ok(200).clone();
    let artwork = api.create_artwork(ALPHA, "kept").await;
    let new_key = api
        .control(Method::POST, "/stores/store_beta/rotate-key", None)
        .await
        .str("/apiKey");
    // Written after the changes, without waiting for the shutdown (what a crash would otherwise lose).
    wait_until_saved(&path, &new_key).await;
    emu.shutdown().await;

    assert!(path.exists());
    let entries: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, ["state.json"], "no temporary file is left behind");
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert!(saved.is_object());

    let emu = builder().state_file(&path).start().await.unwrap();
    let api = Api::new(&emu);
    let fetched = api.get(ALPHA, &format!("/orders/{order_id}")).await;
    assert_eq!(fetched.ok(200), &advanced);
    assert_eq!(emu.order_count(ALPHA), 1);
    // The 409 still protects the external order id.
    api.post(ALPHA, "/orders", &simple_order(Some("persist-1")))
        .await
        .error(409, Msg::AnyString);
    // The artwork and its stored image.
    let artwork_id = artwork["id"].as_str().unwrap();
    let kept = api
        .get(ALPHA, &format!("/artworks/{artwork_id}"))
        .await
        .ok(200)
        .clone();
    assert_eq!(kept["name"], "kept");
    let image = api
        .send(
            Method::GET,
            kept["image"]["url"].as_str().unwrap(),
            None,
            None,
        )
        .await;
    assert_eq!(
        image.status, 200,
        "the stored copy is served by the restarted emulator"
    );
    // The rotated key.
    api.call(Method::GET, BETA, Some(&new_key), "/status", None)
        .await
        .ok(200);
    api.get(BETA, "/status")
        .await
        .error(401, Msg::Exact("Invalid API key"));
    // New orders continue the numbering.
    let next = api
        .create_order(ALPHA, &simple_order(Some("persist-2")))
        .await;
    assert_ne!(next["name"], order["name"]);
    emu.shutdown().await;

    let entries = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(entries, 1);
    let emu = builder().state_file(&path).start().await.unwrap();
    assert_eq!(emu.order_count(ALPHA), 2);
    drop(emu);
}

#[tokio::test]
async fn a_missing_state_file_starts_from_the_seed_and_a_broken_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fresh.json");
    let emu = builder().state_file(&path).start().await.unwrap();
    assert_eq!(
        Api::new(&emu).get(ALPHA, "/products").await.json["totalItems"],
        10
    );
    emu.shutdown().await;

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, json!({ "stores": 1 }).to_string()).unwrap();
    let error = builder().state_file(&broken).start().await.unwrap_err();
    assert!(error.to_string().contains("broken.json"), "{error}");
}
