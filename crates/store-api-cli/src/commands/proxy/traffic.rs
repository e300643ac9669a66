//! What the proxy says on stderr as it works: one line per exchange (`replayed 200 GET /path
//! (cassette)`), the start of each further run of a replayed cassette, and the counts when it stops.
//! A line shows a request as its cassette keeps it ([`store_api_cassette::request_line`]): never the
//! key, never customer data.

use std::collections::BTreeMap;
use std::sync::Mutex;

use reqwest::StatusCode;

/// What became of an exchange the proxy answered from the service or a cassette.
#[derive(Debug, Clone, Copy)]
pub(super) enum Outcome {
    /// Forwarded, answered by the service, written into its cassette.
    Recorded,
    /// Answered from its cassette.
    Replayed,
}

/// One cassette's counts.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    recorded: usize,
    replayed: usize,
    missed: usize,
    /// The last run whose start was said.
    announced_run: usize,
}

/// The lines and counts of a proxy's exchanges, shared by every connection.
#[derive(Debug, Default)]
pub(super) struct Log {
    cassettes: Mutex<BTreeMap<String, Counts>>,
    /// Requests refused (another host, a non-loopback Host, the control plane, a bad cassette name,
    /// a body too large): said when they happened, counted here.
    refused: Mutex<usize>,
    /// Requests the origin did not answer (a 502 of the proxy's own, nothing recorded).
    unanswered: Mutex<usize>,
}

impl Log {
    fn count(&self, name: &str, change: impl FnOnce(&mut Counts)) {
        let mut cassettes = self.cassettes.lock().unwrap_or_else(|e| e.into_inner());
        change(cassettes.entry(name.to_owned()).or_default());
    }

    /// An exchange answered: `recorded 201 POST /store-api/2026-08/stores/s/orders (proxy)`.
    pub(super) fn exchange(&self, name: &str, outcome: Outcome, line: &str, status: StatusCode) {
        let word = match outcome {
            Outcome::Recorded => {
                self.count(name, |counts| counts.recorded += 1);
                "recorded"
            }
            Outcome::Replayed => {
                self.count(name, |counts| counts.replayed += 1);
                "replayed"
            }
        };
        eprintln!("{word} {} {line} ({name})", status.as_u16());
    }

    /// A replay miss: its line, then why (the diff against the nearest recorded request).
    pub(super) fn missed(&self, name: &str, line: &str, status: StatusCode, why: &str) {
        self.count(name, |counts| counts.missed += 1);
        eprintln!("missed   {} {line} ({name})\n{why}", status.as_u16());
    }

    /// Says once that cassette `name` began run `run` (from the second on: the first is implied).
    pub(super) fn run(&self, name: &str, run: usize) {
        let mut started = false;
        self.count(name, |counts| {
            if run > 1 && run > counts.announced_run {
                counts.announced_run = run;
                started = true;
            }
        });
        if started {
            eprintln!(
                "cassette {name}: run {run} begins (its first recorded request came again; \
                 its exchanges are answered anew)"
            );
        }
    }

    /// A request the proxy refused.
    pub(super) fn refused(&self) {
        *self.refused.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    }

    /// A request the origin did not answer.
    pub(super) fn unanswered(&self) {
        *self.unanswered.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    }

    /// The counts, when the proxy stops: a total line, then one line per cassette. `runs` holds the
    /// runs of each replayed cassette (every one loaded, asked for or not); empty when recording.
    pub(super) fn summary(&self, runs: &BTreeMap<String, usize>) -> String {
        let cassettes = self.cassettes.lock().unwrap_or_else(|e| e.into_inner());
        let refused = *self.refused.lock().unwrap_or_else(|e| e.into_inner());
        let replaying = !runs.is_empty();
        let total = |of: fn(&Counts) -> usize| cassettes.values().map(of).sum::<usize>();
        let mut parts = Vec::new();
        if replaying {
            parts.push(format!("{} replayed", total(|c| c.replayed)));
            parts.push(format!("{} missed", total(|c| c.missed)));
        } else {
            parts.push(format!("{} recorded", total(|c| c.recorded)));
        }
        parts.push(format!("{refused} refused"));
        let unanswered = *self.unanswered.lock().unwrap_or_else(|e| e.into_inner());
        if unanswered > 0 {
            parts.push(format!("{unanswered} unanswered by the origin"));
        }
        let mut text = format!("store-api proxy stopped: {}\n", parts.join(", "));
        let mut names: Vec<&String> = cassettes.keys().chain(runs.keys()).collect();
        names.sort();
        names.dedup();
        for name in names {
            let counts = cassettes.get(name).copied().unwrap_or_default();
            let mut parts = Vec::new();
            if replaying {
                parts.push(format!("{} replayed", counts.replayed));
                parts.push(format!("{} missed", counts.missed));
                match runs.get(name) {
                    Some(1) => parts.push("1 run".to_owned()),
                    Some(runs) => parts.push(format!("{runs} runs")),
                    None => parts.push("no such cassette".to_owned()),
                }
            } else {
                parts.push(format!("{} recorded", counts.recorded));
            }
            text.push_str(&format!("  cassette {name}: {}\n", parts.join(", ")));
        }
        text
    }
}
