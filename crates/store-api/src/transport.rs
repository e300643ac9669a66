//! The one path every request of the client takes: the typed operations, [`Orders::submit`]'s POSTs
//! and lookups, and the escape hatch ([`Client::request`]). [`ClientTransport::send`]
//! (with the retries the caller picks) and [`ClientTransport::send_once`] (one attempt, for a caller
//! with a retry loop of its own) are the single place that applies, once per attempt: the origin guard,
//! the rate limiter, the user's hooks, the API key (read from the key handle at that moment), the
//! deadline (covering the answer's body), the size cap and the redirect refusal, over the client's
//! [`Network`]. Failures come back as the crate's own [`Error`], never inside another error type.
//!
//! [`Orders::submit`]: crate::Orders::submit
//! [`Client::request`]: crate::Client::request

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use reqwest::header::{HeaderMap, HeaderName};
use std::pin::pin;
use store_api_raw::auth::{API_KEY_HEADER, set_api_key};
use store_api_raw::contract::{Operation, shapes};
use store_api_raw::{ApiKey, KeyHandle};
use tokio::time::Instant;

use crate::error::{self, Error, Result};
use crate::hook::{RequestHook, TryInfo, TryOutcome};
use crate::limiter::Limiter;
use crate::network::{Failure, Network, NetworkError};
use crate::response::ApiResponse;
use crate::retry::{Decision, Outcome, RetryPolicy, decide};
use crate::telemetry;

/// The operation id hooks and spans see for a request that matches no operation of the spec (the
/// escape hatch's, such as `store_api_conformance`'s probe of an unserved path).
pub(crate) const UNKNOWN_OPERATION: &str = "api";

/// The settings every attempt is sent under.
#[derive(Debug)]
pub(crate) struct ClientTransport {
    pub limiter: Arc<dyn Limiter>,
    /// The client's retry policy ([`Retries::ClientPolicy`]).
    pub policy: RetryPolicy,
    /// The longest store-wide pause one 429 can impose.
    pub max_pause: Duration,
    /// Where every attempt reads its `X-API-Key`.
    pub key: KeyHandle,
    /// The user's hooks, in the order they run.
    pub hooks: Vec<Arc<dyn RequestHook>>,
    /// What carries each attempt.
    pub network: Arc<dyn Network>,
    /// The most one attempt may take once the limiter lets it go, its answer's body included.
    pub timeout: Duration,
    /// The most bytes of one answer's body that are read.
    pub max_response_bytes: usize,
    /// The base URL's origin (`scheme://host:port`): no request leaves for another.
    pub origin: url::Origin,
    /// The base URL's server, as the metric points of its tries carry it.
    #[cfg(feature = "otel-metrics")]
    pub server: crate::telemetry::metrics::Server,
}

/// Which retries a call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retries {
    /// The client's retry policy, for any method: a `GET` is replayed after any retryable outcome,
    /// another method only when nothing was processed (a 429, no connection).
    ClientPolicy,
    /// One attempt ([`ApiRequest::single_attempt`](crate::ApiRequest::single_attempt)).
    SingleAttempt,
}

/// Which key a request carries.
#[derive(Debug, Clone)]
pub(crate) enum KeyChoice {
    /// The one the client's key handle holds when the attempt starts.
    Current,
    /// This one ([`ApiRequest::api_key`](crate::ApiRequest::api_key)).
    Given(ApiKey),
}

/// An answer as one attempt got it: its head, and its body or why the body could not be read (past
/// the size cap or the deadline, a connection broken mid-body). A caller that classifies answers by
/// status alone (`Orders::submit`) still has the status when the body is lost.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Result<Bytes>,
}

impl Reply {
    /// The answer, if its body was read.
    fn whole(self) -> Result<ApiResponse> {
        Ok(ApiResponse::new(self.status, self.headers, self.body?))
    }
}

/// A request on its way to the transport, with the operation of the spec it reaches (what hooks,
/// spans and metrics name it by).
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// The request, without a key.
    pub(crate) request: reqwest::Request,
    /// Its operation: given by the generated builder that made it, matched for the escape hatch's.
    pub(crate) operation: Option<&'static Operation>,
}

impl Outgoing {
    /// A request built by hand (the escape hatch): its operation is found by matching its method and
    /// path against the spec's routes.
    pub(crate) fn matched(request: reqwest::Request) -> Outgoing {
        let operation = operation_of(request.method(), request.url());
        Outgoing { request, operation }
    }
}

