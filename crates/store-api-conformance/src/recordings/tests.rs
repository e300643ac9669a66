//! The recordings' check on hand-built cassettes: a clean one is all held or not checked, and each way
//! of differing is reported as exactly its own assumption.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use store_api_cassette::{Cassette, CustomerData, Exchange, RecordedBody};

use super::recordings as check;
use crate::report::Verdict;

const STORE: &str = "/store-api/2026-08/stores/store_alpha";

fn headers(remaining: u64, reset: u64) -> BTreeMap<String, String> {
    [
        ("content-type", "application/json".to_owned()),
        ("x-ratelimit-limit", "10".to_owned()),
        ("x-ratelimit-remaining", remaining.to_string()),
        ("x-ratelimit-reset", reset.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn exchange(method: &str, path: &str, body: Option<Value>, status: u16, answer: Value) -> Exchange {
    let (path, query) = match path.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (path, None),
    };
    let mut request = json!({"method": method, "path": format!("{STORE}{path}")});
    if let Some(query) = query {
        request["query"] = query.into();
    }
    if let Some(body) = body {
        request["headers"] = json!({"content-type": "application/json"});
        request["body"] = json!({ "json": body });
    }
    // The cassette's own types are built as a cassette file spells them (they are not exhaustive).
    serde_json::from_value(json!({
        "request": request,
        "answer": {"status": status, "headers": headers(9, 1), "body": {"json": answer}},
    }))
    .unwrap()
}

fn error(status: u16, message: Value) -> Value {
    let reason = match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        409 => "Conflict",
        _ => "Error",
    };
    json!({"statusCode": status, "error": reason, "message": message})
}

fn order_body(external: Value, item: Value) -> Value {
    json!({
        "externalOrderId": external,
        "lineItems": [item],
        "shippingAddress": {"firstName": "A", "lastName": "B", "email": "a@example.com",
            "address": {"streetAddress": "1 Main", "cityOrTown": "X", "stateOrProvince": "IL",
                "zipOrPostalCode": "1", "country": "US"}}
    })
}

fn order(external: &str) -> Value {
    json!({"id": "ord_1", "externalOrderId": external, "status": "pending",
        "fulfillmentStatus": "pending", "paymentStatus": "due",
        "orderedAt": "2026-08-01T00:00:00.000Z", "createdAt": "2026-08-01T00:00:00.000Z"})
}

fn page(items: Vec<Value>, total: u64, page: u64, limit: u64) -> Value {
    let count = items.len() as u64;
    let skip = (page - 1) * limit;
    let (start, end) = if count == 0 {
        (0, 0)
    } else {
        (skip + 1, skip + count)
    };
    json!({"items": items, "totalItems": total, "startItem": start, "endItem": end,
        "totalPages": total.div_ceil(limit),
        "query": {"page": page, "limit": limit, "sort": {"createdAt": "desc"}}})
}

/// A clean session: every situation the assumptions need, answered as the spec says.
fn clean() -> Vec<Exchange> {
    let item = json!({"productVariantId": "pv_1", "quantity": 1});
    let mut invalid = order_body(
        json!("ext-1"),
        json!({"productVariantId": "pv_1", "quantity": 0}),
    );
    invalid["note"] = Value::Null;
    let mut null_body = order_body(Value::Null, item.clone());
    null_body["orderedAt"] = Value::Null;
    let products = vec![
        json!({"id": "p1", "status": "active"}),
        json!({"id": "p2", "status": "draft"}),
    ];
    let mut unauthorized = exchange(
        "GET",
        "/status",
        None,
        401,
        error(401, json!("Invalid API key")),
    );
    unauthorized.answer.headers = headers(9, 1);
    vec![
        exchange(
            "GET",
            "/status",
            None,
            200,
            json!({"status": "ok", "version": "2026-08", "store": {"id": "store_alpha"}}),
        ),
        unauthorized,
        exchange(
            "GET",
            "/products?limit=2&page=1",
            None,
            200,
            page(products, 3, 1, 2),
        ),
        exchange(
            "GET",
            "/products?limit=2&page=9",
            None,
            200,
            page(vec![], 3, 9, 2),
        ),
        exchange(
            "GET",
            "/products?limit=0",
            None,
            400,
            error(400, json!(["limit must not be less than 1"])),
        ),
        exchange(
            "GET",
            "/products?filter[status]=nope",
            None,
            200,
            page(vec![], 0, 1, 50),
        ),
        exchange(
            "POST",
            "/orders",
            Some(order_body(json!("ext-1"), item.clone())),
            201,
            order("ext-1"),
        ),
        exchange(
            "POST",
            "/orders",
            Some(invalid),
            400,
            error(400, json!(["lineItems.0.quantity must not be less than 1"])),
        ),
        exchange(
            "POST",
            "/orders",
            Some(order_body(json!("ext-1"), item.clone())),
            409,
            error(
                409,
                json!("An order already exists with this external order ID: ext-1"),
            ),
        ),
        exchange(
            "POST",
            "/orders",
            Some(null_body),
            400,
            error(
                400,
                json!([
                    "externalOrderId must not be null",
                    "orderedAt must not be null"
                ]),
            ),
        ),
        exchange(
            "POST",
            "/orders",
            Some(order_body(
                json!("ext-2"),
                json!({"productVariantId": "", "sku": "S-1", "quantity": 1}),
            )),
            201,
            order("ext-2"),
        ),
        exchange(
            "POST",
            "/orders",
            Some(order_body(json!(""), item)),
            400,
            error(400, json!(["externalOrderId should not be empty"])),
        ),
    ]
}

fn differing(exchanges: Vec<Exchange>) -> Vec<&'static str> {
    let mut cassette = Cassette::new(CustomerData::Redacted);
    cassette.exchanges = exchanges;
    let report = check(&cassette);
    // Every report prints and serializes.
    assert!(report.to_string().contains("not checked"));
    assert!(serde_json::to_value(&report).is_ok());
    report.differing().map(|finding| finding.id).collect()
}

