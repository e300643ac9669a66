//! `api METHOD PATH [--data]`: any request, sent the way the SDK sends its own.
//!
//! The request goes through the client's escape hatch (`Client::request`), so it takes exactly the
//! SDK's one request path: the current key from the client's key handle, the store's rate limiter, the
//! retry policy (GETs replayed after 5xx and timeouts; any method after a 429 or a failed connection),
//! the user hooks, the deadline and size cap, and the `-v` request span. A path that matches an
//! operation of the spec is logged under that operation's id.

use reqwest::Method;
use reqwest::header::CONTENT_TYPE;
use store_api::Client;

use crate::cli::ApiArgs;
use crate::error::CliError;
use crate::output::write_stdout;
use crate::terminal::{clean_json, clean_lines};

/// Sends the request and prints the answer: the status on stderr, the body on stdout.
pub async fn run(args: ApiArgs, client: &Client) -> Result<(), CliError> {
    let method = Method::from_bytes(args.method.to_ascii_uppercase().as_bytes())
        .map_err(|_| CliError::Usage(format!("METHOD: {:?} is not an HTTP method", args.method)))?;
    if args.path.contains("://") {
        return Err(CliError::Usage(format!(
            "PATH: give a path such as /orders, not a URL ({}); the key is only sent to the session's service",
            args.path
        )));
    }
    let body = args.data.as_deref().map(read_data).transpose()?;
    let mut request = client.request(method, &args.path);
    if let Some(body) = body {
        request = request.json_body(body);
    }
    let response = request.send().await.map_err(|error| match error {
        store_api::Error::InvalidArgument { message, .. } => CliError::Usage(message),
        other => CliError::Api(other),
    })?;

    let status = reqwest::StatusCode::from_u16(response.status())
        .map_err(|e| CliError::Usage(format!("the answer's status: {e}")))?;
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains("json"));
    write_stdout(&render_body(response.body(), is_json));
    let reason = status.canonical_reason().unwrap_or("");
    if status.is_success() {
        eprintln!("{} {reason}", status.as_u16());
        Ok(())
    } else {
        Err(CliError::Answered {
            status: status.as_u16(),
            reason: reason.to_owned(),
        })
    }
}

/// The body of `--data`: inline JSON, `@FILE`, or `-`/`@-` for standard input. It must be JSON: the API
/// reads nothing else, and a typo is better caught here than as a 400.
fn read_data(data: &str) -> Result<Vec<u8>, CliError> {
    let (bytes, source) = match data.strip_prefix('@').unwrap_or(data) {
        "-" => (
            crate::input::read_bytes(std::path::Path::new("-"))?,
            "standard input".to_owned(),
        ),
        path if data.starts_with('@') => (
            crate::input::read_bytes(std::path::Path::new(path))?,
            path.to_owned(),
        ),
        _ => (data.as_bytes().to_vec(), "the value given".to_owned()),
    };
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .map_err(|e| CliError::Usage(format!("--data: {source} is not JSON: {e}")))?;
    Ok(bytes)
}

/// The body as printed: pretty JSON when it is JSON, else the text as it came; either way with no
/// control character a terminal would obey (`terminal`: JSON stays JSON, with the same value).
fn render_body(bytes: &[u8], is_json: bool) -> String {
    if bytes.is_empty() {
        return String::new();
    }
    let pretty = is_json
        .then(|| serde_json::from_slice::<serde_json::Value>(bytes).ok())
        .flatten()
        .and_then(|value| serde_json::to_string_pretty(&value).ok());
    let mut text = match pretty {
        Some(json) => clean_json(&json).into_owned(),
        None => clean_lines(&String::from_utf8_lossy(bytes)).into_owned(),
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}
