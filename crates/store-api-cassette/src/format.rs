//! The cassette: the exchanges of one session, in order, as plain text (pretty JSON) that reads well
//! in a diff and that any language can read.
//!
//! A cassette is written in one of two forms, and [`Cassette::from_text`] reads both:
//!
//! - [`FORMAT`] (`store-api-cassette/1`): one JSON document holding every exchange; what
//!   [`Cassette::to_text`] and [`Cassette::save`] write, and what an insta snapshot holds.
//! - [`APPENDED_FORMAT`] (`store-api-cassette/2`): a sequence of JSON documents, a header (format, API
//!   version, customer data) and then one document per exchange, in order; what [`CassetteWriter`]
//!   writes, so that saving one more exchange costs that exchange only (the recording proxy saves
//!   after every exchange). `jq -s` or any streaming JSON reader reads it.
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
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The format marker of a cassette written whole (one JSON document): what [`Cassette::to_text`] and
/// [`Cassette::save`] write. A reader refuses any marker but this one and [`APPENDED_FORMAT`].
pub const FORMAT: &str = "store-api-cassette/1";

/// The format marker of a cassette written as it is recorded ([`CassetteWriter`]): a header document
/// and then one JSON document per exchange, each appended as it happens.
pub const APPENDED_FORMAT: &str = "store-api-cassette/2";

/// The longest cassette name [`cassette_name`] accepts, in bytes.
pub const MAX_NAME_LEN: usize = 100;

/// The exchanges of one session, in the order they were sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Cassette {
    /// [`FORMAT`] (a cassette read in [`APPENDED_FORMAT`] says [`FORMAT`] too: it is the same
    /// cassette, and [`Cassette::to_text`] writes it whole).
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
    #[error(
        "a cassette of format {found:?}; this version reads {FORMAT:?} and {APPENDED_FORMAT:?}"
    )]
    Format {
        /// The format the text names.
        found: String,
    },
    /// A name that cannot name a cassette file ([`cassette_name`]).
    #[error("{name:?} is not a cassette name: {reason}")]
    Name {
        /// The name as given.
        name: String,
        /// Why.
        reason: String,
    },
}

/// The first document of a cassette, as far as its format goes.
#[derive(Deserialize)]
struct Marker {
    format: String,
}

/// The header document of a cassette in [`APPENDED_FORMAT`].
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Header {
    format: String,
    api_version: String,
    customer_data: CustomerData,
}

/// A parse error of `serde_json`, its line counted from `first_line` (1 for the text's start).
fn parse_error(error: &serde_json::Error, first_line: usize) -> CassetteError {
    CassetteError::Parse {
        line: error.line() + first_line - 1,
        column: error.column(),
        message: error.to_string(),
    }
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

    /// Reads a cassette from its text, in either format ([`FORMAT`], [`APPENDED_FORMAT`]). An `insta`
    /// snapshot header (the front matter between two `---` lines) is skipped, so a cassette kept as a
    /// snapshot reads as it is.
    pub fn from_text(text: &str) -> Result<Cassette, CassetteError> {
        let body = without_front_matter(text);
        let first = serde_json::Deserializer::from_str(body)
            .into_iter::<Marker>()
            .next();
        match first {
            Some(Ok(marker)) if marker.format == APPENDED_FORMAT => Cassette::appended(body),
            Some(Ok(marker)) if marker.format != FORMAT => Err(CassetteError::Format {
                found: marker.format,
            }),
            // The whole form, or no marker at all: the whole form's reading says what is wrong.
            _ => serde_json::from_str(body).map_err(|error| parse_error(&error, 1)),
        }
    }

    /// Reads a cassette in [`APPENDED_FORMAT`]: its header, then one exchange per document.
    fn appended(body: &str) -> Result<Cassette, CassetteError> {
        let mut documents = serde_json::Deserializer::from_str(body).into_iter::<Header>();
        let header = match documents.next() {
            Some(Ok(header)) => header,
            Some(Err(error)) => return Err(parse_error(&error, 1)),
            None => {
                return Err(CassetteError::Parse {
                    line: 1,
                    column: 1,
                    message: "no header".into(),
                });
            }
        };
        let offset = documents.byte_offset();
        let first_line = body[..offset].matches('\n').count() + 1;
        let exchanges = serde_json::Deserializer::from_str(&body[offset..])
            .into_iter::<Exchange>()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| parse_error(&error, first_line))?;
        Ok(Cassette {
            format: FORMAT.to_owned(),
            api_version: header.api_version,
            customer_data: header.customer_data,
            exchanges,
        })
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

    /// Writes the cassette to `path` (its folder is created), whole ([`FORMAT`]), replacing the file
    /// atomically and durably ([`store_api_raw::durable::replace_file`]: a new temporary file, never
    /// one found at its name nor a link's target, synced, renamed over `path`). To save a recording
    /// as it grows, at the cost of its new exchanges only, use [`Recording::save`](crate::Recording::save)
    /// or a [`CassetteWriter`].
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CassetteError> {
        let path = path.as_ref();
        create_folder(path)?;
        let text = self.to_text();
        store_api_raw::durable::replace_file(path, |file| file.write_all(text.as_bytes()))
            .map_err(|source| io_error(path, source))
    }
}

