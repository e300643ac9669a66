//! Issue 38, point 3: scripting like gh. `--jq` (jaq), the one JSON form of every list, tables as
//! tab-separated rows into a pipe (these tests' stdout is one), filter flags refusing unknown values,
//! and `api -H`, `-i`, `--paginate`.

use crate::common::Env;
use crate::snap;

#[test]
fn jq_filters_what_json_would_print_and_prints_strings_raw() {
    let env = Env::start();
    // A list: the filter sees `{"items": [...], "totalItems": N, ...}`.
    let ids = env
        .run(&["products", "list", "--limit", "3", "--jq", ".items[].id"])
        .code(0);
    snap!("scripting_jq_list", ids.stdout);
    let totals = env
        .run(&[
            "products",
            "list",
            "--limit",
            "3",
            "--jq",
            "[.totalItems, .page, .totalPages]",
        ])
        .code(0);
    assert_eq!(totals.stdout, "[10,1,4]\n");
    // --all: every item, and their number.
    let all = env
        .run(&[
            "products",
            "list",
            "--all",
            "--limit",
            "4",
            "--jq",
            "[(.items | length), .totalItems]",
        ])
        .code(0);
    assert_eq!(all.stdout, "[10,10]\n");

    // A get, with jq's formats: tab-separated fields, one row per result.
    let variants = env
        .run(&[
            "products",
            "get",
            "prod_alpha_logo_cap",
            "--jq",
            ".variants[] | [.id, .sku, .cost] | @tsv",
        ])
        .code(0);
    snap!("scripting_jq_get", variants.stdout);
    let object = env
        .run(&["catalog", "get", "cp_yp6089m", "--jq", "{id, name}"])
        .code(0);
    assert_eq!(object.json()["id"], "cp_yp6089m");
    assert_eq!(object.stdout.lines().count(), 1, "compact: {object:?}");

    // `api` filters a JSON body the same way.
    let store = env
        .run(&["api", "GET", "/status", "--jq", ".store.id"])
        .code(0);
    assert_eq!(store.stdout, format!("{}\n", env.store));
}

#[test]
fn a_bad_jq_expression_is_a_usage_error_before_anything_is_sent() {
    // No credentials: the expression is refused before a session is even opened.
    let bad = crate::common::bare()
        .args(["orders", "list", "--jq", ".items["])
        .output()
        .unwrap();
    let bad = crate::common::Run::from(bad).code(2);
    snap!("scripting_jq_bad_expression", bad.stderr);
    assert!(bad.stdout.is_empty(), "{bad:?}");
    // A filter that fails on the data: exit 1, after the request.
    let env = Env::start();
    let failed = env.run(&["status", "--jq", ".store.id + 1"]).code(1);
    assert!(failed.stderr.starts_with("error: --jq: "), "{failed:?}");
}

#[test]
fn every_list_prints_one_json_object_with_its_totals() {
    let env = Env::start();
    env.submit("script-1");
    for command in [
        ["catalog", "list"],
        ["products", "list"],
        ["artworks", "list"],
        ["orders", "list"],
    ] {
        let page = env
            .run(&[command[0], command[1], "--limit", "2", "--json"])
            .code(0)
            .json();
        let object = page.as_object().unwrap();
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["items", "page", "totalItems", "totalPages"],
            "{command:?}"
        );
        assert!(page["items"].is_array(), "{command:?}: {page}");
        let all = env
            .run(&[command[0], command[1], "--all", "--limit", "2", "--json"])
            .code(0)
            .json();
        assert_eq!(
            all["items"].as_array().unwrap().len() as u64,
            all["totalItems"].as_u64().unwrap(),
            "{command:?}"
        );
        assert_eq!(all["totalItems"], page["totalItems"], "{command:?}");
        assert!(all.get("page").is_none(), "{command:?}: {all}");
    }
}

#[test]
fn tables_into_a_pipe_are_tab_separated_rows_and_the_footer_goes_to_stderr() {
    let env = Env::start();
    let list = env.run(&["products", "list", "--limit", "4"]).code(0);
    snap!("scripting_tsv_products_list", list.stdout);
    for row in list.stdout.lines() {
        assert_eq!(row.split('\t').count(), 6, "{row:?}");
    }
    assert!(
        list.stderr
            .contains("page 1 of 3, 10 products in all (--page N for more, --all for every page)"),
        "{list:?}"
    );
    let detail = env.run(&["catalog", "get", "cp_bc3001"]).code(0);
    assert!(
        detail.stdout.starts_with("id\tcp_bc3001\nname\t"),
        "{detail:?}"
    );
    assert!(!detail.stdout.contains('│'), "{detail:?}");
}

