//! What the generated body checks ([`crate::rules`]) report: which rule of the spec failed, where, and
//! its bound. Structured, never a message: `store_api::validate::rule_message` words a failure the way
//! the service does, so the wording lives in one place and callers compare failures by value.

use std::fmt;

/// Where a check is inside a request body: a chain of field names and array indexes on the stack. It
/// becomes a dotted string ([`FieldPath::render`]) only when a rule fails, so checking a valid body
/// allocates nothing.
#[derive(Clone, Copy, Debug)]
pub enum FieldPath<'a> {
    /// The body itself.
    Root,
    /// A field of the object at the parent path.
    Field(&'a FieldPath<'a>, &'static str),
    /// An element of the array at the parent path.
    Index(&'a FieldPath<'a>, usize),
}

impl<'a> FieldPath<'a> {
    /// The field `name` of the object at this path.
    pub fn field(&'a self, name: &'static str) -> FieldPath<'a> {
        FieldPath::Field(self, name)
    }

    /// The element `index` of the array at this path.
    pub fn index(&'a self, index: usize) -> FieldPath<'a> {
        FieldPath::Index(self, index)
    }

    /// The service's form of the path: wire names and 0-based indexes joined by dots
    /// (`lineItems.0.decorations.1.physicalWidth`); empty for the body itself.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        let (parent, segment) = match self {
            FieldPath::Root => return,
            FieldPath::Field(parent, name) => (parent, Segment::Name(name)),
            FieldPath::Index(parent, index) => (parent, Segment::Index(*index)),
        };
        parent.write(out);
        if !out.is_empty() {
            out.push('.');
        }
        match segment {
            Segment::Name(name) => out.push_str(name),
            Segment::Index(index) => out.push_str(&index.to_string()),
        }
    }
}

enum Segment<'a> {
    Name(&'a str),
    Index(usize),
}

/// The JSON types a schema's `type` can require.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonType {
    /// `type: object`.
    Object,
    /// `type: array`.
    Array,
    /// `type: string`.
    String,
    /// `type: integer`.
    Integer,
    /// `type: number`.
    Number,
    /// `type: boolean`.
    Boolean,
}

/// One rule of a request schema, with the bound the spec gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// The field is in the object's `required` list but absent.
    Required,
    /// The value is not of the schema's `type`.
    Type(JsonType),
    /// An array shorter than `minItems`.
    MinItems(u64),
    /// A string shorter than `minLength` characters.
    MinLength(u64),
    /// A string longer than `maxLength` characters.
    MaxLength(u64),
    /// A number below `minimum` (or not above it, with `exclusiveMinimum`).
    Minimum {
        /// The bound.
        min: f64,
        /// Whether the bound itself is refused.
        exclusive: bool,
    },
    /// A string outside a closed `enum` (never an `x-extensible-enum`, which may grow).
    Enum(&'static [&'static str]),
    /// A `format: date-time` string that is not an RFC 3339 timestamp.
    DateTime,
    /// A value that fits none of the schema's `oneOf` alternatives.
    OneOf,
    /// A `type: number` value in Rust that JSON cannot carry (NaN or infinite); only the checks over
    /// the typed request report it.
    Finite,
}

/// Which property of which component schema states a failed rule: the property itself, or for
/// [`Rule::Required`] the missing one. Lets a caller single out a property without parsing paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Property {
    /// The component schema, for example `AddressInput`.
    pub schema: &'static str,
    /// The property's wire name, for example `country`; empty for the schema as a whole.
    pub name: &'static str,
}

/// A failed rule: where in the body, which property of the spec states it, and the rule.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleFailure {
    /// The dotted path of the offending value (see [`FieldPath::render`]).
    pub path: String,
    /// The property that states the rule.
    pub property: Property,
    /// The rule and its bound.
    pub rule: Rule,
}

impl fmt::Display for RuleFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {:?}", self.path, self.rule)
    }
}

/// A request type with generated checks of its schema's rules, over its typed form and over JSON.
pub trait BodyRules {
    /// Appends every rule of the schema that `self` breaks, in the schema's declaration order. Rules the
    /// Rust type already enforces (`required`, `type`, closed enums, formats) are not checked again.
    fn check(&self, out: &mut Vec<RuleFailure>);

    /// Every rule of the schema that the JSON `value` breaks, all at once (serde stops at the first),
    /// with each object's missing required fields first, then its fields in key order.
    fn check_json(value: &serde_json::Value) -> Vec<RuleFailure>;
}

/// Numbers of the typed request as `f64`, whatever Rust type the spec's bounds gave them.
pub trait AsF64 {
    /// The value as `f64`.
    fn as_f64(&self) -> f64;
}

impl AsF64 for f64 {
    fn as_f64(&self) -> f64 {
        *self
    }
}

impl AsF64 for i64 {
    fn as_f64(&self) -> f64 {
        *self as f64
    }
}

impl AsF64 for u64 {
    fn as_f64(&self) -> f64 {
        *self as f64
    }
}

impl AsF64 for std::num::NonZeroU64 {
    fn as_f64(&self) -> f64 {
        self.get() as f64
    }
}

/// The number of characters of a string, as the spec's `minLength`/`maxLength` count them.
pub fn char_count(text: &str) -> u64 {
    text.chars().count() as u64
}

/// Whether a JSON number fails `minimum` (with `exclusive`, `exclusiveMinimum: true`).
pub fn below_minimum(value: f64, min: f64, exclusive: bool) -> bool {
    if exclusive { value <= min } else { value < min }
}

/// Whether `text` is an RFC 3339 timestamp, the spec's `format: date-time`.
pub fn is_date_time(text: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(text).is_ok()
}

/// Records a failure of `rule` at `path`, stated by `schema`'s property `name`.
pub fn fail(
    out: &mut Vec<RuleFailure>,
    path: &FieldPath<'_>,
    schema: &'static str,
    name: &'static str,
    rule: Rule,
) {
    out.push(RuleFailure {
        path: path.render(),
        property: Property { schema, name },
        rule,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_in_the_service_form() {
        let root = FieldPath::Root;
        assert_eq!(root.render(), "");
        let items = root.field("lineItems");
        let item = items.index(2);
        let width = item.field("physicalWidth");
        assert_eq!(width.render(), "lineItems.2.physicalWidth");
    }

    #[test]
    fn minimum_is_inclusive_unless_exclusive() {
        assert!(!below_minimum(0.0, 0.0, false));
        assert!(below_minimum(0.0, 0.0, true));
        assert!(below_minimum(-1.0, 0.0, false));
        assert!(!below_minimum(f64::NAN, 0.0, true));
    }
}
