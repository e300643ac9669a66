//! The two "at most once" rules (a variant in one line item, a location in one decoration of an item),
//! checked without touching the heap for orders of a usual size: pre-flight validation runs on every
//! submission, so a valid order of up to [`INLINE`] standard items or decorations per item allocates
//! nothing. Past that, a hash map keeps the checks linear.

use std::collections::HashMap;

/// How many keys are compared in place before a hash map takes over: up to here a scan of a stack
/// array is cheaper than hashing.
const INLINE: usize = 16;

/// Keys seen so far, each with the index of the first item that named it.
pub(crate) struct FirstSeen<'a> {
    inline: [(&'a str, usize); INLINE],
    len: usize,
    /// Keys past the first [`INLINE`], created with the first of them.
    spilled: Option<HashMap<&'a str, usize>>,
}

impl<'a> FirstSeen<'a> {
    /// Nothing seen yet (allocates nothing).
    pub(crate) fn new() -> FirstSeen<'a> {
        FirstSeen {
            inline: [("", 0); INLINE],
            len: 0,
            spilled: None,
        }
    }

    /// The index of the first item that named `key`, or `None` after recording `index` as that first item.
    pub(crate) fn first_or_insert(&mut self, key: &'a str, index: usize) -> Option<usize> {
        let seen = &self.inline[..self.len];
        if let Some(&(_, first)) = seen.iter().find(|(seen, _)| *seen == key) {
            return Some(first);
        }
        if let Some(&first) = self.spilled.as_ref().and_then(|spilled| spilled.get(key)) {
            return Some(first);
        }
        if let Some(slot) = self.inline.get_mut(self.len) {
            *slot = (key, index);
            self.len += 1;
        } else {
            self.spilled.get_or_insert_default().insert(key, index);
        }
        None
    }
}

/// The position of the first item of `items` whose key equals an earlier item's.
pub(crate) fn first_repeat<'a, T>(items: &'a [T], key: impl Fn(&'a T) -> &'a str) -> Option<usize> {
    if items.len() <= INLINE {
        // Nothing to set up: compare each key with the ones before it.
        return (1..items.len()).find(|&at| {
            let this = key(&items[at]);
            items[..at].iter().any(|earlier| key(earlier) == this)
        });
    }
    let mut seen = FirstSeen::new();
    items
        .iter()
        .enumerate()
        .position(|(index, item)| seen.first_or_insert(key(item), index).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_repeat_in_place_and_past_the_inline_keys() {
        let check = |keys: &[&str], expected: Option<usize>| {
            assert_eq!(first_repeat(keys, |key| key), expected, "{keys:?}");
        };
        check(&[], None);
        check(&["front"], None);
        check(&["front", "back"], None);
        check(&["front", "back", "front"], Some(2));
        check(&["front", "front", "back", "back"], Some(1));
        let many: Vec<String> = (0..40).map(|i| format!("loc_{i}")).collect();
        let mut keys: Vec<&str> = many.iter().map(String::as_str).collect();
        check(&keys, None);
        keys.push("loc_3");
        check(&keys, Some(40));
        keys.insert(30, "loc_35");
        check(&keys, Some(36));
    }

    #[test]
    fn keeps_the_first_index_of_each_key() {
        let names: Vec<String> = (0..INLINE + 4).map(|i| format!("var_{i}")).collect();
        let mut seen = FirstSeen::new();
        for (index, name) in names.iter().enumerate() {
            assert_eq!(seen.first_or_insert(name, index), None);
        }
        for (index, name) in names.iter().enumerate() {
            assert_eq!(
                seen.first_or_insert(name, 100 + index),
                Some(index),
                "{name}"
            );
        }
    }
}
