//! Text from servers and customers made safe for a terminal: shown, never obeyed. A leaf module: the
//! output and the error report both use it.

use std::borrow::Cow;

/// Text as a terminal may show it: each control character (C0 with line breaks and tabs, DEL, C1)
/// and each character that reorders text (bidirectional overrides and isolates) written as its
/// escape (`\u{1b}`, `\n`), so an escape sequence is shown rather than obeyed and what follows it
/// stays visible.
pub fn clean(text: &str) -> Cow<'_, str> {
    clean_except(text, &[])
}

/// [`clean`], keeping line breaks (`\n`): for lines of text, whose own breaks are the program's.
pub fn clean_lines(text: &str) -> Cow<'_, str> {
    clean_except(text, &['\n'])
}

/// [`clean`], keeping line breaks and tabs: for the raw strings of `--jq`, which a script may have
/// built as tab-separated fields (`@tsv`); a tab moves the cursor, it commands nothing.
pub fn clean_text(text: &str) -> Cow<'_, str> {
    clean_except(text, &['\n', '\t'])
}

/// Whether standard output is a terminal: tables for a person there, tab-separated rows for a pipe
/// or a file.
pub fn stdout_is_terminal() -> bool {
    use std::io::IsTerminal as _;
    std::io::stdout().is_terminal()
}

fn clean_except<'a>(text: &'a str, kept: &[char]) -> Cow<'a, str> {
    let unsafe_char = |c: char| !kept.contains(&c) && (c.is_control() || reorders(c));
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut cleaned = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            cleaned.extend(c.escape_default());
        } else {
            cleaned.push(c);
        }
    }
    Cow::Owned(cleaned)
}

/// JSON text (as `serde_json` writes it) as a terminal may show it: the control characters JSON leaves
/// raw inside strings (DEL and C1; C0 is escaped already) and the characters that reorder text, written
/// as JSON escapes (`\u009b`). Still JSON, with the same value: only strings can hold such characters.
pub fn clean_json(json: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| (c.is_control() && c != '\n') || reorders(c);
    if !json.chars().any(unsafe_char) {
        return Cow::Borrowed(json);
    }
    let mut cleaned = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if unsafe_char(c) {
            // Every such character is in the Basic Multilingual Plane: one `\uXXXX` each.
            cleaned.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            cleaned.push(c);
        }
    }
    Cow::Owned(cleaned)
}

/// Unicode's bidirectional formatting characters: they reorder what a terminal shows after them.
fn reorders(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        let cases = [
            ("Ada Lovelace", "Ada Lovelace"),
            ("café ☕ 東京", "café ☕ 東京"),
            ("a\u{1b}]0;pwned\u{7}b", "a\\u{1b}]0;pwned\\u{7}b"),
            ("\u{1b}[2J", "\\u{1b}[2J"),
            ("\u{9b}2J \u{7f} \u{0}", "\\u{9b}2J \\u{7f} \\u{0}"),
            ("a\nb\tc\rd", "a\\nb\\tc\\rd"),
            ("abc\u{202e}fed", "abc\\u{202e}fed"),
        ];
        for (text, expected) in cases {
            assert_eq!(clean(text), expected, "{text:?}");
        }
        assert_eq!(clean_lines("a\nb\u{1b}c"), "a\nb\\u{1b}c");
        assert_eq!(clean_text("a\tb\nc\u{1b}\r"), "a\tb\nc\\u{1b}\\r");
    }

    #[test]
    fn json_keeps_its_value_and_shows_no_control_character() {
        let value = serde_json::json!({"name": "a\u{1b}]0;x\u{7}b\u{9b}2J\u{7f}c\u{202e}d", "n": [1, "\n"]});
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let cleaned = clean_json(&pretty);
        assert!(
            !cleaned
                .chars()
                .any(|c| (c.is_control() && c != '\n') || reorders(c)),
            "{cleaned}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&cleaned).unwrap(),
            value
        );
        assert!(matches!(clean_json("{\"a\": 1}"), Cow::Borrowed(_)));
    }
}
