//! `orders submit|list|get|find|watch|schema`, and the deprecated `orders create`.

use store_api::model::{FulfillmentStatus, Order, OrderStatus, PaymentStatus};
use store_api::{Client, ListOrdersQuery};

use super::listing::{Listed, Paged as _, every_page};
use super::submit::{self, Caller};
use super::watch;
use crate::cli::{OrdersCommand, OrdersListArgs};
use crate::error::CliError;
use crate::output::Output;
use crate::render;
use crate::session::Session;

/// The one line the deprecated `orders create` prints on stderr before it runs.
const DEPRECATED_CREATE: &str = "note: `orders create` is deprecated and goes in 0.4.0: it runs `orders submit --no-write` (use that, or `orders submit` alone to keep a generated externalOrderId in the file)";

/// Runs an `orders` subcommand.
pub async fn run(command: OrdersCommand, session: &Session, out: Output) -> Result<(), CliError> {
    let client = &session.client;
    match command {
        OrdersCommand::Submit(args) => submit::run(session, args, Caller::Submit, out).await,
        OrdersCommand::Create(args) => {
            eprintln!("{DEPRECATED_CREATE}");
            submit::run(session, args.into(), Caller::DeprecatedCreate, out).await
        }
        OrdersCommand::List(args) => list(client, args, out).await,
        OrdersCommand::Get { id } => {
            let order = client.orders().get(&id).await?;
            show(&order, out)
        }
        OrdersCommand::Find { external_id } => {
            let order = client
                .orders()
                .find_by_external_id(&external_id)
                .await?
                .ok_or_else(|| store_api::Error::NotFound {
                    message: format!("no order has externalOrderId {external_id}"),
                })?;
            show(&order, out)
        }
        OrdersCommand::Watch(args) => watch::run(session, &args, out).await,
        // Answered before a session is opened (it needs no credentials).
        OrdersCommand::Schema => super::schema::print(&super::schema::order_request()),
    }
}

fn show(order: &Order, out: Output) -> Result<(), CliError> {
    out.json(order)?;
    let (summary, items) = render::order_detail(order);
    out.table(&summary);
    out.table(&items);
    Ok(())
}

async fn list(client: &Client, args: OrdersListArgs, out: Output) -> Result<(), CliError> {
    let mut query = ListOrdersQuery::new()
        .status(args.status.iter().map(|s| OrderStatus::from(s.as_str())))
        .fulfillment_status(
            args.fulfillment_status
                .iter()
                .map(|s| FulfillmentStatus::from(s.as_str())),
        )
        .payment_status(
            args.payment_status
                .iter()
                .map(|s| PaymentStatus::from(s.as_str())),
        )
        .paged(&args.paging);
    if let Some(id) = args.external_id {
        query = query.external_order_id([id]);
    }
    let listed = if args.paging.all {
        every_page(client.orders().stream(&query), out, "order").await?
    } else {
        Listed::page(client.orders().list(&query).await?, "order")
    };
    listed.show(out, render::order_list)?;
    Ok(())
}
