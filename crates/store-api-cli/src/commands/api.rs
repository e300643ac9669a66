//! `api METHOD PATH [--data]`: any request, sent the way the SDK sends its own.
//!
//! The request goes through the generated client's hooks (`ClientHooks::pre` then `exec`), so it takes
//! exactly the SDK's transport path: the current key from the client's key handle, the store's rate
//! limiter, the retry policy (GETs replayed after 5xx and timeouts; any method after a 429 or a failed
//! connection), the user hooks and the `-v` request span. A path that matches an operation of the spec
//! is logged under that operation's id.

use progenitor_client::{ClientHooks as _, ClientInfo as _, OperationInfo};
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use reqwest::{Method, Url};
use store_api::Client;
use store_api_raw::contract::{OPERATIONS, Operation, VERSION_PREFIX};

use crate::cli::ApiArgs;
use crate::error::CliError;
use crate::output::write_stdout;

/// The operation id a request that matches no operation of the spec is logged under.
const UNKNOWN_OPERATION: &str = "api";

/// Sends the request and prints the answer: the status on stderr, the body on stdout.
pub async fn run(args: ApiArgs, client: &Client) -> Result<(), CliError> {
    let method = Method::from_bytes(args.method.to_ascii_uppercase().as_bytes())
        .map_err(|_| CliError::Usage(format!("METHOD: {:?} is not an HTTP method", args.method)))?;
    let url = request_url(client.base_url(), client.store_id(), &args.path)?;
    let body = args.data.as_deref().map(read_data).transpose()?;
    let operation_id = operation(&method, &url).map_or(UNKNOWN_OPERATION, |op| op.method_name);

    let raw = client.raw();
    let mut request = raw.client().request(method, url);
    if let Some(body) = body {
        request = request
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .body(body);
    }
    let mut request = request
        .build()
        .map_err(|e| CliError::Usage(format!("cannot build the request: {e}")))?;
    let info = OperationInfo { operation_id };
    raw.pre::<()>(&mut request, &info)
        .await
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let response = raw.exec(request, &info).await.map_err(transport_error)?;

    let status = response.status();
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains("json"));
    let bytes = response.bytes().await.map_err(transport_error)?;
    write_stdout(&render_body(&bytes, is_json));
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

/// The URL of `path`: relative to the store, or absolute when it starts with the version prefix. Never
/// another host: the key goes only to the session's service.
fn request_url(base_url: &str, store_id: &str, path: &str) -> Result<Url, CliError> {
    if path.contains("://") {
        return Err(CliError::Usage(format!(
            "PATH: give a path such as /orders, not a URL ({path}); the key is only sent to the session's service"
        )));
    }
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    let bad_base = |e: &dyn std::fmt::Display| CliError::Usage(format!("bad base URL: {e}"));
    let origin = base_url.strip_suffix(VERSION_PREFIX).unwrap_or(base_url);
    let under_prefix = path
        .strip_prefix(VERSION_PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '?']));
    let text = if under_prefix {
        format!("{origin}{path}")
    } else {
        let mut store = Url::parse(base_url).map_err(|e| bad_base(&e))?;
        store
            .path_segments_mut()
            .map_err(|()| bad_base(&"it cannot hold a path"))?
            .pop_if_empty()
            .extend(store_prefix(store_id));
        format!("{}{path}", store.as_str())
    };
    Url::parse(&text).map_err(|e| CliError::Usage(format!("PATH: {path} does not form a URL: {e}")))
}

/// The segments of the store's own part of every path (`stores/{storeId}` in the spec), with the
/// store id in place of its parameter.
fn store_prefix(store_id: &str) -> Vec<&str> {
    // Every operation's path starts with the store's part, up to its first parameter.
    let template = OPERATIONS.first().map_or("", |op| op.path);
    let end = template.find('}').map_or(0, |at| at + 1);
    template[..end]
        .split('/')
        .filter(|segment| !segment.is_empty())
        .map(|segment| {
            if segment.starts_with('{') {
                store_id
            } else {
                segment
            }
        })
        .collect()
}

/// The operation of the spec `method` and `url` reach, if any.
fn operation(method: &Method, url: &Url) -> Option<&'static Operation> {
    let path = url.path().strip_prefix(VERSION_PREFIX)?;
    let segments: Vec<&str> = path.split('/').collect();
    OPERATIONS.iter().find(|op| {
        let template: Vec<&str> = op.path.split('/').collect();
        op.method.as_str() == method.as_str()
            && template.len() == segments.len()
            && template
                .iter()
                .zip(&segments)
                .all(|(part, segment)| part.starts_with('{') || part == segment)
    })
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

/// The body as printed: pretty JSON when it is JSON, else the text as it came.
fn render_body(bytes: &[u8], is_json: bool) -> String {
    if bytes.is_empty() {
        return String::new();
    }
    let pretty = is_json
        .then(|| serde_json::from_slice::<serde_json::Value>(bytes).ok())
        .flatten()
        .and_then(|value| serde_json::to_string_pretty(&value).ok());
    let mut text = pretty.unwrap_or_else(|| String::from_utf8_lossy(bytes).into_owned());
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

fn transport_error(error: reqwest::Error) -> CliError {
    CliError::Api(store_api::Error::from(error))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "http://127.0.0.1:9/store-api/2026-08";

    #[test]
    fn paths_are_relative_to_the_store_or_absolute_under_the_version_prefix() {
        let cases = [
            (
                "/orders?limit=5",
                "/store-api/2026-08/stores/s1/orders?limit=5",
            ),
            ("orders", "/store-api/2026-08/stores/s1/orders"),
            ("/", "/store-api/2026-08/stores/s1/"),
            (
                "/store-api/2026-08/stores/other/status",
                "/store-api/2026-08/stores/other/status",
            ),
            (
                "/orders?filter[status]=pending,on_hold",
                "/store-api/2026-08/stores/s1/orders?filter[status]=pending,on_hold",
            ),
        ];
        for (path, expected) in cases {
            let url = request_url(BASE, "s1", path).unwrap();
            assert_eq!(
                &url.as_str()["http://127.0.0.1:9".len()..],
                expected,
                "{path}"
            );
        }
        assert!(request_url(BASE, "s1", "https://elsewhere.example/x").is_err());
    }

    #[test]
    fn a_path_of_the_spec_is_logged_under_its_operation() {
        let cases = [
            ("GET", "/orders?limit=5", Some("list_orders")),
            ("POST", "/orders", Some("create_order")),
            ("GET", "/orders/ord_1", Some("get_order")),
            ("DELETE", "/orders/ord_1", None),
            ("GET", "/nowhere", None),
        ];
        for (method, path, expected) in cases {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let url = request_url(BASE, "s1", path).unwrap();
            assert_eq!(
                operation(&method, &url).map(|op| op.method_name),
                expected,
                "{path}"
            );
        }
    }
}
