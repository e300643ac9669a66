//! Line diffs of requests, for [`ReplayError`](crate::ReplayError).

use similar::TextDiff;

/// A unified diff of `old` against `new`, three lines of context, headed by their names.
pub(crate) fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}

/// How alike two texts are, from 0 (nothing shared) to 1 (equal), by lines.
pub(crate) fn ratio(old: &str, new: &str) -> f32 {
    TextDiff::from_lines(old, new).ratio()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_marks_the_changed_line() {
        let diff = unified("a\nb\nc\n", "a\nB\nc\n", "recorded", "sent");
        assert!(diff.contains("--- recorded"), "{diff}");
        assert!(diff.contains("-b\n+B\n"), "{diff}");
        assert!(ratio("a\n", "a\n") > ratio("a\n", "b\n"));
    }
}
