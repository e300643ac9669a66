//! `POST /artworks` from fake hosts: the stored copy served at `image.url`, and every URL-rule message.

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use reqwest::Method;
use serde_json::{Value, json};
use store_api_fixtures::artwork::FetchLimits;

use crate::common::*;

fn hosts() -> Value {
    json!({
        "https://art.example.test/logo.png": { "contentBase64": PNG_BASE64, "contentType": "image/png" },
        "https://art.example.test/photo.jpg": { "contentBase64": BASE64.encode(JPEG_BYTES) },
        "https://art.example.test/gone.png": { "status": 404 },
        "https://art.example.test/moved.png": { "status": 302 },
        "https://art.example.test/text.png": { "contentBase64": BASE64.encode(b"hello, not an image"), "contentType": "image/png" },
        "https://art.example.test/gif.png": { "contentBase64": BASE64.encode(b"GIF89a\x01\x00\x01\x00") },
    })
}

fn artwork_body(url: &str) -> Value {
    json!({ "name": "Sunset", "image": { "url": url } })
}

#[tokio::test]
async fn an_artwork_is_downloaded_stored_and_served_from_the_emulator() {
    let (emu, api) = start().await;
    api.artwork_hosts(&hosts()).await;
    // (source, expected bytes, content type)
    let png = BASE64.decode(PNG_BASE64).unwrap();
    let cases: [(&str, &[u8], &str); 2] = [
        ("https://art.example.test/logo.png", &png, "image/png"),
        (
            "https://art.example.test/photo.jpg",
            JPEG_BYTES,
            "image/jpeg",
        ),
    ];
    for (url, bytes, content_type) in cases {
        let created = api.post(ALPHA, "/artworks", &artwork_body(url)).await;
        let artwork = created.ok(201).clone();
        assert_eq!(artwork["name"], "Sunset");
        let id = artwork["id"].as_str().unwrap();
        assert!(!id.is_empty());
        assert!(
            artwork["image"]["id"]
                .as_str()
                .is_some_and(|i| !i.is_empty())
        );
        assert_timestamp(&artwork["createdAt"], "createdAt");
        assert_timestamp(&artwork["updatedAt"], "updatedAt");
        let image_url = artwork["image"]["url"].as_str().unwrap();
        assert!(
            image_url.starts_with(emu.origin()),
            "{image_url} is the emulator's own copy"
        );

        let fetched = api.get(ALPHA, &format!("/artworks/{id}")).await;
        assert_eq!(fetched.ok(200), &artwork);

        // The copy is served even after the source goes away.
        let image = api.send(Method::GET, image_url, None, None).await;
        assert_eq!(image.status, 200);
        assert_eq!(image.header("content-type"), Some(content_type));
        assert_eq!(&image.bytes[..], bytes);
    }
    api.artwork_hosts(&json!({})).await;
    let listed = api.get(ALPHA, "/artworks").await;
    assert_eq!(listed.json["totalItems"], 2);
    let first_url = listed.json["items"][1]["image"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        api.send(Method::GET, &first_url, None, None).await.status,
        200
    );
    api.control(Method::GET, "/images/img_nope", None)
        .await
        .error(404, Msg::Exact("Image not found"));
}

#[tokio::test]
async fn the_same_image_twice_makes_two_artworks() {
    let (_emu, api) = start().await;
    api.artwork_hosts(&hosts()).await;
    let a = api
        .post(
            ALPHA,
            "/artworks",
            &artwork_body("https://art.example.test/logo.png"),
        )
        .await;
    let b = api
        .post(
            ALPHA,
            "/artworks",
            &artwork_body("https://art.example.test/logo.png"),
        )
        .await;
    assert_ne!(a.ok(201)["id"], b.ok(201)["id"]);
    assert_ne!(a.json["image"]["id"], b.json["image"]["id"]);
    assert_eq!(api.get(ALPHA, "/artworks").await.json["totalItems"], 2);
    assert_eq!(api.get(BETA, "/artworks").await.json["totalItems"], 0);
}

