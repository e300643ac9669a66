//! The cassette: the exchanges of one session, in order, as plain text (pretty JSON) that reads well
//! in a diff and that any language can read.
//!
//! ```
//! use store_api_cassette::Cassette;
//!
//! let text = r#"{
//!   "format": "store-api-cassette/1",
//!   "apiVersion": "2026-08",
//!   "customerData": "redacted",
//!   "exchanges": [
//!     {
//!       "request": { "method": "GET", "path": "/store-api/2026-08/status" },
//!       "answer": {
//!         "status": 200,
//!         "headers": { "content-type": "application/json" },
//!         "body": { "json": { "status": "ok" } }
//!       }
//!     }
//!   ]
//! }"#;
//! let cassette = Cassette::from_text(text)?;
//! assert_eq!(cassette.exchanges[0].answer.status, 200);
//! assert_eq!(Cassette::from_text(&cassette.to_text())?, cassette);
//! # Ok::<(), store_api_cassette::CassetteError>(())
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The format marker every cassette starts with; a reader refuses any other.
pub const FORMAT: &str = "store-api-cassette/1";

/// The exchanges of one session, in the order they were sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Cassette {
    /// [`FORMAT`].
    pub format: String,
    /// The API version the session spoke (`2026-08`).
    pub api_version: String,
    /// `redacted` when customer data was replaced by placeholders, `kept` when the recording kept it.
    pub customer_data: CustomerData,
    /// The exchanges, in the order the requests were sent.
    pub exchanges: Vec<Exchange>,
}

/// Whether a cassette holds customer data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CustomerData {
    /// Names, addresses, emails and phone numbers were replaced by placeholders (the default).
    Redacted,
    /// The recording was asked to keep them.
    Kept,
}

/// One request and the answer it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Exchange {
    /// What was sent.
    pub request: RecordedRequest,
    /// What came back.
    pub answer: RecordedAnswer,
}

/// A request as recorded: never its API key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The HTTP method, upper case.
    pub method: String,
    /// The path, from the origin (`/store-api/2026-08/stores/store_alpha/orders`).
    pub path: String,
    /// The query string as sent, without the `?`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The headers that matter (`content-type`), by lower-case name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The body, if there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<RecordedBody>,
}

/// An answer as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RecordedAnswer {
    /// The status code.
    pub status: u16,
    /// The headers that matter (`content-type`, `retry-after`, `x-ratelimit-*`, `location`), by
    /// lower-case name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The body, if there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<RecordedBody>,
}

/// A body: JSON when it is JSON (pretty in the file, so a diff shows the field that changed), text
/// otherwise, or only its size and digest when it is too large to keep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum RecordedBody {
    /// A JSON document.
    Json(Value),
    /// Text that is not JSON (an HTML error page, `Cannot GET …`).
    Text(String),
    /// A body too large to keep: its length and the SHA-256 of its bytes, hex.
    Omitted {
        /// Its length in bytes.
        bytes: u64,
        /// The SHA-256 of its bytes, lower-case hex.
        sha256: String,
    },
}

impl RecordedBody {
    /// The JSON document, if the body is one.
    pub fn json(&self) -> Option<&Value> {
        match self {
            RecordedBody::Json(value) => Some(value),
            _ => None,
        }
    }
}

/// Why a cassette could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CassetteError {
    /// The file could not be read or written.
    #[error("cassette {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The text is not a cassette.
    #[error("not a cassette (line {line}, column {column}): {message}")]
    Parse {
        /// Line of the text where reading stopped, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// What was wrong.
        message: String,
    },
    /// A cassette of another format.
    #[error("a cassette of format {found:?}; this version reads {FORMAT:?}")]
    Format {
        /// The format the text names.
        found: String,
    },
}

impl Cassette {
    /// An empty cassette of this format and API version.
    pub fn new(customer_data: CustomerData) -> Cassette {
        Cassette {
            format: FORMAT.to_owned(),
            api_version: store_api_raw::contract::API_VERSION.to_owned(),
            customer_data,
            exchanges: Vec::new(),
        }
    }

    /// The cassette as text: pretty JSON, keys sorted within each object, ending with a newline.
    pub fn to_text(&self) -> String {
        // Serializing plain data into a String cannot fail.
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a cassette from its text. An `insta` snapshot header (the front matter between two `---`
    /// lines) is skipped, so a cassette kept as a snapshot reads as it is.
    pub fn from_text(text: &str) -> Result<Cassette, CassetteError> {
        let body = without_front_matter(text);
        let cassette: Cassette =
            serde_json::from_str(body).map_err(|error| CassetteError::Parse {
                line: error.line(),
                column: error.column(),
                message: error.to_string(),
            })?;
        if cassette.format != FORMAT {
            return Err(CassetteError::Format {
                found: cassette.format,
            });
        }
        Ok(cassette)
    }

    /// Reads the cassette at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Cassette, CassetteError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| CassetteError::Io {
            path: path.to_owned(),
            source,
        })?;
        Cassette::from_text(&text)
    }

    /// Writes the cassette to `path` (its folder is created), replacing the file atomically.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CassetteError> {
        let path = path.as_ref();
        let io = |source| CassetteError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).map_err(io)?;
        }
        let mut temporary = path.as_os_str().to_owned();
        temporary.push(".tmp");
        let temporary = PathBuf::from(temporary);
        std::fs::write(&temporary, self.to_text()).map_err(io)?;
        std::fs::rename(&temporary, path).map_err(io)
    }
}

/// `text` without an `insta` snapshot's front matter.
fn without_front_matter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text;
    };
    match rest.find("\n---\n") {
        Some(end) => &rest[end + "\n---\n".len()..],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Cassette {
        let mut cassette = Cassette::new(CustomerData::Redacted);
        cassette.exchanges.push(Exchange {
            request: RecordedRequest {
                method: "POST".into(),
                path: "/store-api/2026-08/stores/store_alpha/orders".into(),
                query: None,
                headers: BTreeMap::from([("content-type".into(), "application/json".into())]),
                body: Some(RecordedBody::Json(serde_json::json!({"lineItems": []}))),
            },
            answer: RecordedAnswer {
                status: 404,
                headers: BTreeMap::new(),
                body: Some(RecordedBody::Text("Cannot POST /x".into())),
            },
        });
        cassette
    }

    #[test]
    fn a_cassette_reads_back_what_it_wrote() {
        let cassette = sample();
        assert_eq!(Cassette::from_text(&cassette.to_text()).unwrap(), cassette);
    }

    #[test]
    fn an_insta_snapshot_of_a_cassette_reads_as_the_cassette() {
        let cassette = sample();
        let snapshot = format!(
            "---\nsource: tests/it/cassettes.rs\nexpression: cassette\n---\n{}",
            cassette.to_text()
        );
        assert_eq!(Cassette::from_text(&snapshot).unwrap(), cassette);
    }

    #[test]
    fn another_format_is_refused_by_name() {
        let text = sample().to_text().replace(FORMAT, "store-api-cassette/9");
        let error = Cassette::from_text(&text).unwrap_err();
        assert!(
            error.to_string().contains("store-api-cassette/9"),
            "{error}"
        );
    }

    #[test]
    fn text_that_is_not_a_cassette_names_where_it_stopped() {
        let error = Cassette::from_text("{\n  \"format\": 3\n}").unwrap_err();
        assert!(
            matches!(error, CassetteError::Parse { line: 2, .. }),
            "{error}"
        );
    }
}
