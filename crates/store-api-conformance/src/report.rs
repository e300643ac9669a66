//! The one vocabulary: a [`Verdict`] per fact, a [`Finding`] per fact, gathered in a [`Report`] that
//! names its source of [`Evidence`], prints itself and serializes to JSON.

use std::fmt;

use serde::Serialize;
use store_api_raw::contract::{ASSUMPTIONS, Assumption};

/// Whether a fact held, as far as the evidence shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// The service behaved as the spec says wherever the evidence shows the fact.
    Held {
        /// What was observed, when it says more than "as the spec says" (the recordings always note
        /// how many exchanges showed it, and the first of them).
        #[serde(skip_serializing_if = "Option::is_none")]
        seen: Option<String>,
    },
    /// The service behaved otherwise.
    Differs {
        /// The recorded exchange that shows it (the first such exchange), for recordings; `None` for
        /// a probe.
        #[serde(flatten)]
        exchange: Option<RecordedExchange>,
        /// What was seen, against what the spec says.
        seen: String,
    },
    /// The evidence does not show the fact: a probe could not observe it (read-only, over its
    /// budget, no answer), or no recorded exchange shows it.
    NotChecked {
        /// Why not, or what would show it.
        why: String,
    },
}

/// A recorded exchange that shows a fact differing: its index in the cassette (from 0), its request's
/// method and its path with the query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RecordedExchange {
    /// The exchange's index in the cassette, from 0.
    #[serde(rename = "exchange")]
    pub index: usize,
    /// Its request's method.
    pub method: String,
    /// Its request's path and query.
    pub path: String,
}