/// What the tries of one call add up to, for its operation span and the metrics.
#[derive(Debug, Default)]
struct CallRecord {
    /// Tries made.
    tries: u32,
    /// The limiter's wait, summed over the tries.
    waited: Duration,
    /// The last try's `error.type`, if it failed.
    error_type: Option<Cow<'static, str>>,
}

impl ClientTransport {
    /// Sends `request` (built by the generated code or the escape hatch, without a key) with the
    /// retries `retries` allows, and returns the last attempt's answer, whatever its status; in an
    /// operation span (`store_api.operation`) whose children are the tries' spans.
    pub(crate) async fn send(
        &self,
        outgoing: Outgoing,
        key: &KeyChoice,
        retries: Retries,
    ) -> Result<ApiResponse> {
        let Outgoing { request, operation } = outgoing;
        let span = operation_span(operation);
        let mut record = CallRecord::default();
        let result = {
            let tries = pin!(self.send_tries(request, key, retries, operation, &mut record));
            telemetry::in_span(&span, tries).await
        };
        end_operation(&span, &record);
        result
    }

    async fn send_tries(
        &self,
        request: reqwest::Request,
        key: &KeyChoice,
        retries: Retries,
        operation: Option<&'static Operation>,
        record: &mut CallRecord,
    ) -> Result<ApiResponse> {
        let policy = match retries {
            Retries::ClientPolicy => self.policy,
            Retries::SingleAttempt => RetryPolicy::never(),
        };
        // Only reads are replayed after a failure that may have been processed. Creates are replayed
        // only when nothing was processed (429, no connection); `Orders::submit` sends its own POSTs
        // with `send_once`, so that its loop is the only retry layer of a submission.
        let replayable = request.method() == reqwest::Method::GET;
        let started = Instant::now();
        let mut attempt = 1;
        let mut rotated_retry = false;
        let mut current = request;
        loop {
            let spare = current.try_clone();
            let sent_key = self.key.current();
            let (result, outcome) = self
                .try_once(current, key, attempt, operation, record)
                .await;
            let decision = match spare {
                // A 401 to a key the handle no longer holds: the request crossed a rotation in flight.
                // Nothing was processed (the key is checked first), so it is sent again at once with
                // the new key, whatever the method; once only, as the key is re-read per attempt.
                Some(_)
                    if matches!(key, KeyChoice::Current)
                        && matches!(outcome, Outcome::Status(401, _))
                        && !rotated_retry
                        && self.key.current() != sent_key =>
                {
                    rotated_retry = true;
                    Decision::RetryAfter(Duration::ZERO)
                }
                Some(_) => decide(&policy, replayable, outcome, attempt, started.elapsed()),
                None => Decision::Stop,
            };
            match (decision, spare) {
                (Decision::RetryAfter(wait), Some(spare)) => {
                    tracing::debug!(attempt, ?outcome, ?wait, "retrying");
                    #[cfg(feature = "otel-metrics")]
                    crate::telemetry::metrics::record_retry(
                        operation.map_or(UNKNOWN_OPERATION, |op| op.method_name),
                        record.error_type.clone().unwrap_or(Cow::Borrowed("_OTHER")),
                    );
                    // No retry starts after the policy's time is up: the call ends within
                    // `max_elapsed` plus one attempt (a limiter's wait and a timeout).
                    let left = policy.max_elapsed.saturating_sub(started.elapsed());
                    let wait = wait.min(left);
                    if matches!(outcome, Outcome::Status(429, _)) && !wait.is_zero() {
                        // A 429's Retry-After is slept here (the limiter's pause ends with it, so its
                        // own acquire then waits nothing): announced as the limiter's waits are.
                        crate::ratelimit::announce_rate_limit_wait(wait);
                        record.waited += wait;
                    }
                    tokio::time::sleep(wait).await;
                    current = spare;
                    attempt += 1;
                }
                _ => return result.and_then(Reply::whole),
            }
        }
    }

