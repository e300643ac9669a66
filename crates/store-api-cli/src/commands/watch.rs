//! `orders watch`: poll an order until it is fulfilled or canceled, printing each change.

use std::time::Duration;

use store_api::model::{FulfillmentStatus, Order, OrderStatus};
use store_api_fixtures::{Emulator, RemoteEmulator, RemoteError};

use crate::cli::WatchArgs;
use crate::error::CliError;
use crate::output::{Output, or_dash, time};
use crate::progress;
use crate::render::ladder_text;
use crate::session::Session;
use crate::terminal::clean;

/// Watches the order. Each poll is one `GET /orders/:id` through the client, whose rate limiter
/// spaces the polls further when the store's budget runs low.
pub async fn run(session: &Session, args: &WatchArgs, out: Output) -> Result<(), CliError> {
    let client = &session.client;
    let advancer = if args.advance {
        Some(Advancer::new(session, &args.id)?)
    } else {
        None
    };
    let mut advancing = advancer.is_some();
    let rungs = u64::try_from(FulfillmentStatus::LADDER.len()).unwrap_or(5);
    let bar = progress::ladder(out, rungs);
    let mut last = None;
    loop {
        let order = match client.orders().get(&args.id).await {
            Ok(order) => order,
            Err(error) => {
                bar.finish_and_clear();
                return Err(error.into());
            }
        };
        let state = (
            order.status.clone(),
            order.fulfillment_status.clone(),
            order.payment_status.clone(),
        );
        if last.as_ref() != Some(&state) {
            let rung = order
                .fulfillment_status
                .as_ref()
                .and_then(FulfillmentStatus::rung);
            bar.set_position(rung.map_or(0, |r| u64::try_from(r + 1).unwrap_or(0)));
            bar.set_message(clean(&or_dash(order.fulfillment_status.as_ref())).into_owned());
            bar.suspend(|| {
                out.line(change_line(&order));
                out.json_line(&order)
            })?;
            last = Some(state);
        }
        if let Some(end) = finished(&order) {
            bar.finish_and_clear();
            out.line(end);
            return Ok(());
        }
        if let (true, Some(advancer)) = (advancing, &advancer)
            && let Err(warning) = advancer.advance().await?
        {
            bar.suspend(|| eprintln!("note: {}; no longer advancing", clean(&warning)));
            advancing = false;
        }
        tokio::time::sleep(Duration::from_millis(args.interval_ms)).await;
    }
}

/// `2/5 production_requested (status production_requested, payment due)`.
fn change_line(order: &Order) -> String {
    format!(
        "{} (status {}, payment {})",
        ladder_text(order.fulfillment_status.as_ref()),
        or_dash(order.status.as_ref()),
        or_dash(order.payment_status.as_ref()),
    )
}

/// The closing line once the order will not move any more.
fn finished(order: &Order) -> Option<String> {
    if order.status == Some(OrderStatus::Canceled) {
        return Some(format!("canceled at {}", time(order.canceled_at)));
    }
    let fulfilled = order.status == Some(OrderStatus::Fulfilled)
        || order.fulfillment_status == Some(FulfillmentStatus::Fulfilled);
    fulfilled.then(|| {
        let tracking = order.tracking_info.as_ref().map(|t| {
            format!(
                "{} {} {}",
                or_dash(t.carrier.as_deref()),
                or_dash(t.tracking_number.as_deref()),
                or_dash(t.tracking_url.as_deref())
            )
        });
        format!(
            "fulfilled at {}; tracking: {}",
            time(order.fulfilled_at),
            or_dash(tracking)
        )
    })
}

/// Moves the order up the ladder as the provider would: only an emulator can.
enum Advancer<'a> {
    /// The emulator runs in this process.
    Embedded {
        emulator: &'a Emulator,
        store_id: String,
        order_id: String,
    },
    /// An emulator at --base-url, through its control endpoint.
    Remote {
        emulator: RemoteEmulator,
        store_id: String,
        order_id: String,
    },
}

impl<'a> Advancer<'a> {
    fn new(session: &'a Session, order_id: &str) -> Result<Self, CliError> {
        let store_id = session.client.store_id().to_owned();
        if let Some(emulator) = &session.emulator {
            return Ok(Advancer::Embedded {
                emulator,
                store_id,
                order_id: order_id.to_owned(),
            });
        }
        let emulator = RemoteEmulator::new(session.client.base_url())
            .map_err(|e| CliError::Usage(format!("--advance: {e}")))?;
        Ok(Advancer::Remote {
            emulator,
            store_id,
            order_id: order_id.to_owned(),
        })
    }

    /// One rung up. The outer error ends the watch; the inner one is a move the order refuses
    /// (on hold, already at the top), after which the watch goes on without advancing.
    async fn advance(&self) -> Result<Result<(), String>, CliError> {
        match self {
            Advancer::Embedded {
                emulator,
                store_id,
                order_id,
            } => Ok(emulator
                .advance_order(store_id, order_id)
                .map(drop)
                .map_err(|e| e.message)),
            Advancer::Remote {
                emulator,
                store_id,
                order_id,
            } => match emulator.advance_order(store_id, order_id).await {
                Ok(_) => Ok(Ok(())),
                Err(RemoteError::Refused(refused)) if refused.status == 404 => {
                    Err(CliError::Usage(format!(
                        "--advance needs an emulator: {} has no control endpoint (the real service moves orders by itself)",
                        emulator.origin()
                    )))
                }
                Err(RemoteError::Refused(refused)) => Ok(Err(format!(
                    "the emulator refused to advance the order ({})",
                    refused.status
                ))),
                Err(other) => Err(CliError::Usage(format!(
                    "--advance: the emulator control endpoint failed: {other}"
                ))),
            },
        }
    }
}
