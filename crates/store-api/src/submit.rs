//! Order creation: [`Orders::submit`], exactly once, and the plain [`Orders::create`].

use std::pin::pin;
use std::time::Duration;

use tokio::time::Instant;

use crate::difference::differences;
use crate::error::{self, Error, Result};
use crate::model::Order;
use crate::new_order::{IdentifiedOrder, NewOrder};
use crate::resources::Orders;
use crate::retry::{Decision, Outcome, RetryPolicy, decide};
use crate::settings::{deadline_after, later};
use crate::telemetry;
use crate::transport::KeyChoice;
use crate::validate::{self, Violation, ViolationKind};

/// A new external order id: a UUID v7 (time-ordered, so ids sort by creation in your database too).
///
/// **Store it with your order before calling [`Orders::submit`].** The external id is what makes a retry
/// safe: if your process crashes after sending, the same id on the next run answers 409 and
/// [`Orders::submit`] returns the existing order instead of billing a second one. An id generated anew on
/// each run gives no such protection.
pub fn new_external_order_id() -> String {
    uuid_v7(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default(),
        fastrand::u16(..),
        fastrand::u64(..),
    )
}

/// A UUID v7 (RFC 9562, section 5.7) of the Unix time `since_epoch` and the random bits `rand_a` (12
/// used) and `rand_b` (62 used), in its hyphenated lowercase form. Written here rather than taken from
/// the `uuid` crate: formatting 128 bits is all an external id needs, and the crate (with its own
/// random source) was a twentieth of what store-api added to a clean build of its dependencies
/// (issue 36's build ratio). `fastrand`, already the retries' jitter, seeds itself per thread from the
/// process's random hashing keys.
fn uuid_v7(since_epoch: std::time::Duration, rand_a: u16, rand_b: u64) -> String {
    let millis = u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX) & 0xFFFF_FFFF_FFFF;
    let high = millis << 16 | 0x7000 | u64::from(rand_a & 0x0FFF);
    let low = 0x8000_0000_0000_0000 | (rand_b & 0x3FFF_FFFF_FFFF_FFFF);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xFFFF,
        high & 0xFFFF,
        low >> 48,
        low & 0xFFFF_FFFF_FFFF
    )
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
    /// 2xx whose body could not be read, or carried another order than this one; the order was then
    /// looked up by its external id.
    CreatedUnreadable,
    /// Another HTTP status: the service's own refusal (400, 401, 404, 413 with its envelope), a 429,
    /// or a 5xx.
    Status(u16),
    /// An answer of something on the way, not the service's (a firewall's or a gateway's page), or an
    /// answer larger than [`ClientBuilder::max_response_bytes`](crate::ClientBuilder::max_response_bytes),
    /// which is not taken as the service's word either.
    Intermediary(u16),
    /// No answer within the timeout.
    Timeout,
    /// The connection failed or was reset.
    Connection,
    /// A redirect (3xx), not followed.
    Redirected(u16),
    /// Nothing was sent: the request was for another origin than the base URL's.
    NotSent,
}

impl AttemptResult {
    /// Whether this attempt may have placed the order. Only an attempt never sent, a 409 (the id was
    /// taken already), the service's own refusal and a 429 did not; anything else (a timeout, a reset,
    /// a 5xx, a redirect, an intermediary's page, an unreadable success) may have.
    pub fn may_have_been_processed(&self) -> bool {
        !matches!(
            self,
            AttemptResult::NotSent
                | AttemptResult::AlreadyExists
                | AttemptResult::Status(400..=499)
        )
    }
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

/// The result of [`Orders::submit`]: the order and every attempt it took (every `POST` it sent, plus
/// any attempt that was refused before it could be sent, marked [`AttemptResult::NotSent`]).
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

/// Options of one submission, for [`Orders::submit_with`]; [`Orders::submit`] uses the defaults.
///
/// ```no_run
/// # async fn run(client: store_api::Client, order: store_api::IdentifiedOrder) -> Result<(), store_api::Error> {
/// use store_api::SubmitOptions;
/// // The service validates every order: skipping the local check saves the first read of a large store.
/// let submission = client
///     .orders()
///     .submit_with(&order, &SubmitOptions::new().preflight(false))
///     .await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[must_use]
pub struct SubmitOptions {
    preflight: bool,
}

impl Default for SubmitOptions {
    fn default() -> Self {
        SubmitOptions { preflight: true }
    }
}

impl SubmitOptions {
    /// The defaults: pre-flight validation on.
    pub fn new() -> Self {
        SubmitOptions::default()
    }

