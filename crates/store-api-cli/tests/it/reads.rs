//! status, catalog, products, and what every API command shares: credentials, exit codes, errors.

use crate::common::{Env, Run, bare};
use crate::snap;

#[test]
fn status_in_both_forms() {
    let env = Env::start();
    let human = env.run(&["status"]).code(0);
    snap!("status_human", human.stdout);
    let json = env.run(&["status", "--json"]).code(0);
    snap!("status_json", json.stdout);
    assert_eq!(json.json()["store"]["id"], "store_alpha");
}

#[test]
fn missing_credentials_are_a_usage_error_naming_each_one() {
    let all = Run::from(bare().arg("status").output().unwrap()).code(2);
    snap!("missing_credentials", all.stderr);
    let some = Run::from(
        bare()
            .args(["status", "--api-key", "csk_x", "--store-id", "store_alpha"])
            .output()
            .unwrap(),
    )
    .code(2);
    assert!(
        some.stderr.contains("--base-url (or STORE_API_BASE_URL)"),
        "{some:?}"
    );
    assert!(!some.stderr.contains("--store-id ("), "{some:?}");
    assert!(!some.stderr.contains("--api-key ("), "{some:?}");
    // No silent fallback to the emulator.
    assert!(!some.stderr.contains("embedded emulator at"), "{some:?}");
}

// Issue 29, item 9: an http:// base URL to a host that is not loopback sent the key in clear text.
#[test]
fn http_to_a_host_that_is_not_loopback_is_refused_unless_the_flag_allows_it() {
    let run = Run::from(
        bare()
            .args(["status", "--api-key", "csk_x", "--store-id", "store_alpha"])
            .args(["--base-url", "http://api.example.test"])
            .output()
            .unwrap(),
    )
    .code(2);
    assert!(run.stderr.contains("clear text"), "{run:?}");
    assert!(run.stderr.contains("--allow-insecure-http"), "{run:?}");
}

#[test]
fn the_key_is_never_printed() {
    let env = Env::start();
    let secret = "csk_0123456789abcdef0123456789abcdef";
    let wrong = env.run(&["status", "--api-key", secret]).code(3);
    assert!(
        wrong.stderr.contains("401 Unauthorized: Invalid API key"),
        "{wrong:?}"
    );
    let help = Run::from(
        bare()
            .env("STORE_API_KEY", secret)
            .env("STORE_API_BASE_URL", "http://secret-host.example")
            .args(["status", "--help"])
            .output()
            .unwrap(),
    )
    .code(0);
    let json_error = env.run(&["status", "--api-key", secret, "--json"]).code(3);
    for run in [wrong, help, json_error] {
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(!all.contains("0123456789abcdef"), "{run:?}");
        assert!(!all.contains("secret-host"), "{run:?}");
    }
}

#[test]
fn exit_codes_tell_usage_api_and_transport_failures_apart() {
    let env = Env::start();
    // Usage: clap's own checks.
    env.run(&["catalog", "list", "--limit", "101"]).code(2);
    env.run(&["orders", "list", "--page", "0"]).code(2);
    env.run(&["orders", "list", "--page", "2", "--all"]).code(2);
    env.run(&["no-such-command"]).code(2);
    // 404 from the API.
    let missing = env.run(&["products", "get", "prod_nope"]).code(3);
    assert_eq!(missing.stderr, "error: 404 Not Found: Product not found\n");
    // With --json the failure is one JSON object on stderr.
    let json = env.run(&["orders", "get", "ord_nope", "--json"]).code(3);
    let error: serde_json::Value = serde_json::from_str(&json.stderr).unwrap();
    assert_eq!(error["error"]["statusCode"], 404);
    assert_eq!(error["error"]["exitCode"], 3);
    assert!(json.stdout.is_empty());
    // A closed port: connection refused after the read retries.
    let down = Run::from(
        env.cmd()
            .args(["status", "--base-url", "http://127.0.0.1:1"])
            .output()
            .unwrap(),
    )
    .code(4);
    assert!(
        down.stderr.starts_with("error: connection failed"),
        "{down:?}"
    );
}

#[test]
fn catalog_list_and_get() {
    let env = Env::start();
    let page = env.run(&["catalog", "list", "--limit", "4"]).code(0);
    snap!("catalog_list_human", page.stdout);

    let filtered = env
        .run(&[
            "catalog",
            "list",
            "--product-type",
            "t-shirt,hoodie",
            "--method",
            "embroidery",
            "--json",
        ])
        .code(0);
    let mut ids: Vec<String> = filtered.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    assert_eq!(ids, ["cp_bc3001", "cp_cc1717", "cp_g18500"]);

    let all = env
        .run(&["catalog", "list", "--all", "--limit", "3", "--json"])
        .code(0);
    assert_eq!(all.json()["items"].as_array().unwrap().len(), 11);
    let all_human = env
        .run(&["catalog", "list", "--all", "--limit", "5"])
        .code(0);
    assert!(
        all_human.stderr.ends_with("11 blanks (every page)\n"),
        "{all_human:?}"
    );

    let blank = env.run(&["catalog", "get", "cp_yp6089m"]).code(0);
    snap!("catalog_get_human", blank.stdout);
    let blank = env.run(&["catalog", "get", "cp_yp6089m", "--json"]).code(0);
    snap!("catalog_get_json", blank.stdout);

    let gone = env.run(&["catalog", "get", "cp_nope"]).code(3);
    assert!(
        gone.stderr.contains("Catalog product not found"),
        "{gone:?}"
    );
}

