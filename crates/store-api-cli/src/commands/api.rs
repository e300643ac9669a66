//! `api METHOD PATH [--data]`: any request, sent the way the SDK sends its own.
//!
//! The request goes through the client's escape hatch (`Client::request`), so it takes exactly the
//! SDK's one request path: the current key from the client's key handle, the store's rate limiter, the
//! retry policy (GETs replayed after 5xx and timeouts; any method after a 429 or a failed connection),
//! the user hooks, the deadline and size cap, and the `-v` request span. A path that matches an
//! operation of the spec is logged under that operation's id.
//!
//! As `gh api`: `-H` adds headers (never the key), `-i` prints the status line and headers first,
//! `--paginate` walks a list's pages and prints the items in the lists' JSON form, and `--jq` filters
//! a JSON body.

use std::collections::HashSet;

use reqwest::Method;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use store_api::Client;
use store_api_raw::auth::API_KEY_HEADER;

use crate::cli::ApiArgs;
use crate::error::CliError;
use crate::output::{jq, print_jq, write_stdout};
use crate::terminal::{clean, clean_json, clean_lines};

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
    let headers = parse_headers(&args.headers)?;
    if args.paginate {
        if method != Method::GET || args.data.is_some() {
            return Err(CliError::Usage(
                "--paginate: only a GET of a list (with no --data) has pages to follow".to_owned(),
            ));
        }
        return paginate(client, &args.path, &headers, args.include).await;
    }
    let body = args.data.as_deref().map(read_data).transpose()?;
    let response = send(client, method, &args.path, &headers, body).await?;
    if args.include {
        write_stdout(&head(&response));
    }
    let is_json = is_json(&response);
    match (jq(), is_json) {
        (Some(jq), true) if response.status() < 300 => {
            let value = serde_json::from_slice::<serde_json::Value>(response.body())
                .map_err(|e| CliError::Failed(format!("--jq: the answer is not JSON: {e}")))?;
            print_jq(jq, &value)?;
        }
        _ => write_stdout(&render_body(response.body(), is_json)),
    }
    outcome(response.status())
}

/// One request, the SDK's way, with the headers of `-H`.
async fn send(
    client: &Client,
    method: Method,
    path: &str,
    headers: &HeaderMap,
    body: Option<Vec<u8>>,
) -> Result<store_api::ApiResponse, CliError> {
    let mut request = client.request(method, path);
    for (name, value) in headers {
        request = request.header(name.clone(), value.clone());
    }
    if let Some(body) = body {
        request = request.json_body(body);
    }
    request.send().await.map_err(|error| match error {
        store_api::Error::InvalidArgument { message, .. } => CliError::Usage(message),
        other => CliError::Api(other),
    })
}

/// The status on stderr and the exit code it gives: 0 for a success, else 3 or 4.
fn outcome(status: u16) -> Result<(), CliError> {
    let status = reqwest::StatusCode::from_u16(status)
        .map_err(|e| CliError::Usage(format!("the answer's status: {e}")))?;
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

/// `--paginate`: the pages of a list, from the path's own `page` (else 1) to the last, each
/// requested with the rest of the query as written; an item seen on an earlier page (the list
/// moved under the walk) is printed once, as the SDK's streams do. Prints the lists' JSON form.
async fn paginate(
    client: &Client,
    path: &str,
    headers: &HeaderMap,
    include: bool,
) -> Result<(), CliError> {
    let (base, query) = path.split_once('?').unwrap_or((path, ""));
    let mut params: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
    let mut page = params
        .iter()
        .find_map(|p| p.strip_prefix("page="))
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(1);
    params.retain(|p| !p.starts_with("page="));
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    loop {
        let mut page_query = params.clone();
        let page_param = format!("page={page}");
        page_query.push(&page_param);
        let page_path = format!("{base}?{}", page_query.join("&"));
        let response = send(client, Method::GET, &page_path, headers, None).await?;
        if include {
            write_stdout(&head(&response));
        }
        if !(200..300).contains(&response.status()) {
            write_stdout(&render_body(response.body(), is_json(&response)));
            return outcome(response.status());
        }
        let mut answer =
            serde_json::from_slice::<serde_json::Value>(response.body()).map_err(|e| {
                CliError::Failed(format!("--paginate: {page_path} answered no JSON: {e}"))
            })?;
        // An empty page omits `items` (the API omits empty fields) but still says its totals.
        let page_items = match answer.get_mut("items").map(std::mem::take) {
            Some(serde_json::Value::Array(items)) => items,
            None if answer.get("totalItems").is_some() => Vec::new(),
            _ => {
                return Err(CliError::Usage(format!(
                    "--paginate: {page_path} is not a list (its answer has no `items`)"
                )));
            }
        };
        let total_pages = answer
            .get("totalPages")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        let last = page_items.is_empty() || page >= total_pages;
        for item in page_items {
            let id = item.get("id").and_then(|id| id.as_str()).map(str::to_owned);
            if id.is_none_or(|id| seen.insert(id)) {
                items.push(item);
            }
        }
        if last {
            break;
        }
        page += 1;
    }
    let list = serde_json::json!({ "totalItems": items.len(), "items": items });
    match jq() {
        Some(jq) => print_jq(jq, &list)?,
        None => write_stdout(&render_body(list.to_string().as_bytes(), true)),
    }
    outcome(200)
}

/// The headers of `-H NAME: VALUE`. The key is the session's alone: setting it here is refused (the
/// SDK would drop it anyway), and no value is quoted in a message, in case it is a key.
fn parse_headers(given: &[String]) -> Result<HeaderMap, CliError> {
    let mut headers = HeaderMap::new();
    for header in given {
        let Some((name, value)) = header.split_once(':') else {
            return Err(CliError::Usage(
                "-H: a header is `Name: value`, and one has no colon".to_owned(),
            ));
        };
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
            CliError::Usage(format!("-H: {:?} is not a header name", clean(name.trim())))
        })?;
        if name.as_str().eq_ignore_ascii_case(API_KEY_HEADER) {
            return Err(CliError::Usage(
                "-H X-API-Key: the key is the session's (--api-key, STORE_API_KEY or a profile) and cannot be set with -H"
                    .to_owned(),
            ));
        }
        let value = HeaderValue::from_str(value.trim()).map_err(|_| {
            CliError::Usage(format!("-H {name}: the value is not a valid header value"))
        })?;
        headers.append(name, value);
    }
    Ok(headers)
}

/// `-i`: the status line and the headers, then a blank line, as `curl -i` and `gh api -i` print
/// them; a header carrying the key (none should come back) is shown as `<redacted>`.
fn head(response: &store_api::ApiResponse) -> String {
    let status = response.status();
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut text = format!("{status} {reason}\n");
    for (name, value) in response.headers() {
        let value = if name.as_str().eq_ignore_ascii_case(API_KEY_HEADER) {
            "<redacted>".to_owned()
        } else {
            clean(&String::from_utf8_lossy(value.as_bytes())).into_owned()
        };
        text.push_str(&format!("{name}: {value}\n"));
    }
    text.push('\n');
    text
}

fn is_json(response: &store_api::ApiResponse) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains("json"))
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