    /// Whether the order is checked locally against the client's copy of the store before it is sent
    /// (on by default). Off, nothing is read before the `POST` and the service's own 400 reports a
    /// refused order (nothing is billed either way).
    pub fn preflight(mut self, check: bool) -> Self {
        self.preflight = check;
        self
    }
}

impl Orders<'_> {
    /// [`Orders::submit`] with [`SubmitOptions`] (to skip the pre-flight check, say).
    pub async fn submit_with(
        &self,
        order: &IdentifiedOrder,
        options: &SubmitOptions,
    ) -> Result<Submission> {
        self.submit_checked(order, options.preflight).await
    }

    /// Creates an order **exactly once**, however often the network fails.
    ///
    /// The request carries an `externalOrderId` by its type ([`IdentifiedOrder`], made by
    /// [`OrderBuilder`](crate::OrderBuilder); see [`new_external_order_id`], and store the id before
    /// calling), one without a comma, so that the lookup by external id (`filter[externalOrderId]`, where
    /// a comma separates values) can find it.
    ///
    /// Each attempt is one `POST`, and every one is listed in [`Submission::attempts`]: this loop is the
    /// only retry layer of a submission. What an answer means is decided by its HTTP status alone:
    ///
    /// - 2xx: this attempt created the order ([`Submitted::Created`]); if its body cannot be read, the
    ///   order is looked up by external id.
    /// - 409, whatever its body: the order exists (an earlier attempt or run made it); it is looked up,
    ///   with a few brief retries while the lookup does not show it yet, and compared with the request:
    ///   the same order is [`Submitted::AlreadyExisted`], a different one is
    ///   [`Error::ExternalIdReused`].
    /// - 429: nothing was processed; retried after `Retry-After`, unless that wait is longer than the
    ///   retry budget left ([`Error::RateLimited`] at once).
    /// - 5xx, a timeout, a reset, any other answer: the order may exist; retried with the same external
    ///   id. When the attempts run out, one last lookup decides where it can.
    /// - 400, 404 and other refusals (and a refusal of the local pre-flight check, which runs first and
    ///   costs no request): before the refusal is returned, the external id is looked up once, so an
    ///   order placed by an earlier run (whose product was archived since, say) is reported as existing.
    /// - 401: returned as is.
    ///
    /// Errors after which the order may exist say so with [`Error::may_have_been_processed`]; submit
    /// again later with the same request and external id to learn the outcome.
    ///
    /// ```no_run
    /// # async fn run(client: store_api::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use store_api::{AddressLines, ShipToAddress, OrderBuilder, ShipTo, Submitted, new_external_order_id};
    /// let external_id = new_external_order_id(); // store this with your order first
    /// let address = ShipToAddress::new(AddressLines {
    ///     street_address: "1 Main St",
    ///     city_or_town: "Austin",
    ///     state_or_province: "TX",
    ///     postal_code: "78701",
    ///     country: "US",
    /// })?;
    /// let ship_to = ShipTo::new("Ada", "Lovelace", address)?;
    /// let order = OrderBuilder::new(&external_id, ship_to)?.sku("AA-TEE-SUN-BLK-M", 2).build()?;
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
    ///
    /// A request without an external id does not compile: `submit` takes an [`IdentifiedOrder`], not a
    /// [`NewOrder`] (convert one read from JSON with `IdentifiedOrder::try_from`, which names
    /// `externalOrderId` when it is missing).
    ///
    /// ```compile_fail
    /// # async fn run(client: store_api::Client, order: store_api::NewOrder) {
    /// let submission = client.orders().submit(&order).await;
    /// # }
    /// ```
    pub async fn submit(&self, order: &IdentifiedOrder) -> Result<Submission> {
        self.submit_checked(order, true).await
    }

