//! Reading a create-order request from a file, and writing a generated `externalOrderId` into one. A
//! file that is JSON but breaks a constraint the typed request enforces while decoding (an empty
//! lastName, a quantity of 0, a missing field) is reported like the pre-flight check and the service
//! report it: the field path and the service's wording, from `store_api_rules::decode` (the emulator's
//! decoding too), read as the typed request reads it (`Reading::Typed`).

use std::fs::{File, Metadata, OpenOptions};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::de::{DeserializeOwned, IgnoredAny};
use store_api::NewOrder;
use store_api_rules::decode::{self, DecodeError, Failure, Reading};

use crate::error::CliError;

/// Reads and decodes the request in `path` (standard input for `-`).
pub fn read_order(path: &Path) -> Result<NewOrder, CliError> {
    parse_order(&crate::input::read_text(path)?, path)
}

/// Decodes the request in `text`, read from `path`: a failure the service words as one of the
/// pre-flight check's rules is that violation; any other is a usage error about the file.
pub fn parse_order(text: &str, path: &Path) -> Result<NewOrder, CliError> {
    decode::decode_body(text.as_bytes(), Reading::Typed, |_| Vec::new()).map_err(|error| {
        let failures = match error {
            DecodeError::NotJson(e) => {
                return CliError::Usage(format!("{} is not JSON: {e}", path.display()));
            }
            DecodeError::Invalid(failures) => failures,
            other => {
                return CliError::Usage(format!(
                    "{} is not a create-order request: {other}",
                    path.display()
                ));
            }
        };
        let violations: Vec<_> = failures.iter().filter_map(Failure::violation).collect();
        if !violations.is_empty() {
            return CliError::Api(store_api::Error::Invalid { violations });
        }
        let reason = match failures.first() {
            Some(Failure::Serde { path: field, error }) if !field.is_empty() => {
                format!("{field}: {error}")
            }
            Some(Failure::Serde { error, .. }) => error.clone(),
            Some(other) => other.message(),
            None => String::new(),
        };
        CliError::Usage(format!(
            "{} is not a create-order request: {reason}",
            path.display()
        ))
    })
}

/// The lock `orders submit` holds on an order file from its read to the end of its submission, so
/// that a second run of the same file (two cron jobs, a retry wrapper that fires early) waits, then
/// reads the id the first one wrote instead of generating another: two runs, one order.
///
/// It is an advisory lock of the operating system (`flock`, `LockFileEx`) on a file beside the order
/// file's target, `.NAME.lock`, never on the order file itself: the id is written by renaming a new
/// file over the old one, and a lock on the replaced inode would guard nothing. The lock file is left
/// in place (removing it could let a run lock a file that a waiting run no longer sees); the lock
/// itself ends with the process that holds it, a crash included, so a leftover file blocks nothing.
#[derive(Debug)]
pub struct OrderFileLock {
    // Held open for as long as the lock is held; closing it releases the lock.
    _file: File,
}

/// Why an order file's lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// The lock file cannot be created or locked (a read-only folder, a file system without locks).
    Unavailable {
        /// The lock file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// Another run still held the lock when the wait ran out.
    TimedOut {
        /// The lock file.
        path: PathBuf,
    },
}

/// How often a waiting run tries the lock again.
const LOCK_POLL: Duration = Duration::from_millis(50);

impl OrderFileLock {
    /// The lock file of the order file at `target` (a path with no symbolic link left to resolve).
    pub fn path_for(target: &Path) -> Option<PathBuf> {
        let name = target.file_name()?;
        let mut lock = std::ffi::OsString::from(".");
        lock.push(name);
        lock.push(".lock");
        Some(target.with_file_name(lock))
    }

