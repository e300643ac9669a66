//! What the generated body checks (`rules.rs`, implementing [`BodyRules`]) report: which rule of the
//! spec failed, where, and its bound. Structured, never a message: `store_api_rules::rule_message`
//! words a failure the way the service does, so the wording lives in one place and callers compare
//! failures by value. The checks themselves are calls into the helpers here with the spec's bounds.

use std::fmt;

use serde_json::{Map, Value};

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
    /// A string outside a closed `enum` (never an open enumeration's known values, which may grow).
    Enum(&'static [&'static str]),
    /// A `format: date-time` string that is not an RFC 3339 timestamp.
    DateTime,
    /// A value that fits none of the schema's `oneOf` alternatives.
    OneOf,
    /// A `type: number` value in Rust that JSON cannot carry (NaN or infinite); only the checks over
    /// the typed request report it.
    Finite,
    /// A declared field sent as `null` (no request field of the spec is nullable; serde would read it
    /// as absent). A `null` in a field the schema does not declare is not checked: unrecognized fields
    /// are ignored, whatever their value. Only the JSON checks report it.
    NotNull,
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
    /// Every rule [`BodyRules::check`] can report, with the property stating it: what a caller that
    /// words the typed failures must know how to word.
    const TYPED_RULES: &'static [(Property, Rule)];

    /// Appends every rule of the schema that `self` breaks, in the schema's declaration order. Rules the
    /// Rust type already enforces (`required`, `type`, closed enums, formats) are not checked again.
    fn check(&self, out: &mut Vec<RuleFailure>);

    /// Every rule of the schema that the JSON `value` breaks, all at once (serde stops at the first),
    /// with each object's missing required fields first, then its fields in key order.
    fn check_json(value: &serde_json::Value) -> Vec<RuleFailure>;
}

/// Where a rule is checked: the value's path and the property of the spec that states the rule.
#[derive(Clone, Copy, Debug)]
pub struct Site<'a> {
    /// The value's path.
    pub path: &'a FieldPath<'a>,
    /// The property stating the rules checked here.
    pub property: Property,
}

impl<'a> Site<'a> {
    /// The value at `path`, whose rules `schema`'s property `name` states.
    pub fn new(path: &'a FieldPath<'a>, schema: &'static str, name: &'static str) -> Self {
        Self {
            path,
            property: Property { schema, name },
        }
    }

    fn fail(&self, out: &mut Vec<RuleFailure>, rule: Rule) {
        out.push(RuleFailure {
            path: self.path.render(),
            property: self.property,
            rule,
        });
    }
}

/// A `minimum` bound, with `exclusiveMinimum`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Minimum {
    /// The bound.
    pub min: f64,
    /// Whether the bound itself is refused.
    pub exclusive: bool,
}

/// What a string schema requires beyond its type.
#[derive(Clone, Copy, Debug, Default)]
pub struct StringRules {
    /// `minLength`.
    pub min_length: Option<u64>,
    /// `maxLength`.
    pub max_length: Option<u64>,
    /// `format: date-time`.
    pub date_time: bool,
    /// A closed `enum`.
    pub allowed: Option<&'static [&'static str]>,
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

// ---- rules on values, shared by the JSON and the typed checks

/// `minLength`/`maxLength`, counted in characters.
pub(crate) fn length(
    text: &str,
    site: Site<'_>,
    min: Option<u64>,
    max: Option<u64>,
    out: &mut Vec<RuleFailure>,
) {
    let length = text.chars().count() as u64;
    if let Some(min) = min
        && length < min
    {
        site.fail(out, Rule::MinLength(min));
    }
    if let Some(max) = max
        && length > max
    {
        site.fail(out, Rule::MaxLength(max));
    }
}

/// `minimum` (+ `exclusiveMinimum`); NaN is never below it.
pub(crate) fn minimum(
    value: f64,
    site: Site<'_>,
    bound: Option<Minimum>,
    out: &mut Vec<RuleFailure>,
) {
    let Some(Minimum { min, exclusive }) = bound else {
        return;
    };
    let below = if exclusive { value <= min } else { value < min };
    if below {
        site.fail(out, Rule::Minimum { min, exclusive });
    }
}

/// `minItems`.
pub(crate) fn min_items(len: usize, site: Site<'_>, min: Option<u64>, out: &mut Vec<RuleFailure>) {
    if let Some(min) = min
        && (len as u64) < min
    {
        site.fail(out, Rule::MinItems(min));
    }
}

/// A typed `type: number`: finite (as every JSON number is), then its `minimum`.
pub(crate) fn number(
    value: f64,
    site: Site<'_>,
    bound: Option<Minimum>,
    out: &mut Vec<RuleFailure>,
) {
    if value.is_finite() {
        minimum(value, site, bound, out);
    } else {
        site.fail(out, Rule::Finite);
    }
}

