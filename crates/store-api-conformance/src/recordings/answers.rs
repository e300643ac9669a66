//! What every answer of a kind carries: the error envelope, the 401's, `GET /status`'s, a created
//! order's 201, and the values of the growing enumerations of orders and products.

use serde_json::Value;
use store_api_raw::contract::{
    API_VERSION, CREATE_ORDER, GET_ORDER, GET_PRODUCT, GET_STATUS, LIST_ORDERS, LIST_PRODUCTS,
};
use store_api_raw::open::{FulfillmentStatus, OrderStatus, PaymentStatus, ProductStatus};

use super::exchange::{Message, Seen};
use super::facts::Facts;
use crate::statements::{ERROR_ENVELOPE, ORDER_CREATED, STATUS, UNAUTHORIZED};

pub(crate) fn check(all: &[Seen<'_>], facts: &mut Facts) {
    for seen in all {
        let at = seen.at();
        let status = seen.status();
        if (400..500).contains(&status)
            && seen
                .exchange
                .request
                .path
                .starts_with(store_api_raw::contract::VERSION_PREFIX)
        {
            let result = match seen.envelope() {
                Some(e) if e.status_code != Some(u64::from(status)) => Err(format!(
                    "{}: statusCode {:?}",
                    seen.describe(),
                    e.status_code
                )),
                Some(e) if matches!(e.message, Message::Other) => {
                    Err(format!("{}: no message", seen.describe()))
                }
                Some(e) if e.error.is_none() && status != 429 => {
                    Err(format!("{}: no error", seen.describe()))
                }
                Some(_) => Ok(seen.describe()),
                None => Err(format!("{}: not the error envelope", seen.describe())),
            };
            facts.judge(ERROR_ENVELOPE.id, &at, result);
        }
        if status == 401 && seen.operation.is_some() {
            let result = match seen.envelope() {
                Some(e)
                    if e.error.as_deref() == Some("Unauthorized")
                        && matches!(e.message, Message::Text(_)) =>
                {
                    Ok(seen.describe())
                }
                _ => Err(seen.describe()),
            };
            facts.judge(UNAUTHORIZED.id, &at, result);
        }
        if seen.is(&GET_STATUS) && status == 200 {
            let json = seen.answer_json().cloned().unwrap_or(Value::Null);
            let said = (
                json["status"].as_str(),
                json["version"].as_str(),
                json["store"]["id"].as_str(),
            );
            facts.judge(
                STATUS.id,
                &at,
                if said == (Some("ok"), Some(API_VERSION), seen.store.as_deref()) {
                    Ok(format!("version {API_VERSION}"))
                } else {
                    Err(format!("answered {json}"))
                },
            );
        }
        if seen.is(&CREATE_ORDER) && (200..300).contains(&status) {
            let id = seen.answer_json().and_then(|order| order["id"].as_str());
            facts.judge(
                ORDER_CREATED.id,
                &at,
                match id {
                    Some(id) if status == 201 => Ok(format!("201 {id}")),
                    _ => Err(format!("a created order answered {}", seen.describe())),
                },
            );
        }
        values(seen, facts);
    }
}

/// Orders' and products' statuses: any string decodes (those the spec does not list as unknown);
/// anything else differs.
fn values(seen: &Seen<'_>, facts: &mut Facts) {
    if seen.status() >= 300 {
        return;
    }
    let Some(json) = seen.answer_json() else {
        return;
    };
    let (id, fields): (&'static str, &[&str]) =
        if seen.is(&CREATE_ORDER) || seen.is(&GET_ORDER) || seen.is(&LIST_ORDERS) {
            (
                "order-status-values",
                &["status", "fulfillmentStatus", "paymentStatus"],
            )
        } else if seen.is(&GET_PRODUCT) || seen.is(&LIST_PRODUCTS) {
            ("product-status-values", &["status"])
        } else {
            return;
        };
    let items: Vec<&Value> = match json.get("items") {
        Some(Value::Array(items)) if seen.is(&LIST_ORDERS) || seen.is(&LIST_PRODUCTS) => {
            items.iter().collect()
        }
        _ if seen.is(&LIST_ORDERS) || seen.is(&LIST_PRODUCTS) => Vec::new(),
        _ => vec![json],
    };
    if items.is_empty() {
        return;
    }
    let mut unknown = Vec::new();
    for item in &items {
        for field in fields {
            match &item[*field] {
                Value::Null => {}
                Value::String(value) => {
                    let known = match *field {
                        "status" if id == "product-status-values" => {
                            ProductStatus::from(value.as_str()).is_known()
                        }
                        "status" => OrderStatus::from(value.as_str()).is_known(),
                        "fulfillmentStatus" => FulfillmentStatus::from(value.as_str()).is_known(),
                        _ => PaymentStatus::from(value.as_str()).is_known(),
                    };
                    if !known {
                        unknown.push(format!("{field} {value}"));
                    }
                }
                other => {
                    facts.differs(id, &seen.at(), format!("{field} is {other}, not a string"));
                    return;
                }
            }
        }
    }
    unknown.sort();
    unknown.dedup();
    facts.held(
        id,
        &seen.at(),
        if unknown.is_empty() {
            format!("{} read; every value one the spec lists", items.len())
        } else {
            format!(
                "{} read; values the spec does not list, read as unknown: {}",
                items.len(),
                unknown.join(", ")
            )
        },
    );
}