#[test]
fn a_clean_session_is_held_or_not_checked_and_shows_the_facts_of_bodies() {
    let mut cassette = Cassette::new(CustomerData::Kept);
    cassette.exchanges = clean();
    let report = check(&cassette);
    assert_eq!(report.differing().count(), 0, "{report}");
    for id in [
        "rate-limit-reset",
        "rate-limit-headers",
        "page-past-end",
        "page-limit-minimum",
        "unknown-filter-values",
        "null-fields",
        "create-order-check-order",
        "empty-ids",
        "external-id-not-empty",
        "us-states",
        "ordered-at-default",
        "product-status-values",
        "order-status-values",
    ] {
        assert!(
            matches!(
                report.assumption(id).map(|f| &f.verdict),
                Some(Verdict::Held { .. })
            ),
            "{id}: {report}"
        );
    }
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["assumptions"][0]["verdict"], "held");
    assert!(report.to_string().ends_with("not checked"), "{report}");
}

#[test]
fn each_way_of_differing_is_exactly_its_assumption() {
    let set = |index: usize, change: &dyn Fn(&mut Exchange)| {
        let mut exchanges = clean();
        change(&mut exchanges[index]);
        differing(exchanges)
    };
    // The reset as a Unix time.
    assert_eq!(
        set(0, &|e| {
            e.answer
                .headers
                .insert("x-ratelimit-reset".into(), "1785542400".into());
        }),
        ["rate-limit-reset"]
    );
    // A 401 for the known store without the headers.
    assert_eq!(
        set(1, &|e| e
            .answer
            .headers
            .retain(|k, _| !k.starts_with("x-ratelimit"))),
        ["rate-limit-headers"]
    );
    // A page past the end without the totals.
    assert_eq!(
        set(3, &|e| e.answer.body =
            Some(RecordedBody::Json(page(vec![], 0, 9, 2)))),
        ["page-past-end"]
    );
    // limit=0 read as the default.
    assert_eq!(
        set(4, &|e| e.answer = exchange(
            "GET",
            "/products",
            None,
            200,
            page(vec![], 3, 2, 50)
        )
        .answer),
        ["page-limit-minimum"]
    );
    // An invalid body with a reused externalOrderId answered 409.
    assert_eq!(
        set(7, &|e| e.answer = exchange(
            "GET",
            "/",
            None,
            409,
            error(
                409,
                json!("An order already exists with this external order ID: ext-1")
            )
        )
        .answer),
        ["create-order-check-order"]
    );
    // A declared field sent as null accepted.
    assert_eq!(
        set(9, &|e| e.answer =
            exchange("GET", "/", None, 201, order("x")).answer),
        ["null-fields"]
    );
    // An empty id refused.
    assert_eq!(
        set(10, &|e| e.answer = exchange(
            "GET",
            "/",
            None,
            400,
            error(
                400,
                json!(["lineItems.0.productVariantId should not be empty"])
            )
        )
        .answer),
        ["empty-ids"]
    );
    // An empty externalOrderId accepted.
    assert_eq!(
        set(11, &|e| e.answer =
            exchange("GET", "/", None, 201, order("")).answer),
        ["external-id-not-empty"]
    );
    // A valid order with a reused external id created twice.
    assert_eq!(
        set(8, &|e| e.answer =
            exchange("GET", "/", None, 201, order("ext-1")).answer),
        ["create-order-check-order"]
    );
}

