//! What became of a webhook delivery (`store_api.webhook.verdict`): one vocabulary for the delivery
//! span (`telemetry`) and the metrics (`metrics`).

use crate::error::WebhookError;

/// What became of a delivery: `store_api.webhook.verdict`, on the span and the metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Processed now (the handler ran and the event is marked done).
    Processed,
    /// Refused: no signature, a malformed one, one that does not match, or no key to check it with.
    BadSignature,
    /// The handler ran and succeeded, but the claim had been lost: another delivery holds the event
    /// now and `complete` wrote nothing (a stale run; its effects may happen twice).
    Stale,
    /// The body is not an event, too large, or could not be read.
    Malformed,
    /// Processed before; the handler did not run.
    Duplicate,
    /// Another delivery holds the event, the store is full or it failed: the service retries later.
    Busy,
    /// The handler failed; the claim was abandoned.
    HandlerFailed,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Processed => "processed",
            Verdict::BadSignature => "bad_signature",
            Verdict::Stale => "stale",
            Verdict::Malformed => "malformed",
            Verdict::Duplicate => "duplicate",
            Verdict::Busy => "busy",
            Verdict::HandlerFailed => "handler_failed",
        }
    }

    /// Whether the span is marked `otel.status_code = "error"`.
    pub(crate) fn is_error(self) -> bool {
        matches!(
            self,
            Verdict::BadSignature | Verdict::Stale | Verdict::Malformed | Verdict::HandlerFailed
        )
    }

    /// The verdict of a refused delivery.
    pub(crate) fn of_refusal(error: &WebhookError) -> Verdict {
        match error {
            WebhookError::MissingSignature
            | WebhookError::MalformedSignature
            | WebhookError::SignatureMismatch
            | WebhookError::EmptyKey => Verdict::BadSignature,
            WebhookError::MalformedPayload(_)
            | WebhookError::BodyTooLarge { .. }
            | WebhookError::BodyUnreadable => Verdict::Malformed,
        }
    }
}
