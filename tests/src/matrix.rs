//! The rare-fault matrix of issue 10: for each kind of rare fault, a batch of `submit` calls, then what
//! the emulator holds compared with what each caller was told.
//!
//! Per fault kind it counts:
//! - **duplicates**: orders beyond one per external id;
//! - **lost**: calls told the order exists (`Ok`) although the emulator holds none for the id;
//! - **wrong outcome**: `Created`/`AlreadyExisted` with an order that is not the request's (a reused id
//!   reported as success), `ExternalIdReused` although the held order is the request's, and a definite
//!   failure (`Invalid`, a 400, `may_have_been_processed() == false`) although the order is held;
//! - **undecided**: errors that leave the caller not knowing (`may_have_been_processed() == true`).
//!
//! Every column must be 0. The integration test (`it/exactly_once.rs`) asserts it; the bench
//! (`benches/exactly_once.rs`) prints it for `cargo xtask bench`.

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use store_api::model::ProductStatus;
use store_api::{Client, Error, NewOrder, RetryPolicy, Submission, new_external_order_id};
use store_api_fixtures::Emulator;

use crate::proxy::{Fault, FaultPlan, FaultProxy};
use crate::{ALPHA, emulator, key_of, order_from, relaxed_limiter, shipping_address};

/// Submissions in flight at once.
const CONCURRENCY: usize = 16;
/// The product every matrix order is for.
const SUNSET_TEE: &str = "prod_alpha_sunset_tee";

/// One row of the matrix: a kind of fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A fault of the proxy on each order's first `POST` (and, for a lagging lookup, its first lookups).
    Wire(Fault),
    /// The order's product is archived between a first run and a second run of the same submissions.
    ArchivedBetweenRuns,
    /// A second, different order is submitted with each first order's external id.
    ReusedId,
}

impl Kind {
    /// Every kind, in the order of the report.
    pub const ALL: [Kind; 8] = [
        Kind::Wire(Fault::ServerErrorAfterCommit),
        Kind::Wire(Fault::ForeignConflict),
        Kind::Wire(Fault::TruncatedBody),
        Kind::Wire(Fault::LaggingLookup),
        Kind::Wire(Fault::AbsurdRetryAfter),
        Kind::Wire(Fault::ResetMidBody),
        Kind::ArchivedBetweenRuns,
        Kind::ReusedId,
    ];

    /// A short name, for metric names (`exactly_once_matrix_<name>_<column>`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Wire(fault) => fault.name(),
            Kind::ArchivedBetweenRuns => "archived_between_runs",
            Kind::ReusedId => "reused_id",
        }
    }

    fn fault(self) -> Option<&'static [Fault]> {
        Some(match self {
            Kind::Wire(Fault::ServerErrorAfterCommit) => &[Fault::ServerErrorAfterCommit],
            Kind::Wire(Fault::ForeignConflict) => &[Fault::ForeignConflict],
            Kind::Wire(Fault::TruncatedBody) => &[Fault::TruncatedBody],
            Kind::Wire(Fault::LaggingLookup) => &[Fault::LaggingLookup],
            Kind::Wire(Fault::AbsurdRetryAfter) => &[Fault::AbsurdRetryAfter],
            Kind::Wire(Fault::ResetMidBody) => &[Fault::ResetMidBody],
            _ => return None,
        })
    }
}

/// The counts of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Row {
    /// Submit calls judged.
    pub submissions: usize,
    /// Orders beyond one per external id.
    pub duplicates: usize,
    /// Told `Ok` with no order held.
    pub lost: usize,
    /// Told something the emulator contradicts.
    pub wrong: usize,
    /// Left not knowing (`may_have_been_processed`).
    pub undecided: usize,
    /// Calls that ended in a definite "not created" (for example `RateLimited` after an absurd
    /// Retry-After, `ExternalIdReused`); not a failure, reported for information.
    pub refused: usize,
    /// Faults the proxy injected.
    pub faults: usize,
}

impl Row {
    /// Whether every column is 0.
    pub fn is_clean(&self) -> bool {
        self.duplicates == 0 && self.lost == 0 && self.wrong == 0 && self.undecided == 0
    }
}

/// Runs every kind with `per_kind` submissions each, one emulator per kind.
pub async fn run(per_kind: usize) -> Vec<(Kind, Row)> {
    let mut rows = Vec::new();
    for kind in Kind::ALL {
        rows.push((kind, run_kind(kind, per_kind).await));
    }
    rows
}