#[test]
fn an_unknown_filter_value_is_refused_with_the_known_values() {
    let env = Env::start();
    let bogus = env.run(&["orders", "list", "--status", "bogus"]).code(2);
    snap!("scripting_unknown_status", bogus.stderr);
    assert!(bogus.stdout.is_empty(), "{bogus:?}");
    // Every filter flag whose values are an enumeration of the spec, through the same parser.
    for args in [
        ["orders", "list", "--fulfillment-status", "pending,shipped"],
        ["orders", "list", "--payment-status", "owed"],
        ["products", "list", "--status", "live"],
        ["catalog", "list", "--method", "laser-etching"],
    ] {
        let refused = env.run(&args).code(2);
        assert!(
            refused.stderr.contains("invalid value") && refused.stderr.contains("possible values"),
            "{args:?}: {refused:?}"
        );
    }
    // The known values, comma-separated or repeated, still filter.
    env.run(&[
        "orders",
        "list",
        "--status",
        "pending,on_hold",
        "--status",
        "canceled",
    ])
    .code(0);
    env.run(&["catalog", "list", "--method", "embroidery"])
        .code(0);
}

#[test]
fn api_sends_headers_but_never_the_key_and_prints_the_head_with_i() {
    let env = Env::start();
    // The emulator acts on its fault header: proof that -H reached it.
    let fault = env
        .run(&[
            "api",
            "GET",
            "/status",
            "-H",
            r#"X-Emulator-Fault: {"kind":"status","status":418}"#,
        ])
        .code(3);
    assert!(fault.stderr.contains("418"), "{fault:?}");

    let key = env
        .run(&["api", "GET", "/status", "-H", "x-api-key: csk_not_mine"])
        .code(2);
    snap!("scripting_api_header_key_refused", key.stderr);
    assert!(!key.stderr.contains("csk_not_mine"), "{key:?}");
    env.run(&["api", "GET", "/status", "-H", "no colon"])
        .code(2);

    let head = env.run(&["api", "GET", "/status", "-i"]).code(0);
    let settings = {
        let mut settings = crate::common::settings();
        settings.add_filter(r"(?m)^date: .*$", "date: [DATE]");
        settings.add_filter(
            r"(?m)^x-ratelimit-(remaining|reset): \d+$",
            "x-ratelimit-$1: [N]",
        );
        settings
    };
    settings.bind(|| insta::assert_snapshot!("scripting_api_include", head.stdout));
    assert!(!head.stdout.contains(&env.key), "{head:?}");
    assert_eq!(head.stderr, "200 OK\n");
}

#[test]
fn api_paginate_walks_every_page_of_a_list() {
    let env = Env::start();
    let orders: Vec<String> = (1..=5).map(|n| env.submit(&format!("page-{n}"))).collect();
    // 5 orders, 2 a page: 3 pages, each requested with the rest of the query as written.
    let walked = env
        .run(&["api", "GET", "/orders?limit=2&page=1", "--paginate"])
        .code(0);
    let list = walked.json();
    assert_eq!(list["totalItems"], 5);
    let ids: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    let newest_first: Vec<&str> = orders.iter().rev().map(String::as_str).collect();
    assert_eq!(ids, newest_first);
    // The same form as the list commands' --all, and --jq over it.
    let all = env
        .run(&["orders", "list", "--all", "--limit", "2", "--json"])
        .code(0);
    assert_eq!(all.json(), list);
    let jq = env
        .run(&[
            "api",
            "GET",
            "/products?limit=3",
            "--paginate",
            "--jq",
            ".items | length",
        ])
        .code(0);
    assert_eq!(jq.stdout, "10\n");
    // -i with --paginate: one head per page.
    let heads = env
        .run(&["api", "GET", "/orders?limit=2", "--paginate", "-i"])
        .code(0);
    assert_eq!(heads.stdout.matches("200 OK\n").count(), 3, "{heads:?}");
    // Only a GET of a list.
    env.run(&["api", "POST", "/orders", "--paginate"]).code(2);
    env.run(&["api", "GET", "/status", "--paginate"]).code(2);
}
