//! The transport every generated call goes through: rate limiting, retries, tracing, the user's
//! hooks and the current API key, over the client's [`Network`], with the guarantees no network can
//! take away: a deadline per attempt that covers the answer's body, a cap on what is read, no redirect
//! followed and no request for another origin than the base URL's.

use std::sync::Arc;
use std::time::Duration;

use store_api_raw::KeyHandle;
use store_api_raw::hooks::{API_KEY_HEADER, Transport, TransportFuture, set_api_key};
use tokio::time::Instant;
use tracing::Instrument;

use crate::hook::{RequestHook, TryInfo, TryOutcome};
use crate::limiter::Limiter;
use crate::network::{self, Failure, Network, NetworkError};
use crate::retry::{Decision, Outcome, RetryPolicy, decide};

/// Plugs the limiter and the retry policy into the generated client (`store_api_raw::Transport`).
#[derive(Debug)]
pub(crate) struct ClientTransport {
    pub limiter: Arc<dyn Limiter>,
    pub policy: RetryPolicy,
    /// The longest store-wide pause one 429 can impose.
    pub max_pause: Duration,
    /// Where every attempt reads its `X-API-Key` (shared with the raw client's hooks and any
    /// verifier built on it).
    pub key: KeyHandle,
    /// The user's hooks, in the order they run.
    pub hooks: Vec<Arc<dyn RequestHook>>,
    /// What carries each attempt.
    pub network: Arc<dyn Network>,
    /// The most one attempt may take, its limiter wait and its answer's body included.
    pub timeout: Duration,
    /// The most bytes of one answer's body that are read.
    pub max_response_bytes: usize,
    /// The base URL's origin (`scheme://host:port`): no request leaves for another.
    pub origin: url::Origin,
}

impl Transport for ClientTransport {
    fn execute<'a>(
        &'a self,
        _client: &'a reqwest::Client,
        request: reqwest::Request,
        operation_id: &'static str,
    ) -> TransportFuture<'a> {
        Box::pin(self.run(request, operation_id))
    }
}

impl ClientTransport {
    async fn run(
        &self,
        request: reqwest::Request,
        operation_id: &'static str,
    ) -> reqwest::Result<reqwest::Response> {
        // Only reads are replayed after a failure that may have been processed. Creates are replayed only
        // when nothing was processed (429, no connection); `Orders::submit` sends its own POSTs with
        // `send_once`, so that its loop is the only retry layer of a submission.
        let replayable = request.method() == reqwest::Method::GET;
        let started = Instant::now();
        let mut attempt = 1;
        let mut rotated_retry = false;
        let mut current = request;
        loop {
            let spare = current.try_clone();
            let sent_key = self.key.current();
            let (result, outcome) = self.send_once(current, operation_id, attempt).await;
            let decision = match spare {
                // A 401 to a key the handle no longer holds: the request crossed a rotation in flight.
                // Nothing was processed (the key is checked first), so it is sent again at once with
                // the new key, whatever the method; once only, as the key is re-read per attempt.
                Some(_)
                    if matches!(outcome, Outcome::Status(401, _))
                        && !rotated_retry
                        && self.key.current() != sent_key =>
                {
                    rotated_retry = true;
                    Decision::RetryAfter(Duration::ZERO)
                }
                Some(_) => decide(
                    &self.policy,
                    replayable,
                    outcome,
                    attempt,
                    started.elapsed(),
                ),
                None => Decision::Stop,
            };
            match (decision, spare) {
                (Decision::RetryAfter(wait), Some(spare)) => {
                    tracing::debug!(
                        operation = operation_id,
                        attempt,
                        ?outcome,
                        ?wait,
                        "retrying"
                    );
                    // No retry starts after the policy's time is up: the call ends within
                    // `max_elapsed` plus one attempt (a limiter's wait and a timeout).
                    let left = self.policy.max_elapsed.saturating_sub(started.elapsed());
                    tokio::time::sleep(wait.min(left)).await;
                    current = spare;
                    attempt += 1;
                }
                _ => return result,
            }
        }
    }

