//! How the parts of a Redis key are written, so that two stores (or two base URLs) never share one.

use std::borrow::Cow;

/// `part` with the characters that separate a key's parts (`:`, `|`), delimit a Redis Cluster hash
/// tag (`{`, `}`) or escape (`%`) percent-encoded. Store ids are opaque strings; the usual ones
/// (`store_alpha`) come out unchanged, so keys stay readable.
pub(crate) fn part(part: &str) -> Cow<'_, str> {
    const SPECIAL: [char; 5] = ['%', ':', '|', '{', '}'];
    if !part.contains(SPECIAL) {
        return Cow::Borrowed(part);
    }
    let mut escaped = String::with_capacity(part.len() + 8);
    for c in part.chars() {
        if SPECIAL.contains(&c) {
            escaped.push_str(&format!("%{:02X}", c as u32));
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_ids_are_kept_and_separators_escaped() {
        assert_eq!(part("store_alpha"), "store_alpha");
        assert_eq!(part("a:b"), "a%3Ab");
        assert_eq!(part("a|b{c}%"), "a%7Cb%7Bc%7D%25");
        // Distinct inputs stay distinct.
        assert_ne!(part("a%3Ab"), part("a:b"));
    }
}
