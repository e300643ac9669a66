//! Why a command failed, its exit code, and how the failure is printed.

use std::io::Write as _;

use store_api::Error as ApiError;
use store_api::validate::Violation;

/// Exit code of a command that succeeded.
pub const EXIT_OK: u8 = 0;
/// A check failed (webhook signature) or the embedded emulator could not start.
pub const EXIT_FAILED: u8 = 1;
/// Bad flags, missing credentials, an unreadable input file.
pub const EXIT_USAGE: u8 = 2;
/// The API refused the request (4xx) or the pre-flight check found problems.
pub const EXIT_API: u8 = 3;
/// Transport failure, timeout, 5xx, the rate limit still exceeded after retries, or an order file
/// another run still holds after `--lock-timeout`.
pub const EXIT_TRANSPORT: u8 = 4;

/// Everything a command can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line or an input file is wrong.
    #[error("{0}")]
    Usage(String),
    /// A client call failed.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The client refused the request locally, before sending it (an artwork URL the service refuses).
    #[error("{0} (refused locally; nothing was sent)")]
    Refused(String),
    /// A check the command exists for did not pass (a webhook signature).
    #[error("{0}")]
    Failed(String),
    /// Another run holds a lock this one waited for in vain (`orders submit`'s order file); nothing
    /// was sent, and trying again later may succeed.
    #[error("{0}")]
    Busy(String),
    /// `api`: the service answered with a status that is not a success (after the SDK's retries).
    #[error("the service answered {status} {reason}")]
    Answered {
        /// The HTTP status.
        status: u16,
        /// Its reason phrase (`Not Found`).
        reason: String,
    },
}

impl CliError {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => EXIT_USAGE,
            CliError::Failed(_) => EXIT_FAILED,
            CliError::Refused(_) => EXIT_API,
            CliError::Busy(_) => EXIT_TRANSPORT,
            CliError::Api(error) => api_exit_code(error),
            CliError::Answered { status, .. } => status_exit_code(*status),
        }
    }
}

/// The exit code of an answer the service gave: what the SDK's one retry rule would retry (429, 5xx)
/// is worth trying again later, like a transport failure; any other 4xx is a refusal.
fn status_exit_code(status: u16) -> u8 {
    match status {
        _ if store_api::RetryPolicy::retries_status(status) => EXIT_TRANSPORT,
        400..=499 => EXIT_API,
        _ => EXIT_TRANSPORT,
    }
}

fn api_exit_code(error: &ApiError) -> u8 {
    match error {
        ApiError::Invalid { .. } => EXIT_API,
        // Refused locally before sending: a page size out of range, a comma in an external id.
        ApiError::InvalidArgument { .. } => EXIT_USAGE,
        // A 429 that outlived the retries is worth retrying later, like a 5xx.
        other if other.is_retryable() => EXIT_TRANSPORT,
        other => other.status().map_or(EXIT_TRANSPORT, status_exit_code),
    }
}

/// One problem of a refused request: the field path (when known) and the message.
fn violation_line(violation: &Violation) -> String {
    // Field messages already start with their path (`shippingAddress.lastName should not be empty`).
    if violation.is_field_validation() || violation.path.is_empty() {
        violation.message()
    } else {
        format!("{}: {}", violation.path, violation.message())
    }
}

/// The headline and the detail lines of a failure, for humans.
fn describe(error: &CliError) -> (String, Vec<String>) {
    let api = match error {
        CliError::Api(api) => api,
        other => return (other.to_string(), Vec::new()),
    };
    match api {
        ApiError::Invalid { violations } => (
            format!(
                "the pre-flight check found {} problem(s); nothing was sent",
                violations.len()
            ),
            violations.iter().map(violation_line).collect(),
        ),
        ApiError::BadRequest { messages } => (
            "the service refused the request (400 Bad Request)".to_owned(),
            messages.clone(),
        ),
        ApiError::Unauthorized { message } => (
            format!(
                "401 Unauthorized: {message} (check --api-key/{} and --store-id/{})",
                store_api::ENV_API_KEY,
                store_api::ENV_STORE_ID
            ),
            Vec::new(),
        ),
        ApiError::NotFound { message } => (format!("404 Not Found: {message}"), Vec::new()),
        // The service's words under the client's: the emulator's say when the wait cannot pass (its
        // clock is frozen) and how to move it.
        ApiError::RateLimited { message, .. } => (
            api.to_string(),
            (!message.is_empty())
                .then(|| message.clone())
                .into_iter()
                .collect(),
        ),
        ApiError::Conflict { message } => (format!("409 Conflict: {message}"), Vec::new()),
        ApiError::ExternalIdReused {
            existing,
            differences,
        } => (
            format!(
                "externalOrderId {} is held by order {} ({}), which differs from this request (below): that order is the one placed and billed under this id (edited in the app since, or placed from another request), and this run placed no other. Sending this request under a new externalOrderId would place a second order, billed as well",
                existing.external_order_id.as_deref().unwrap_or("-"),
                existing.id,
                existing.name.as_deref().unwrap_or("-")
            ),
            differences.iter().map(ToString::to_string).collect(),
        ),
        other => (other.to_string(), Vec::new()),
    }
}

