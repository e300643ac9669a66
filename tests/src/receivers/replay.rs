//! The printed form of a run: its choices described, and the schedule that replays it. Above both the
//! tape of choices and the worlds, which it names.

use std::fmt;

use super::choice::{Point, Tape};
use super::world::Scenario;

/// The arity of each branch point met, in order (what the exhaustive exploration branches on).
pub fn branched(tape: &Tape, scenario: Scenario) -> Vec<usize> {
    tape.choices
        .iter()
        .filter(|(_, _, branch)| *branch)
        .map(|(point, _, _)| scenario.alphabet(*point).len())
        .collect()
}

/// The run as text: every choice with its point's letter, branch points in brackets.
pub fn describe(tape: &Tape, scenario: Scenario) -> String {
    tape.choices
        .iter()
        .map(|(point, choice, branch)| {
            let name = scenario.name_of(*point, *choice);
            if *branch {
                format!("{}:[{name}]", point.letter())
            } else {
                format!("{}:{name}", point.letter())
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A schedule that replays one run: the scenario and the choice made at each of its branch points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// The scenario.
    pub scenario: Scenario,
    /// The choices, each with its point.
    pub script: Vec<(Point, u8)>,
}

impl Replay {
    /// The schedule of a run: every choice at a point with more than one (a replay branches on
    /// every point).
    pub fn of(scenario: Scenario, tape: &Tape) -> Replay {
        let script = tape
            .choices
            .iter()
            .filter(|(point, _, _)| scenario.alphabet(*point).len() > 1)
            .map(|(point, choice, _)| (*point, *choice))
            .collect();
        Replay { scenario, script }
    }

    /// Reads the form `Display` writes: `redis-acks: d:t0 r:long o:lost-reply d:a1`.
    pub fn parse(text: &str) -> Result<Replay, String> {
        let (name, script) = text
            .split_once(':')
            .ok_or_else(|| format!("{text:?}: expected `scenario: d:choice r:choice …`"))?;
        let scenario = Scenario::named(name.trim()).ok_or_else(|| {
            format!(
                "{name:?} is not a scenario ({})",
                Scenario::ALL.map(Scenario::name).join(", ")
            )
        })?;
        let script = script
            .split_whitespace()
            .map(|word| {
                let (letter, choice) = word
                    .split_once(':')
                    .ok_or_else(|| format!("{word:?}: expected `point:choice`"))?;
                let point = Point::of_letter(letter)
                    .ok_or_else(|| format!("{letter:?} is not a point (d, r, o)"))?;
                let alphabet = scenario.alphabet(point);
                let index = alphabet
                    .iter()
                    .position(|name| *name == choice)
                    .ok_or_else(|| format!("{choice:?} is not one of {alphabet:?}"))?;
                Ok((point, u8::try_from(index).unwrap_or(0)))
            })
            .collect::<Result<_, String>>()?;
        Ok(Replay { scenario, script })
    }

    /// The one command that replays it.
    pub fn command(&self) -> String {
        format!(
            "STORE_API_RECEIVER_REPLAY='{self}' cargo test -p store-api-tests --test it -- receivers::replay_a_schedule --exact --nocapture"
        )
    }
}

impl fmt::Display for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.scenario.name())?;
        for (point, choice) in &self.script {
            write!(
                f,
                " {}:{}",
                point.letter(),
                self.scenario.name_of(*point, *choice)
            )?;
        }
        Ok(())
    }
}