    /// Sends one attempt of `request` (see [`ClientTransport::try_once`]) for a caller with a retry
    /// loop of its own (`Orders::submit`'s POSTs; `attempt` > 1 is a resend). No operation span: the
    /// try's span is a child of the caller's (the submit span, the submission's operation-level span),
    /// and the limiter's wait is added to `waited` for the caller to record.
    ///
    /// Returns the outcome for a retry decision alongside: for an answer whose body could not be read,
    /// its status.
    pub(crate) async fn send_once(
        &self,
        outgoing: Outgoing,
        key: &KeyChoice,
        attempt: u32,
        waited: &mut Duration,
    ) -> (Result<Reply>, Outcome) {
        let Outgoing { request, operation } = outgoing;
        let mut record = CallRecord::default();
        let sent = self
            .try_once(request, key, attempt, operation, &mut record)
            .await;
        *waited += record.waited;
        sent
    }

    /// Sends one attempt of `request`: refused unsent for another origin than the base URL's; then
    /// under the rate limiter, in a span (`http.client.request`), with the user's hooks around it and
    /// the key `key` names set last (hooks neither see nor replace it); its answer's rate-limit headers
    /// followed (`X-RateLimit-Remaining: 0` and a 429's `Retry-After`, capped at `max_pause`, pause the
    /// whole store); a redirect refused, never followed; the body read whole, at most
    /// `max_response_bytes` of it, all of it within the client's timeout from the moment the limiter
    /// let the attempt go.
    async fn try_once(
        &self,
        mut request: reqwest::Request,
        key: &KeyChoice,
        attempt: u32,
        operation: Option<&'static Operation>,
        record: &mut CallRecord,
    ) -> (Result<Reply>, Outcome) {
        record.tries += 1;
        let operation_id = operation.map_or(UNKNOWN_OPERATION, |op| op.method_name);
        let origin = request.url().origin();
        if origin != self.origin {
            // A try of its own, refused unsent: its span says so, and carries no URL (another host's).
            let refused: Cow<'static, str> = Cow::Borrowed("refused");
            let _span = try_span(
                &request,
                operation,
                operation_id,
                attempt,
                || None,
                || None,
                Some("refused"),
            );
            #[cfg(feature = "otel-metrics")]
            self.record_try_metric(&request, operation, None, Some(&refused), Duration::ZERO);
            record.error_type = Some(refused);
            let failure = Failure::OffBase {
                origin: origin.ascii_serialization(),
            };
            return (Err(error::from_failure(failure)), Outcome::ConnectFailed);
        }
        let info = TryInfo {
            method: request.method().clone(),
            operation_id,
            path_template: operation.map_or("unknown", |op| op.path),
            number: attempt,
        };
        let waited = telemetry::waited_on(self.limiter.acquire()).await;
        record.waited += waited;
        #[cfg(feature = "otel-metrics")]
        if waited >= LIMITER_WAIT_FLOOR {
            crate::telemetry::metrics::record_wait(waited);
        }
        let deadline = crate::settings::deadline_after(self.timeout);
        // Read per attempt, so a rotation reaches retries too. A key that cannot be a header value is
        // refused when the client is built (same check); if a rotation brought one, the attempt goes
        // without a key and the service answers 401.
        let key = match key {
            KeyChoice::Current => self.key.current(),
            KeyChoice::Given(key) => key.clone(),
        };
        // The service reads no userinfo (the key goes in `X-API-Key`) and the HTTP stack does not send
        // it, but would log it (its connection pool's key): dropped.
        if !request.url().username().is_empty() || request.url().password().is_some() {
            let url = request.url_mut();
            let _ = url.set_username("");
            let _ = url.set_password(None);
        }
        // Opened once the limiter lets the try go: its time is the exchange's. The wait is the
        // operation's (its `store_api.rate_limit.waited_s`, and the limiter's event). Every field known
        // now is set here, computed only for a subscriber that wants the span (each later `record`
        // is a call into every layer).
        let (span, template) = try_span(
            &request,
            operation,
            operation_id,
            attempt,
            || operation.map(|op| telemetry::url_template(request.url().path(), op)),
            || {
                let handle_key = self.key.current();
                let keys = [key.expose_secret(), handle_key.expose_secret()];
                Some(telemetry::url_full(request.url(), &keys))
            },
            None,
        );
        #[cfg(not(feature = "otel-metrics"))]
        let _ = template;
        // The metric needs it even when no subscriber wanted the span.
        #[cfg(feature = "otel-metrics")]
        let template = template
            .or_else(|| operation.map(|op| telemetry::url_template(request.url().path(), op)));
        let listening = !span.is_disabled();
        let headers = request.headers_mut();
        // Hooks never see the key, and cannot replace it.
        headers.remove(API_KEY_HEADER);
        if !self.hooks.is_empty() {
            // Each entry of a span is a call into every layer: only when there is a hook to run.
            span.in_scope(|| {
                for hook in &self.hooks {
                    hook.before(&info, headers);
                }
            });
        }
        let _ = set_api_key(headers, &key);
        #[cfg(feature = "otel-metrics")]
        let method = request.method().clone();
        let sent = Instant::now();
        let mut heard = None;
        let (result, outcome) = {
            let exchange = pin!(self.exchange(
                request,
                &info,
                deadline,
                sent,
                listening.then_some(&mut heard),
            ));
            telemetry::in_span(&span, exchange).await
        };
        let error_type = match (&outcome, &result) {
            (Outcome::Status(status, _), _) if *status >= 400 => {
                Some(telemetry::status_text(*status))
            }
            (_, Err(error)) => Some(telemetry::error_type(error)),
            (_, Ok(reply)) => reply.body.as_ref().err().map(telemetry::error_type),
        };
        if listening {
            end_try(&span, heard.as_ref(), error_type.as_deref());
        }
        #[cfg(feature = "otel-metrics")]
        {
            let status = match outcome {
                Outcome::Status(status, _) => Some(status),
                _ => None,
            };
            crate::telemetry::metrics::record_try(
                &crate::telemetry::metrics::TryPoint {
                    method: &method,
                    // The origin guard above: a try that is sent goes to the base URL's server.
                    address: self.server.address.clone(),
                    port: self.server.port,
                    template: template.as_ref(),
                    status,
                    error_type: error_type.as_ref(),
                },
                sent.elapsed(),
            );
        }
        record.error_type = error_type;
        (result, outcome)
    }

