//! Line diffs of requests, for [`ReplayError`](crate::ReplayError), bounded in size and in time: a
//! miss on a request of many megabytes is explained in milliseconds, from its first
//! [`MAX_DIFF_LINES`] lines (at most [`MAX_DIFF_BYTES`]) on each side, and a diff that takes longer
//! than [`DIFF_TIMEOUT`] is cut short (`similar`'s deadline: what it found by then, coarser).

use std::time::Duration;

use similar::TextDiff;

/// The most lines of each side a diff compares.
pub(crate) const MAX_DIFF_LINES: usize = 400;
/// The most bytes of each side a diff compares.
pub(crate) const MAX_DIFF_BYTES: usize = 32 * 1024;
/// How long one diff may take before it settles for a coarser answer.
pub(crate) const DIFF_TIMEOUT: Duration = Duration::from_millis(200);

/// `text` cut to at most [`MAX_DIFF_LINES`] lines and [`MAX_DIFF_BYTES`] bytes (at a line's end, or
/// a character's when one line is longer), and how many bytes were left out.
fn bounded(text: &str) -> (&str, usize) {
    let mut end = 0;
    for (count, line) in text.split_inclusive('\n').enumerate() {
        if count == MAX_DIFF_LINES || end + line.len() > MAX_DIFF_BYTES {
            break;
        }
        end += line.len();
    }
    if end == 0 && !text.is_empty() {
        // One line longer than the budget: its start.
        end = MAX_DIFF_BYTES.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
    }
    (&text[..end], text.len() - end)
}

/// A unified diff of `old` against `new`, three lines of context, headed by their names; each side
/// bounded ([`MAX_DIFF_LINES`], [`MAX_DIFF_BYTES`], [`DIFF_TIMEOUT`]), with a line saying what was
/// left out.
pub(crate) fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    let (old_part, old_left) = bounded(old);
    let (new_part, new_left) = bounded(new);
    let mut diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old_part, new_part)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string();
    if old_left > 0 || new_left > 0 {
        diff.push_str(&format!(
            "(compared the first {MAX_DIFF_LINES} lines or {MAX_DIFF_BYTES} bytes of each; left out: \
             {old_left} bytes of {old_name}, {new_left} bytes of {new_name})\n"
        ));
    }
    diff
}

/// How alike two texts are, from 0 (nothing shared) to 1 (equal), by lines, of their bounded parts.
pub(crate) fn ratio(old: &str, new: &str) -> f32 {
    TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(bounded(old).0, bounded(new).0)
        .ratio()
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn a_diff_marks_the_changed_line() {
        let diff = unified("a\nb\nc\n", "a\nB\nc\n", "recorded", "sent");
        assert!(diff.contains("--- recorded"), "{diff}");
        assert!(diff.contains("-b\n+B\n"), "{diff}");
        assert!(!diff.contains("left out"), "{diff}");
        assert!(ratio("a\n", "a\n") > ratio("a\n", "b\n"));
    }

    // Issue 35, defect 5: the diff was unbounded (a 40 KB body took 14.8 s; 40 MB exhausted memory).
    #[test]
    fn a_diff_of_megabytes_is_bounded_in_size_and_time() {
        let old: String = (0..200_000).map(|n| format!("{n}\n")).collect();
        let new: String = (0..200_000)
            .map(|n| format!("{}\n", n * 7 % 200_003))
            .collect();
        let started = Instant::now();
        let diff = unified(&old, &new, "recorded", "sent");
        let ratio = ratio(&old, &new);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(diff.len() < 4 * MAX_DIFF_BYTES, "{}", diff.len());
        assert!(diff.contains("left out"), "{diff}");
        assert!((0.0..=1.0).contains(&ratio));
        // One line longer than the budget is cut at a character.
        let long = "é".repeat(MAX_DIFF_BYTES);
        assert!(bounded(&long).0.len() <= MAX_DIFF_BYTES);
    }
}
