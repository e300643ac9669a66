//! Requests matched to the spec's operations (`contract::operation_at`), as the client's spans and
//! the cassettes' checks find them.

use store_api_raw::contract::operation_at;

#[test]
fn a_request_is_matched_to_its_operation_from_its_method_and_path() {
    let at = |method, path| operation_at(method, path).map(|op| op.id);
    assert_eq!(
        at("GET", "/store-api/2026-08/stores/s1/orders/o1"),
        Some("getOrder")
    );
    // A base URL mounted under a path of its own, and a query.
    assert_eq!(
        at("POST", "/proxy/store-api/2026-08/stores/s1/orders?x=1"),
        Some("createOrder")
    );
    assert_eq!(at("get", "/store-api/2026-08/stores/s1/orders"), None);
    assert_eq!(at("GET", "/store-api/2026-08/stores/s1/orders/o1/x"), None);
    assert_eq!(at("GET", "/stores/s1/orders"), None);
}
