//! The field paths violations point at: wire field names joined by dots, array elements by their 0-based
//! index (`lineItems.0.decorations.1.physicalWidth`), the form the service uses in validation messages.

/// A line item: `lineItems.<item>`.
pub(crate) fn line_item(item: usize) -> String {
    format!("lineItems.{item}")
}

/// A field of a line item: `lineItems.<item>.<field>`.
pub(crate) fn line_item_field(item: usize, field: &str) -> String {
    format!("lineItems.{item}.{field}")
}

/// A field of a decoration: `lineItems.<item>.decorations.<decoration>.<field>`.
pub(crate) fn decoration_field(item: usize, decoration: usize, field: &str) -> String {
    format!("lineItems.{item}.decorations.{decoration}.{field}")
}