/// A [`CassetteError::Io`] of `path`.
fn io_error(path: &Path, source: std::io::Error) -> CassetteError {
    CassetteError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Creates the folder of `path`, if it names one.
fn create_folder(path: &Path) -> Result<(), CassetteError> {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(folder) => std::fs::create_dir_all(folder).map_err(|source| io_error(path, source)),
        None => Ok(()),
    }
}

/// A cassette file written as its session goes, in [`APPENDED_FORMAT`]: created (atomically and
/// durably, like [`Cassette::save`]) with the exchanges so far, then each new exchange appended, so a
/// save costs the new exchanges only, however long the session. The file is written through the
/// handle its creation opened, never reopened by name (a link planted at the name later is never
/// followed), and synced after each append.
///
/// ```
/// use store_api_cassette::{Cassette, CassetteWriter, CustomerData};
///
/// # let folder = std::env::temp_dir();
/// let path = folder.join(format!("cassette-writer-example-{}.json", std::process::id()));
/// let mut writer = CassetteWriter::create(&path, &Cassette::new(CustomerData::Redacted))?;
/// # let exchange = Cassette::from_text(r#"{"format": "store-api-cassette/1", "apiVersion": "2026-08",
/// #   "customerData": "redacted", "exchanges": [{"request": {"method": "GET", "path": "/"},
/// #   "answer": {"status": 204}}]}"#)?.exchanges.remove(0);
/// writer.append(std::slice::from_ref(&exchange))?;
/// assert_eq!(Cassette::load(&path)?.exchanges, [exchange]);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), store_api_cassette::CassetteError>(())
/// ```
#[derive(Debug)]
pub struct CassetteWriter {
    path: PathBuf,
    file: File,
    exchanges: usize,
}

impl CassetteWriter {
    /// Writes `cassette` to `path` in [`APPENDED_FORMAT`] (its folder is created), replacing the
    /// file atomically, and keeps the file open to append to.
    pub fn create(
        path: impl AsRef<Path>,
        cassette: &Cassette,
    ) -> Result<CassetteWriter, CassetteError> {
        let path = path.as_ref();
        create_folder(path)?;
        let mut text = pretty(&Header {
            format: APPENDED_FORMAT.to_owned(),
            api_version: cassette.api_version.clone(),
            customer_data: cassette.customer_data,
        });
        for exchange in &cassette.exchanges {
            text.push_str(&pretty(exchange));
        }
        let mut kept = None;
        store_api_raw::durable::replace_file(path, |file| {
            file.write_all(text.as_bytes())?;
            // The same open file, its offset at the end: what `append` writes through.
            kept = Some(file.try_clone()?);
            Ok(())
        })
        .map_err(|source| io_error(path, source))?;
        let file =
            kept.ok_or_else(|| io_error(path, std::io::Error::other("no file was written")))?;
        Ok(CassetteWriter {
            path: path.to_owned(),
            file,
            exchanges: cassette.exchanges.len(),
        })
    }