/// A client with fast retries and a short store-wide pause (an absurd Retry-After would otherwise hold
/// the whole batch for the default cap of 10 s at each 429).
fn client_at(base_url: &str, emu: &Emulator) -> Client {
    Client::builder()
        .base_url(base_url)
        .store_id(ALPHA)
        .api_key(key_of(emu, ALPHA))
        .timeout(Duration::from_secs(5))
        .in_process_limiter(relaxed_limiter())
        .max_rate_limit_pause(Duration::from_millis(20))
        .retry_policy(
            RetryPolicy::default()
                .with_max_attempts(10)
                .with_base_delay(Duration::from_millis(5)),
        )
        .submit_retry_policy(
            RetryPolicy::default()
                .with_max_attempts(12)
                .with_base_delay(Duration::from_millis(5)),
        )
        .build()
        .expect("valid settings")
}

/// One black M Sunset Tee, `quantity` of them.
fn request(external_id: &str, quantity: u64) -> NewOrder {
    order_from(json!({
        "externalOrderId": external_id,
        "lineItems": [{ "sku": "AA-TEE-SUN-BLK-M", "quantity": quantity }],
        "shippingAddress": shipping_address(),
    }))
}

async fn submit_all(
    client: &Client,
    requests: Vec<(String, u64)>,
) -> Vec<(String, u64, Result<Submission, Error>)> {
    futures::stream::iter(requests)
        .map(|(id, quantity)| {
            let client = client.clone();
            async move {
                let result = client
                    .orders()
                    .submit(&crate::identified(request(&id, quantity)))
                    .await;
                (id, quantity, result)
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await
}

async fn run_kind(kind: Kind, per_kind: usize) -> Row {
    let emu = emulator().await;
    let ids: Vec<String> = (0..per_kind).map(|_| new_external_order_id()).collect();
    let (results, faults) = match kind.fault() {
        Some(fault) => {
            let proxy = FaultProxy::start(emu.origin(), FaultPlan::first_post(fault, 2)).await;
            let client = client_at(&proxy.base_url(), &emu);
            let results = submit_all(&client, ids.iter().map(|id| (id.clone(), 1)).collect()).await;
            let faults = Fault::RARE
                .iter()
                .map(|f| proxy.injected(*f))
                .sum::<usize>()
                + proxy.injected(Fault::DropAfterCommit);
            (results, faults)
        }
        None => {
            // A first run places every order, straight to the emulator.
            let first = client_at(&emu.base_url(), &emu);
            submit_all(&first, ids.iter().map(|id| (id.clone(), 1)).collect()).await;
            let second_quantity = match kind {
                Kind::ArchivedBetweenRuns => {
                    archive(&emu, &first, SUNSET_TEE).await;
                    1
                }
                _ => 2,
            };
            // A second run: a restarted process (a new client, an empty cache).
            let second = client_at(&emu.base_url(), &emu);
            let requests = ids.iter().map(|id| (id.clone(), second_quantity)).collect();
            (submit_all(&second, requests).await, per_kind)
        }
    };
    judge(&emu, results, faults)
}

async fn archive(emu: &Emulator, client: &Client, product_id: &str) {
    let mut product = client
        .products()
        .get(product_id)
        .await
        .expect("the product exists");
    product.status = Some(ProductStatus::Archived);
    emu.update_product(ALPHA, product_id, product)
        .expect("the product is archived");
}

/// Compares what each caller was told with what the emulator holds.
fn judge(
    emu: &Emulator,
    results: Vec<(String, u64, Result<Submission, Error>)>,
    faults: usize,
) -> Row {
    let mut held: HashMap<String, Vec<i64>> = HashMap::new();
    for order in emu.orders(ALPHA) {
        if let Some(id) = order.external_order_id {
            let quantity = order
                .line_items
                .first()
                .and_then(|li| li.quantity)
                .unwrap_or(0);
            held.entry(id).or_default().push(quantity);
        }
    }
    let mut row = Row {
        submissions: results.len(),
        faults,
        ..Row::default()
    };
    row.duplicates = held.values().map(|q| q.len().saturating_sub(1)).sum();
    for (id, quantity, result) in results {
        let requested = i64::try_from(quantity).unwrap_or(i64::MAX);
        let stored = held.get(&id).and_then(|q| q.first()).copied();
        match result {
            Ok(submission) => {
                let order = submission.order();
                let returned = order.line_items.first().and_then(|li| li.quantity);
                match stored {
                    None => row.lost += 1,
                    Some(_)
                        if order.external_order_id.as_deref() != Some(id.as_str())
                            || returned != Some(requested) =>
                    {
                        row.wrong += 1
                    }
                    Some(_) => {}
                }
            }
            Err(Error::ExternalIdReused { .. }) => match stored {
                Some(held_quantity) if held_quantity != requested => row.refused += 1,
                _ => row.wrong += 1,
            },
            Err(error) if error.may_have_been_processed() => row.undecided += 1,
            Err(_) if stored.is_some() => row.wrong += 1,
            Err(_) => row.refused += 1,
        }
    }
    row
}