    /// A submission in its span (`store_api.submit`), its operation-level span: the POSTs' try spans
    /// and the lookups' operation spans are its children.
    async fn submit_checked(&self, order: &IdentifiedOrder, preflight: bool) -> Result<Submission> {
        let span = tracing::info_span!(
            target: "store_api::submit",
            "store_api.submit",
            "otel.name" = "store_api.orders.submit",
            "otel.kind" = "internal",
            "otel.status_code" = tracing::field::Empty,
            "store_api.operation" = "create_order",
            "store_api.external_order_id" = order.external_order_id(),
            "store_api.submit.attempts" = tracing::field::Empty,
            "store_api.submit.outcome" = tracing::field::Empty,
            "store_api.submit.preflight" = preflight,
            "store_api.submit.preflight_s" = tracing::field::Empty,
            "store_api.rate_limit.waited_s" = tracing::field::Empty,
            "error.type" = tracing::field::Empty,
        );
        let mut record = SubmitRecord {
            timed: !span.is_disabled(),
            ..SubmitRecord::default()
        };
        let result = {
            let attempts = pin!(self.submit_attempts(order, preflight, &mut record));
            telemetry::in_span(&span, attempts).await
        };
        let outcome = submit_outcome(&result);
        #[cfg(feature = "otel-metrics")]
        crate::telemetry::metrics::record_submission(outcome);
        if !span.is_disabled() {
            end_submit(&span, &record, outcome, result.as_ref().err());
        }
        result
    }