    /// The metric point of a try refused unsent (another origin's: its own server and port).
    #[cfg(feature = "otel-metrics")]
    fn record_try_metric(
        &self,
        request: &reqwest::Request,
        operation: Option<&'static Operation>,
        status: Option<u16>,
        error_type: Option<&Cow<'static, str>>,
        duration: Duration,
    ) {
        let url = request.url();
        let template = operation.map(|op| telemetry::url_template(url.path(), op));
        crate::telemetry::metrics::record_try(
            &crate::telemetry::metrics::TryPoint {
                method: request.method(),
                address: Arc::from(url.host_str().unwrap_or_default()),
                port: url.port_or_known_default(),
                template: template.as_ref(),
                status,
                error_type,
            },
            duration,
        );
    }

    /// The exchange of one try, once its key is set: the network's answer (within the deadline), the
    /// hooks told how it went, and the answer read.
    async fn exchange(
        &self,
        request: reqwest::Request,
        info: &TryInfo,
        deadline: Instant,
        sent: Instant,
        heard: Option<&mut Option<Heard>>,
    ) -> (Result<Reply>, Outcome) {
        let exchange = tokio::time::timeout_at(deadline, self.network.send(request)).await;
        let (response, ended) = match exchange {
            Ok(Ok(response)) => {
                let status = response.status().as_u16();
                (Ok(response), TryOutcome::Status(status))
            }
            Ok(Err(NetworkError::Http(error))) => {
                let ended = if error.is_connect() {
                    TryOutcome::ConnectFailed
                } else if error.is_timeout() {
                    TryOutcome::TimedOut
                } else {
                    TryOutcome::Failed
                };
                (Err(error::from_reqwest(error)), ended)
            }
            Ok(Err(NetworkError::NotConnected(cause))) => (
                Err(error::from_failure(Failure::NotConnected(cause))),
                TryOutcome::ConnectFailed,
            ),
            Ok(Err(NetworkError::Broken(cause))) => (
                Err(error::from_failure(Failure::Broken(cause))),
                TryOutcome::Failed,
            ),
            // Nothing was sent: for a hook, like a connection that could not be made.
            Ok(Err(NetworkError::Refused(source))) => {
                (Err(Error::Refused { source }), TryOutcome::ConnectFailed)
            }
            Err(_elapsed) => {
                let failure = Failure::Deadline {
                    timeout: self.timeout,
                };
                (Err(error::from_failure(failure)), TryOutcome::TimedOut)
            }
        };
        if !self.hooks.is_empty() {
            let duration = sent.elapsed();
            for hook in &self.hooks {
                hook.after(info, &ended, duration);
            }
        }
        match response {
            Ok(response) => self.answer(response, heard, deadline).await,
            Err(error) => {
                let outcome = if matches!(error, Error::Refused { .. }) {
                    Outcome::Refused
                } else if error.may_have_been_processed() {
                    Outcome::NoAnswer
                } else {
                    Outcome::ConnectFailed
                };
                (Err(error), outcome)
            }
        }
    }