    /// Takes the lock of the order file at `target`, waiting up to `timeout` for a run that holds it;
    /// `waiting` is called once when the lock is held by another run.
    pub async fn acquire(
        target: &Path,
        timeout: Duration,
        waiting: impl FnOnce(&Path),
    ) -> Result<OrderFileLock, LockError> {
        let Some(path) = Self::path_for(target) else {
            return Err(LockError::Unavailable {
                path: target.to_owned(),
                error: std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name"),
            });
        };
        let unavailable = |error| LockError::Unavailable {
            path: path.clone(),
            error,
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(unavailable)?;
        // A timeout past what an instant can hold (`--lock-timeout 18446744073709551615`) waits forever.
        let deadline = Instant::now().checked_add(timeout);
        let mut waiting = Some(waiting);
        loop {
            // Called by path: std's `File::try_lock` (Rust 1.89) would shadow the trait's method.
            match fs4::FileExt::try_lock(&file) {
                Ok(()) => return Ok(OrderFileLock { _file: file }),
                Err(fs4::TryLockError::Error(error)) => return Err(unavailable(error)),
                Err(fs4::TryLockError::WouldBlock) => {}
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(LockError::TimedOut { path });
            }
            if let Some(waiting) = waiting.take() {
                waiting(&path);
            }
            let left = deadline.map_or(LOCK_POLL, |deadline| {
                deadline.saturating_duration_since(Instant::now())
            });
            tokio::time::sleep(LOCK_POLL.min(left)).await;
        }
    }
}

/// Gives the new file `written`, which is about to replace the order file, the mode of the order file
/// (`original`), and its owner and group where the process may (root, or a group the user is in):
/// a `chmod 600` file holds a customer's name and address. Called before anything is written into it.
#[cfg(unix)]
pub fn keep_mode_and_owner(written: &File, original: &Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt as _, fchown};
    // Best effort: only root may give a file away; the user's own file keeps its owner anyway.
    let _ = fchown(written, Some(original.uid()), Some(original.gid()));
    // After the owner: a change of owner may clear mode bits.
    written.set_permissions(original.permissions())
}

/// Elsewhere (Windows) nothing is kept: the new file's ACL comes from its folder, as before.
#[cfg(not(unix))]
pub fn keep_mode_and_owner(_: &File, _: &Metadata) -> std::io::Result<()> {
    Ok(())
}

/// The key a generated id is written under.
const EXTERNAL_ORDER_ID: &str = "externalOrderId";