    async fn submit_attempts(
        &self,
        order: &IdentifiedOrder,
        preflight: bool,
        record: &mut SubmitRecord,
    ) -> Result<Submission> {
        // The type guarantees an id that a lookup can find: a retry is reconciled by looking it up.
        let external_id = order.external_order_id();
        let order = order.as_request();
        let mut attempts = Vec::new();
        let transport = &self.client.inner.transport;
        let timeout = transport.timeout;
        // What the lookups that settle an outcome may take: one read call's worth (its retries, and its
        // last attempt after the longest wait the limiter imposes).
        // Saturating: each term is a setting (clamped, but their sum may still be out of range).
        let settle_time = transport
            .policy
            .max_elapsed
            .saturating_add(transport.max_pause)
            .saturating_add(timeout);
        let checked = if preflight {
            let checking = record.timed.then(Instant::now);
            let checked = self.preflight(order).await;
            record.preflight = checking.map(|started| started.elapsed());
            checked
        } else {
            Ok(())
        };
        match checked {
            Ok(()) => {}
            Err(refusal @ Error::Invalid { .. }) => {
                let settle_by = deadline_after(settle_time);
                return self
                    .refused(order, external_id, refusal, None, attempts, settle_by)
                    .await;
            }
            // The catalog could not be read: nothing was sent.
            Err(other) => return Err(other),
        }
        let policy = self.client.inner.submit_policy;
        let started = Instant::now();
        // No attempt starts after this; lookups that settle the outcome get one timeout more.
        let attempts_end = later(started, policy.max_elapsed);
        // The first error after which the order may exist (once set, no later answer may report the
        // order as "not processed"), and the last one: what to report when the attempts run out and no
        // lookup decides.
        let mut ambiguous: Option<Error> = None;
        let mut last: Option<Error> = None;
        for number in 1.. {
            record.attempts = number;
            let attempt_started = Instant::now();
            let answer = match self
                .post_once(order, external_id, number, &mut record.waited)
                .await
            {
                Ok(answer) => answer,
                Err(local) => return Err(undecided_or(ambiguous, local)),
            };
            let settle_by = deadline_after(settle_time);
            let (result, outcome, error) = match answer {
                PostOutcome::Created(created) => {
                    attempts.push(attempt(number, AttemptResult::Created, attempt_started));
                    return Ok(Submission {
                        submitted: Submitted::Created(*created),
                        attempts,
                    });
                }
                PostOutcome::CreatedUnreadable { error, readable } => {
                    attempts.push(attempt(
                        number,
                        AttemptResult::CreatedUnreadable,
                        attempt_started,
                    ));
                    // A 2xx whose body is unreadable: this attempt created the order, and the lookup
                    // recovers what the body did not carry. A 2xx carrying another order is not to be
                    // believed: the lookup alone says whether and how the order exists.
                    let error = undecided_or(ambiguous, error);
                    return self
                        .settle(external_id, LAGGING_LOOKUPS, error, settle_by, |existing| {
                            if readable {
                                existing_outcome(order, existing, attempts)
                            } else {
                                created_outcome(order, existing, attempts)
                            }
                        })
                        .await;
                }
                PostOutcome::Conflict => {
                    attempts.push(attempt(
                        number,
                        AttemptResult::AlreadyExists,
                        attempt_started,
                    ));
                    let conflict = Error::Conflict {
                        message: format!(
                            "an order with this external id exists (409) but {LAGGING_LOOKUPS} lookups did not show it yet; submit again later with the same id"
                        ),
                    };
                    return self
                        .settle(
                            external_id,
                            LAGGING_LOOKUPS,
                            undecided_or(ambiguous, conflict),
                            settle_by,
                            |existing| existing_outcome(order, existing, attempts),
                        )
                        .await;
                }
                PostOutcome::Refused(refusal) => {
                    let status = refusal.status().unwrap_or(0);
                    attempts.push(attempt(
                        number,
                        AttemptResult::Status(status),
                        attempt_started,
                    ));
                    return self
                        .refused(order, external_id, refusal, ambiguous, attempts, settle_by)
                        .await;
                }
                PostOutcome::Unauthorized(error) => {
                    attempts.push(attempt(number, AttemptResult::Status(401), attempt_started));
                    // After an answer that may have created the order, a 401 must not read as
                    // "not processed".
                    return Err(undecided_or(ambiguous, error));
                }
                PostOutcome::Retry {
                    result,
                    outcome,
                    error,
                } => (result, outcome, error),
            };
            attempts.push(attempt(number, result, attempt_started));
            if error.may_have_been_processed() && ambiguous.is_none() {
                ambiguous = Some(error);
            } else {
                last = Some(error);
            }
            // Same external id on every attempt: a create is replayable here. Intermediaries' client
            // errors and redirects are not retried (they are not the service's, and would answer the
            // same): the lookup below settles them.
            match decide(&policy, true, outcome, number, started.elapsed()) {
                Decision::RetryAfter(wait) => {
                    tracing::debug!(attempt = number, ?wait, "resubmitting");
                    tokio::time::sleep(
                        wait.min(attempts_end.saturating_duration_since(Instant::now())),
                    )
                    .await;
                }
                Decision::Stop => break,
            }
        }
        // Out of attempts. If one of them may have created the order, one more lookup decides.
        if let Some(error) = ambiguous {
            let settle_by = deadline_after(settle_time);
            return self
                .settle(external_id, 1, error, settle_by, |existing| {
                    existing_outcome(order, existing, attempts)
                })
                .await;
        }
        Err(last.unwrap_or_else(|| Error::invalid_argument("no attempt was made")))
    }