// ---- JSON

/// A declared field sent as `null`: reported as [`Rule::NotNull`] instead of a type mismatch.
fn null(value: &Value, site: Site<'_>, out: &mut Vec<RuleFailure>) -> bool {
    if value.is_null() {
        site.fail(out, Rule::NotNull);
    }
    value.is_null()
}

/// `type: object` and `required` (in the listed order, stated by `schema`); the fields when it is one.
pub(crate) fn json_object<'v>(
    value: &'v Value,
    site: Site<'_>,
    schema: &'static str,
    required: &[&'static str],
    out: &mut Vec<RuleFailure>,
) -> Option<&'v Map<String, Value>> {
    if null(value, site, out) {
        return None;
    }
    let Some(fields) = value.as_object() else {
        site.fail(out, Rule::Type(JsonType::Object));
        return None;
    };
    for name in required {
        if !fields.contains_key(*name) {
            Site::new(&site.path.field(name), schema, name).fail(out, Rule::Required);
        }
    }
    Some(fields)
}

/// `type: array` and `minItems`; the items when it is one.
pub(crate) fn json_array<'v>(
    value: &'v Value,
    site: Site<'_>,
    min: Option<u64>,
    out: &mut Vec<RuleFailure>,
) -> Option<&'v [Value]> {
    if null(value, site, out) {
        return None;
    }
    let Some(items) = value.as_array() else {
        site.fail(out, Rule::Type(JsonType::Array));
        return None;
    };
    min_items(items.len(), site, min, out);
    Some(items)
}

/// `type: string` and its [`StringRules`].
pub(crate) fn json_string(
    value: &Value,
    site: Site<'_>,
    rules: StringRules,
    out: &mut Vec<RuleFailure>,
) {
    if null(value, site, out) {
        return;
    }
    let Some(text) = value.as_str() else {
        site.fail(out, Rule::Type(JsonType::String));
        return;
    };
    length(text, site, rules.min_length, rules.max_length, out);
    if rules.date_time && chrono::DateTime::parse_from_rfc3339(text).is_err() {
        site.fail(out, Rule::DateTime);
    }
    if let Some(allowed) = rules.allowed
        && !allowed.contains(&text)
    {
        site.fail(out, Rule::Enum(allowed));
    }
}

/// `type: integer` or `type: number`, and `minimum`.
pub(crate) fn json_number(
    value: &Value,
    site: Site<'_>,
    integer: bool,
    bound: Option<Minimum>,
    out: &mut Vec<RuleFailure>,
) {
    if null(value, site, out) {
        return;
    }
    let Some(n) = value.as_f64() else {
        let kind = if integer {
            JsonType::Integer
        } else {
            JsonType::Number
        };
        site.fail(out, Rule::Type(kind));
        return;
    };
    if integer && !(value.is_i64() || value.is_u64()) {
        site.fail(out, Rule::Type(JsonType::Integer));
        return;
    }
    minimum(n, site, bound, out);
}

/// `type: boolean`.
pub(crate) fn json_boolean(value: &Value, site: Site<'_>, out: &mut Vec<RuleFailure>) {
    if !null(value, site, out) && !value.is_boolean() {
        site.fail(out, Rule::Type(JsonType::Boolean));
    }
}

/// A generated check of one `oneOf` alternative.
pub(crate) type JsonCheck = fn(&Value, Site<'_>, &mut Vec<RuleFailure>);

/// `oneOf`: the value must pass every rule of at least one alternative.
// Called by the generated checks of a `oneOf` (`xtask/src/rules.rs`); the spec has none today.
#[allow(dead_code)]
pub(crate) fn json_one_of(
    value: &Value,
    site: Site<'_>,
    options: &[JsonCheck],
    out: &mut Vec<RuleFailure>,
) {
    if null(value, site, out) {
        return;
    }
    let fits = options.iter().any(|option| {
        let mut inner = Vec::new();
        option(value, site, &mut inner);
        inner.is_empty()
    });
    if !fits {
        site.fail(out, Rule::OneOf);
    }
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
        let root = FieldPath::Root;
        let site = Site::new(&root, "S", "p");
        let check = |value: f64, exclusive: bool| {
            let mut out = Vec::new();
            minimum(
                value,
                site,
                Some(Minimum {
                    min: 0.0,
                    exclusive,
                }),
                &mut out,
            );
            out.len()
        };
        assert_eq!(check(0.0, false), 0);
        assert_eq!(check(0.0, true), 1);
        assert_eq!(check(-1.0, false), 1);
        assert_eq!(check(f64::NAN, true), 0);
    }
}
