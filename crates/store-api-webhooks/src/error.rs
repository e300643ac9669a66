//! Why a delivery was refused.
//!
//! No message carries the key, the expected signature or the body: they may end up in logs.

use std::fmt;

/// Why a delivery could not be verified or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// The request has no `X-Service-Signature` header, or it is empty.
    #[error("missing X-Service-Signature header")]
    MissingSignature,
    /// The header is not 64 hex digits or the base64 of 32 bytes (optionally after `sha256=`).
    #[error("malformed X-Service-Signature header: expected 64 hex digits or base64 of 32 bytes")]
    MalformedSignature,
    /// The signature is well formed but made with none of the verifier's keys over this body.
    #[error("signature does not match the body")]
    SignatureMismatch,
    /// The signature checks out but the body is not a webhook event.
    #[error("malformed event payload: {0}")]
    MalformedPayload(PayloadError),
    /// The body is larger than the verifier accepts.
    #[error("body exceeds the limit of {limit} bytes")]
    BodyTooLarge {
        /// The limit in bytes ([`Verifier::max_body_bytes`](crate::Verifier::max_body_bytes)).
        limit: usize,
    },
    /// The body could not be read from the connection (the sender went away).
    #[error("could not read the request body")]
    BodyUnreadable,
    /// The verifier has no usable key: the key given was empty (an unset environment variable?). An empty
    /// key would accept `HMAC("", body)`, which anyone can compute, so nothing is verified with it.
    #[error(
        "the webhook signing key is empty (an unset environment variable?): refusing to verify, since anyone can sign with an empty key"
    )]
    EmptyKey,
}

impl WebhookError {
    /// The HTTP status a receiver should answer with: 401 for a signature problem, 413 for a body too
    /// large, 500 for a verifier without a key (a configuration error), 400 otherwise. Any non-2xx answer makes the service retry the delivery.
    pub fn status_code(&self) -> u16 {
        match self {
            Self::MissingSignature | Self::MalformedSignature | Self::SignatureMismatch => 401,
            Self::BodyTooLarge { .. } => 413,
            Self::MalformedPayload(_) | Self::BodyUnreadable => 400,
            // The receiver is misconfigured: a 5xx makes the service retry once it is fixed.
            Self::EmptyKey => 500,
        }
    }
}

/// What was wrong with a verified body that is not a webhook event.
///
/// It keeps serde's reason and position but drops any value quoted from the body: `invalid type: string
/// "…", expected a boolean` becomes `invalid type`, while `missing field `storeId`` (a name from the
/// schema) is kept whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayloadError {
    reason: String,
    line: usize,
    column: usize,
}

impl PayloadError {
    /// Why the body is not an event, without any value from the body.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The line (from 1) where reading failed.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The column (from 1) where reading failed.
    pub fn column(&self) -> usize {
        self.column
    }
}

impl From<serde_json::Error> for PayloadError {
    fn from(error: serde_json::Error) -> Self {
        let (line, column) = (error.line(), error.column());
        let full = error.to_string();
        let position = format!(" at line {line} column {column}");
        let message = full.strip_suffix(&position).unwrap_or(&full);
        // serde quotes offending values after a colon (`invalid type: integer `5`, expected …`); the part
        // before it names the kind of problem, and messages without a colon quote only schema names.
        let reason = message
            .split(':')
            .next()
            .unwrap_or(message)
            .trim()
            .to_owned();
        Self {
            reason,
            line,
            column,
        }
    }
}

impl fmt::Display for PayloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.reason, self.line, self.column
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn payload_error(body: &str) -> PayloadError {
        PayloadError::from(serde_json::from_str::<crate::Event>(body).unwrap_err())
    }

    #[test]
    fn payload_errors_keep_schema_names_and_drop_body_values() {
        let cases = [
            (
                r#"{"id":"e","storeId":"s","data":{"id":"p"}}"#,
                "missing field `topic`",
                None,
            ),
            (
                r#"{"id":"e","storeId":"s","topic":"orders_create","data":{"id":"p"},"isTest":"SECRET-VALUE"}"#,
                "invalid type",
                Some("SECRET-VALUE"),
            ),
            (
                r#"{"id":987654321,"storeId":"s","topic":"orders_create","data":{"id":"p"}}"#,
                "invalid type",
                Some("987654321"),
            ),
            (
                r#"{"id":"e", "SECRET-KEY-NAME": tru}"#,
                "expected ident",
                Some("SECRET-KEY-NAME"),
            ),
            ("", "EOF while parsing a value", None),
        ];
        for (body, reason, hidden) in cases {
            let error = payload_error(body);
            assert_eq!(error.reason(), reason, "{body}");
            let shown = WebhookError::MalformedPayload(error).to_string();
            assert!(shown.starts_with("malformed event payload: "), "{shown}");
            if let Some(hidden) = hidden {
                assert!(!shown.contains(hidden), "{shown} leaks {hidden}");
            }
        }
    }

    #[test]
    fn status_codes_follow_the_error_kind() {
        let cases = [
            (WebhookError::MissingSignature, 401),
            (WebhookError::MalformedSignature, 401),
            (WebhookError::SignatureMismatch, 401),
            (WebhookError::MalformedPayload(payload_error("[]")), 400),
            (WebhookError::BodyTooLarge { limit: 1 }, 413),
            (WebhookError::BodyUnreadable, 400),
        ];
        for (error, status) in cases {
            assert_eq!(error.status_code(), status, "{error}");
        }
    }
}
