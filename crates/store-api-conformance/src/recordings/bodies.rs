//! How a request body is read: its size limit (413 with the envelope over 1 MiB) and its
//! `Content-Type` (not checked: the body is read as JSON).

use store_api_raw::contract::MAX_BODY_BYTES;

use store_api_cassette::RecordedBody;

use super::exchange::Seen;
use super::facts::Facts;

pub(crate) fn check(all: &[Seen<'_>], facts: &mut Facts) {
    for seen in all {
        let Some(body) = &seen.exchange.request.body else {
            continue;
        };
        if seen.operation.is_none() || seen.status() == 401 || seen.status() == 429 {
            continue;
        }
        let at = seen.at();
        let status = seen.status();
        let bytes = match body {
            RecordedBody::Omitted { bytes, .. } => Some(*bytes),
            // Bodies kept in the cassette are small (large ones are omitted): far below the limit.
            _ => None,
        };
        let limit = MAX_BODY_BYTES as u64;
        match bytes {
            Some(bytes) if bytes > limit => {
                let envelope = seen.envelope();
                facts.judge(
                    "max-body-size",
                    &at,
                    match envelope {
                        Some(e) if status == 413 && e.status_code == Some(413) => {
                            Ok(format!("{bytes} bytes: {}", seen.describe()))
                        }
                        _ => Err(format!(
                            "a body of {bytes} bytes (over {limit}) answered {} (expected 413 with the error envelope)",
                            seen.describe()
                        )),
                    },
                );
            }
            _ if status == 413 => facts.differs(
                "max-body-size",
                &at,
                format!(
                    "413 for a body of {} (at most {limit} bytes)",
                    bytes.map_or_else(|| "a few bytes".to_owned(), |b| format!("{b} bytes"))
                ),
            ),
            _ => {}
        }
        let content_type = seen.request_header("content-type").unwrap_or("");
        if !content_type.to_ascii_lowercase().contains("json") && status != 413 {
            let refused = status == 415
                || seen.envelope().is_some_and(|e| {
                    format!("{:?}", e.message)
                        .to_ascii_lowercase()
                        .contains("content-type")
                        || format!("{:?}", e.message)
                            .to_ascii_lowercase()
                            .contains("content type")
                });
            let sent = if content_type.is_empty() {
                "no Content-Type"
            } else {
                content_type
            };
            facts.judge(
                "content-type",
                &at,
                if refused {
                    Err(format!(
                        "a body with {sent} was refused: {}",
                        seen.describe()
                    ))
                } else {
                    Ok(format!("a body with {sent}: {}", seen.describe()))
                },
            );
        }
    }
}
