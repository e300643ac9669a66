//! The transport every generated call goes through: rate limiting, retries, tracing, the user's
//! hooks and the current API key.

use std::sync::Arc;
use std::time::Duration;

use store_api_raw::KeyHandle;
use store_api_raw::hooks::{API_KEY_HEADER, Transport, TransportFuture, set_api_key};
use tokio::time::Instant;
use tracing::Instrument;

use crate::hook::{AttemptInfo, AttemptOutcome, RequestHook};
use crate::limiter::Limiter;
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
}

impl Transport for ClientTransport {
    fn execute<'a>(
        &'a self,
        client: &'a reqwest::Client,
        request: reqwest::Request,
        operation_id: &'static str,
    ) -> TransportFuture<'a> {
        Box::pin(self.run(client, request, operation_id))
    }
}

impl ClientTransport {
    pub fn new(
        limiter: Arc<dyn Limiter>,
        policy: RetryPolicy,
        max_pause: Duration,
        key: KeyHandle,
        hooks: Vec<Arc<dyn RequestHook>>,
    ) -> Arc<ClientTransport> {
        Arc::new(ClientTransport {
            limiter,
            policy,
            max_pause,
            key,
            hooks,
        })
    }

    async fn run(
        &self,
        client: &reqwest::Client,
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
            let (result, outcome) = self.send_once(client, current, operation_id, attempt).await;
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
                    tokio::time::sleep(wait).await;
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
    /// store.
    pub(crate) async fn send_once(
        &self,
        client: &reqwest::Client,
        mut request: reqwest::Request,
        operation_id: &'static str,
        attempt: u32,
    ) -> (reqwest::Result<reqwest::Response>, Outcome) {
        self.limiter.acquire().await;
        let info = AttemptInfo {
            method: request.method().clone(),
            operation_id,
            path_template: path_template(operation_id),
            attempt,
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
        let result = client.execute(request).instrument(span.clone()).await;
        if !self.hooks.is_empty() {
            let duration = sent.elapsed();
            let ended = AttemptOutcome::of(&result);
            for hook in &self.hooks {
                hook.after(&info, &ended, duration);
            }
        }
        let outcome = match &result {
            Ok(response) => {
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
                Outcome::Status(status, retry_after)
            }
            Err(error) if error.is_connect() => Outcome::ConnectFailed,
            Err(_) => Outcome::NoAnswer,
        };
        (result, outcome)
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
