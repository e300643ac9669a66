//! Order creation: [`Orders::submit`], exactly once, and the plain [`Orders::create`].

use std::time::Duration;

use store_api_raw::types;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::model::Order;
use crate::resources::Orders;
use crate::retry::{Decision, Outcome, decide};
use crate::validate;

/// A create-order request (the wire type). Build it in code or read it from JSON.
pub type NewOrder = types::CreateOrderRequest;

/// A new external order id: a UUID v7 (time-ordered, so ids sort by creation in your database too).
///
/// **Store it with your order before calling [`Orders::submit`].** The external id is what makes a retry
/// safe: if your process crashes after sending, the same id on the next run answers 409 and
/// [`Orders::submit`] returns the existing order instead of billing a second one. An id generated anew on
/// each run gives no such protection.
pub fn new_external_order_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// How a submission ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Submitted {
    /// This call created the order (201).
    Created(Order),
    /// An earlier attempt, or an earlier run, had created it (409, then fetched by external id).
    AlreadyExisted(Order),
}

impl Submitted {
    /// The order, however it came to exist.
    pub fn order(&self) -> &Order {
        match self {
            Submitted::Created(order) | Submitted::AlreadyExisted(order) => order,
        }
    }

    /// The order, owned.
    pub fn into_order(self) -> Order {
        match self {
            Submitted::Created(order) | Submitted::AlreadyExisted(order) => order,
        }
    }
}

/// What one attempt of a submission got.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttemptResult {
    /// 201.
    Created,
    /// 409: the order exists.
    AlreadyExists,
    /// Another HTTP status.
    Status(u16),
    /// No answer within the timeout.
    Timeout,
    /// The connection failed or was reset.
    Connection,
}

/// One attempt of a submission.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attempt {
    /// 1-based.
    pub number: u32,
    /// What it got.
    pub result: AttemptResult,
    /// How long it took.
    pub elapsed: Duration,
}

/// The result of [`Orders::submit`]: the order and every attempt it took.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Submission {
    /// Created now or found existing.
    pub submitted: Submitted,
    /// Every attempt, in order.
    pub attempts: Vec<Attempt>,
}

impl Submission {
    /// The order.
    pub fn order(&self) -> &Order {
        self.submitted.order()
    }
}

