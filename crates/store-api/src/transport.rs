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

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use reqwest::header::HeaderMap;
use store_api_raw::auth::{API_KEY_HEADER, set_api_key};
use store_api_raw::contract::Operation;
use store_api_raw::{ApiKey, KeyHandle};
use tokio::time::Instant;
use tracing::Instrument;

use crate::error::{self, Error, Result};
use crate::hook::{RequestHook, TryInfo, TryOutcome};
use crate::limiter::Limiter;
use crate::network::{Failure, Network, NetworkError};
use crate::response::ApiResponse;
use crate::retry::{Decision, Outcome, RetryPolicy, decide};

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

impl ClientTransport {
    /// Sends `request` (built by the generated code or the escape hatch, without a key) with the
    /// retries `retries` allows, and returns the last attempt's answer, whatever its status.
    pub(crate) async fn send(
        &self,
        request: reqwest::Request,
        key: &KeyChoice,
        retries: Retries,
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
            let (result, outcome) = self.send_once(current, key, attempt).await;
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
                    // No retry starts after the policy's time is up: the call ends within
                    // `max_elapsed` plus one attempt (a limiter's wait and a timeout).
                    let left = policy.max_elapsed.saturating_sub(started.elapsed());
                    tokio::time::sleep(wait.min(left)).await;
                    current = spare;
                    attempt += 1;
                }
                _ => return result.and_then(Reply::whole),
            }
        }
    }

    /// Sends one attempt of `request`: refused unsent for another origin than the base URL's; then
    /// under the rate limiter, in a span, with the user's hooks around it and the key `key` names set
    /// last (hooks neither see nor replace it); its answer's rate-limit headers followed
    /// (`X-RateLimit-Remaining: 0` and a 429's `Retry-After`, capped at `max_pause`, pause the whole
    /// store); a redirect refused, never followed; the body read whole, at most `max_response_bytes`
    /// of it, all of it within the client's timeout from the moment the limiter let the attempt go.
    ///
    /// Returns the outcome for a retry decision alongside: for an answer whose body could not be read,
    /// its status.
    pub(crate) async fn send_once(
        &self,
        mut request: reqwest::Request,
        key: &KeyChoice,
        attempt: u32,
    ) -> (Result<Reply>, Outcome) {
        let origin = request.url().origin();
        if origin != self.origin {
            let failure = Failure::OffBase {
                origin: origin.ascii_serialization(),
            };
            return (Err(error::from_failure(failure)), Outcome::ConnectFailed);
        }
        let operation = operation_of(request.method(), request.url());
        let info = TryInfo {
            method: request.method().clone(),
            operation_id: operation.map_or(UNKNOWN_OPERATION, |op| op.method_name),
            path_template: operation.map_or("unknown", |op| op.path),
            number: attempt,
        };
        self.limiter.acquire().await;
        let deadline = crate::settings::deadline_after(self.timeout);
        let headers = request.headers_mut();
        // Hooks never see the key, and cannot replace it.
        headers.remove(API_KEY_HEADER);
        for hook in &self.hooks {
            hook.before(&info, headers);
        }
        // Read per attempt, so a rotation reaches retries too. A key that cannot be a header value is
        // refused when the client is built (same check); if a rotation brought one, the attempt goes
        // without a key and the service answers 401.
        let key = match key {
            KeyChoice::Current => self.key.current(),
            KeyChoice::Given(key) => key.clone(),
        };
        let _ = set_api_key(headers, &key);
        let span = tracing::info_span!(
            "store_api.request",
            method = %request.method(),
            operation = info.operation_id,
            path = info.path_template,
            attempt,
            status = tracing::field::Empty,
            rate_limit_remaining = tracing::field::Empty,
        );
        let sent = Instant::now();
        let exchange = tokio::time::timeout_at(deadline, self.network.send(request))
            .instrument(span.clone())
            .await;
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
                hook.after(&info, &ended, duration);
            }
        }
        match response {
            Ok(response) => self.answer(response, &span, deadline).await,
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
        span: &tracing::Span,
        deadline: Instant,
    ) -> (Result<Reply>, Outcome) {
        let status = response.status().as_u16();
        span.record("status", status);
        let headers = std::mem::take(response.headers_mut());
        if let Some(remaining) = header_u64(&headers, "x-ratelimit-remaining") {
            span.record("rate_limit_remaining", remaining);
            self.limiter.observe_remaining(remaining).await;
        }
        let retry_after = error::retry_after(&headers);
        if status == 429 {
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

fn header_u64(headers: &HeaderMap, name: &str) -> Option<u64> {
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