    /// What an answer's head means: the rate-limit headers are followed, a redirect is refused, and
    /// the body is read under the size cap and the attempt's deadline.
    async fn answer(
        &self,
        mut response: reqwest::Response,
        heard: Option<&mut Option<Heard>>,
        deadline: Instant,
    ) -> (Result<Reply>, Outcome) {
        let status = response.status().as_u16();
        let headers = std::mem::take(response.headers_mut());
        let remaining = header_u64(&headers, &RATE_LIMIT_REMAINING);
        let retry_after = error::retry_after(&headers);
        // For the try's span, when a subscriber wants it (else no header is read for it).
        if let Some(heard) = heard {
            *heard = Some(Heard {
                status,
                remaining,
                retry_after,
                limit: header_u64(&headers, &RATE_LIMIT_LIMIT),
                reset: header_u64(&headers, &RATE_LIMIT_RESET),
            });
        }
        if let Some(remaining) = remaining {
            #[cfg(feature = "otel-metrics")]
            if remaining == 0 {
                crate::telemetry::metrics::record_pause("remaining_zero");
            }
            self.limiter.observe_remaining(remaining).await;
        }
        if status == 429 {
            #[cfg(feature = "otel-metrics")]
            crate::telemetry::metrics::record_pause("429");
            // Capped: one absurd header must not park every client of the store.
            let pause = retry_after.unwrap_or(Duration::from_secs(1));
            self.limiter.pause_for(pause.min(self.max_pause)).await;
        }
        let outcome = Outcome::Status(status, retry_after);
        if response.status().is_redirection() {
            // The Store API never redirects: whoever answered this is not the service, and following
            // it would carry the key (and an order's body) to the host it names.
            let location = headers
                .get(reqwest::header::LOCATION)
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
            return (
                Err(error::from_failure(Failure::Redirected {
                    status,
                    location,
                })),
                outcome,
            );
        }
        if response.content_length().is_some_and(|length| {
            usize::try_from(length).map_or(true, |length| length > self.max_response_bytes)
        }) {
            // Not read at all: the answer says it is larger than the client reads.
            let limit = self.max_response_bytes;
            return (
                Err(error::from_failure(Failure::TooLarge { limit })),
                outcome,
            );
        }
        let body = match tokio::time::timeout_at(deadline, self.read(response)).await {
            Ok(body) => body,
            Err(_elapsed) => Err(error::from_failure(Failure::Deadline {
                timeout: self.timeout,
            })),
        };
        (
            Ok(Reply {
                status,
                headers,
                body,
            }),
            outcome,
        )
    }

    /// The body, whole, unless it is longer than the size cap.
    async fn read(&self, mut response: reqwest::Response) -> Result<Bytes> {
        let limit = self.max_response_bytes;
        let too_large = || error::from_failure(Failure::TooLarge { limit });
        // An answer that gives its length (within the cap, checked before) cannot send more: hyper
        // holds the body to it. Collected by hyper, it is not copied into a buffer of our own (a fresh
        // allocation of a page's size per answer, and the page faults that come with it).
        if response.content_length().is_some() {
            return response.bytes().await.map_err(error::from_reqwest);
        }
        let mut body = BytesMut::new();
        while let Some(chunk) = response.chunk().await.map_err(error::from_reqwest)? {
            if body.len().saturating_add(chunk.len()) > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    }
}

/// The operation of the spec that `method` and `url` reach, if any: what hooks and spans name an
/// attempt by, whoever built the request.
pub(crate) fn operation_of(method: &reqwest::Method, url: &url::Url) -> Option<&'static Operation> {
    // One matcher for every user of the contract (the client, the cassettes' checks).
    store_api_raw::contract::operation_at(method.as_str(), url.path())
}

/// The limiter's wait below which a try counts as not held back (the metric of waits).
#[cfg(feature = "otel-metrics")]
const LIMITER_WAIT_FLOOR: Duration = Duration::from_millis(1);

