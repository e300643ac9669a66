//! `doctor --cassette` without `--full`: what a reader needs from a folder of cassettes at a glance.
//! The counts, every fact that differs and every recorded answer the spec does not declare in full
//! (they make the command fail), the ids of the facts held, and how many were not checked.

use std::fmt::Write as _;

use store_api_cassette::Conformance;
use store_api_conformance::{Evidence, Finding, Report, Verdict};

/// One cassette's summary, ending with a newline.
pub(super) fn summary(file: &str, report: &Report, conformance: &Conformance) -> String {
    let mut text = String::new();
    let exchanges = match &report.evidence {
        Evidence::Recordings {
            api_version,
            exchanges,
        } => format!("{exchanges} recorded exchanges (API {api_version})"),
        // `doctor --cassette` only judges recordings; a probe's report is printed whole.
        _ => String::new(),
    };
    let ids = |word: &str| -> Vec<&str> {
        report
            .findings()
            .filter(|finding| finding.verdict.word() == word)
            .map(|finding| finding.id)
            .collect()
    };
    let (held, differs, unchecked) = (ids("held"), ids("differs"), ids("not checked"));
    let _ = writeln!(
        text,
        "{file}: {exchanges}: {} held, {} differ, {} not checked",
        held.len(),
        differs.len(),
        unchecked.len()
    );
    for finding in report.differing() {
        let _ = writeln!(text, "  differs      {}  {}", finding.id, finding.says);
        if let Some(seen) = differing_note(finding) {
            let _ = writeln!(text, "               → {seen}");
        }
    }
    if !held.is_empty() {
        let _ = writeln!(text, "  held: {}", held.join(", "));
    }
    // Usually most facts: what no recorded exchange shows. Named, with why, by --full.
    if !unchecked.is_empty() {
        let _ = writeln!(
            text,
            "  not checked: {} (no recorded exchange shows them; --full names them)",
            unchecked.len()
        );
    }
    if conformance.findings.is_empty() {
        let _ = write!(text, "  answers against the spec: every answer conforms");
    } else {
        let _ = write!(
            text,
            "  answers against the spec: {} finding(s)",
            conformance.findings.len()
        );
    }
    if !conformance.notes.is_empty() {
        let _ = write!(
            text,
            ", {} note(s) (--full shows them)",
            conformance.notes.len()
        );
    }
    text.push('\n');
    for finding in &conformance.findings {
        let _ = writeln!(text, "    {finding}");
    }
    text
}

/// What shows a differing fact: the exchange and what was seen.
fn differing_note(finding: &Finding) -> Option<String> {
    match &finding.verdict {
        Verdict::Differs {
            exchange: Some(at),
            seen,
        } => Some(format!("#{} {} {}: {seen}", at.index, at.method, at.path)),
        Verdict::Differs { seen, .. } => Some(seen.clone()),
        _ => None,
    }
}
