//! artworks create|list|get.

use crate::common::{Env, IMAGE_URL};
use crate::snap;

#[test]
fn create_list_and_get() {
    let env = Env::start();
    let created = env
        .run(&["artworks", "create", "--name", "Logo", "--url", IMAGE_URL])
        .code(0);
    snap!("artworks_create_human", created.stdout);
    let created = env
        .run(&[
            "artworks", "create", "--name", "Logo 2", "--url", IMAGE_URL, "--json",
        ])
        .code(0);
    snap!("artworks_create_json", created.stdout);
    let id = created.json()["id"].as_str().unwrap().to_owned();

    let got = env.run(&["artworks", "get", &id, "--json"]).code(0);
    assert_eq!(got.json(), created.json());

    let list = env.run(&["artworks", "list"]).code(0);
    snap!("artworks_list_human", list.stdout);
    let all = env
        .run(&["artworks", "list", "--all", "--limit", "1", "--json"])
        .code(0);
    let names: Vec<String> = all.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["Logo 2", "Logo"]);
}

#[test]
fn refused_urls_are_api_errors_with_the_services_message() {
    let env = Env::start();
    // Refused locally, before any request.
    let http = env
        .run(&[
            "artworks",
            "create",
            "--name",
            "x",
            "--url",
            "http://art.example.test/logo.png",
        ])
        .code(3);
    assert!(http.stderr.contains("The URL must use HTTPS"), "{http:?}");
    assert!(http.stderr.contains("nothing was sent"), "{http:?}");
    // Refused by the service (the download fails).
    let missing = env
        .run(&[
            "artworks",
            "create",
            "--name",
            "x",
            "--url",
            "https://art.example.test/missing.png",
        ])
        .code(3);
    snap!("artworks_download_failure", missing.stderr);
    let unknown = env
        .run(&["artworks", "get", "art_0000000000000000"])
        .code(3);
    assert!(unknown.stderr.contains("Artwork not found"), "{unknown:?}");
}
