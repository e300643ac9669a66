//! Reading what a command is given: a file, or standard input for `-`.

use std::io::Read as _;
use std::path::Path;

use crate::error::CliError;

/// Whether `path` means standard input.
pub fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

/// The bytes of `path`, or of standard input for `-`, exactly as they are.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, CliError> {
    if is_stdin(path) {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::Usage(format!("cannot read standard input: {e}")))?;
        return Ok(bytes);
    }
    std::fs::read(path).map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))
}

/// The text of `path`, or of standard input for `-`.
pub fn read_text(path: &Path) -> Result<String, CliError> {
    String::from_utf8(read_bytes(path)?)
        .map_err(|_| CliError::Usage(format!("{} is not UTF-8 text", path.display())))
}
