//! What the two explored models (`sim`, the money path's network; `receivers`, the receiver side)
//! report alike: a broken invariant with the run that broke it and what replays it.

use std::fmt;

/// An invariant of a model, by the name its reports and benches use.
pub trait Named {
    /// The invariant's name.
    fn name(&self) -> &'static str;
}

/// What replays one run of a model.
pub trait Replayable {
    /// The command that replays it.
    fn command(&self) -> String;
}

/// One broken invariant.
#[derive(Debug, Clone)]
pub struct Violation<I, R> {
    /// Which.
    pub invariant: I,
    /// What broke it.
    pub why: String,
    /// Every choice (or exchange) of the run.
    pub run: String,
    /// What replays it.
    pub replay: R,
}

impl<I: Named, R: Replayable> fmt::Display for Violation<I, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} broken: {}\n  run: {}\n  replay: {}",
            self.invariant.name(),
            self.why,
            self.run,
            self.replay.command()
        )
    }
}