/// An operation's span, `store_api.operation`: the tries' spans are its children. Its name is
/// formatted only for a subscriber that wants the span (a field's value is evaluated only then).
fn operation_span(operation: Option<&'static Operation>) -> tracing::Span {
    let operation_id = operation.map_or(UNKNOWN_OPERATION, |op| op.method_name);
    tracing::info_span!(
        target: "store_api::operation",
        "store_api.operation",
        "otel.name" = format!("store_api.{operation_id}"),
        "otel.kind" = "internal",
        "otel.status_code" = tracing::field::Empty,
        "store_api.operation" = operation_id,
        "store_api.tries" = tracing::field::Empty,
        "store_api.rate_limit.waited_s" = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
    )
}

/// What a call's tries added up to, on its operation span: one `record` (each is a call into every
/// layer).
fn end_operation(span: &tracing::Span, record: &CallRecord) {
    if span.is_disabled() {
        return;
    }
    static FIELDS: telemetry::SpanFields<4> = telemetry::SpanFields::new([
        "store_api.tries",
        "store_api.rate_limit.waited_s",
        "error.type",
        "otel.status_code",
    ]);
    let Some((fields, [tries, waited, error, status])) = FIELDS.of(span) else {
        return;
    };
    let error_type = record.error_type.as_deref();
    span.record_all(&fields.value_set(&[
        (
            &tries,
            Some(&i64::from(record.tries) as &dyn tracing::Value),
        ),
        (
            &waited,
            Some(&telemetry::seconds(record.waited) as &dyn tracing::Value),
        ),
        (
            &error,
            error_type.as_ref().map(|e| e as &dyn tracing::Value),
        ),
        (&status, error_type.map(|_| &"error" as &dyn tracing::Value)),
    ]));
}

/// A try's span, `http.client.request`, with every field known before the exchange, and its
/// `url.template`: `template` and `url_full` are called only for a subscriber that wants the span (a
/// field's value is evaluated only then); `error` for a try refused unsent. What the answer tells is
/// recorded by [`end_try`].
fn try_span(
    request: &reqwest::Request,
    operation: Option<&'static Operation>,
    operation_id: &'static str,
    attempt: u32,
    template: impl FnOnce() -> Option<Cow<'static, str>>,
    url_full: impl FnOnce() -> Option<String>,
    error: Option<&'static str>,
) -> (tracing::Span, Option<Cow<'static, str>>) {
    let url = request.url();
    let method = request.method().as_str();
    let mut built = None;
    let name: Cow<'static, str>;
    let span = tracing::info_span!(
        target: "store_api::http",
        "http.client.request",
        "otel.name" = {
            built = template();
            name = telemetry::try_name(method, operation, built.as_deref());
            &*name
        },
        "otel.kind" = "client",
        "otel.status_code" = error.map(|_| "error"),
        "http.request.method" = method,
        "server.address" = url.host_str().unwrap_or_default(),
        "server.port" = url.port_or_known_default().map(i64::from),
        "url.full" = url_full(),
        "url.template" = built.as_deref(),
        "store_api.operation" = operation_id,
        "http.request.resend_count" = (attempt > 1).then(|| i64::from(attempt - 1)),
        "http.response.status_code" = tracing::field::Empty,
        "error.type" = error,
        "store_api.rate_limit.limit" = tracing::field::Empty,
        "store_api.rate_limit.remaining" = tracing::field::Empty,
        "store_api.rate_limit.reset" = tracing::field::Empty,
        "store_api.retry_after_s" = tracing::field::Empty,
    );
    (span, built)
}

/// What an answer's head told, for its try's span.
#[derive(Debug, Clone, Copy)]
struct Heard {
    status: u16,
    limit: Option<u64>,
    remaining: Option<u64>,
    reset: Option<u64>,
    retry_after: Option<Duration>,
}