    /// Sends one request under the rate limiter, in a span, with the user's hooks around it and the
    /// key the handle holds now, and follows the rate-limit headers of the answer:
    /// `X-RateLimit-Remaining: 0` and a 429's `Retry-After` (capped at `max_pause`) pause the whole
    /// store. Once the limiter lets it go (after at most `max_pause` for the in-process limiter), the
    /// exchange and the answer's body end within the client's timeout; a redirect comes back as an
    /// error, never followed.
    pub(crate) async fn send_once(
        &self,
        mut request: reqwest::Request,
        operation_id: &'static str,
        attempt: u32,
    ) -> (reqwest::Result<reqwest::Response>, Outcome) {
        let origin = request.url().origin();
        if origin != self.origin {
            let failure = Failure::OffBase {
                origin: origin.ascii_serialization(),
            };
            return (
                Err(network::into_reqwest_error(failure).await),
                Outcome::ConnectFailed,
            );
        }
        self.limiter.acquire().await;
        let deadline = crate::settings::deadline_after(self.timeout);
        let info = TryInfo {
            method: request.method().clone(),
            operation_id,
            path_template: path_template(operation_id),
            number: attempt,
        };
        let headers = request.headers_mut();
        // Hooks never see the key, and cannot replace it.
        headers.remove(API_KEY_HEADER);
        for hook in &self.hooks {
            hook.before(&info, headers);
        }
        // Read per attempt, so a rotation reaches retries too. A key that cannot be a header value was
        // refused when the request was prepared (same check); if a rotation brought one, the attempt
        // goes without a key and the service answers 401.
        let _ = set_api_key(headers, &self.key.current());
        let span = tracing::info_span!(
            "store_api.request",
            method = %request.method(),
            operation = operation_id,
            path = info.path_template,
            attempt,
            status = tracing::field::Empty,
            rate_limit_remaining = tracing::field::Empty,
        );
        let sent = Instant::now();
        let exchange = tokio::time::timeout_at(deadline, self.network.send(request))
            .instrument(span.clone())
            .await;
        let (result, outcome, ended) = match exchange {
            Ok(Ok(response)) => self.answer(response, &span, deadline).await,
            Ok(Err(NetworkError::Http(error))) => {
                let (outcome, ended) = if error.is_connect() {
                    (Outcome::ConnectFailed, TryOutcome::ConnectFailed)
                } else if error.is_timeout() {
                    (Outcome::NoAnswer, TryOutcome::TimedOut)
                } else {
                    (Outcome::NoAnswer, TryOutcome::Failed)
                };
                (Err(error), outcome, ended)
            }
            Ok(Err(NetworkError::NotConnected(cause))) => {
                let error = network::into_reqwest_error(Failure::NotConnected(cause)).await;
                (
                    Err(error),
                    Outcome::ConnectFailed,
                    TryOutcome::ConnectFailed,
                )
            }
            Ok(Err(NetworkError::Broken(cause))) => {
                let error = network::into_reqwest_error(Failure::Broken(cause)).await;
                (Err(error), Outcome::NoAnswer, TryOutcome::Failed)
            }
            Err(_elapsed) => {
                let failure = Failure::Deadline {
                    timeout: self.timeout,
                };
                let error = network::into_reqwest_error(failure).await;
                (Err(error), Outcome::NoAnswer, TryOutcome::TimedOut)
            }
        };
        if !self.hooks.is_empty() {
            let duration = sent.elapsed();
            for hook in &self.hooks {
                hook.after(&info, &ended, duration);
            }
        }
        (result, outcome)
    }

    /// What an answer's head means: the rate-limit headers are followed, a redirect becomes an error,
    /// and the body is handed on under the size limit and the attempt's deadline.
    async fn answer(
        &self,
        response: reqwest::Response,
        span: &tracing::Span,
        deadline: Instant,
    ) -> (reqwest::Result<reqwest::Response>, Outcome, TryOutcome) {
        let status = response.status().as_u16();
        span.record("status", status);
        let headers = response.headers();
        if let Some(remaining) = header_u64(headers, "x-ratelimit-remaining") {
            span.record("rate_limit_remaining", remaining);
            self.limiter.observe_remaining(remaining).await;
        }
        let retry_after = crate::error::retry_after(headers);
        if status == 429 {
            // Capped: one absurd header must not park every client of the store.
            let pause = retry_after.unwrap_or(Duration::from_secs(1));
            self.limiter.pause_for(pause.min(self.max_pause)).await;
        }
        let outcome = Outcome::Status(status, retry_after);
        let ended = TryOutcome::Status(status);
        if response.status().is_redirection() {
            // The Store API never redirects: whoever answered this is not the service, and following
            // it would carry the key (and an order's body) to the host it names.
            let location = headers
                .get(reqwest::header::LOCATION)
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
            let failure = Failure::Redirected { status, location };
            return (
                Err(network::into_reqwest_error(failure).await),
                outcome,
                ended,
            );
        }
        match network::guard(response, self.max_response_bytes, deadline, self.timeout) {
            Ok(guarded) => (Ok(guarded), outcome, ended),
            Err(failure) => (
                Err(network::into_reqwest_error(failure).await),
                outcome,
                ended,
            ),
        }
    }
}

/// The route of an operation, for spans: the template, never the ids (which can be customer data).
fn path_template(operation_id: &str) -> &'static str {
    store_api_raw::contract::operation(operation_id).map_or("unknown", |operation| operation.path)
}

fn header_u64(headers: &reqwest::header::HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::path_template;
    use store_api_raw::contract::OPERATIONS;

    #[test]
    fn every_operation_has_its_path_template() {
        // The hooks see the generated method's name; the table is generated from the same spec as the
        // client (xtask checks the two agree).
        assert!(!OPERATIONS.is_empty());
        for operation in OPERATIONS {
            assert_eq!(path_template(operation.method_name), operation.path);
        }
        assert_eq!(path_template("no_such_operation"), "unknown");
    }
}
