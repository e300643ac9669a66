//! Spinners and bars on stderr, only for a person at a terminal: hidden with `--json` or when stderr
//! is not a terminal, so scripts and logs never see them.

use std::io::IsTerminal as _;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::output::Output;

/// Whether progress is shown: to a person at a terminal, never with `--json`.
pub fn visible(out: Output) -> bool {
    !out.json && std::io::stderr().is_terminal()
}

/// A spinner with a message, ticking on its own.
pub fn spinner(out: Output, message: impl Into<String>) -> ProgressBar {
    if !visible(out) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(message.into());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// A bar of `steps` rungs (the fulfillment ladder), with a message.
pub fn ladder(out: Output, steps: u64) -> ProgressBar {
    if !visible(out) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(steps), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} [{bar:20}] {pos}/{len} {msg}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// A bar counting items read of a total the work sets as it learns it (a first read of a store).
pub fn counter(out: Output) -> ProgressBar {
    if !visible(out) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{bar:30}] {pos}/{len} {msg} ({elapsed}, about {eta} left)",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}