impl RecordedExchange {
    pub(crate) fn new(index: usize, method: String, path: String) -> RecordedExchange {
        RecordedExchange {
            index,
            method,
            path,
        }
    }
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
        Verdict::Differs {
            exchange: None,
            seen: seen.into(),
        }
    }

    /// Not checked: `why` says why.
    pub(crate) fn not_checked(why: impl Into<String>) -> Verdict {
        Verdict::NotChecked { why: why.into() }
    }

    /// Whether this is [`Verdict::Differs`].
    pub fn differs_from_spec(&self) -> bool {
        matches!(self, Verdict::Differs { .. })
    }

    /// The verdict in words, as the report prints it: `held`, `differs` or `not checked`.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Held { .. } => "held",
            Verdict::Differs { .. } => "differs",
            Verdict::NotChecked { .. } => "not checked",
        }
    }

    /// What the report prints under the fact: what was seen (after the exchange that shows it, for
    /// recordings), or why it was not checked.
    fn note(&self) -> Option<String> {
        match self {
            Verdict::Held { seen } => seen.clone(),
            Verdict::Differs {
                exchange: Some(at),
                seen,
            } => Some(format!("#{} {} {}: {seen}", at.index, at.method, at.path)),
            Verdict::Differs {
                exchange: None,
                seen,
            } => Some(seen.clone()),
            Verdict::NotChecked { why } => Some(why.clone()),
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
    /// of the specification (`status`, `error-envelope`).
    pub id: &'static str,
    /// What the fact says: the spec's own text for an assumption.
    pub says: &'static str,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// Where a [`Report`]'s verdicts come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum Evidence {
    /// A live probe of a running service ([`probe`](crate::probe)): `GET`s only, each sent once.
    Probe {
        /// The base URL probed.
        base_url: String,
        /// The store whose key was used.
        store_id: String,
        /// Requests sent (every one a `GET`).
        requests: u32,
        /// The most requests the probe was allowed.
        max_requests: u32,
    },
    /// Recorded traffic ([`recordings`](crate::recordings)): nothing sent.
    Recordings {
        /// The API version the cassette says it spoke.
        api_version: String,
        /// How many exchanges were read.
        exchanges: usize,
    },
}

/// What the evidence shows of the spec: every statement the source of evidence can show and every
/// assumption of the spec (`x-assumption`), each held, differing or not checked.
///
/// It prints itself (`Display`) as `store-api doctor` does, and serializes to JSON (`--json`): the
/// evidence's fields (`baseUrl`, `storeId`, `requests`, `maxRequests` for a probe; `apiVersion`,
/// `exchanges` for recordings), then `stated` and `assumptions`, each finding `{id, says, verdict,
/// …}` with `verdict` one of `held`, `differs`, `not_checked`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// Where the verdicts come from.
    #[serde(flatten)]
    pub evidence: Evidence,
    /// What the specification states and the evidence can show (the version, the error envelopes,
    /// the list envelope…).
    pub stated: Vec<Finding>,
    /// Every assumption of the spec (`x-assumption`), in the spec's order.
    pub assumptions: Vec<Finding>,
}

impl Report {
    /// The report: `stated` as given, then every assumption of the spec in its order, each judged by
    /// `verdict_of`.
    pub(crate) fn new(
        evidence: Evidence,
        stated: Vec<Finding>,
        mut verdict_of: impl FnMut(&Assumption) -> Verdict,
    ) -> Report {
        let assumptions = ASSUMPTIONS
            .iter()
            .map(|assumption| Finding {
                id: assumption.id,
                says: assumption.text,
                verdict: verdict_of(assumption),
            })
            .collect();
        Report {
            evidence,
            stated,
            assumptions,
        }
    }

    /// Every finding: the statements, then the assumptions.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.stated.iter().chain(&self.assumptions)
    }

    /// The findings whose verdict is [`Verdict::Differs`], statements and assumptions alike.
    pub fn differing(&self) -> impl Iterator<Item = &Finding> {
        self.findings()
            .filter(|finding| finding.verdict.differs_from_spec())
    }

    /// The assumption with this id.
    pub fn assumption(&self, id: &str) -> Option<&Finding> {
        self.assumptions.iter().find(|finding| finding.id == id)
    }

    /// The statement or assumption with this id.
    pub fn finding(&self, id: &str) -> Option<&Finding> {
        self.findings().find(|finding| finding.id == id)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.evidence {
            Evidence::Probe {
                base_url,
                store_id,
                requests,
                max_requests,
            } => writeln!(
                f,
                "store-api doctor: {base_url} as store {store_id}: {requests} GET requests of at most {max_requests} (nothing written)"
            )?,
            Evidence::Recordings {
                api_version,
                exchanges,
            } => writeln!(
                f,
                "store-api doctor --cassette: {exchanges} recorded exchanges (API {api_version})"
            )?,
        }
        let width = self
            .findings()
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
            self.findings()
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

/// The widest verdict word, `not checked`: the column every fact's id starts after.
const WORD_WIDTH: usize = 11;

fn line(f: &mut fmt::Formatter<'_>, finding: &Finding, width: usize) -> fmt::Result {
    writeln!(
        f,
        "  {:<WORD_WIDTH$}  {:<width$}  {}",
        finding.verdict.word(),
        finding.id,
        finding.says
    )?;
    if let Some(note) = finding.verdict.note() {
        writeln!(f, "  {:<WORD_WIDTH$}  {:<width$}  → {note}", "", "")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn report(evidence: Evidence) -> Report {
        let stated = vec![
            Finding {
                id: "status",
                says: "GET /status answers",
                verdict: Verdict::held(),
            },
            Finding {
                id: "error-envelope",
                says: "Every error answer is an envelope",
                verdict: Verdict::Differs {
                    exchange: Some(RecordedExchange::new(3, "GET".into(), "/x?a=1".into())),
                    seen: "no message".into(),
                },
            },
        ];
        Report::new(evidence, stated, |assumption| {
            if assumption.id == "rate-limit-reset" {
                Verdict::differs("a Unix time")
            } else {
                Verdict::not_checked("not shown")
            }
        })
    }

    // The JSON of both sources is the shape `store-api doctor --json` printed before the two engines
    // became one: the evidence's fields first, a verdict's fields beside the finding's.
    #[test]
    fn each_source_serializes_as_before() {
        let probe = report(Evidence::Probe {
            base_url: "http://127.0.0.1:9/store-api/2026-08".into(),
            store_id: "store_alpha".into(),
            requests: 3,
            max_requests: 20,
        });
        let json = serde_json::to_value(&probe).unwrap();
        assert_eq!(json["baseUrl"], "http://127.0.0.1:9/store-api/2026-08");
        assert_eq!(json["storeId"], "store_alpha");
        assert_eq!(
            (json["requests"].as_u64(), json["maxRequests"].as_u64()),
            (Some(3), Some(20))
        );
        assert_eq!(
            json["stated"][0],
            json!({"id": "status", "says": "GET /status answers", "verdict": "held"})
        );
        assert_eq!(
            json["stated"][1],
            json!({"id": "error-envelope", "says": "Every error answer is an envelope",
                "verdict": "differs", "exchange": 3, "method": "GET", "path": "/x?a=1",
                "seen": "no message"})
        );
        let reset = probe.assumption("rate-limit-reset").unwrap();
        assert_eq!(
            serde_json::to_value(reset).unwrap()["seen"],
            json!("a Unix time")
        );
        assert_eq!(json["assumptions"][0]["verdict"], "not_checked");
        assert_eq!(json["assumptions"][0]["why"], "not shown");
        let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 6, "{keys:?}");

        let recorded = report(Evidence::Recordings {
            api_version: "2026-08".into(),
            exchanges: 12,
        });
        let json = serde_json::to_value(&recorded).unwrap();
        assert_eq!(json["apiVersion"], "2026-08");
        assert_eq!(json["exchanges"], 12);
        assert_eq!(json.as_object().unwrap().len(), 4, "{json}");
    }

    #[test]
    fn both_sources_print_one_way() {
        let recorded = report(Evidence::Recordings {
            api_version: "2026-08".into(),
            exchanges: 12,
        });
        let text = recorded.to_string();
        assert!(
            text.starts_with("store-api doctor --cassette: 12 recorded exchanges (API 2026-08)\n")
        );
        assert!(text.contains("  differs      error-envelope  "), "{text}");
        assert!(text.contains("→ #3 GET /x?a=1: no message"), "{text}");
        let not_checked = ASSUMPTIONS.len() - 1;
        assert!(
            text.ends_with(&format!("\n1 held, 2 differ, {not_checked} not checked")),
            "{text}"
        );
        // A verdict held with nothing to note prints no note line.
        let status = text.lines().position(|l| l.contains(" status ")).unwrap();
        assert!(
            text.lines()
                .nth(status + 1)
                .unwrap()
                .contains("error-envelope"),
            "{text}"
        );
        let probe = report(Evidence::Probe {
            base_url: "http://h".into(),
            store_id: "s".into(),
            requests: 3,
            max_requests: 20,
        });
        assert!(probe.to_string().starts_with(
            "store-api doctor: http://h as store s: 3 GET requests of at most 20 (nothing written)\n"
        ));
        assert_eq!(
            probe.differing().map(|f| f.id).collect::<Vec<_>>(),
            ["error-envelope", "rate-limit-reset"]
        );
        assert_eq!(probe.finding("status").unwrap().verdict.word(), "held");
    }
}