/// Prints the failure on stderr: readable lines, or one JSON object with `--json`.
pub fn report(error: &CliError, json: bool) {
    let (headline, details) = describe(error);
    let mut stderr = std::io::stderr().lock();
    // Nothing sensible is left to do when stderr itself is gone.
    let _ = if json {
        let status = match error {
            CliError::Api(api) => api.status(),
            CliError::Answered { status, .. } => Some(*status),
            _ => None,
        };
        let value = serde_json::json!({
            "error": {
                "exitCode": error.exit_code(),
                "statusCode": status,
                "message": headline,
                "details": details,
            }
        });
        writeln!(stderr, "{value}")
    } else {
        // The service's messages (and the values they quote) go to a terminal: shown, never obeyed.
        let mut text = format!("error: {}\n", crate::terminal::clean_lines(&headline));
        for line in &details {
            text.push_str("  ");
            text.push_str(&crate::terminal::clean_lines(line));
            text.push('\n');
        }
        stderr.write_all(text.as_bytes())
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use store_api::validate::ViolationKind;

    fn answered(status: u16) -> CliError {
        CliError::Answered {
            status,
            reason: String::new(),
        }
    }

    #[test]
    fn exit_codes_follow_the_kind_of_failure() {
        let cases: Vec<(CliError, u8)> = vec![
            (CliError::Usage("x".into()), EXIT_USAGE),
            (CliError::Failed("x".into()), EXIT_FAILED),
            (CliError::Refused("x".into()), EXIT_API),
            (CliError::Busy("x".into()), EXIT_TRANSPORT),
            (answered(404), EXIT_API),
            (answered(409), EXIT_API),
            (answered(429), EXIT_TRANSPORT),
            (answered(500), EXIT_TRANSPORT),
            (answered(503), EXIT_TRANSPORT),
            (ApiError::BadRequest { messages: vec![] }.into(), EXIT_API),
            (ApiError::Invalid { violations: vec![] }.into(), EXIT_API),
            (
                ApiError::Unauthorized {
                    message: String::new(),
                }
                .into(),
                EXIT_API,
            ),
            (
                ApiError::NotFound {
                    message: String::new(),
                }
                .into(),
                EXIT_API,
            ),
            (
                ApiError::Conflict {
                    message: String::new(),
                }
                .into(),
                EXIT_API,
            ),
            (
                ApiError::Status {
                    status: 413,
                    message: String::new(),
                }
                .into(),
                EXIT_API,
            ),
            (
                ApiError::RateLimited {
                    retry_after: None,
                    message: String::new(),
                }
                .into(),
                EXIT_TRANSPORT,
            ),
            (
                ApiError::Server {
                    status: 503,
                    message: String::new(),
                }
                .into(),
                EXIT_TRANSPORT,
            ),
            (
                ApiError::Timeout {
                    may_have_been_processed: true,
                }
                .into(),
                EXIT_TRANSPORT,
            ),
            (
                ApiError::Decode {
                    message: "x".into(),
                    source: None,
                }
                .into(),
                EXIT_TRANSPORT,
            ),
            (
                ApiError::InvalidArgument {
                    message: "x".into(),
                    source: None,
                }
                .into(),
                EXIT_USAGE,
            ),
        ];
        for (error, code) in cases {
            assert_eq!(error.exit_code(), code, "{error:?}");
        }
    }

    #[test]
    fn violations_are_listed_with_their_field_paths() {
        let error = CliError::from(ApiError::Invalid {
            violations: vec![
                Violation::new(
                    ViolationKind::DesignLargerThanPrintArea,
                    "lineItems.0.decorations.0",
                    "front",
                ),
                Violation::new(ViolationKind::EmptyString, "shippingAddress.lastName", ""),
            ],
        });
        let (headline, details) = describe(&error);
        assert!(headline.contains("2 problem(s)"), "{headline}");
        assert_eq!(
            details,
            [
                "lineItems.0.decorations.0: The design is larger than the print area for the print location: front",
                "shippingAddress.lastName should not be empty",
            ]
        );
    }
}
