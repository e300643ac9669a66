//! Reading a create-order request from a file, and writing a generated `externalOrderId` into one. A
//! file that is JSON but breaks a constraint the typed request enforces while decoding (an empty
//! lastName, a quantity of 0, a missing field) is reported like the pre-flight check and the service
//! report it: the field path and the service's wording, from `store_api_rules::decode` (the emulator's
//! decoding too), read as the typed request reads it (`Reading::Typed`).

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write as _};
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
///
/// The lock file is opened as [`open_lock_file`] opens it: a symbolic link, a FIFO or anything else
/// planted at its name is refused (never followed, never waited on), and an existing one is opened
/// read-only, so one left by another user locks for everyone.
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
        let file = open_lock_file(&path).map_err(unavailable)?;
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

/// How many times [`open_lock_file`] tries again when the file appears or goes between its two opens.
const LOCK_FILE_OPENS: usize = 4;

/// Opens the lock file at `path` for an advisory lock (`orders submit`'s order files, `proxy
/// --record`'s directory), so that nothing planted at its name can be turned against the user:
///
/// - a symbolic link is never followed (`O_NOFOLLOW`): a root run would otherwise create or open a
///   file wherever the link points;
/// - the open never blocks (`O_NONBLOCK`): a FIFO would hold it until a writer came, past any
///   timeout; the file must then be a regular one;
/// - an existing file is opened read-only (a lock needs no more), so a lock file left by another user
///   with mode 644 locks for everyone; only a missing one is created, exclusively.
pub(crate) fn open_lock_file(path: &Path) -> io::Result<File> {
    let mut last = None;
    for _ in 0..LOCK_FILE_OPENS {
        match lock_file_options(OpenOptions::new().read(true)).open(path) {
            Ok(file) => return regular(file, path),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(planted(error, path)),
        }
        match lock_file_options(OpenOptions::new().write(true).create_new(true)).open(path) {
            Ok(file) => return regular(file, path),
            // Made by another run in between (or a link planted meanwhile): open it as it is.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last = Some(error),
            Err(error) => return Err(planted(error, path)),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("the lock file kept appearing and going")))
}

/// `options` that neither follow a symbolic link at the last component nor block on a FIFO.
fn lock_file_options(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(options, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    options
}

/// `file` if it is a regular file; a FIFO, a device or a folder at a lock file's name is refused.
fn regular(file: File, path: &Path) -> io::Result<File> {
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is not a regular file ({kind:?}), which a lock file always is: remove it if you did not put it there",
            path.display()
        ),
    ))
}

/// `error`, saying so when a symbolic link stands at the lock file's name (`ELOOP`, `EMLINK` on some
/// systems: the words of neither name the cause).
fn planted(error: io::Error, path: &Path) -> io::Error {
    let link = std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_symlink());
    if !link {
        return error;
    }
    io::Error::new(
        error.kind(),
        format!(
            "{} is a symbolic link, which a lock file never is, so it is not followed: remove it if you did not put it there",
            path.display()
        ),
    )
}

/// Refuses to write into an order file with more than one hard link (`original` is its metadata):
/// the id would reach this name only (a new file is renamed over it), every other name would keep
/// the file without an id, and a run through one of them would send another: two orders. A symbolic
/// link is no such name (its target is the one written).
#[cfg(unix)]
pub fn refuse_hard_links(original: &Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    match original.nlink() {
        0 | 1 => Ok(()),
        links => Err(format!(
            "it has {links} hard links (other names for the same file); the id would be written through this name only, the others would keep the file without one, and a run through one of them would send another id and bill a second order. Give the file one name (copy it instead of linking it)"
        )),
    }
}

/// Elsewhere (Windows) the count of links is not read (`std` has it unstable only).
#[cfg(not(unix))]
pub fn refuse_hard_links(_: &Metadata) -> Result<(), String> {
    Ok(())
}

/// The permission bits the new order file is created with: the owner's alone. Whatever the old
/// file's mode, nobody else can open the new one before it has that mode (an open file stays
/// readable whatever its mode becomes); [`keep_mode_and_owner`] then gives it the old owner and mode.
const CREATION_MODE: u32 = 0o600;

/// Replaces the order file at `target` (whose metadata is `original`) with `text`, durably
/// (`store_api_fixtures::durable`): the new file is created readable by its owner alone, given the
/// old file's owner and mode, and only then written.
pub fn rewrite_order_file(target: &Path, original: &Metadata, text: &str) -> io::Result<()> {
    rewrite_observed(target, original, text, |_| Ok(()))
}