#[test]
fn an_oversized_body_needs_the_413_and_a_wrong_envelope_is_a_statement_differing() {
    let mut exchanges = clean();
    let mut big = exchange(
        "POST",
        "/orders",
        None,
        413,
        error(
            413,
            json!("Request body is larger than the limit of 1048576 bytes"),
        ),
    );
    big.request.body = Some(RecordedBody::Omitted {
        bytes: 2 << 20,
        sha256: "00".into(),
    });
    big.request
        .headers
        .insert("content-type".into(), "application/json".into());
    exchanges.push(big.clone());
    assert_eq!(differing(exchanges.clone()), Vec::<&str>::new());
    let last = exchanges.len() - 1;
    exchanges[last].answer.status = 400;
    assert_eq!(
        differing(exchanges.clone()),
        ["error-envelope", "max-body-size"]
    );
    exchanges[last] = big;
    exchanges[last].answer.body = Some(RecordedBody::Text("too large".into()));
    assert_eq!(differing(exchanges), ["error-envelope", "max-body-size"]);
}

// With customer data redacted, a state is a placeholder valid whatever was sent: a refusal of it is
// no evidence of anything (the recorder's placeholders stay valid for their field).
#[test]
fn a_refused_state_that_is_a_placeholder_is_not_judged() {
    let state = "shippingAddress.address.stateOrProvince must be an existing US state";
    let refused = exchange(
        "POST",
        "/orders",
        Some(order_body(
            json!("ext-9"),
            json!({"productVariantId": "pv_1", "quantity": 1}),
        )),
        400,
        error(400, json!([state])),
    );
    let mut cassette = Cassette::new(CustomerData::Redacted);
    cassette.exchanges = vec![refused];
    let report = check(&cassette);
    assert_eq!(report.differing().count(), 0, "{report}");
    assert!(matches!(
        report.assumption("us-states").map(|f| &f.verdict),
        Some(Verdict::NotChecked { why }) if why.contains("placeholders")
    ));
    cassette.customer_data = CustomerData::Kept;
    let report = check(&cassette);
    let differing: Vec<&str> = report.differing().map(|f| f.id).collect();
    assert_eq!(differing, ["us-states"], "{report}");
}

#[test]
#[ignore = "prints the clean report"]
fn print_clean() {
    let mut cassette = Cassette::new(CustomerData::Redacted);
    cassette.exchanges = clean();
    println!("{}", check(&cassette));
}

#[test]
fn equal_names_out_of_created_at_order_differ_on_sort_order_alone() {
    let items = |first: &str, second: &str| {
        vec![
            json!({"id": "p1", "name": "Tee", "status": "active", "createdAt": first}),
            json!({"id": "p2", "name": "Tee", "status": "active", "createdAt": second}),
            json!({"id": "p3", "name": "Zip", "status": "active", "createdAt": "2026-08-01T00:00:00Z"}),
        ]
    };
    let list = |first: &str, second: &str| {
        exchange(
            "GET",
            "/products?filter[status]=active&sort[name]=asc&limit=3",
            None,
            200,
            page(items(first, second), 3, 1, 3),
        )
    };
    // Newest first among equal names (createdAt desc, the echoed default).
    let newest_first = list("2026-08-02T00:00:00.000Z", "2026-08-01T00:00:00.000Z");
    assert_eq!(differing(vec![newest_first.clone()]), Vec::<&str>::new());
    let mut cassette = Cassette::new(CustomerData::Kept);
    cassette.exchanges = vec![newest_first];
    assert!(matches!(
        check(&cassette)
            .assumption("sort-order")
            .map(|f| &f.verdict),
        Some(Verdict::Held { .. })
    ));
    assert_eq!(
        differing(vec![list(
            "2026-08-01T00:00:00.000Z",
            "2026-08-02T00:00:00.000Z"
        )]),
        ["sort-order"]
    );
    // Written differently, two times are not compared as text.
    assert_eq!(
        differing(vec![list(
            "2026-08-01T00:00:00Z",
            "2026-08-01T00:00:00.500Z"
        )]),
        Vec::<&str>::new()
    );
}