#[tokio::test]
async fn every_url_rule_has_its_message() {
    let (_emu, api) = start().await;
    api.artwork_hosts(&hosts()).await;
    const DOWNLOAD: &str = "Could not download the artwork image from the URL";
    let cases: &[(&str, &str)] = &[
        ("not a url", "The URL is not a valid URL"),
        ("", "The URL is not a valid URL"),
        ("art.example.test/logo.png", "The URL is not a valid URL"),
        ("http://art.example.test/logo.png", "The URL must use HTTPS"),
        ("ftp://art.example.test/logo.png", "The URL must use HTTPS"),
        (
            "https://user:secret@art.example.test/logo.png",
            "The URL must not carry credentials",
        ),
        (
            "https://user@art.example.test/logo.png",
            "The URL must not carry credentials",
        ),
        (
            "https://127.0.0.1/x.png",
            "The URL must not point to a private address",
        ),
        (
            "https://10.0.0.1/x.png",
            "The URL must not point to a private address",
        ),
        (
            "https://192.168.1.20/x.png",
            "The URL must not point to a private address",
        ),
        (
            "https://[::1]/x.png",
            "The URL must not point to a private address",
        ),
        // With network downloads off, a host that is not registered cannot be downloaded; the
        // emulator says how to register it, after the service's words.
        (
            "https://unregistered.example.test/x.png",
            "Could not download the artwork image from the URL (emulator: no image of the host unregistered.example.test is registered; register one with PUT /_emulator/artwork-hosts, or use the sample https://demo-assets.example.test/sunset-3000x2400.png)",
        ),
        ("https://art.example.test/gone.png", DOWNLOAD),
        ("https://art.example.test/moved.png", DOWNLOAD),
        ("https://art.example.test/text.png", DOWNLOAD),
        ("https://art.example.test/gif.png", DOWNLOAD),
        ("https://art.example.test/not-registered.png", DOWNLOAD),
    ];
    for (url, message) in cases {
        let answer = api.post(ALPHA, "/artworks", &artwork_body(url)).await;
        answer.error(400, Msg::Exact(message));
    }
    assert_eq!(api.get(ALPHA, "/artworks").await.json["totalItems"], 0);
}

#[tokio::test]
async fn localhost_is_private_after_resolution() {
    let emu = builder().network_downloads(true).start().await.unwrap();
    let api = Api::new(&emu);
    let answer = api
        .post(ALPHA, "/artworks", &artwork_body("https://localhost/x.png"))
        .await;
    answer.error(
        400,
        Msg::Exact("The URL must not point to a private address"),
    );
}

#[tokio::test]
async fn a_download_slower_than_the_timeout_fails() {
    let emu = builder()
        .fetch_limits(FetchLimits::new(
            Duration::from_millis(200),
            50 * 1024 * 1024,
        ))
        .start()
        .await
        .unwrap();
    let api = Api::new(&emu);
    api.artwork_hosts(&json!({ "https://slow.example.test/a.png": { "delayMs": 20_000 } }))
        .await;
    let started = Instant::now();
    let answer = api
        .post(
            ALPHA,
            "/artworks",
            &artwork_body("https://slow.example.test/a.png"),
        )
        .await;
    let elapsed = started.elapsed();
    answer.error(
        400,
        Msg::Exact("Could not download the artwork image from the URL"),
    );
    assert!(elapsed >= Duration::from_millis(200), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[tokio::test]
async fn name_and_image_are_validated_as_message_arrays() {
    let (_emu, api) = start().await;
    api.artwork_hosts(&hosts()).await;
    let url = "https://art.example.test/logo.png";
    let cases: Vec<(Value, Msg<'_>)> = vec![
        (
            json!({ "name": "x" }),
            Msg::List(&["image should not be null or undefined"]),
        ),
        (
            json!({ "name": "x", "image": {} }),
            Msg::List(&["image.url should not be null or undefined"]),
        ),
        (
            json!({ "name": "", "image": { "url": url } }),
            Msg::List(&["name should not be empty"]),
        ),
        (
            json!({ "image": { "url": url } }),
            Msg::List(&["name should not be null or undefined"]),
        ),
    ];
    for (body, message) in cases {
        api.post(ALPHA, "/artworks", &body)
            .await
            .error(400, message);
    }
    // A name over the bound is a field failure naming `name`.
    let long = api
        .post(
            ALPHA,
            "/artworks",
            &json!({ "name": "n".repeat(256), "image": { "url": url } }),
        )
        .await;
    assert_eq!(long.status, 400);
    let messages = long.json["message"].as_array().unwrap();
    assert!(
        messages.len() == 1 && messages[0].as_str().unwrap().starts_with("name "),
        "{messages:?}"
    );
    // Unknown fields are ignored and not stored.
    let created = api
        .post(
            ALPHA,
            "/artworks",
            &json!({ "name": "x", "tags": ["a"], "image": { "url": url, "alt": "y" } }),
        )
        .await;
    let artwork = created.ok(201);
    assert!(!has_key(artwork, "tags") && !has_key(artwork, "alt"));
    assert_eq!(api.get(ALPHA, "/artworks").await.json["totalItems"], 1);
}

#[tokio::test]
async fn fake_hosts_are_validated_when_registered() {
    let (_emu, api) = start().await;
    let answer = api
        .control(
            Method::PUT,
            "/artwork-hosts",
            Some(&json!({ "http://x.example.test/a.png": { "status": 404 } })),
        )
        .await;
    assert_eq!(answer.status, 400);
    assert!(answer.json["message"].is_array());
}
