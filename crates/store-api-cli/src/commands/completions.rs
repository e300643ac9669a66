//! `completions <shell>`: a completion script on stdout.

use clap::CommandFactory as _;

use crate::cli::{Cli, CompletionsArgs};
use crate::error::CliError;
use crate::output::Output;

/// Writes the script.
pub fn run(args: &CompletionsArgs) -> Result<(), CliError> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "store-api", &mut script);
    Output { json: false }.line(String::from_utf8_lossy(&script).trim_end());
    Ok(())
}