    /// Creates an order with a single request, without validation or retries.
    ///
    /// **Not safe to retry** unless the request carries an `externalOrderId`: without one, a retry after a
    /// timeout can create and bill a second order. Prefer [`Orders::submit`].
    pub async fn create(&self, order: &NewOrder) -> Result<Order> {
        let client = self.client;
        let request = crate::operation::built(store_api_raw::requests::create_order(
            &client.inner.base_url,
            &client.inner.store_id,
            order,
        ))?;
        crate::operation::send(client, request).await
    }

    /// Runs the service's order rules locally against the client's copy of the catalog and products
    /// (see [`store_cache`](crate::store_cache)); `Ok` when the service would accept the request as far
    /// as can be known without sending it.
    ///
    /// A refusal that the store's data decides (a SKU the copy does not know, a product it holds as
    /// archived, a discontinued variant or blank, a method or location a blank lacks) is checked again
    /// after one incremental read of what changed since the copy was read, so a stale copy never
    /// refuses a good order. Refusals of the request's own shape cost no request.
    pub async fn preflight(&self, order: &NewOrder) -> Result<()> {
        let fields = validate::validate_fields(order);
        if !fields.is_empty() {
            return Err(Error::Invalid { violations: fields });
        }
        let cache = self.client.store_cache();
        let snapshot = cache.snapshot().await?;
        let refusal = match validate::validate_order(order, snapshot.as_ref()) {
            Ok(()) => return Ok(()),
            Err(violations) => violations,
        };
        if !refusal.iter().any(changes_with_the_store) {
            return Err(Error::Invalid {
                violations: refusal,
            });
        }
        let fresh = cache.refresh_since(&snapshot).await?;
        validate::validate_order(order, fresh.as_ref())
            .map_err(|violations| Error::Invalid { violations })
    }