/// `text` (a JSON object) with `"externalOrderId": id` at its top level: the value of the one member
/// with that key replaced (a `null`, or any other value), or a member added first when there is none;
/// every other byte of the text is kept. A text that holds the key more than once is refused: which
/// of its values was sent before cannot be known.
pub fn with_external_id(text: &str, id: &str) -> Result<String, String> {
    let (opening, members) = top_level_members(text)?;
    let value = serde_json::to_string(id).map_err(|e| e.to_string())?;
    let held: Vec<&Range<usize>> = members
        .iter()
        .filter(|(key, _)| key == EXTERNAL_ORDER_ID)
        .map(|(_, value)| value)
        .collect();
    match held.as_slice() {
        [] => {
            let separator = if members.is_empty() { "" } else { "," };
            Ok(format!(
                "{}\n  \"{EXTERNAL_ORDER_ID}\": {value}{separator}{}",
                &text[..opening],
                &text[opening..]
            ))
        }
        [held] => Ok(format!(
            "{}{value}{}",
            &text[..held.start],
            &text[held.end..]
        )),
        several => Err(format!(
            "it holds {EXTERNAL_ORDER_ID} {} times ({}), and an earlier run may have sent one of them: keep the one that was meant and remove the others",
            several.len(),
            several
                .iter()
                .map(|range| &text[(*range).clone()])
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// How many members of the JSON object in `text` have the key `externalOrderId`.
pub fn external_id_keys(text: &str) -> Result<usize, String> {
    let (_, members) = top_level_members(text)?;
    Ok(members
        .iter()
        .filter(|(key, _)| key == EXTERNAL_ORDER_ID)
        .count())
}

/// A member of a JSON object: its key, and where its value is in the text.
type Member = (String, Range<usize>);

/// The members of the JSON object `text` holds (each key and where its value is in the text), and
/// where its first member starts (just after the `{`).
fn top_level_members(text: &str) -> Result<(usize, Vec<Member>), String> {
    let not_an_object = || "the file is not a JSON object".to_owned();
    let mut at = skip_whitespace(text, 0);
    if text.as_bytes().get(at) != Some(&b'{') {
        return Err(not_an_object());
    }
    let opening = at + 1;
    at = skip_whitespace(text, opening);
    let mut members = Vec::new();
    if text.as_bytes().get(at) == Some(&b'}') {
        return Ok((opening, members));
    }
    loop {
        let (key, after_key) = json_value::<String>(text, at)?;
        at = skip_whitespace(text, after_key);
        if text.as_bytes().get(at) != Some(&b':') {
            return Err(not_an_object());
        }
        let start = skip_whitespace(text, at + 1);
        let (IgnoredAny, end) = json_value::<IgnoredAny>(text, start)?;
        members.push((key, start..end));
        at = skip_whitespace(text, end);
        match text.as_bytes().get(at) {
            Some(b',') => at = skip_whitespace(text, at + 1),
            Some(b'}') => return Ok((opening, members)),
            _ => return Err(not_an_object()),
        }
    }
}

/// The JSON value that starts at byte `at` of `text`, and the byte just after it.
fn json_value<T: DeserializeOwned>(text: &str, at: usize) -> Result<(T, usize), String> {
    let rest = text.get(at..).unwrap_or_default();
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<T>();
    match values.next() {
        Some(Ok(value)) => Ok((value, at + values.byte_offset())),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("the file ends too early".to_owned()),
    }
}

/// The first byte at or after `at` that is not JSON whitespace.
fn skip_whitespace(text: &str, mut at: usize) -> usize {
    while text
        .as_bytes()
        .get(at)
        .is_some_and(|byte| matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
    {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    // `--lock-timeout 18446744073709551615` (a user's "wait forever") overflowed the deadline and panicked.
    #[tokio::test]
    async fn a_lock_timeout_past_what_an_instant_holds_waits_without_panicking() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("order.json");
        std::fs::write(&file, "{}").unwrap();
        let lock = OrderFileLock::acquire(&file, Duration::MAX, |_| {}).await;
        assert!(lock.is_ok(), "{lock:?}");
    }

    fn check(body: &str, expected: &str) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("order.json");
        std::fs::write(&file, body).unwrap();
        let message = match read_order(&file) {
            Ok(_) => "ok".to_owned(),
            Err(CliError::Api(store_api::Error::Invalid { violations })) => {
                format!("invalid: {}", violations[0].message())
            }
            Err(CliError::Usage(text)) => format!("usage: {text}"),
            Err(other) => format!("other: {other}"),
        };
        assert!(message.contains(expected), "{body}: {message}");
    }

    #[test]
    fn decoding_failures_read_like_the_service() {
        let address = r#""shippingAddress":{"firstName":"A","lastName":"B","address":{"streetAddress":"1 Main","cityOrTown":"X","stateOrProvince":"NY","zipOrPostalCode":"1","country":"US"}}"#;
        check(
            &format!(r#"{{"lineItems":[{{"sku":"S","quantity":1}}],{address}}}"#),
            "ok",
        );
        check(
            &format!(r#"{{"lineItems":[{{"sku":"S","quantity":0}}],{address}}}"#),
            "invalid: lineItems.0.quantity must not be less than 1",
        );
        check(
            &format!(
                r#"{{"lineItems":[{{"sku":"S","quantity":1}}],{}}}"#,
                address.replace("\"B\"", "\"\"")
            ),
            "invalid: shippingAddress.lastName should not be empty",
        );
        check(
            r#"{"lineItems":[]}"#,
            "invalid: shippingAddress should not be null or undefined",
        );
        check(
            &format!(r#"{{"lineItems":[{{"sku":"S","quantity":"x"}}],{address}}}"#),
            "usage: ",
        );
        check("{", "usage: ");
        check("[1]", "usage: ");
    }

    #[test]
    fn the_external_id_replaces_the_value_and_keeps_the_rest_of_the_text() {
        let cases = [
            (
                r#"{"externalOrderId": null, "a": 1}"#,
                r#"{"externalOrderId": "X", "a": 1}"#,
            ),
            (
                r#"{"a":1,"externalOrderId":42}"#,
                r#"{"a":1,"externalOrderId":"X"}"#,
            ),
            (
                "{ \"a\": [1, {\"externalOrderId\": 1}],\n\t\"externalOrderId\" :\n\"old\\\"\" }",
                "{ \"a\": [1, {\"externalOrderId\": 1}],\n\t\"externalOrderId\" :\n\"X\" }",
            ),
            (
                "{\"a\": 1.50e3}",
                "{\n  \"externalOrderId\": \"X\",\"a\": 1.50e3}",
            ),
            (" { } ", " {\n  \"externalOrderId\": \"X\" } "),
            (
                "{\"extern\\u0061lOrderId\": null}",
                "{\"extern\\u0061lOrderId\": \"X\"}",
            ),
        ];
        for (text, expected) in cases {
            let written = with_external_id(text, "X").unwrap();
            assert_eq!(written, expected, "{text}");
            assert_eq!(external_id_keys(&written), Ok(1), "{written}");
            let value: serde_json::Value = serde_json::from_str(&written).unwrap();
            assert_eq!(value["externalOrderId"], "X");
        }
        let twice = with_external_id(r#"{"externalOrderId":"A","externalOrderId":null}"#, "X");
        assert!(
            twice
                .unwrap_err()
                .starts_with(r#"it holds externalOrderId 2 times ("A", null)"#)
        );
        for text in ["[1]", "", "{\"a\" 1}", "{\"a\": 1", "{\"a\": 1,}", "\"s\""] {
            assert!(with_external_id(text, "X").is_err(), "{text}");
        }
    }
}
