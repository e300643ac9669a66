//! What the checks observed of each fact, exchange by exchange, and the verdict it makes: held (how
//! many exchanges showed it, and the first), differs (the first exchange that shows it) or not
//! checked (no exchange shows it, and why).

use std::collections::BTreeMap;

use crate::report::{RecordedExchange, Verdict};

/// What the checks observed of each fact, gathered exchange by exchange.
#[derive(Default)]
pub(crate) struct Facts {
    facts: BTreeMap<&'static str, Observed>,
}

#[derive(Default)]
struct Observed {
    held: usize,
    first_held: Option<(RecordedExchange, String)>,
    differs: Option<(RecordedExchange, String)>,
}

impl Facts {
    /// `id` held at `at`; `note` says what was seen.
    pub fn held(&mut self, id: &'static str, at: &RecordedExchange, note: impl Into<String>) {
        let observed = self.facts.entry(id).or_default();
        observed.held += 1;
        if observed.first_held.is_none() {
            observed.first_held = Some((at.clone(), note.into()));
        }
    }

    /// `id` differs at `at` (the first difference is the one reported).
    pub fn differs(&mut self, id: &'static str, at: &RecordedExchange, seen: impl Into<String>) {
        let observed = self.facts.entry(id).or_default();
        if observed.differs.is_none() {
            observed.differs = Some((at.clone(), seen.into()));
        }
    }

    /// Held or differs, as `result` says.
    pub fn judge(
        &mut self,
        id: &'static str,
        at: &RecordedExchange,
        result: Result<String, String>,
    ) {
        match result {
            Ok(note) => self.held(id, at, note),
            Err(seen) => self.differs(id, at, seen),
        }
    }

    /// The verdict on `id`; `unseen` says why no exchange shows it.
    pub fn verdict(&self, id: &str, unseen: impl FnOnce() -> String) -> Verdict {
        let Some(observed) = self.facts.get(id) else {
            return Verdict::not_checked(unseen());
        };
        if let Some((at, seen)) = &observed.differs {
            return Verdict::Differs {
                exchange: Some(at.clone()),
                seen: seen.clone(),
            };
        }
        match &observed.first_held {
            Some((at, note)) => Verdict::held_seeing(format!(
                "{} exchange{}; first #{} {} {}: {note}",
                observed.held,
                if observed.held == 1 { "" } else { "s" },
                at.index,
                at.method,
                at.path
            )),
            None => Verdict::not_checked(unseen()),
        }
    }
}
