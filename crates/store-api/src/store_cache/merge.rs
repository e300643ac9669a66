//! Folding what a read found into the copy: the pure part of a refresh, apart from any I/O.

use std::collections::HashMap;

use super::versioned::Versioned;

/// `items` with `changes` folded in: a changed item replaces the held one unless the held one is newer
/// (a webhook brought it while the read ran), a new one is added, and `removed` ids go. The result is in
/// the service's default order, newest creation first (stable, so equal stamps keep their order), which
/// is the order the first match of a repeated SKU is taken in.
pub(crate) fn fold<T: Versioned>(items: &[T], changes: Vec<T>, removed: &[&str]) -> Vec<T> {
    let mut changes: HashMap<String, T> = changes
        .into_iter()
        .map(|item| (item.id().to_owned(), item))
        .collect();
    let mut folded: Vec<T> = Vec::with_capacity(items.len() + changes.len());
    for item in items {
        if removed.contains(&item.id()) {
            continue;
        }
        match changes.remove(item.id()) {
            Some(change) if change.updated_at() >= item.updated_at() => folded.push(change),
            _ => folded.push(item.clone()),
        }
    }
    folded.extend(changes.into_values());
    folded.sort_by_key(|item| std::cmp::Reverse(item.created_at()));
    folded
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;
    use crate::model::Product;

    fn product(id: &str, created_ms: i64, updated_ms: i64, name: &str) -> Product {
        let mut product = Product::new(id.to_owned());
        product.created_at = DateTime::from_timestamp_millis(created_ms);
        product.updated_at = DateTime::from_timestamp_millis(updated_ms);
        product.name = Some(name.to_owned());
        product
    }

    fn names(items: &[Product]) -> Vec<(&str, &str)> {
        items
            .iter()
            .map(|p| (p.id.as_str(), p.name.as_deref().unwrap_or("")))
            .collect()
    }

    #[test]
    fn changes_replace_add_and_remove_but_never_go_back_in_time() {
        let held = [
            product("a", 1, 1, "a0"),
            product("b", 2, 9, "b-webhook"),
            product("c", 3, 3, "c0"),
        ];
        let changes = vec![
            product("a", 1, 5, "a1"),
            // Older than what the copy holds (a webhook was faster): kept as held.
            product("b", 2, 4, "b-read"),
            product("d", 4, 4, "d0"),
        ];
        let folded = fold(&held, changes, &["c"]);
        assert_eq!(
            names(&folded),
            [("d", "d0"), ("b", "b-webhook"), ("a", "a1")]
        );
    }
}