    /// Appends `exchanges` (one document each) and syncs the file. The cost is theirs alone.
    pub fn append(&mut self, exchanges: &[Exchange]) -> Result<(), CassetteError> {
        if exchanges.is_empty() {
            return Ok(());
        }
        let text: String = exchanges.iter().map(pretty).collect();
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|source| io_error(&self.path, source))?;
        self.exchanges += exchanges.len();
        Ok(())
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many exchanges the file holds.
    pub fn exchanges(&self) -> usize {
        self.exchanges
    }
}

/// `value` as pretty JSON ending with a newline: one document of [`APPENDED_FORMAT`].
fn pretty(value: &impl Serialize) -> String {
    // Serializing plain data into a String cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// Windows' reserved device names: a file named so (whatever its extension) is the device there.
const RESERVED_NAMES: &[&str] = &["con", "prn", "aux", "nul"];

/// The cassette a name stands for, as the stem of its file name (`NAME.json`): 1 to
/// [`MAX_NAME_LEN`] ASCII letters, digits, `.`, `_` or `-`, starting with a letter or a digit,
/// normalised to lower case, so that `Orders` and `orders` are one cassette on every file system
/// (a case-insensitive one would make them one file anyway). A name Windows reserves for a device
/// (`con`, `prn`, `aux`, `nul`, `com0`…`com9`, `lpt0`…`lpt9`, with or without an extension) is
/// refused on every platform, so a directory of cassettes works on all of them.
///
/// ```
/// use store_api_cassette::cassette_name;
///
/// assert_eq!(cassette_name("Checkout-2")?, "checkout-2");
/// assert!(cassette_name("NUL").is_err());
/// assert!(cassette_name("../etc/passwd").is_err());
/// # Ok::<(), store_api_cassette::CassetteError>(())
/// ```
pub fn cassette_name(name: &str) -> Result<String, CassetteError> {
    let refuse = |reason: &str| {
        Err(CassetteError::Name {
            name: name.to_owned(),
            reason: reason.to_owned(),
        })
    };
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return refuse("use 1 to 100 characters");
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric())
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return refuse(
            "use ASCII letters, digits, '.', '_' or '-', starting with a letter or a digit",
        );
    }
    let normal = name.to_ascii_lowercase();
    let stem = normal.split('.').next().unwrap_or_default();
    let device = RESERVED_NAMES.contains(&stem)
        || (stem.len() == 4
            && (stem.starts_with("com") || stem.starts_with("lpt"))
            && stem.ends_with(|c: char| c.is_ascii_digit()));
    if device {
        return refuse("Windows reserves it for a device; choose another");
    }
    Ok(normal)
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

    fn exchange(n: u16) -> Exchange {
        let mut exchange = sample().exchanges.remove(0);
        exchange.answer.status = n;
        exchange
    }

    #[test]
    fn an_appended_cassette_reads_as_the_whole_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("appended.json");
        let mut cassette = sample();
        let mut writer = CassetteWriter::create(&path, &cassette).unwrap();
        for n in 0..3 {
            cassette.exchanges.push(exchange(200 + n));
            writer
                .append(&cassette.exchanges[cassette.exchanges.len() - 1..])
                .unwrap();
        }
        assert_eq!(writer.exchanges(), 4);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("{\n  \"format\": \"store-api-cassette/2\""),
            "{text}"
        );
        assert_eq!(Cassette::load(&path).unwrap(), cassette);
        // An empty one, and one whose last document was cut short (named by its line).
        let empty = Cassette::new(CustomerData::Kept);
        CassetteWriter::create(&path, &empty).unwrap();
        assert_eq!(Cassette::load(&path).unwrap(), empty);
        let cut = &text[..text.len() - 10];
        let error = Cassette::from_text(cut).unwrap_err();
        let lines = cut.lines().count();
        assert!(
            matches!(error, CassetteError::Parse { line, .. } if line == lines),
            "{error} ({lines} lines)"
        );
    }

    // Issue 35, defect 6: every save wrote the whole cassette again (quadratic over a session). A
    // save now appends: the file is never replaced, what it held stays byte for byte, and a save
    // costs the new exchange only.
    #[test]
    fn a_recording_saved_after_each_exchange_appends_only_the_new_one() {
        use crate::{HttpAnswer, HttpRequest, RecordOptions, Recording};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.json");
        let recording = Recording::new(RecordOptions::default());
        let headers = http::HeaderMap::new();
        let body = serde_json::json!({"items": vec!["x".repeat(100); 50]}).to_string();
        let mut before = String::new();
        let mut identity = None;
        let mut times = Vec::new();
        for n in 0..300 {
            recording.record(
                &HttpRequest {
                    method: "GET",
                    path_and_query: &format!("/status?n={n}"),
                    headers: &headers,
                    body: b"",
                },
                &HttpAnswer {
                    status: 200,
                    headers: http::HeaderMap::new(),
                    body: body.clone().into(),
                },
            );
            let started = std::time::Instant::now();
            recording.save(&path).unwrap();
            times.push(started.elapsed());
            let now = std::fs::read_to_string(&path).unwrap();
            assert!(
                now.starts_with(&before),
                "exchange {n} rewrote what was saved"
            );
            before = now;
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt as _;
                let inode = std::fs::metadata(&path).unwrap().ino();
                assert_eq!(
                    *identity.get_or_insert(inode),
                    inode,
                    "the file was replaced"
                );
            }
            #[cfg(not(unix))]
            let _ = &mut identity;
        }
        assert_eq!(Cassette::load(&path).unwrap(), recording.cassette());
        // The last saves cost what the first ones did (the medians of 50, generously).
        let median = |slice: &[std::time::Duration]| {
            let mut sorted = slice.to_vec();
            sorted.sort();
            sorted[sorted.len() / 2]
        };
        let (first, last) = (median(&times[1..51]), median(&times[250..]));
        assert!(
            last < first * 4 + std::time::Duration::from_millis(5),
            "{first:?} then {last:?}"
        );
    }

    // Issue 35, defect 7: `save` wrote a fixed `NAME.json.tmp`, following a link planted there.
    #[cfg(unix)]
    #[test]
    fn saving_never_follows_a_link_planted_at_a_temporary_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("planted.json");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "untouched").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("planted.json.tmp")).unwrap();
        sample().save(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        assert_eq!(Cassette::load(&path).unwrap(), sample());
        let mut writer = CassetteWriter::create(&path, &sample()).unwrap();
        writer.append(&[exchange(201)]).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        assert_eq!(Cassette::load(&path).unwrap().exchanges.len(), 2);
    }

    fn check_name(name: &str, expected: Option<&str>) {
        assert_eq!(cassette_name(name).ok().as_deref(), expected, "{name:?}");
    }

    // Issue 35, defect 15: `A` and `a` were two cassettes on one file system and one file on
    // another; `CON` and `nul` were accepted although Windows cannot name a file so.
    #[test]
    fn cassette_names_are_the_same_files_on_every_platform() {
        check_name("proxy", Some("proxy"));
        check_name("orders-2.v1_x", Some("orders-2.v1_x"));
        check_name("A", Some("a"));
        check_name("a", Some("a"));
        check_name("Checkout", Some("checkout"));
        for reserved in [
            "CON", "con", "nul", "NUL.json", "aux", "Prn", "com1", "LPT9.x", "com0",
        ] {
            check_name(reserved, None);
        }
        for fine in ["console", "null", "com10", "lpt", "auxiliary", "a.con"] {
            check_name(fine, Some(&fine.to_ascii_lowercase()));
        }
        for unsafe_name in [
            "",
            "..",
            ".hidden",
            "a/b",
            "a\\b",
            "../../etc/passwd",
            "naïve",
            "a b",
        ] {
            check_name(unsafe_name, None);
        }
        check_name(&"x".repeat(MAX_NAME_LEN), Some(&"x".repeat(MAX_NAME_LEN)));
        check_name(&"x".repeat(MAX_NAME_LEN + 1), None);
        let error = cassette_name("CON").unwrap_err().to_string();
        assert!(
            error.contains("\"CON\"") && error.contains("reserve"),
            "{error}"
        );
    }
}