#[test]
fn products_list_and_get() {
    let env = Env::start();
    let list = env.run(&["products", "list"]).code(0);
    snap!("products_list_human", list.stdout);

    let drafts = env
        .run(&["products", "list", "--status", "draft", "--json"])
        .code(0);
    let mut ids: Vec<String> = drafts.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    assert_eq!(ids, ["prod_alpha_monogram_case", "prod_alpha_wave_tote"]);

    let all = env
        .run(&["products", "list", "--all", "--limit", "4", "--json"])
        .code(0);
    assert_eq!(all.json()["items"].as_array().unwrap().len(), 10);

    let cap = env.run(&["products", "get", "prod_alpha_logo_cap"]).code(0);
    snap!("products_get_human", cap.stdout);
    let cap = env
        .run(&["products", "get", "prod_alpha_logo_cap", "--json"])
        .code(0);
    snap!("products_get_json", cap.stdout);
}

// Issue 29, defect 9: tables printed server and customer strings with their control characters, so a
// product or customer name could retitle the terminal (`ESC ] 0 ; … BEL`) or clear it (`ESC [ 2 J`).
// Every cell and line for humans is cleaned; `--json` keeps the exact strings.
#[test]
fn control_characters_of_server_strings_never_reach_the_terminal() {
    const TITLE: &str = "\u{1b}]0;pwned\u{7}";
    const CLEAR: &str = "\u{1b}[2J";
    let mut seed = store_api_fixtures::Seed::builtin();
    let product = seed
        .products
        .iter_mut()
        .find(|p| p.product.id == "prod_alpha_sunset_tee")
        .unwrap();
    product.product.name = Some(format!("Sunset{TITLE} Tee{CLEAR}\u{9b}2J\u{7f}"));
    let env = Env::start_with(|builder| builder.seed(seed));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("order.json");
    let order = std::fs::read_to_string(crate::common::data("order.json"))
        .unwrap()
        .replace("\"Ada\"", "\"Ada\\u001b]0;pwned\\u0007\"")
        .replace("\"Lovelace\"", "\"\\u001b[2JLovelace\\r\"");
    std::fs::write(&file, order).unwrap();
    let submitted = env
        .run(&[
            "orders",
            "submit",
            "--file",
            file.to_str().unwrap(),
            "--external-id",
            "ctl-1",
        ])
        .code(0);
    let order_id = env
        .run(&["orders", "find", "--external-id", "ctl-1", "--json"])
        .code(0)
        .json()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let runs = [
        submitted,
        env.run(&["products", "list"]).code(0),
        env.run(&["products", "get", "prod_alpha_sunset_tee"])
            .code(0),
        env.run(&["orders", "get", &order_id]).code(0),
        env.run(&["orders", "find", "--external-id", "ctl-1"])
            .code(0),
    ];
    for run in &runs {
        let control = run
            .stdout
            .chars()
            .chain(run.stderr.chars())
            // Line breaks, and tabs between the fields of a row piped (issue 38): never inside a value.
            .find(|c| (c.is_control() && !['\n', '\t'].contains(c)) || *c == '\u{9b}');
        assert_eq!(control, None, "{run:?}");
        assert!(run.stdout.contains("pwned"), "still shown: {run:?}");
    }
    let list = env.run(&["orders", "list"]).code(0);
    assert!(!list.stdout.contains('\u{1b}'), "{list:?}");
    // --json keeps the strings exactly.
    let json = env
        .run(&["products", "get", "prod_alpha_sunset_tee", "--json"])
        .code(0);
    assert_eq!(
        json.json()["name"],
        format!("Sunset{TITLE} Tee{CLEAR}\u{9b}2J\u{7f}")
    );
    let json = env.run(&["orders", "get", &order_id, "--json"]).code(0);
    assert_eq!(
        json.json()["shippingAddress"]["firstName"],
        format!("Ada{TITLE}")
    );
    assert!(!json.stdout.contains('\u{1b}'), "escaped in JSON: {json:?}");
    // JSON leaves DEL and C1 raw inside strings (`\u{9b}` is CSI to an 8-bit terminal), and so did
    // `--json` and `api`: they are JSON escapes now, and the value is unchanged.
    let name = format!("Sunset{TITLE} Tee{CLEAR}\u{9b}2J\u{7f}");
    let runs = [
        env.run(&["products", "get", "prod_alpha_sunset_tee", "--json"])
            .code(0),
        env.run(&["products", "list", "--json"]).code(0),
        env.run(&["api", "GET", "/products/prod_alpha_sunset_tee"])
            .code(0),
    ];
    for run in &runs {
        let raw = run.stdout.chars().find(|c| c.is_control() && *c != '\n');
        assert_eq!(raw, None, "{run:?}");
        assert!(
            !run.stdout.contains(&name) && run.stdout.contains("\\u009b"),
            "{run:?}"
        );
    }
    assert_eq!(runs[0].json()["name"], name);
    assert_eq!(runs[2].json()["name"], name);
}
