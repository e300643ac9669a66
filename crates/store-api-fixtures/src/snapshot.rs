//! Ready-made insta settings for snapshots taken against an emulator that is not deterministic: its ids,
//! keys, tracking numbers, timestamps and ports change with every run, so they are replaced by
//! placeholders. (A [deterministic](crate::EmulatorBuilder::deterministic) emulator needs none of this.)
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let emu = store_api_fixtures::Emulator::builder().rate_limit(false).start().await?;
//! let stores = reqwest::get(format!("{}/_emulator/stores", emu.origin())).await?.text().await?;
//! store_api_fixtures::snapshot::settings().bind(|| {
//!     insta::assert_snapshot!(stores);
//! });
//! # Ok(())
//! # }
//! ```

/// What changes from run to run, as (regex, placeholder): filters act on the snapshot's text, so they
/// work for every snapshot format (strings, JSON, YAML, debug output).
pub const FILTERS: &[(&str, &str)] = &[
    (r"\b(?:art|evt|img|li|ord|prod)_[0-9a-f]{16}\b", "[id]"),
    (r"\bcsk_[0-9a-f]{32}\b", "[api key]"),
    (r"\b1Z[0-9A-F]{16}\b", "[tracking number]"),
    (
        r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})",
        "[timestamp]",
    ),
    (r"(127\.0\.0\.1|localhost|\[::1\]):\d+", "$1:[port]"),
];

/// insta settings with [`FILTERS`] added to the current ones; bind them around a snapshot assertion.
pub fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    for (regex, placeholder) in FILTERS {
        settings.add_filter(regex, *placeholder);
    }
    settings
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_placeholders_replace_what_changes_between_runs() {
        super::settings().bind(|| {
            insta::assert_snapshot!(
                "order ord_0123456789abcdef at 2026-08-01T00:00:00.000Z on http://127.0.0.1:40123, key csk_0123456789abcdef0123456789abcdef, tracking 1Z0123456789ABCDEF",
                @"order [id] at [timestamp] on http://127.0.0.1:[port], key [api key], tracking [tracking number]"
            );
        });
    }
}