/// [`rewrite_order_file`], calling `created` with the new file first thing (a test's look at it).
fn rewrite_observed(
    target: &Path,
    original: &Metadata,
    text: &str,
    created: impl FnOnce(&File) -> io::Result<()>,
) -> io::Result<()> {
    store_api_fixtures::durable::replace_file_with_mode(target, CREATION_MODE, |written| {
        created(written)?;
        keep_mode_and_owner(written, original)?;
        written.write_all(text.as_bytes())
    })
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

    /// A folder holding `order.json` (`{}`), and the order file's path.
    fn order_file() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("order.json");
        std::fs::write(&file, "{}").unwrap();
        (dir, file)
    }

    fn lock_path(file: &Path) -> PathBuf {
        OrderFileLock::path_for(file).unwrap()
    }

    // Issue 35, defect 10: a symbolic link planted at `.NAME.lock` was followed: a run (root's, in a
    // shared folder) created a file wherever it pointed.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_link_at_the_lock_files_name_is_not_followed() {
        let (dir, file) = order_file();
        let victim = dir.path().join("victim");
        std::os::unix::fs::symlink(&victim, lock_path(&file)).unwrap();
        let lock = OrderFileLock::acquire(&file, Duration::from_secs(1), |_| {}).await;
        assert!(
            std::fs::symlink_metadata(&victim).is_err(),
            "a file was created at the link's target"
        );
        match lock {
            Err(LockError::Unavailable { error, .. }) => {
                assert!(error.to_string().contains("symbolic link"), "{error}");
            }
            other => panic!("{other:?}"),
        }
    }

    // Issue 35, defect 10: a FIFO planted at `.NAME.lock` held the run in `open` past --lock-timeout.
    #[cfg(unix)]
    #[test]
    fn a_fifo_at_the_lock_files_name_is_refused_at_once() {
        let (_dir, file) = order_file();
        let fifo = lock_path(&file);
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (sender, receiver) = std::sync::mpsc::channel();
        let target = file.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap();
            let lock = runtime.block_on(OrderFileLock::acquire(
                &target,
                Duration::from_secs(1),
                |_| {},
            ));
            let _ = sender.send(format!("{lock:?}"));
        });
        let ended = receiver.recv_timeout(Duration::from_secs(10));
        if ended.is_err() {
            // Let the stuck `open` go (a reader arrives), so the thread ends with the test.
            let _ = lock_file_options(OpenOptions::new().read(true)).open(&fifo);
        }
        let lock = ended.expect("still in `open` 10 s after a 1 s --lock-timeout");
        assert!(lock.contains("not a regular file"), "{lock}");
    }

    // Issue 35, defect 10: the lock file was opened for writing, so one left by another user with
    // mode 644 refused everyone else ("Permission denied"). A lock needs no write access. (Run as
    // root, the mode stops nothing: the flags the file is open with show how it was opened.)
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn an_existing_lock_file_is_opened_read_only() {
        use std::os::fd::AsRawFd as _;
        use std::os::unix::fs::PermissionsExt as _;
        let (_dir, file) = order_file();
        let path = lock_path(&file);
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let lock = OrderFileLock::acquire(&file, Duration::from_secs(1), |_| {})
            .await
            .expect("a read-only lock file locks");
        let fdinfo =
            std::fs::read_to_string(format!("/proc/self/fdinfo/{}", lock._file.as_raw_fd()))
                .unwrap();
        let flags = fdinfo
            .lines()
            .find_map(|line| line.strip_prefix("flags:"))
            .map(|flags| i32::from_str_radix(flags.trim(), 8).unwrap())
            .unwrap();
        assert_eq!(flags & libc::O_ACCMODE, libc::O_RDONLY, "{fdinfo}");
    }

    // A lock file that is not there yet is made, and a second lock on it waits.
    #[tokio::test]
    async fn a_missing_lock_file_is_made_and_locks() {
        let (_dir, file) = order_file();
        let held = OrderFileLock::acquire(&file, Duration::from_secs(1), |_| {})
            .await
            .unwrap();
        assert!(lock_path(&file).is_file());
        let mut waited = false;
        let again =
            OrderFileLock::acquire(&file, Duration::from_millis(100), |_| waited = true).await;
        assert!(
            matches!(again, Err(LockError::TimedOut { .. })),
            "{again:?}"
        );
        assert!(waited);
        drop(held);
        assert!(
            OrderFileLock::acquire(&file, Duration::ZERO, |_| {})
                .await
                .is_ok()
        );
    }

    // Issue 35, defect 12: the new order file was created with the default mode (0644 under the usual
    // umask) and only then given the old one's 0600: anyone could open it in between and read the
    // customer's address once it was written.
    #[cfg(unix)]
    #[test]
    fn the_new_order_file_is_never_open_to_others() {
        use std::os::unix::fs::PermissionsExt as _;
        let (_dir, file) = order_file();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let original = std::fs::metadata(&file).unwrap();
        let mut created = None;
        rewrite_observed(&file, &original, "{\"a\": 1}", |new| {
            created = Some(new.metadata()?.permissions().mode() & 0o777);
            Ok(())
        })
        .unwrap();
        let created = created.unwrap();
        assert_eq!(created & 0o077, 0, "created with mode {created:o}");
        let now = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(now, 0o600);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{\"a\": 1}");
    }

    // Issue 35, defect 11: a file with two names (hard links) is refused before anything is written.
    #[cfg(unix)]
    #[test]
    fn an_order_file_with_two_names_is_refused() {
        let (dir, file) = order_file();
        assert_eq!(
            refuse_hard_links(&std::fs::metadata(&file).unwrap()),
            Ok(())
        );
        std::fs::hard_link(&file, dir.path().join("other.json")).unwrap();
        let refused = refuse_hard_links(&std::fs::metadata(&file).unwrap()).unwrap_err();
        assert!(refused.starts_with("it has 2 hard links"), "{refused}");
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