    /// One `POST /orders`, through the limiter but not the transport's retries (this is the only retry
    /// layer of a submission), ending within the client's timeout once the limiter lets it go, and
    /// classified by its HTTP status before anything is
    /// decoded.
    async fn post_once(
        &self,
        order: &NewOrder,
        external_id: &str,
        number: u32,
        waited: &mut Duration,
    ) -> Result<PostOutcome> {
        let client = self.client;
        // Built by the generated `create_order` (route, body), sent once through the one path.
        let request = crate::operation::built(store_api_raw::requests::create_order(
            &client.inner.base_url,
            &client.inner.store_id,
            order,
        ))?;
        let (sent, outcome) = client
            .inner
            .transport
            .send_once(request, &KeyChoice::Current, number, waited)
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(error) => {
                let not_sent = !error.may_have_been_processed();
                let result = match outcome {
                    _ if not_sent => AttemptResult::NotSent,
                    // A 2xx whose body was refused (over the size limit): created, and unreadable.
                    Outcome::Status(200..=299, _) => {
                        return Ok(PostOutcome::CreatedUnreadable {
                            error,
                            readable: false,
                        });
                    }
                    Outcome::Status(status, _) if (300..400).contains(&status) => {
                        AttemptResult::Redirected(status)
                    }
                    // Any other answer failed here only because its body was refused (over the size
                    // limit): the service's answers are small, so it is not taken as the
                    // service's word (a refusal would read as "nothing was processed").
                    Outcome::Status(status, _) => AttemptResult::Intermediary(status),
                    _ if matches!(error, Error::Timeout { .. }) => AttemptResult::Timeout,
                    _ => AttemptResult::Connection,
                };
                return Ok(PostOutcome::Retry {
                    result,
                    outcome,
                    error,
                });
            }
        };
        let status = response.status;
        let headers = response.headers;
        let body = response.body;
        Ok(match status {
            200..=299 => match body {
                Ok(bytes) => match serde_json::from_slice::<Order>(&bytes) {
                    Ok(created) if created.external_order_id.as_deref() == Some(external_id) => {
                        PostOutcome::Created(Box::new(created))
                    }
                    Ok(other) => PostOutcome::CreatedUnreadable {
                        error: Error::decode(format!(
                            "the {status} answer to the order carries another order (externalOrderId {:?}), not this one",
                            other.external_order_id
                        )),
                        readable: true,
                    },
                    Err(e) => PostOutcome::CreatedUnreadable {
                        error: Error::decode(format!(
                            "the {status} answer to the order could not be decoded: {e}"
                        )),
                        readable: false,
                    },
                },
                Err(error) => PostOutcome::CreatedUnreadable {
                    error,
                    readable: false,
                },
            },
            // Whatever the body (the service's envelope or a proxy's page): the id is taken.
            409 => PostOutcome::Conflict,
            _ => {
                let error = error::from_answer(status, &headers, body.ok().as_deref());
                match error {
                    Error::Unauthorized { .. } => PostOutcome::Unauthorized(error),
                    Error::RateLimited { retry_after, .. } => PostOutcome::Retry {
                        result: AttemptResult::Status(429),
                        outcome: Outcome::Status(429, retry_after),
                        error,
                    },
                    _ if error::is_service_refusal(&error) => PostOutcome::Refused(error),
                    // 5xx, and answers of something on the way: the order may exist.
                    _ => PostOutcome::Retry {
                        result: match error {
                            Error::Intermediary { .. } => AttemptResult::Intermediary(status),
                            _ => AttemptResult::Status(status),
                        },
                        outcome: Outcome::Status(status, None),
                        error,
                    },
                }
            }
        })
    }

    /// Before a refusal is returned: one lookup, so an order that exists is never reported as refused.
    /// After an attempt that may have created the order (`ambiguous`), the outcome stays undecided
    /// unless the lookup finds it: a refusal of a later attempt cannot say the order does not exist.
    async fn refused(
        &self,
        order: &NewOrder,
        external_id: &str,
        refusal: Error,
        ambiguous: Option<Error>,
        attempts: Vec<Attempt>,
        settle_by: Instant,
    ) -> Result<Submission> {
        let found = tokio::time::timeout_at(settle_by, self.find_by_external_id(external_id)).await;
        match found {
            Ok(Ok(Some(existing))) => existing_outcome(order, existing, attempts),
            Ok(Ok(None)) => Err(undecided_or(ambiguous, refusal)),
            Ok(Err(lookup)) => {
                tracing::warn!(error = %lookup, "the lookup by external id failed");
                Err(undecided_or(ambiguous, refusal))
            }
            Err(_) => Err(undecided_or(ambiguous, refusal)),
        }
    }

    /// Settles an answer after which the order may exist by looking its external id up (by
    /// `settle_by`): an order found becomes the outcome through `found`; none found leaves `ambiguous`
    /// as the answer. When the lookup itself fails the order stays undecided, and `ambiguous` is
    /// reported too (its `may_have_been_processed()` is true), not the lookup's own error: a 429 or a
    /// firewall's page on the lookup would read as "not processed".
    async fn settle(
        &self,
        external_id: &str,
        tries: u32,
        ambiguous: Error,
        settle_by: Instant,
        found: impl FnOnce(Order) -> Result<Submission>,
    ) -> Result<Submission> {
        let policy = self.client.inner.submit_policy;
        let looked_up =
            tokio::time::timeout_at(settle_by, self.lookup(external_id, &policy, tries)).await;
        match looked_up {
            Ok(Ok(Some(existing))) => found(existing),
            Ok(Ok(None)) => Err(ambiguous),
            Ok(Err(lookup)) => {
                tracing::warn!(error = %lookup, "the lookup by external id failed; the order is undecided");
                Err(ambiguous)
            }
            Err(_) => {
                tracing::warn!(
                    "the lookup by external id did not end in time; the order is undecided"
                );
                Err(ambiguous)
            }
        }
    }

    /// Looks the external id up, up to `tries` times with a short backoff while the order does not show
    /// (the lookup may lag behind the create that a 409 or a 201 reported).
    async fn lookup(
        &self,
        external_id: &str,
        policy: &RetryPolicy,
        tries: u32,
    ) -> Result<Option<Order>> {
        for n in 1..=tries {
            if let Some(found) = self.find_by_external_id(external_id).await? {
                return Ok(Some(found));
            }
            if n < tries {
                tokio::time::sleep(policy.backoff(n).max(policy.base_delay)).await;
            }
        }
        Ok(None)
    }
}

