//! Replacing a file atomically and durably: what the emulator's state file is written with, what the
//! `store-api` command line writes a generated `externalOrderId` into an order file with, and what a
//! cassette is saved with (`store_api_cassette::Cassette::save`). It lives here, in the lowest crate
//! the emulator (`store_api_fixtures::durable`, a re-export) and the cassettes both depend on, so that
//! there is one implementation.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// How many temporary names are tried before giving up (each taken one is another writer's, a
/// leftover of an interrupted write, or a link someone put there).
const TEMPORARY_NAMES: usize = 8;

/// Replaces the file at `path` with what `write` writes into it, atomically and durably: into a new
/// temporary file in the same folder, synced, renamed over `path`, and the folder synced; so neither a
/// crash nor a power cut leaves a half-written or a missing file behind, and once this returns the new
/// content survives both.
///
/// The temporary file is created exclusively (`create_new`): a file or a symbolic link already at its
/// name is never opened, followed or overwritten; the next name is tried instead (`NAME.tmp` first,
/// then `NAME.<random>.tmp`). It is removed again when anything fails before the rename.
///
/// ```
/// use std::io::Write as _;
/// # let folder = std::env::temp_dir();
/// let path = folder.join(format!("replace-file-example-{}.json", std::process::id()));
/// store_api_raw::durable::replace_file(&path, |file| file.write_all(b"{}"))?;
/// assert_eq!(std::fs::read_to_string(&path)?, "{}");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn replace_file(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    replace_file_with_mode(path, DEFAULT_MODE, write)
}

/// The permission bits a new file is created with when none are asked for (before the umask): what
/// `File::create` gives.
const DEFAULT_MODE: u32 = 0o666;

/// [`replace_file`], the temporary file created with the permission bits `mode` (further narrowed by
/// the umask), on Unix; elsewhere `mode` is ignored. A file that must not be readable by others (a
/// customer's address) is created so: one created with the default mode and given its mode afterwards
/// can be opened by anyone in between, and a file once opened stays readable whatever its mode becomes.
/// `write` may still change the mode (to widen it to exactly the old file's, say) and the owner.
///
/// ```
/// use std::io::Write as _;
/// # let folder = std::env::temp_dir();
/// let path = folder.join(format!("replace-file-with-mode-example-{}.json", std::process::id()));
/// store_api_raw::durable::replace_file_with_mode(&path, 0o600, |file| file.write_all(b"{}"))?;
/// # #[cfg(unix)]
/// # {
/// use std::os::unix::fs::PermissionsExt as _;
/// assert_eq!(std::fs::metadata(&path)?.permissions().mode() & 0o777, 0o600);
/// # }
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn replace_file_with_mode(
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let (temporary, mut file) = create_temporary(path, mode)?;
    let written = write(&mut file)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            std::fs::rename(&temporary, path)
        });
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(error);
    }
    sync_folder(path)
}

/// A new file beside `path`, created exclusively with the permission bits `mode` (Unix), and its name.
fn create_temporary(path: &Path, mode: u32) -> io::Result<(PathBuf, File)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let mut last = None;
    for attempt in 0..TEMPORARY_NAMES {
        let mut candidate = name.to_owned();
        if attempt > 0 {
            candidate.push(format!(".{:016x}", random_u64()));
        }
        candidate.push(".tmp");
        let temporary = path.with_file_name(candidate);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
        #[cfg(not(unix))]
        let _ = mode;
        match options.open(&temporary) {
            Ok(file) => return Ok((temporary, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no temporary name was free")))
}

/// A random number for a temporary name, from the standard library's randomly keyed hasher (seeded
/// from the OS once per process, a new key each call): unpredictable enough that no one can plant a
/// link at every name tried, with no dependency for it.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos()),
    );
    hasher.finish()
}

/// Syncs the folder holding `path`, so that the rename itself survives a power cut. Only where a
/// folder can be opened and synced (Unix); elsewhere the rename is as durable as the platform makes it.
fn sync_folder(path: &Path) -> io::Result<()> {
    if cfg!(unix) {
        let folder = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        File::open(folder)?.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn a_link_or_a_leftover_at_the_temporary_name_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, "old").unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "untouched").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&victim, dir.path().join("state.json.tmp")).unwrap();
        #[cfg(not(unix))]
        std::fs::write(dir.path().join("state.json.tmp"), "leftover").unwrap();
        replace_file(&path, |file| file.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(left.len(), 3, "no temporary file is left: {left:?}");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, "old").unwrap();
        let error = replace_file(&path, |file| {
            file.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "disk full");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    // Issue 35, defect 12: the temporary file was created with the default mode (0644 under the usual
    // umask) and only then given the old file's 0600, so another user could open it in between.
    #[cfg(unix)]
    #[test]
    fn the_temporary_file_is_created_with_the_mode_asked_for() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("private.json");
        let mut created = None;
        replace_file_with_mode(&path, 0o600, |file| {
            created = Some(file.metadata()?.permissions().mode() & 0o777);
            file.write_all(b"secret")
        })
        .unwrap();
        assert_eq!(created, Some(0o600));
    }
}
