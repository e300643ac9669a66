//! What the probe found: one [`Finding`] per fact, gathered in a [`Report`] that prints itself.

use std::fmt;

use serde::Serialize;
use store_api_raw::contract::{ASSUMPTIONS, Assumption};

/// Whether a fact held against the service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// The service behaved as the spec says; `seen` notes what was observed when it is worth knowing.
    Held {
        /// What was observed, when it says more than "as the spec says".
        #[serde(skip_serializing_if = "Option::is_none")]
        seen: Option<String>,
    },
    /// The service behaved otherwise.
    Differs {
        /// What was observed.
        seen: String,
    },
    /// The probe could not observe it.
    NotChecked {
        /// Why not.
        why: String,
    },
}

impl Verdict {
    /// Held, with nothing worth noting.
    pub(crate) fn held() -> Verdict {
        Verdict::Held { seen: None }
    }

    /// Held, noting what was observed.
    pub(crate) fn held_seeing(seen: impl Into<String>) -> Verdict {
        Verdict::Held {
            seen: Some(seen.into()),
        }
    }

    /// Differs: `seen` says how.
    pub(crate) fn differs(seen: impl Into<String>) -> Verdict {
        Verdict::Differs { seen: seen.into() }
    }

    /// Not checked: `why` says why.
    pub(crate) fn not_checked(why: impl Into<String>) -> Verdict {
        Verdict::NotChecked { why: why.into() }
    }

    /// Whether this is [`Verdict::Differs`].
    pub fn differs_from_spec(&self) -> bool {
        matches!(self, Verdict::Differs { .. })
    }

    fn word(&self) -> &'static str {
        match self {
            Verdict::Held { .. } => "held",
            Verdict::Differs { .. } => "differs",
            Verdict::NotChecked { .. } => "not checked",
        }
    }

    fn note(&self) -> Option<&str> {
        match self {
            Verdict::Held { seen } => seen.as_deref(),
            Verdict::Differs { seen } => Some(seen),
            Verdict::NotChecked { why } => Some(why),
        }
    }

    /// Two observations of one fact: a difference outweighs agreement, and any observation outweighs
    /// none.
    pub(crate) fn and(self, other: Verdict) -> Verdict {
        match (&self, &other) {
            (Verdict::Differs { .. }, _) => self,
            (_, Verdict::Differs { .. }) => other,
            (Verdict::NotChecked { .. }, _) => other,
            _ => self,
        }
    }
}

/// One fact and its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// The fact's id: an assumption's id in the spec (`rate-limit-reset`), or the name of a statement
    /// of the specification the probe checks (`status`, `not-found`).
    pub id: &'static str,
    /// What the fact says: the spec's own text for an assumption.
    pub says: &'static str,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// The outcome of [`diagnose`](crate::doctor::diagnose).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Report {
    /// The base URL probed.
    pub base_url: String,
    /// The store whose key was used.
    pub store_id: String,
    /// Requests sent (every one a `GET`).
    pub requests: u32,
    /// The most requests the probe was allowed.
    pub max_requests: u32,
    /// What the specification states of the service and the probe checked (the version, the error
    /// envelopes, the list envelope…).
    pub stated: Vec<Finding>,
    /// Every assumption of the spec (`x-assumption`), in the spec's order.
    pub assumptions: Vec<Finding>,
}

impl Report {
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
}

/// The report's assumptions: each probed one with its verdict, every other one not checked.
pub(crate) fn assumption_findings(
    verdict_of: impl Fn(&Assumption) -> Option<Verdict>,
) -> Vec<Finding> {
    ASSUMPTIONS
        .iter()
        .map(|assumption| Finding {
            id: assumption.id,
            says: assumption.text,
            verdict: verdict_of(assumption)
                .unwrap_or_else(|| Verdict::not_checked("not observable by a read-only probe")),
        })
        .collect()
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "store-api doctor: {} as store {}: {} GET requests of at most {} (nothing written)",
            self.base_url, self.store_id, self.requests, self.max_requests
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
            "\n{} held, {} differ, {} not checked",
            count("held"),
            count("differs"),
            count("not checked")
        )
    }
}

fn line(f: &mut fmt::Formatter<'_>, finding: &Finding, width: usize) -> fmt::Result {
    writeln!(
        f,
        "  {:<11}  {:<width$}  {}",
        finding.verdict.word(),
        finding.id,
        finding.says
    )?;
    if let Some(note) = finding.verdict.note() {
        writeln!(f, "  {:<11}  {:<width$}  → {note}", "", "")?;
    }
    Ok(())
}