/// What a submission's span records once it ends.
#[derive(Debug, Default)]
struct SubmitRecord {
    /// POSTs tried (an attempt refused unsent included).
    attempts: u32,
    /// Whether a subscriber wants the submission's span: else the pre-flight check goes untimed (two
    /// reads of the clock saved on every submission).
    timed: bool,
    /// The pre-flight check's time, when it ran and was timed.
    preflight: Option<Duration>,
    /// The rate limiter's wait before the POSTs, summed (the lookups' is on their operation spans).
    waited: Duration,
}

/// The end of a submission on its span, in one `record` (each is a call into every layer).
fn end_submit(
    span: &tracing::Span,
    record: &SubmitRecord,
    outcome: &'static str,
    error: Option<&Error>,
) {
    static FIELDS: telemetry::SpanFields<6> = telemetry::SpanFields::new([
        "store_api.submit.attempts",
        "store_api.submit.outcome",
        "store_api.submit.preflight_s",
        "store_api.rate_limit.waited_s",
        "error.type",
        "otel.status_code",
    ]);
    let Some((
        fields,
        [
            attempts,
            outcome_field,
            preflight_s,
            waited_s,
            error_field,
            status,
        ],
    )) = FIELDS.of(span)
    else {
        return;
    };
    let attempts_value = i64::from(record.attempts);
    let preflight_value = record.preflight.map(telemetry::seconds);
    let waited_value = telemetry::seconds(record.waited);
    let error_type = error.map(telemetry::error_type);
    let error_value = error_type.as_deref();
    span.record_all(&fields.value_set(&[
        (&attempts, Some(&attempts_value as &dyn tracing::Value)),
        (&outcome_field, Some(&outcome as &dyn tracing::Value)),
        (
            &preflight_s,
            preflight_value.as_ref().map(|v| v as &dyn tracing::Value),
        ),
        (&waited_s, Some(&waited_value as &dyn tracing::Value)),
        (
            &error_field,
            error_value.as_ref().map(|v| v as &dyn tracing::Value),
        ),
        (
            &status,
            error_value.map(|_| &"error" as &dyn tracing::Value),
        ),
    ]));
}

/// `store_api.submit.outcome`: how a submission ended.
fn submit_outcome(result: &Result<Submission>) -> &'static str {
    match result {
        Ok(Submission {
            submitted: Submitted::Created(_),
            ..
        }) => "created",
        Ok(_) => "already_existed",
        Err(error) if error.may_have_been_processed() => "undecided",
        Err(Error::Invalid { .. }) => "rejected_locally",
        // The service's own answer: nothing was placed (a reused external id included).
        Err(error)
            if error
                .status()
                .is_some_and(|status| (400..500).contains(&status)) =>
        {
            "refused"
        }
        Err(_) => "failed",
    }
}

/// How many times a lookup that should find the order (after a 409 or an unreadable 201) is tried.
const LAGGING_LOOKUPS: u32 = 5;

/// What one `POST` got, decided by its status.
enum PostOutcome {
    /// 2xx with this order.
    Created(Box<Order>),
    /// 2xx whose body could not be read or decoded (`readable: false`), or carried another order.
    CreatedUnreadable { error: Error, readable: bool },
    /// 409: the external id is taken.
    Conflict,
    /// The service's own refusal (400, 404, 413 with its envelope): nothing was processed.
    Refused(Error),
    /// 401.
    Unauthorized(Error),
    /// Worth another attempt (429, 5xx, no answer) subject to the policy, or an answer of something on
    /// the way (a redirect, an intermediary's client error) that the policy stops at.
    Retry {
        result: AttemptResult,
        outcome: Outcome,
        error: Error,
    },
}