impl Orders<'_> {
    /// Creates an order **exactly once**, however often the network fails.
    ///
    /// The request must carry an `externalOrderId` (see [`new_external_order_id`], and store the id
    /// before calling). Pre-flight validation runs first, against the cached catalog and products, so a
    /// request the service would refuse with 400 costs no request and comes back as [`Error::Invalid`].
    /// Then: a timeout, a reset connection or a 5xx is retried with the same external id; 201 means
    /// this attempt created it ([`Submitted::Created`]); 409 means an earlier attempt (or run) did, and
    /// the order is fetched with `filter[externalOrderId]` ([`Submitted::AlreadyExisted`]). 400, 401 and
    /// 404 are never retried.
    ///
    /// ```no_run
    /// # async fn run(client: store_api::Client) -> Result<(), store_api::Error> {
    /// use store_api::{NewOrder, Submitted, new_external_order_id};
    /// let mut order: NewOrder = serde_json::from_value(serde_json::json!({
    ///     "lineItems": [{ "sku": "AA-TEE-SUN-BLK-M", "quantity": 2 }],
    ///     "shippingAddress": {
    ///         "firstName": "Ada", "lastName": "Lovelace",
    ///         "address": { "streetAddress": "1 Main St", "cityOrTown": "Austin",
    ///                      "stateOrProvince": "TX", "zipOrPostalCode": "78701", "country": "US" }
    ///     }
    /// })).expect("a valid request");
    /// let external_id = new_external_order_id(); // store this with your order first
    /// order.external_order_id = Some(external_id.parse().expect("not empty"));
    /// let submission = client.orders().submit(&order).await?;
    /// match &submission.submitted {
    ///     Submitted::Created(o) => println!("created {}", o.id),
    ///     Submitted::AlreadyExisted(o) => println!("already there: {}", o.id),
    ///     _ => {}
    /// }
    /// println!("{} attempt(s)", submission.attempts.len());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn submit(&self, order: &NewOrder) -> Result<Submission> {
        let external_id = order
            .external_order_id
            .as_ref()
            .map(|id| id.to_string())
            .ok_or_else(|| {
                Error::InvalidArgument(
                    "submit needs an externalOrderId (see new_external_order_id); without one a retry could bill twice".into(),
                )
            })?;
        self.preflight(order).await?;
        let inner = &self.client.inner;
        let policy = inner.submit_policy;
        let started = Instant::now();
        let mut attempts = Vec::new();
        for number in 1.. {
            let attempt_started = Instant::now();
            let result = inner.raw.create_order(&inner.store_id, order).await;
            let outcome = match result {
                Ok(created) => {
                    attempts.push(attempt(number, AttemptResult::Created, attempt_started));
                    return Ok(Submission {
                        submitted: Submitted::Created(Order::from(created.into_inner())),
                        attempts,
                    });
                }
                Err(error) => Error::from_raw(error, true),
            };
            let (recorded, retry_outcome) = classify(&outcome);
            attempts.push(attempt(number, recorded, attempt_started));
            if matches!(outcome, Error::Conflict { .. }) {
                let existing = self.find_existing(&external_id).await?;
                return Ok(Submission {
                    submitted: Submitted::AlreadyExisted(existing),
                    attempts,
                });
            }
            // Same external id on every attempt: a create is replayable here.
            match retry_outcome.map(|o| decide(&policy, true, o, number, started.elapsed())) {
                Some(Decision::RetryAfter(wait)) => {
                    tracing::debug!(external_order_id = %external_id, attempt = number, ?wait, "resubmitting");
                    tokio::time::sleep(wait).await;
                }
                _ => return Err(outcome),
            }
        }
        Err(Error::InvalidArgument("no attempt was made".into()))
    }

    /// Creates an order with a single request, without validation or retries.
    ///
    /// **Not safe to retry** unless the request carries an `externalOrderId`: without one, a retry after a
    /// timeout can create and bill a second order. Prefer [`Orders::submit`].
    pub async fn create(&self, order: &NewOrder) -> Result<Order> {
        let inner = &self.client.inner;
        inner
            .raw
            .create_order(&inner.store_id, order)
            .await
            .map(|r| Order::from(r.into_inner()))
            .map_err(|e| Error::from_raw(e, true))
    }

    /// Runs the service's order rules locally against the cached catalog and products; `Ok` when the
    /// service would accept the request as far as can be known without sending it.
    pub async fn preflight(&self, order: &NewOrder) -> Result<()> {
        let fields = validate::validate_fields(order);
        if !fields.is_empty() {
            return Err(Error::Invalid { violations: fields });
        }
        let snapshot = self.client.store_snapshot().await?;
        let violations = validate::validate_order(order, snapshot.as_ref());
        if violations.is_empty() {
            Ok(())
        } else {
            Err(Error::Invalid { violations })
        }
    }

    async fn find_existing(&self, external_id: &str) -> Result<Order> {
        self.find_by_external_id(external_id)
            .await?
            .ok_or_else(|| Error::Conflict {
                message: format!(
                    "an order with external id {external_id} exists but could not be read"
                ),
            })
    }
}

fn attempt(number: u32, result: AttemptResult, started: Instant) -> Attempt {
    Attempt {
        number,
        result,
        elapsed: started.elapsed(),
    }
}

/// What the attempt is recorded as, and what it means for retrying (None: never retried).
fn classify(error: &Error) -> (AttemptResult, Option<Outcome>) {
    match error {
        Error::Conflict { .. } => (AttemptResult::AlreadyExists, None),
        Error::Timeout { .. } => (AttemptResult::Timeout, Some(Outcome::NoAnswer)),
        Error::Transport { .. } => (AttemptResult::Connection, Some(Outcome::NoAnswer)),
        Error::Decode(_) => (AttemptResult::Connection, Some(Outcome::NoAnswer)),
        Error::Server { status, .. } => (
            AttemptResult::Status(*status),
            Some(Outcome::Status(*status, None)),
        ),
        Error::RateLimited { retry_after } => (
            AttemptResult::Status(429),
            Some(Outcome::Status(429, *retry_after)),
        ),
        other => (AttemptResult::Status(other.status().unwrap_or(0)), None),
    }
}
