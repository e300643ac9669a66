//! Issue 34: the CLI's copy of the store outlives the process. In a store of 5,000 products, the first
//! run reads it whole and keeps it in the cache directory; later runs (new processes) send a handful of
//! requests; a product archived since is refused by the service, nothing billed; a broken file is
//! read again, never an error.

use std::path::PathBuf;

use serde_json::json;

use crate::common::{Env, data};

const STORE_SIZE: usize = 5_000;

/// Requests the emulator has received for the test's store.
fn requests(env: &Env) -> usize {
    env.emu.requests(&env.store).unwrap().len()
}

/// The one saved copy in the test's cache directory.
fn cache_file(env: &Env) -> PathBuf {
    let dir = env.cache.path().join("store-api").join("stores");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// An order file for one unit of `sku`, in a folder that lives as long as the returned guard.
fn order_for(sku: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("order.json");
    let mut order: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("order.json")).unwrap()).unwrap();
    order["lineItems"] = json!([{ "sku": sku, "quantity": 1 }]);
    std::fs::write(&path, order.to_string()).unwrap();
    let path = path.to_str().unwrap().to_owned();
    (dir, path)
}

/// The seeded tee as a new product `prod_copy_{n}`, with variant ids and SKUs of its own.
fn tee_copy(tee: &serde_json::Value, n: usize) -> store_api::model::Product {
    let mut copy: store_api::model::Product = serde_json::from_value(tee.clone()).unwrap();
    copy.id = format!("prod_copy_{n}");
    copy.created_at = None;
    for variant in &mut copy.variants {
        variant.id = format!("{}_c{n}", variant.id);
        variant.sku = variant.sku.as_ref().map(|sku| format!("{sku}-C{n}"));
    }
    copy
}

#[test]
fn a_store_of_5000_products_is_read_once_and_later_runs_send_a_handful_of_requests() {
    let env = Env::start();
    let tee = env
        .run(&["products", "get", "prod_alpha_sunset_tee", "--json"])
        .json();
    for n in 0..STORE_SIZE {
        env.emu
            .create_product(&env.store, tee_copy(&tee, n))
            .unwrap();
    }

    // The first run reads the store whole (51 pages of products) and keeps it.
    let before = requests(&env);
    let first = env.run(&[
        "orders",
        "submit",
        "--no-write",
        "--file",
        &data("order.json"),
    ]);
    assert_eq!(first.code, 0, "{first:?}");
    assert!(requests(&env) - before > 50);
    let file = cache_file(&env);
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(!saved.contains(&env.key), "the saved copy holds no key");
    assert!(saved.contains("prod_copy_4999"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }

    // A product added after the fill, ordered by a new process: at most 5 requests in all.
    env.emu
        .create_product(&env.store, tee_copy(&tee, 90_000))
        .unwrap();
    let (_dir, new_product) = order_for("AA-TEE-SUN-BLK-M-C90000");
    let before = requests(&env);
    let second = env.run(&[
        "orders",
        "submit",
        "--no-write",
        "--file",
        &new_product,
        "--json",
    ]);
    assert_eq!(second.code, 0, "{second:?}");
    let sent = requests(&env) - before;
    assert!(sent <= 5, "the second run sent {sent} requests");

    // A product archived after the fill: the copy on disk, fresh, still holds it active; the
    // service refuses it with its 400, and nothing is billed. At most 4 requests.
    let mut archived = tee_copy(&tee, 7);
    archived.status = Some(store_api::model::ProductStatus::Archived);
    env.emu
        .update_product(&env.store, "prod_copy_7", archived)
        .unwrap();
    let orders_before = env.emu.order_count(&env.store);
    let (_dir, archived_order) = order_for("AA-TEE-SUN-BLK-M-C7");
    let before = requests(&env);
    let third = env.run(&["orders", "submit", "--no-write", "--file", &archived_order]);
    let sent = requests(&env) - before;
    assert_ne!(third.code, 0, "{third:?}");
    assert!(
        third
            .stderr
            .contains("Products that are not active or unlisted cannot be ordered"),
        "{third:?}"
    );
    assert!(sent <= 4, "the third run sent {sent} requests");
    assert_eq!(
        env.emu.order_count(&env.store),
        orders_before,
        "nothing billed"
    );

    // Skipping the check reads nothing first: the POST alone.
    let before = requests(&env);
    let skipped = env.run(&[
        "orders",
        "submit",
        "--no-write",
        "--no-preflight",
        "--file",
        &new_product,
    ]);
    assert_eq!(skipped.code, 0, "{skipped:?}");
    assert_eq!(requests(&env) - before, 1);
}

#[test]
fn a_broken_or_foreign_saved_copy_is_read_again_and_rewritten() {
    let env = Env::start();
    let check = [
        "orders",
        "submit",
        "--dry-run",
        "--file",
        &data("order.json"),
    ];
    let first = env.run(&check);
    assert_eq!(first.code, 0, "{first:?}");
    let file = cache_file(&env);
    let good = std::fs::read_to_string(&file).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&good).unwrap();
    let mut older = saved.clone();
    older["format"] = json!(0);
    let mut other_store = saved.clone();
    other_store["storeId"] = json!("store_beta");
    for broken in [
        "not json at all".to_owned(),
        good[..good.len() / 2].to_owned(),
        String::new(),
        older.to_string(),
        other_store.to_string(),
    ] {
        std::fs::write(&file, &broken).unwrap();
        let before = requests(&env);
        let run = env.run(&check);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(requests(&env) > before, "the store was read again");
        let rewritten: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(rewritten["format"], saved["format"]);
        assert_eq!(rewritten["storeId"], saved["storeId"]);
    }
    // A good copy is used as it is: a dry run then sends nothing.
    let before = requests(&env);
    assert_eq!(env.run(&check).code, 0);
    assert_eq!(requests(&env), before);
}
