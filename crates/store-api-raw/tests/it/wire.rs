use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::response::IntoResponse;
use store_api_raw::ApiKey;
use store_api_raw::auth::set_api_key;
use store_api_raw::open::OrderStatus;
use store_api_raw::requests::{self, ListOrdersQuery};
use store_api_raw::types::{self, SortDirection};

/// One request as the server received it.
#[derive(Clone, Debug, Default)]
struct Seen {
    method: String,
    path: String,
    query: Option<String>,
    api_key: Option<String>,
    api_version_header: bool,
}

type Log = Arc<Mutex<Vec<Seen>>>;

async fn record(State(log): State<Log>, request: Request) -> impl IntoResponse {
    let headers = request.headers();
    log.lock().unwrap().push(Seen {
        method: request.method().to_string(),
        path: request.uri().path().to_owned(),
        query: request.uri().query().map(str::to_owned),
        api_key: headers
            .get("x-api-key")
            .map(|v| v.to_str().unwrap().to_owned()),
        api_version_header: headers.contains_key("api-version"),
    });
    let body = r#"{"items":[],"totalItems":0,"startItem":0,"endItem":0,"totalPages":0,
        "query":{"page":2,"limit":100,"filter":{"status":["pending","on_hold"]},"sort":{"createdAt":"asc"}}}"#;
    ([("content-type", "application/json")], body)
}

/// Starts a recording server on an ephemeral loopback port.
async fn server() -> (String, Log) {
    let log = Log::default();
    let app = Router::new().fallback(record).with_state(log.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/store-api/2026-08"), log)
}

const KEY: &str = "csk_0123456789abcdef0123456789abcdef";

/// Sends a built request the way the README shows: the key added, then `reqwest`.
async fn send(mut request: requests::Request) -> reqwest::Response {
    set_api_key(&mut request.headers, &ApiKey::new(KEY)).unwrap();
    store_api_raw::tls::install_crypto_provider();
    reqwest::Client::new()
        .execute(reqwest::Request::try_from(request.into_http().unwrap()).unwrap())
        .await
        .unwrap()
}

#[tokio::test]
async fn filters_and_sorts_go_out_with_literal_brackets_and_commas() {
    let (base_url, log) = server().await;
    let query = ListOrdersQuery::new()
        .status([OrderStatus::Pending, OrderStatus::OnHold])
        .limit(100)
        .page(2)
        .sort_created_at(SortDirection::Asc);
    let request = requests::list_orders(&base_url, "store_alpha", &query).unwrap();
    let page: types::OrderList = send(request).await.json().await.unwrap();
    assert_eq!(page.query.unwrap().filter["status"], ["pending", "on_hold"]);

    let seen = log.lock().unwrap()[0].clone();
    assert_eq!(seen.method, "GET");
    assert_eq!(seen.path, "/store-api/2026-08/stores/store_alpha/orders");
    // The order progenitor's positional calls used (the parameters' Rust names): cassettes recorded
    // before the builders were generated still match.
    assert_eq!(
        seen.query.as_deref(),
        Some("filter[status]=pending,on_hold&limit=100&page=2&sort[createdAt]=asc")
    );
    assert_eq!(seen.api_key.as_deref(), Some(KEY));
    assert!(!seen.api_version_header, "no api-version header");
}

#[tokio::test]
async fn path_parameters_are_percent_encoded_and_empty_queries_stay_empty() {
    let (base_url, log) = server().await;
    let request = requests::get_order(&base_url, "store alpha", "ord/1?x").unwrap();
    send(request).await;
    let seen = log.lock().unwrap()[0].clone();
    assert_eq!(
        seen.path,
        "/store-api/2026-08/stores/store%20alpha/orders/ord%2F1%3Fx"
    );
    assert_eq!(seen.query, None);
    assert_eq!(seen.api_key.as_deref(), Some(KEY));
}

#[test]
fn an_argument_the_spec_does_not_allow_is_refused_by_name_before_anything_is_sent() {
    let base_url = "http://127.0.0.1:9/store-api/2026-08";
    let error = requests::get_order(base_url, "store_alpha", "").unwrap_err();
    assert_eq!(error.to_string(), "orderId must not be empty");
    let query = ListOrdersQuery::new().limit(0);
    let error = requests::list_orders(base_url, "store_alpha", &query).unwrap_err();
    assert_eq!(error.to_string(), "limit must be at least 1, not 0");
    let query = ListOrdersQuery::new().external_order_id(["A-1,2"]);
    let error = requests::list_orders(base_url, "store_alpha", &query).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("filter[externalOrderId]: the value \"A-1,2\" contains a comma"),
        "{error}"
    );
}

#[tokio::test]
async fn the_body_goes_out_as_json() {
    let (base_url, log) = server().await;
    let body = types::CreateArtworkRequest::new(
        types::ArtworkSource::new("https://example.com/a.png".into()),
        "Sun".parse().unwrap(),
    );
    let request = requests::create_artwork(&base_url, "store_alpha", &body).unwrap();
    assert_eq!(request.headers["content-type"], "application/json");
    let sent: types::CreateArtworkRequest = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(sent, body);
    send(request).await;
    assert_eq!(log.lock().unwrap()[0].method, "POST");
}