/// The end of a try on its span: the answer's status and rate-limit headers, and `error.type`, in
/// one `record` (each is a call into every layer).
fn end_try(span: &tracing::Span, heard: Option<&Heard>, error_type: Option<&str>) {
    static FIELDS: telemetry::SpanFields<7> = telemetry::SpanFields::new([
        "http.response.status_code",
        "store_api.rate_limit.limit",
        "store_api.rate_limit.remaining",
        "store_api.rate_limit.reset",
        "store_api.retry_after_s",
        "error.type",
        "otel.status_code",
    ]);
    let Some((
        fields,
        [
            status,
            limit,
            remaining,
            reset,
            retry_after,
            error,
            otel_status,
        ],
    )) = FIELDS.of(span)
    else {
        return;
    };
    let as_i64 = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
    let status_value = heard.map(|heard| i64::from(heard.status));
    let limit_value = heard.and_then(|heard| heard.limit).map(as_i64);
    let remaining_value = heard.and_then(|heard| heard.remaining).map(as_i64);
    let reset_value = heard.and_then(|heard| heard.reset).map(as_i64);
    let retry_after_value = heard
        .and_then(|heard| heard.retry_after)
        .map(telemetry::seconds);
    fn value(v: &Option<i64>) -> Option<&dyn tracing::Value> {
        v.as_ref().map(|v| v as &dyn tracing::Value)
    }
    span.record_all(&fields.value_set(&[
        (&status, value(&status_value)),
        (&limit, value(&limit_value)),
        (&remaining, value(&remaining_value)),
        (&reset, value(&reset_value)),
        (
            &retry_after,
            retry_after_value.as_ref().map(|v| v as &dyn tracing::Value),
        ),
        (
            &error,
            error_type.as_ref().map(|e| e as &dyn tracing::Value),
        ),
        (
            &otel_status,
            error_type.map(|_| &"error" as &dyn tracing::Value),
        ),
    ]));
}

/// The rate-limit headers by the spec's names (`contract::shapes`), not typed again here.
const RATE_LIMIT_LIMIT: HeaderName = HeaderName::from_static(shapes::X_RATE_LIMIT_LIMIT.name);
const RATE_LIMIT_REMAINING: HeaderName =
    HeaderName::from_static(shapes::X_RATE_LIMIT_REMAINING.name);
const RATE_LIMIT_RESET: HeaderName = HeaderName::from_static(shapes::X_RATE_LIMIT_RESET.name);

fn header_u64(headers: &HeaderMap, name: &HeaderName) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use store_api_raw::contract::OPERATIONS;

    #[test]
    fn every_operation_is_recognized_from_its_method_and_path() {
        // The hooks see the operation of the request's route, whoever built it; the table is generated
        // from the same spec as the client (xtask checks the two agree).
        assert!(!OPERATIONS.is_empty());
        let base = "http://h:1/store-api/2026-08";
        for operation in OPERATIONS {
            let path = operation.path.replace('{', "x").replace('}', "");
            let url = url::Url::parse(&format!("{base}{path}?limit=1")).unwrap();
            let method = reqwest::Method::from_bytes(operation.method.as_str().as_bytes()).unwrap();
            let found = operation_of(&method, &url).map(|op| op.method_name);
            assert_eq!(found, Some(operation.method_name), "{path}");
        }
        let unserved = url::Url::parse(&format!("{base}/stores/s/nowhere")).unwrap();
        assert_eq!(operation_of(&reqwest::Method::GET, &unserved), None);
        let status = url::Url::parse(&format!("{base}/stores/s/status")).unwrap();
        assert_eq!(operation_of(&reqwest::Method::DELETE, &status), None);
    }

    /// A network that refuses every request, counting them.
    #[derive(Debug, Default)]
    struct Refusing {
        calls: std::sync::atomic::AtomicU32,
    }

    impl Network for Refusing {
        fn send(&self, _request: reqwest::Request) -> crate::network::NetworkFuture<'_> {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async { Err(NetworkError::Refused("no such exchange".into())) })
        }
    }

    // Issue 31: a replay that holds no answer refuses the request; retrying would be refused alike.
    #[tokio::test]
    async fn a_refused_request_is_an_error_of_its_own_kind_and_never_retried() {
        let network = Arc::new(Refusing::default());
        let client = crate::Client::builder()
            .base_url("http://127.0.0.1:9/store-api/2026-08")
            .store_id("store_alpha")
            .api_key("csk_refused_0123456789")
            .network(network.clone())
            .build()
            .unwrap();
        let error = client.status().await.unwrap_err();
        assert!(matches!(error, Error::Refused { .. }), "{error:?}");
        assert!(!error.is_retryable());
        assert!(!error.may_have_been_processed());
        let source = std::error::Error::source(&error).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("no such exchange"));
        assert_eq!(
            network.calls.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "sent once, not retried"
        );
    }
}
