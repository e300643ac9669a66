//! Replacing a file atomically and durably: what the emulator's state file is written with, and what
//! the `store-api` command line writes a generated `externalOrderId` into an order file with.

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
/// store_api_fixtures::durable::replace_file(&path, |file| file.write_all(b"{}"))?;
/// assert_eq!(std::fs::read_to_string(&path)?, "{}");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn replace_file(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let (temporary, mut file) = create_temporary(path)?;
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

/// A new file beside `path`, created exclusively, and its name.
fn create_temporary(path: &Path) -> io::Result<(PathBuf, File)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let mut last = None;
    for attempt in 0..TEMPORARY_NAMES {
        let mut candidate = name.to_owned();
        if attempt > 0 {
            candidate.push(format!(".{:016x}", rand::random::<u64>()));
        }
        candidate.push(".tmp");
        let temporary = path.with_file_name(candidate);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(file) => return Ok((temporary, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no temporary name was free")))
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
}
