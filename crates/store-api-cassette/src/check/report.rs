//! The verdicts: one [`Finding`] per fact, gathered in a [`RecordingsReport`] that prints itself like
//! `store-api doctor`'s report and serializes to JSON.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use store_api_raw::contract::ASSUMPTIONS;

use super::exchange::At;

/// Whether a fact held in the recorded traffic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// Every exchange that shows the fact agrees with the spec.
    Held {
        /// How many exchanges showed it, and the first of them.
        seen: String,
    },
    /// An exchange shows the service behaving otherwise (the first such exchange).
    Differs {
        /// The exchange's index in the cassette, from 0.
        exchange: usize,
        /// Its request's method.
        method: String,
        /// Its request's path and query.
        path: String,
        /// What was seen there, against what the spec says.
        seen: String,
    },
    /// No recorded exchange shows it.
    NotSeen {
        /// Why not, or what would show it.
        why: String,
    },
}

impl Verdict {
    /// Whether this is [`Verdict::Differs`].
    pub fn differs_from_spec(&self) -> bool {
        matches!(self, Verdict::Differs { .. })
    }

    fn word(&self) -> &'static str {
        match self {
            Verdict::Held { .. } => "held",
            Verdict::Differs { .. } => "differs",
            Verdict::NotSeen { .. } => "not seen",
        }
    }

    fn note(&self) -> String {
        match self {
            Verdict::Held { seen } => seen.clone(),
            Verdict::Differs {
                exchange,
                method,
                path,
                seen,
            } => format!("#{exchange} {method} {path}: {seen}"),
            Verdict::NotSeen { why } => why.clone(),
        }
    }
}

/// One fact and its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// The fact's id: an assumption's id in the spec (`rate-limit-reset`), or the name of a statement
    /// of the specification (`error-envelope`).
    pub id: &'static str,
    /// What the fact says: the spec's own text for an assumption.
    pub says: &'static str,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// The outcome of [`check`](crate::check): every statement the check knows and every assumption of the
/// spec, each held, differing (with the exchange that shows it) or not seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RecordingsReport {
    /// The API version the cassette says it spoke.
    pub api_version: String,
    /// How many exchanges were read.
    pub exchanges: usize,
    /// What the specification states and a recording can show (the error envelope, the list
    /// envelope, the rate-limit headers on every answer…).
    pub stated: Vec<Finding>,
    /// Every assumption of the spec (`x-assumption`), in the spec's order.
    pub assumptions: Vec<Finding>,
}

impl RecordingsReport {
    /// The findings whose verdict is [`Verdict::Differs`], statements and assumptions alike.
    pub fn differing(&self) -> impl Iterator<Item = &Finding> {
        self.stated
            .iter()
            .chain(&self.assumptions)
            .filter(|finding| finding.verdict.differs_from_spec())
    }

    /// The assumption with this id.
    pub fn assumption(&self, id: &str) -> Option<&Finding> {
        self.assumptions.iter().find(|finding| finding.id == id)
    }

    /// The statement or assumption with this id.
    pub fn finding(&self, id: &str) -> Option<&Finding> {
        self.stated
            .iter()
            .chain(&self.assumptions)
            .find(|finding| finding.id == id)
    }
}

impl fmt::Display for RecordingsReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "store-api doctor --cassette: {} recorded exchanges (API {})",
            self.exchanges, self.api_version
        )?;
        let width = self
            .stated
            .iter()
            .chain(&self.assumptions)
            .map(|finding| finding.id.len())
            .max()
            .unwrap_or(0);
        writeln!(f, "\nWhat the specification states")?;
        for finding in &self.stated {
            line(f, finding, width)?;
        }
        writeln!(f, "\nAssumptions (x-assumption in the spec), by id")?;
        for finding in &self.assumptions {
            line(f, finding, width)?;
        }
        let count = |word: &str| {
            self.stated
                .iter()
                .chain(&self.assumptions)
                .filter(|finding| finding.verdict.word() == word)
                .count()
        };
        write!(
            f,
            "\n{} held, {} differ, {} not seen",
            count("held"),
            count("differs"),
            count("not seen")
        )
    }
}

fn line(f: &mut fmt::Formatter<'_>, finding: &Finding, width: usize) -> fmt::Result {
    writeln!(
        f,
        "  {:<8}  {:<width$}  {}",
        finding.verdict.word(),
        finding.id,
        finding.says
    )?;
    writeln!(
        f,
        "  {:<8}  {:<width$}  → {}",
        "",
        "",
        finding.verdict.note()
    )
}

/// A statement of the specification the check judges: its id and what it says.
pub(crate) struct Statement {
    pub id: &'static str,
    pub says: &'static str,
}

/// What the checks observed of each fact, gathered exchange by exchange.
#[derive(Default)]
pub(crate) struct Facts {
    facts: BTreeMap<&'static str, Observed>,
}

#[derive(Default)]
struct Observed {
    held: usize,
    first_held: Option<(At, String)>,
    differs: Option<(At, String)>,
}

impl Facts {
    /// `id` held at `at`; `note` says what was seen.
    pub fn held(&mut self, id: &'static str, at: &At, note: impl Into<String>) {
        let observed = self.facts.entry(id).or_default();
        observed.held += 1;
        if observed.first_held.is_none() {
            observed.first_held = Some((at.clone(), note.into()));
        }
    }

    /// `id` differs at `at` (the first difference is the one reported).
    pub fn differs(&mut self, id: &'static str, at: &At, seen: impl Into<String>) {
        let observed = self.facts.entry(id).or_default();
        if observed.differs.is_none() {
            observed.differs = Some((at.clone(), seen.into()));
        }
    }

    /// Held or differs, as `result` says.
    pub fn judge(&mut self, id: &'static str, at: &At, result: Result<String, String>) {
        match result {
            Ok(note) => self.held(id, at, note),
            Err(seen) => self.differs(id, at, seen),
        }
    }

    fn verdict(&self, id: &str, unseen: impl FnOnce() -> String) -> Verdict {
        let Some(observed) = self.facts.get(id) else {
            return Verdict::NotSeen { why: unseen() };
        };
        if let Some((at, seen)) = &observed.differs {
            return Verdict::Differs {
                exchange: at.index,
                method: at.method.clone(),
                path: at.path.clone(),
                seen: seen.clone(),
            };
        }
        match &observed.first_held {
            Some((at, note)) => Verdict::Held {
                seen: format!(
                    "{} exchange{}; first #{} {} {}: {note}",
                    observed.held,
                    if observed.held == 1 { "" } else { "s" },
                    at.index,
                    at.method,
                    at.path
                ),
            },
            None => Verdict::NotSeen { why: unseen() },
        }
    }

    /// The report: `statements` in their order, then every assumption of the spec in its order.
    pub fn report(
        &self,
        api_version: &str,
        exchanges: usize,
        statements: &[Statement],
        unseen: impl Fn(&str) -> String,
    ) -> RecordingsReport {
        RecordingsReport {
            api_version: api_version.to_owned(),
            exchanges,
            stated: statements
                .iter()
                .map(|statement| Finding {
                    id: statement.id,
                    says: statement.says,
                    verdict: self.verdict(statement.id, || unseen(statement.id)),
                })
                .collect(),
            assumptions: ASSUMPTIONS
                .iter()
                .map(|assumption| Finding {
                    id: assumption.id,
                    says: assumption.text,
                    verdict: self.verdict(assumption.id, || unseen(assumption.id)),
                })
                .collect(),
        }
    }
}