/// `error`, unless an earlier attempt may have created the order: then that attempt's error, which says
/// so (`may_have_been_processed()`), because no later answer can tell the order does not exist.
fn undecided_or(ambiguous: Option<Error>, error: Error) -> Error {
    match ambiguous {
        Some(ambiguous) if !error.may_have_been_processed() => ambiguous,
        _ => error,
    }
}

/// The order this call's own 2xx created, found by its external id: [`Submitted::Created`] when it is
/// the request's, [`Error::ExternalIdReused`] when the held order differs.
fn created_outcome(
    order: &NewOrder,
    existing: Order,
    attempts: Vec<Attempt>,
) -> Result<Submission> {
    match existing_outcome(order, existing, attempts)? {
        Submission {
            submitted: Submitted::AlreadyExisted(existing),
            attempts,
        } => Ok(Submission {
            submitted: Submitted::Created(existing),
            attempts,
        }),
        other => Ok(other),
    }
}

/// The existing order of this external id: the same order ([`Submitted::AlreadyExisted`]), or another
/// one ([`Error::ExternalIdReused`]).
fn existing_outcome(
    order: &NewOrder,
    existing: Order,
    attempts: Vec<Attempt>,
) -> Result<Submission> {
    let differences = differences(order, &existing);
    if differences.is_empty() {
        Ok(Submission {
            submitted: Submitted::AlreadyExisted(existing),
            attempts,
        })
    } else {
        Err(Error::ExternalIdReused {
            existing: Box::new(existing),
            differences,
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

/// Whether a refusal rests on data of the store that changes in the app (products, their status and
/// variants, the blanks offered and what they support), so that a copy read earlier may be out of date.
/// A print area's size is the blank's physical fact, and the request's own shape is the request's.
fn changes_with_the_store(violation: &Violation) -> bool {
    matches!(
        violation.kind,
        ViolationKind::ProductNotFound
            | ViolationKind::VariantSkuMismatch
            | ViolationKind::ProductNotOrderable
            | ViolationKind::VariantUnavailable
            | ViolationKind::CatalogVariantNotFound
            | ViolationKind::CatalogVariantUnavailable
            | ViolationKind::MethodNotAvailableForProduct
            | ViolationKind::LocationNotAvailableForProduct
            | ViolationKind::MethodNotAvailableForLocation
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{new_external_order_id, uuid_v7};

    #[test]
    fn a_uuid_v7_holds_its_time_version_and_variant() {
        // RFC 9562's example: 2022-02-22 19:22:22 UTC, rand_a 0xCC3, rand_b 0x18C4DC0C0C07398F.
        let id = uuid_v7(
            Duration::from_millis(0x017F_22E2_79B0),
            0xCC3,
            0x18C4_DC0C_0C07_398F,
        );
        assert_eq!(id, "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
        // Bits beyond the fields are dropped, the version and the variant always set.
        let all_ones = uuid_v7(Duration::from_millis(u64::MAX), u16::MAX, u64::MAX);
        assert_eq!(all_ones, "ffffffff-ffff-7fff-bfff-ffffffffffff");
        assert_eq!(
            uuid_v7(Duration::ZERO, 0, 0),
            "00000000-0000-7000-8000-000000000000"
        );
    }

    #[test]
    fn new_external_order_ids_are_distinct_and_sort_by_millisecond() {
        let ids: Vec<String> = (0..2000).map(|_| new_external_order_id()).collect();
        let distinct: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        for pair in ids.windows(2) {
            // The first 48 bits are the time: never going back between two ids of one thread.
            assert!(pair[0][..13] <= pair[1][..13], "{pair:?}");
        }
        assert!(ids.iter().all(|id| id.len() == 36 && &id[14..15] == "7"));
    }
}
