//! Builds a request with the generated builders, sends it with reqwest to a tiny recording server on
//! 127.0.0.1 and shows what went on the wire, then decodes an order that carries enum values this SDK
//! does not know.
//!
//! Run: `cargo run -p store-api-raw --example quickstart`; `cargo test -p store-api-raw --example
//! quickstart` runs the same function and checks what it printed.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use store_api_raw::open::OrderStatus;
use store_api_raw::requests::{self, ListOrdersQuery};
use store_api_raw::{ApiKey, auth, types};

/// What the quickstart shows: the request line the server saw, the page it decoded, and an order with
/// a status this SDK does not know.
#[derive(Debug)]
struct Shown {
    request_line: String,
    page: types::OrderList,
    order: types::Order,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let shown = quickstart().await?;
    println!("request on the wire:  {}", shown.request_line);
    println!(
        "orders in the page:   {}",
        shown.page.total_items.unwrap_or(0)
    );
    let known = matches!(shown.order.status, Some(OrderStatus::Unknown(_)));
    println!(
        "unknown status kept:  {:?} (unknown: {known}) -> {}",
        shown.order.status,
        serde_json::to_string(&shown.order)?
    );
    Ok(())
}

async fn quickstart() -> Result<Shown, Box<dyn std::error::Error>> {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let app = Router::new()
        .fallback(
            |State(seen): State<Arc<Mutex<Vec<String>>>>, request: Request| async move {
                let line = format!("{} {}", request.method(), request.uri());
                if let Ok(mut seen) = seen.lock() {
                    seen.push(line);
                }
                (
                    [("content-type", "application/json")],
                    r#"{"items":[],"totalItems":0,"totalPages":0}"#,
                )
            },
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base_url = format!("http://{}/store-api/2026-08", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });

    let query = ListOrdersQuery::new()
        .status([OrderStatus::Pending, OrderStatus::OnHold])
        .sort_created_at(types::SortDirection::Asc);
    let mut request = requests::list_orders(&base_url, "store_alpha", &query)?;
    let key = ApiKey::new("csk_example_key_not_a_real_one_0000");
    auth::set_api_key(&mut request.headers, &key)?;
    store_api_raw::tls::install_crypto_provider();
    let page: types::OrderList = reqwest::Client::new()
        .execute(reqwest::Request::try_from(request.into_http()?)?)
        .await?
        .json()
        .await?;
    let request_line = seen.lock().map(|s| s.join("\n")).unwrap_or_default();
    let order: types::Order = serde_json::from_str(r#"{"id":"ord_1","status":"awaiting_review"}"#)?;
    Ok(Shown {
        request_line,
        page,
        order,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn builds_sends_and_decodes() {
        let shown = quickstart().await.unwrap();
        assert_eq!(
            shown.request_line,
            "GET /store-api/2026-08/stores/store_alpha/orders?filter[status]=pending,on_hold&sort[createdAt]=asc"
        );
        assert_eq!(shown.page.total_items, Some(0));
        assert_eq!(
            shown.order.status,
            Some(OrderStatus::Unknown("awaiting_review".into()))
        );
        // Written back as it came.
        let json = serde_json::to_value(&shown.order).unwrap();
        assert_eq!(json["status"], "awaiting_review");
    }
}
