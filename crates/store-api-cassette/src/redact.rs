//! What a cassette must never hold: the API key anywhere, and (unless the recording keeps it) the
//! customer data of orders, replaced by placeholders that stay valid for their field.
//!
//! Redaction fails closed: it does not look for the fields of a well-formed `shippingAddress`, it
//! takes whatever stands below a key that names customer data.
//!
//! - **Customer keys.** A key is one when, lower-cased and stripped of everything but letters and
//!   digits, it contains one of [`CUSTOMER_KEY_PARTS`] (`shippingAddress`, `ShippingAddress`,
//!   `shipping_address`, `billingAddress`, `address`, `streetAddress`, `email`, `phone`,
//!   `firstName`, …). Every value below one, at any depth and of any type, is customer data: a
//!   string becomes a placeholder of its field (the field named by its nearest key: `firstName`,
//!   `email`, `stateOrProvince`, …; an unknown one, as `middleName` or `company`, is
//!   `Redacted1`, or an email or phone placeholder when its value is shaped like one), a number
//!   becomes a number placeholder (`1`, `2`, …). Kept there: empty strings (emptiness is what some
//!   rules check), `true`, `false` and `null`, and a `country` that is an ISO 3166 code (the rules
//!   depend on it).
//! - **Shapes, anywhere.** In every other string of a body (object keys too), and in the path, the
//!   query and the kept headers, every token shaped like an email or a phone number (see
//!   [`find_tokens`]) becomes the placeholder of its field, seen through percent-encoding.
//!
//! The same value of a field gets the same placeholder throughout a cassette, numbered by first
//! appearance, wherever it stands (an email in an `externalOrderId` and the same email in a
//! `shippingAddress` get the same one).
//!
//! The key is scrubbed whether or not customer data is kept ([`Keys`]): the key of any `X-API-Key`
//! header seen, and every token of the service's key shape, whatever its source.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use serde_json::{Map, Value};
use store_api_rules::countries::{US_STATES, is_country_code, is_us_state};

/// What replaces an API key wherever it occurs.
pub(crate) const KEY_PLACEHOLDER: &str = "<api-key>";

/// A key shorter than this is not searched for inside paths and bodies (a one-letter test key would
/// turn every `a` of a cassette into `<api-key>`); its header is dropped all the same.
pub(crate) const MIN_SCRUBBED_KEY: usize = 4;

/// The length of the service's keys and the brand prefix searched for when no key of that length was
/// seen yet (the emulator's, which the seed does not name). A key of [`KEY_LENGTH`] seen in an
/// `X-API-Key` header adds its own prefix (up to and with its first `_`), so a service whose brand is
/// another one is covered from its first request on.
pub(crate) use store_api_raw::{KEY_BRAND_PREFIX, KEY_LENGTH};

/// What a key names customer data when it contains one of these (lower-cased, letters and digits
/// only).
pub(crate) const CUSTOMER_KEY_PARTS: &[&str] = &[
    "address",
    "email",
    "phone",
    "firstname",
    "lastname",
    "middlename",
    "fullname",
    "givenname",
    "familyname",
    "surname",
    "customer",
    "recipient",
];

/// `key` lower-cased, letters and digits only: `shipping_address` and `ShippingAddress` are alike.
fn normalized(key: &str) -> String {
    key.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether `key` names customer data ([`CUSTOMER_KEY_PARTS`]).
pub(crate) fn is_customer_key(key: &str) -> bool {
    let key = normalized(key);
    CUSTOMER_KEY_PARTS.iter().any(|part| key.contains(part))
}

/// A field of customer data, as far as its placeholder goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Field {
    FirstName,
    LastName,
    Email,
    Phone,
    Street,
    Apartment,
    City,
    /// The state of a US address: its placeholder is a USPS code, so that it stays valid.
    UsState,
    /// The state or province of any other address (not checked by the service).
    State,
    Zip,
    /// Customer data of no known field (`middleName`, `company`, a whole address as one string).
    Other,
    /// A number standing in customer data (a `phone` sent as a number).
    Number,
}

impl Field {
    /// The field a key names, in an object whose `country` is the US or not.
    fn of_key(key: &str, us: bool) -> Option<Field> {
        let key = normalized(key);
        let has = |parts: &[&str]| parts.iter().any(|part| key.contains(part));
        Some(if has(&["email"]) {
            Field::Email
        } else if has(&["phone"]) {
            Field::Phone
        } else if has(&["firstname", "givenname"]) {
            Field::FirstName
        } else if has(&["lastname", "surname", "familyname"]) {
            Field::LastName
        } else if has(&["street"]) {
            Field::Street
        } else if has(&["apartment", "suite"]) {
            Field::Apartment
        } else if has(&["city", "town"]) {
            Field::City
        } else if has(&["state", "province"]) {
            if us { Field::UsState } else { Field::State }
        } else if has(&["zip", "postal"]) {
            Field::Zip
        } else {
            return None;
        })
    }

    /// The field of the string `value` standing where this field is: an unknown field's value shaped
    /// like an email or a phone number is one.
    pub(crate) fn of_value(self, value: &str) -> Field {
        if self != Field::Other {
            return self;
        }
        match find_tokens(value, None, true).as_slice() {
            [token] if token.range == (0..value.len()) => token.shape.field().unwrap_or(self),
            _ => self,
        }
    }

    /// The `n`th placeholder (from 1) of this field, for the value `original`: readable, and valid
    /// where the service checks the field.
    fn placeholder(self, n: usize, original: &str) -> String {
        match self {
            Field::FirstName => format!("Firstname{n}"),
            Field::LastName => format!("Lastname{n}"),
            Field::Email => format!("customer-{n}@example.com"),
            // 555 numbers are the fictional ones.
            Field::Phone => format!("+1 555-{n:04}"),
            Field::Street => format!("{n} Placeholder Street"),
            Field::Apartment => format!("Apt {n}"),
            Field::City => format!("City{n}"),
            // Chosen by the redactor (`Redactor::us_state`), which knows the codes taken.
            Field::UsState => US_STATES[(n - 1) % US_STATES.len()].0.to_owned(),
            Field::State => format!("Province{n}"),
            // Digits stay digits of the same length (a US ZIP stays five digits); anything else
            // becomes a readable code.
            Field::Zip if !original.is_empty() && original.bytes().all(|b| b.is_ascii_digit()) => {
                format!("{n:0width$}", width = original.len())
            }
            Field::Zip => format!("ZIP{n}"),
            Field::Other => format!("Redacted{n}"),
            Field::Number => n.to_string(),
        }
    }
}

/// Where a value stands, as redaction (and the matching of a replay) sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Outside customer data: strings are searched for emails and phone numbers.
    Plain,
    /// Below a customer key: every value is customer data, of this field when it is a leaf.
    Customer(Field),
    /// Below a customer key but kept as it is (a `country` that is a country code).
    Kept,
}

impl Scope {
    /// The scope of the member `key` of `object`, an object standing in this scope.
    pub(crate) fn member(self, key: &str, object: &Map<String, Value>) -> Scope {
        match self {
            Scope::Plain if is_customer_key(key) => {
                Scope::Customer(Field::of_key(key, is_us(object)).unwrap_or(Field::Other))
            }
            Scope::Plain => Scope::Plain,
            Scope::Customer(field) => {
                let country = normalized(key) == "country"
                    && object
                        .get(key)
                        .and_then(Value::as_str)
                        .is_some_and(is_country_code);
                if country {
                    Scope::Kept
                } else {
                    Scope::Customer(Field::of_key(key, is_us(object)).unwrap_or(field))
                }
            }
            Scope::Kept => Scope::Kept,
        }
    }

    /// The scope of the items of an array standing in this scope.
    pub(crate) fn item(self) -> Scope {
        self
    }
}

/// Whether an object is (part of) a US address: its `country`, in any spelling of the key, is `US`.
fn is_us(object: &Map<String, Value>) -> bool {
    object
        .iter()
        .any(|(key, value)| normalized(key) == "country" && value.as_str() == Some("US"))
}

/// Calls `visit` with every value of customer data in `value` (every string and number below a
/// customer key, [`Scope`]) and its field, mutably.
pub(crate) fn visit_customer_data(value: &mut Value, visit: &mut impl FnMut(Field, &mut Value)) {
    visit_in(value, Scope::Plain, visit);
}

fn visit_in(value: &mut Value, scope: Scope, visit: &mut impl FnMut(Field, &mut Value)) {
    match value {
        Value::Object(object) => {
            let scopes: Vec<Scope> = object
                .iter()
                .map(|(key, _)| scope.member(key, object))
                .collect();
            for ((_, inner), scope) in object.iter_mut().zip(scopes) {
                visit_in(inner, scope, visit);
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| visit_in(item, scope.item(), visit)),
        Value::String(text) => {
            if let Scope::Customer(field) = scope {
                let field = field.of_value(text);
                visit(field, value);
            }
        }
        Value::Number(_) => {
            if let Scope::Customer(_) = scope {
                visit(Field::Number, value);
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
}

/// Where a text stands, for the form of a placeholder put in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A JSON string or a header: placeholders as they are.
    Text,
    /// A path or a query string: placeholders percent-encoded where they must be.
    Url,
}

/// The placeholders of one cassette: the same value of a field always gets the same one.
#[derive(Debug, Default)]
pub(crate) struct Redactor {
    placeholders: HashMap<(Field, String), String>,
    counts: HashMap<Field, usize>,
}

impl Redactor {
    /// The placeholder of `original` in `field`; an empty value stays empty.
    pub(crate) fn placeholder(&mut self, field: Field, original: &str) -> String {
        if original.is_empty() {
            return String::new();
        }
        if let Some(known) = self.placeholders.get(&(field, original.to_owned())) {
            return known.clone();
        }
        let count = self.counts.entry(field).or_default();
        *count += 1;
        let placeholder = match field {
            Field::UsState if is_us_state(original) => self.us_state(original),
            // Not a state: its placeholder is not one either, so that the recorded refusal of the
            // request still fits the request the cassette shows (and a replay is refused alike).
            Field::UsState => Field::State.placeholder(*count, original),
            _ => field.placeholder(*count, original),
        };
        self.placeholders
            .insert((field, original.to_owned()), placeholder.clone());
        placeholder
    }

    /// A state code for the US state `original`: the first code of the fixed list that is neither
    /// `original` itself (by code or name) nor another state's placeholder, so that placeholders stay
    /// one-to-one (past 51 states, codes are shared).
    fn us_state(&self, original: &str) -> String {
        let taken = |code: &str| {
            self.placeholders
                .iter()
                .any(|((field, _), placeholder)| *field == Field::UsState && placeholder == code)
        };
        let is_original = |(code, name): &(&str, &str)| {
            code.eq_ignore_ascii_case(original) || name.eq_ignore_ascii_case(original)
        };
        US_STATES
            .iter()
            .find(|state| !is_original(state) && !taken(state.0))
            .or_else(|| US_STATES.iter().find(|state| !is_original(state)))
            .map_or_else(String::new, |(code, _)| (*code).to_owned())
    }

    /// Replaces every value of customer data in `value` by its placeholder, and every email and
    /// phone number in its other strings (object keys too).
    pub(crate) fn redact(&mut self, value: &mut Value) {
        self.redact_in(value, Scope::Plain);
    }

    fn redact_in(&mut self, value: &mut Value, scope: Scope) {
        match value {
            Value::Object(object) => {
                let scopes: Vec<Scope> = object
                    .iter()
                    .map(|(key, _)| scope.member(key, object))
                    .collect();
                let entries = std::mem::take(object);
                for ((key, mut inner), scope) in entries.into_iter().zip(scopes) {
                    self.redact_in(&mut inner, scope);
                    object.insert(self.scrub_text(&key, Place::Text), inner);
                }
            }
            Value::Array(items) => items
                .iter_mut()
                .for_each(|item| self.redact_in(item, scope.item())),
            Value::String(text) => match scope {
                Scope::Plain => *text = self.scrub_text(text, Place::Text),
                Scope::Customer(field) => *text = self.placeholder(field.of_value(text), text),
                Scope::Kept => {}
            },
            Value::Number(number) => {
                if let Scope::Customer(_) = scope {
                    let placeholder = self.placeholder(Field::Number, &number.to_string());
                    *value = placeholder.parse::<u64>().map_or(Value::Null, Value::from);
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }

    /// `text` with every email and phone number in it (seen through percent-encoding) replaced by
    /// its placeholder, percent-encoded when the text is part of a URL.
    pub(crate) fn scrub_text(&mut self, text: &str, place: Place) -> String {
        let tokens = find_tokens(text, None, true);
        if tokens.is_empty() {
            return text.to_owned();
        }
        replace_tokens(text, &tokens, |token| {
            let field = token.shape.field().unwrap_or(Field::Other);
            let placeholder = self.placeholder(field, &token.text);
            match place {
                Place::Text => placeholder,
                Place::Url => url_encoded(&placeholder),
            }
        })
    }

    /// [`redact`](Self::redact) for an answer's body, whose error `message` may also quote a value it
    /// refuses: the customer values this redactor knows (of three characters or more, as whole words)
    /// are replaced there by their placeholders.
    pub(crate) fn redact_answer(&mut self, value: &mut Value) {
        self.redact(value);
        if self.placeholders.is_empty() {
            return;
        }
        let Some(message) = value.get_mut("message") else {
            return;
        };
        visit_strings(message, &mut |text| {
            for ((_, original), placeholder) in &self.placeholders {
                if original.chars().count() >= 3 && text.contains(original.as_str()) {
                    *text = replace_words(text, original, placeholder);
                }
            }
        });
    }
}

/// `text` percent-encoded but for the characters a placeholder may keep in a URL.
fn url_encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~@<>".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// What a token of a text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// An API key: a key seen in a header, or a token of the service's key shape.
    Key,
    /// An email address.
    Email,
    /// A phone number.
    Phone,
}

impl Shape {
    /// The field of customer data a token of this shape is.
    pub(crate) fn field(self) -> Option<Field> {
        match self {
            Shape::Key => None,
            Shape::Email => Some(Field::Email),
            Shape::Phone => Some(Field::Phone),
        }
    }
}

/// A token found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    /// Where it stands in the text, in bytes (its percent-encoded form, if it was encoded).
    pub(crate) range: Range<usize>,
    /// What it is.
    pub(crate) shape: Shape,
    /// The token, percent-decoded.
    pub(crate) text: String,
}

/// How many layers of percent-encoding are looked through (`%2540` is `%40` is `@`).
const DECODING_LAYERS: usize = 3;

/// `text` percent-decoded ([`DECODING_LAYERS`] times, escapes of either case), each byte with the
/// range of `text` it came from.
///
/// A text without `%` is its own view: no copy and no table (issue 35: the view kept a range of 16
/// bytes per byte, 640 MB for a 40 MB body, and a replay miss on such a body took 1.3 to 2.3 s and
/// 760 MB, most of it here and in [`Keys::find`]). With escapes, one start per decoded byte: the
/// ranges of the decoded bytes are contiguous, so each ends where the next starts.
struct DecodedView<'a> {
    bytes: Cow<'a, [u8]>,
    /// The start in `text` of each decoded byte, and `text.len()` last; `None` when nothing was
    /// decoded (byte `i` is `text[i]`).
    starts: Option<Vec<usize>>,
}

impl<'a> DecodedView<'a> {
    fn new(text: &'a str) -> DecodedView<'a> {
        let mut view = DecodedView {
            bytes: Cow::Borrowed(text.as_bytes()),
            starts: None,
        };
        for _ in 0..DECODING_LAYERS {
            if !view.bytes.contains(&b'%') {
                break;
            }
            let bytes = &view.bytes;
            let (mut next_bytes, mut next_starts) = (Vec::new(), Vec::new());
            let mut at = 0;
            while at < bytes.len() {
                let escape = bytes[at] == b'%'
                    && at + 2 < bytes.len()
                    && bytes[at + 1].is_ascii_hexdigit()
                    && bytes[at + 2].is_ascii_hexdigit();
                next_starts.push(view.start(at));
                if escape {
                    let hex = [bytes[at + 1], bytes[at + 2]];
                    let hex = std::str::from_utf8(&hex).unwrap_or("00");
                    next_bytes.push(u8::from_str_radix(hex, 16).unwrap_or(0));
                    at += 3;
                } else {
                    next_bytes.push(bytes[at]);
                    at += 1;
                }
            }
            if next_bytes.len() == bytes.len() {
                break;
            }
            next_starts.push(text.len());
            view = DecodedView {
                bytes: Cow::Owned(next_bytes),
                starts: Some(next_starts),
            };
        }
        view
    }

    /// Where decoded byte `at` (or the end, at `bytes.len()`) starts in `text`.
    fn start(&self, at: usize) -> usize {
        self.starts.as_ref().map_or(at, |starts| starts[at])
    }

    /// The range of `text` that the decoded bytes `range` came from.
    fn span(&self, range: Range<usize>) -> Range<usize> {
        self.start(range.start)..self.start(range.end)
    }
}

/// The tokens of `text`, in order and apart, seen through percent-encoding: the API keys (those of
/// `keys`, and the service's key shape) when `keys` is given, emails and phone numbers when
/// `people`.
///
/// - A key token is a brand prefix (`csk_`, any case, or that of a key seen) and letters, digits,
///   `_` or `-` up to [`KEY_LENGTH`] characters in all, or a key seen, exactly.
/// - An email is `local@domain`: a local part of letters, digits and ``.!#$'*+^_`{|}~-``, a
///   domain of letters, digits, `.` and `-` with a dot, its last label of two characters or more
///   with a letter.
/// - A phone number is a run of digits, spaces, `+`, `-`, `.`, `(` and `)`, from its first `+`,
///   `(` or digit to its last digit, not touching a letter, digit or `_`, with seven digits or more,
///   that starts with `+`, or has two groups of digits or more, one of three digits or more (or four
///   of two or more: `01 23 45 67 89`), and is not a date (`2026-08-01`), a dotted quad (`192.168.0.10`) or a decimal (`1234567.89`). A bare
///   run of digits (`2125550147`) is not one: it is as often a count, an id or a time.
pub(crate) fn find_tokens(text: &str, keys: Option<&Keys>, people: bool) -> Vec<Token> {
    let view = DecodedView::new(text);
    let bytes: &[u8] = &view.bytes;
    let mut found: Vec<(Range<usize>, Shape)> = Vec::new();
    if let Some(keys) = keys {
        keys.find(bytes, &mut found);
    }
    if people {
        find_emails(bytes, &mut found);
        find_phones(bytes, &mut found);
    }
    // Earlier first; at one start, the longer; then keys before emails before phones.
    found.sort_by_key(|(range, shape)| (range.start, std::cmp::Reverse(range.end), *shape as u8));
    let mut tokens: Vec<Token> = Vec::new();
    let mut end = 0;
    for (range, shape) in found {
        if range.start < end || range.is_empty() {
            continue;
        }
        end = range.end;
        tokens.push(Token {
            range: view.span(range.clone()),
            shape,
            text: String::from_utf8_lossy(&bytes[range]).into_owned(),
        });
    }
    tokens
}

fn is_local(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b".!#$'*+^_`{|}~-".contains(&byte)
}

fn is_domain(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'.' || byte == b'-'
}

fn find_emails(bytes: &[u8], found: &mut Vec<(Range<usize>, Shape)>) {
    for at in (0..bytes.len()).filter(|&at| bytes[at] == b'@') {
        let mut start = at;
        while start > 0 && is_local(bytes[start - 1]) {
            start -= 1;
        }
        while start < at && bytes[start] == b'.' {
            start += 1;
        }
        let mut end = at + 1;
        while end < bytes.len() && is_domain(bytes[end]) {
            end += 1;
        }
        while end > at + 1 && matches!(bytes[end - 1], b'.' | b'-') {
            end -= 1;
        }
        let domain = &bytes[at + 1..end];
        let last = domain
            .rsplit(|&byte| byte == b'.')
            .next()
            .unwrap_or_default();
        let valid = start < at
            && domain.contains(&b'.')
            && !matches!(domain.first(), Some(b'.' | b'-'))
            && last.len() >= 2
            && last.iter().any(u8::is_ascii_alphabetic);
        if valid {
            found.push((start..end, Shape::Email));
        }
    }
}

fn is_phone_char(byte: u8) -> bool {
    byte.is_ascii_digit() || b" +-.()".contains(&byte)
}

fn is_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

fn find_phones(bytes: &[u8], found: &mut Vec<(Range<usize>, Shape)>) {
    let mut at = 0;
    while at < bytes.len() {
        if !is_phone_char(bytes[at]) {
            at += 1;
            continue;
        }
        let mut run_end = at;
        while run_end < bytes.len() && is_phone_char(bytes[run_end]) {
            run_end += 1;
        }
        let start = (at..run_end).find(|&i| matches!(bytes[i], b'+' | b'(' | b'0'..=b'9'));
        let end = (at..run_end).rev().find(|&i| bytes[i].is_ascii_digit());
        if let (Some(start), Some(end)) = (start, end)
            && start <= end
        {
            let end = end + 1;
            let alone = (start == 0 || !is_word(bytes[start - 1]))
                && (end == bytes.len() || !is_word(bytes[end]));
            if alone && is_phone(&bytes[start..end]) {
                found.push((start..end, Shape::Phone));
            }
        }
        at = run_end;
    }
}

/// Whether a run of phone characters (see [`find_tokens`]) is a phone number.
fn is_phone(run: &[u8]) -> bool {
    let groups: Vec<&[u8]> = run
        .split(|byte| !byte.is_ascii_digit())
        .filter(|group| !group.is_empty())
        .collect();
    let separators: Vec<&[u8]> = run
        .split(u8::is_ascii_digit)
        .filter(|separator| !separator.is_empty())
        .collect();
    let digits: usize = groups.iter().map(|group| group.len()).sum();
    if digits < 7 {
        return false;
    }
    if run.first() == Some(&b'+') {
        return true;
    }
    let lengths: Vec<usize> = groups.iter().map(|group| group.len()).collect();
    let date = lengths.len() >= 3
        && lengths[..3] == [4, 2, 2]
        && separators
            .iter()
            .take(2)
            .all(|separator| matches!(*separator, b"-" | b"/" | b"."));
    let dotted = |count: usize| {
        lengths.len() == count && separators.iter().all(|separator| *separator == b".")
    };
    let quad = dotted(4) && lengths.iter().all(|&length| length <= 3);
    let decimal = dotted(2);
    let grouped = lengths.iter().any(|&length| length >= 3)
        || (lengths.len() >= 4 && lengths.iter().all(|&length| length >= 2));
    groups.len() >= 2 && grouped && !date && !quad && !decimal
}

/// `text` with each of `tokens` (in order, apart) replaced by what `with` makes of it.
fn replace_tokens(text: &str, tokens: &[Token], mut with: impl FnMut(&Token) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for token in tokens {
        out.push_str(&text[at..token.range.start]);
        out.push_str(&with(token));
        at = token.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// `text` with its emails and phone numbers masked by their kind (`<email>`, `<phone>`): what a
/// digest of a body that is not kept is taken of, so that it depends on none of them.
pub(crate) fn mask_people(text: &str) -> String {
    let tokens = find_tokens(text, None, true);
    replace_tokens(text, &tokens, |token| match token.shape {
        Shape::Email => "<email>".to_owned(),
        Shape::Phone => "<phone>".to_owned(),
        Shape::Key => KEY_PLACEHOLDER.to_owned(),
    })
}

/// `text` with its emails and phone numbers replaced by a marker that says only what they were:
/// what the diff of a request the replay does not hold shows.
pub(crate) fn hide_people(text: &str) -> String {
    let tokens = find_tokens(text, None, true);
    replace_tokens(text, &tokens, |token| match token.shape {
        Shape::Email => "<email: redacted, matches no placeholder here>".to_owned(),
        Shape::Phone => "<phone: redacted, matches no placeholder here>".to_owned(),
        Shape::Key => KEY_PLACEHOLDER.to_owned(),
    })
}

/// Whether the live `text` is the recorded text but for its emails and phone numbers, each bound to
/// the recorded placeholder in its place by `bind(field, placeholder, live value)` (which says
/// whether the binding holds).
pub(crate) fn bind_people(
    live: &str,
    recorded: &str,
    bind: &mut impl FnMut(Field, &str, &str) -> bool,
) -> bool {
    let live_tokens = find_tokens(live, None, true);
    let recorded_tokens = find_tokens(recorded, None, true);
    if live_tokens.len() != recorded_tokens.len() {
        return false;
    }
    let (mut live_at, mut recorded_at) = (0, 0);
    for (live_token, recorded_token) in live_tokens.iter().zip(&recorded_tokens) {
        let same = live[live_at..live_token.range.start]
            == recorded[recorded_at..recorded_token.range.start]
            && live_token.shape == recorded_token.shape;
        let field = live_token.shape.field().unwrap_or(Field::Other);
        if !same || !bind(field, &recorded_token.text, &live_token.text) {
            return false;
        }
        live_at = live_token.range.end;
        recorded_at = recorded_token.range.end;
    }
    live[live_at..] == recorded[recorded_at..]
}

/// Calls `visit` with every string of `value` (object keys excepted).
pub(crate) fn visit_strings(value: &mut Value, visit: &mut impl FnMut(&mut String)) {
    match value {
        Value::String(text) => visit(text),
        Value::Array(items) => items.iter_mut().for_each(|item| visit_strings(item, visit)),
        Value::Object(object) => object
            .values_mut()
            .for_each(|item| visit_strings(item, visit)),
        _ => {}
    }
}

/// `text` with every occurrence of `word` that is not part of a longer word replaced by `with`.
pub(crate) fn replace_words(text: &str, word: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        let alone = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        out.push_str(&rest[..at]);
        out.push_str(if alone(before) && alone(after) {
            with
        } else {
            word
        });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// The API keys to scrub: the keys seen (exactly, and percent-encoded), and every token of the
/// service's key shape ([`KEY_BRAND_PREFIX`] or the prefix of a key seen, [`KEY_LENGTH`] characters).
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    /// The keys seen, longest first.
    seen: Vec<String>,
    /// The brand prefixes, lower case.
    prefixes: Vec<String>,
}

impl Default for Keys {
    fn default() -> Self {
        Keys {
            seen: Vec::new(),
            prefixes: vec![KEY_BRAND_PREFIX.to_ascii_lowercase()],
        }
    }
}

impl Keys {
    /// Adds `key` (ignored when shorter than [`MIN_SCRUBBED_KEY`]); a key of [`KEY_LENGTH`]
    /// characters adds its brand prefix too (up to and with its first `_`).
    pub(crate) fn add(&mut self, key: &str) {
        if key.len() < MIN_SCRUBBED_KEY || self.seen.iter().any(|known| known == key) {
            return;
        }
        self.seen.push(key.to_owned());
        self.seen.sort_by_key(|key| std::cmp::Reverse(key.len()));
        if key.chars().count() == KEY_LENGTH
            && let Some(end) = key.find('_')
            && (2..KEY_LENGTH / 2).contains(&end)
        {
            let prefix = key[..=end].to_ascii_lowercase();
            if !self.prefixes.contains(&prefix) {
                self.prefixes.push(prefix);
            }
        }
    }

    /// Adds the key an `x-api-key` header carries, if any.
    pub(crate) fn add_from(&mut self, headers: &http::HeaderMap) {
        for value in headers.get_all("x-api-key") {
            if let Ok(key) = value.to_str() {
                self.add(key.trim());
            }
        }
    }

    /// The keys in the percent-decoded `bytes`. Each scan compares a position's first byte before
    /// anything else: a body of megabytes is read once per key at the cost of a byte comparison.
    fn find(&self, bytes: &[u8], found: &mut Vec<(Range<usize>, Shape)>) {
        for key in &self.seen {
            let key = key.as_bytes();
            let Some(&first) = key.first() else {
                continue;
            };
            for at in 0..bytes.len().saturating_sub(key.len() - 1) {
                if bytes[at] == first && bytes[at..].starts_with(key) {
                    found.push((at..at + key.len(), Shape::Key));
                }
            }
        }
        for prefix in &self.prefixes {
            let prefix = prefix.as_bytes();
            let Some(&first) = prefix.first() else {
                continue;
            };
            for at in 0..bytes.len().saturating_sub(KEY_LENGTH - 1) {
                if !bytes[at].eq_ignore_ascii_case(&first) {
                    continue;
                }
                let token = &bytes[at..at + KEY_LENGTH];
                if token[..prefix.len()].eq_ignore_ascii_case(prefix)
                    && token[prefix.len()..]
                        .iter()
                        .all(|&byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
                {
                    found.push((at..at + KEY_LENGTH, Shape::Key));
                }
            }
        }
    }

    /// `text` with every key (see [`Keys`]), percent-encoded or not, replaced by
    /// [`KEY_PLACEHOLDER`].
    pub(crate) fn scrub(&self, text: &str) -> String {
        let tokens = find_tokens(text, Some(self), false);
        replace_tokens(text, &tokens, |_| KEY_PLACEHOLDER.to_owned())
    }

    /// `value` with every key replaced, in strings and in object keys.
    pub(crate) fn scrub_json(&self, value: &mut Value) {
        match value {
            Value::String(text) => *text = self.scrub(text),
            Value::Array(items) => items.iter_mut().for_each(|item| self.scrub_json(item)),
            Value::Object(object) => {
                let entries = std::mem::take(object);
                for (key, mut inner) in entries {
                    self.scrub_json(&mut inner);
                    object.insert(self.scrub(&key), inner);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{HttpAnswer, HttpRequest, RecordOptions, Recording};

    #[test]
    fn placeholders_are_valid_for_their_field_and_stable() {
        let mut redactor = Redactor::default();
        let mut order = json!({
            "externalOrderId": "ext-1",
            "shippingAddress": {
                "firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.org",
                "phone": "+44 20 7946 0000",
                "address": {
                    "streetAddress": "1 Main St", "apartmentOrSuite": "", "cityOrTown": "Austin",
                    "stateOrProvince": "TX", "zipOrPostalCode": "78701", "country": "US"
                }
            }
        });
        redactor.redact(&mut order);
        let address = &order["shippingAddress"];
        assert_eq!(address["firstName"], "Firstname1");
        assert_eq!(address["email"], "customer-1@example.com");
        assert_eq!(address["phone"], "+1 555-0001");
        assert_eq!(
            address["address"]["apartmentOrSuite"], "",
            "empty stays empty"
        );
        assert_eq!(address["address"]["zipOrPostalCode"], "00001");
        assert_eq!(address["address"]["country"], "US");
        let state = address["address"]["stateOrProvince"].as_str().unwrap();
        assert!(store_api_rules::countries::is_us_state(state), "{state}");
        assert_ne!(state, "TX");
        let states: Vec<String> = ["AK", "Alabama", "AK", "TX"]
            .iter()
            .map(|state| redactor.placeholder(Field::UsState, state))
            .collect();
        assert_eq!(states[0], states[2], "the same value, the same placeholder");
        assert_ne!(states[0], "AK", "never the value itself");
        assert_ne!(states[1], "AL", "never the value itself, by name");
        let distinct: std::collections::BTreeSet<&String> = states.iter().collect();
        assert_eq!(distinct.len(), 3, "one-to-one: {states:?}");
        // What is not a state stays not a state: the service's refusal still fits the request.
        let invalid = redactor.placeholder(Field::UsState, "ZZ");
        assert!(
            !store_api_rules::countries::is_us_state(&invalid),
            "{invalid}"
        );
        assert_ne!(invalid, "ZZ");
        assert_eq!(order["externalOrderId"], "ext-1");

        let mut page = json!({"items": [
            {"shippingAddress": {"firstName": "Grace", "lastName": 7}},
            {"shippingAddress": {"firstName": "Ada"}},
        ]});
        redactor.redact(&mut page);
        assert_eq!(
            page["items"][0]["shippingAddress"]["firstName"],
            "Firstname2"
        );
        assert_eq!(
            page["items"][0]["shippingAddress"]["lastName"], 1,
            "a number is customer data too"
        );
        assert_eq!(
            page["items"][1]["shippingAddress"]["firstName"],
            "Firstname1"
        );
    }

    #[test]
    fn a_message_quoting_a_value_quotes_its_placeholder() {
        let mut redactor = Redactor::default();
        let mut request =
            json!({"shippingAddress": {"address": {"stateOrProvince": "Texasx", "country": "DE"}}});
        redactor.redact(&mut request);
        let mut answer =
            json!({"message": ["stateOrProvince Texasx is not a state"], "statusCode": 400});
        redactor.redact_answer(&mut answer);
        assert_eq!(
            answer["message"][0],
            "stateOrProvince Province1 is not a state"
        );
    }

    #[test]
    fn keys_are_scrubbed_in_strings_and_object_keys() {
        let mut keys = Keys::default();
        keys.add("csk_secret/1");
        keys.add("k");
        let mut value = json!({"csk_secret/1": ["a csk_secret%2F1 b", "k"]});
        keys.scrub_json(&mut value);
        assert_eq!(value, json!({"<api-key>": ["a <api-key> b", "k"]}));
    }

    /// One exchange recorded with the default options: the cassette's text.
    fn recorded(path_and_query: &str, key: &str, body: &str, answer: &str) -> String {
        let recording = Recording::new(RecordOptions::default());
        let mut headers = http::HeaderMap::new();
        if !key.is_empty() {
            headers.insert("x-api-key", key.parse().unwrap());
        }
        recording.record(
            &HttpRequest {
                method: "POST",
                path_and_query,
                headers: &headers,
                body: body.as_bytes(),
            },
            &HttpAnswer {
                status: 400,
                headers: http::HeaderMap::new(),
                body: answer.to_owned().into(),
            },
        );
        recording.cassette().to_text()
    }

    /// Asserts that none of `secrets` is in `text`, in any case.
    #[track_caller]
    fn check_absent(text: &str, secrets: &[&str]) {
        for secret in secrets {
            assert!(
                !text.to_lowercase().contains(&secret.to_lowercase()),
                "{secret:?} is in\n{text}"
            );
        }
    }

    const ORDERS: &str = "/store-api/2026-08/stores/store_alpha/orders";

    // Issue 35, defect 2: each shape of customer data that reached a cassette, one test each.
    #[test]
    fn street_address_directly_under_shipping_address_is_redacted() {
        let body = json!({"shippingAddress": {"streetAddress": "221 Vesey Street"}});
        check_absent(&recorded(ORDERS, "", &body.to_string(), "{}"), &["Vesey"]);
    }

    #[test]
    fn extra_fields_of_an_address_are_redacted_at_any_depth() {
        let body = json!({"shippingAddress": {"firstName": "Augustina", "middleName": "Quenby",
            "company": "Vesey Holdings", "address": {"country": "US", "line3": {"deep": ["Brooklynton"]}}}});
        let text = recorded(ORDERS, "", &body.to_string(), "{}");
        check_absent(&text, &["Augustina", "Quenby", "Vesey", "Brooklynton"]);
        assert!(text.contains("\"country\": \"US\""), "{text}");
    }

    #[test]
    fn a_phone_sent_as_a_number_is_redacted() {
        let body = json!({"shippingAddress": {"phone": 2125550147u64}});
        check_absent(
            &recorded(ORDERS, "", &body.to_string(), "{}"),
            &["2125550147"],
        );
    }

    #[test]
    fn an_address_key_in_other_casing_is_redacted() {
        let body = json!({"ShippingAddress": {"FirstName": "Augustina", "Email": "aug@vesey.org"}});
        let text = recorded(ORDERS, "", &body.to_string(), "{}");
        check_absent(&text, &["Augustina", "aug@vesey.org"]);
        assert!(text.contains("Firstname1"), "{text}");
    }

    #[test]
    fn emails_in_external_order_ids_and_their_filter_are_redacted() {
        let text = recorded(
            ORDERS,
            "",
            &json!({"externalOrderId": "order-for-aug@vesey.org"}).to_string(),
            &json!({"message": ["order-for-aug@vesey.org exists", "call (212) 555-0147"]})
                .to_string(),
        );
        check_absent(&text, &["aug@vesey.org", "555-0147"]);
        let text = recorded(
            &format!("{ORDERS}?filter%5BexternalOrderId%5D=aug%40vesey.org,x-bob@quill.co.uk"),
            "",
            "",
            "{}",
        );
        check_absent(&text, &["aug@vesey.org", "aug%40vesey.org", "bob@quill"]);
    }

    #[test]
    fn a_malformed_json_order_is_kept_as_its_size_and_digest() {
        let text = recorded(
            ORDERS,
            "",
            r#"{"shippingAddress": {"firstName": "Augustina", "#,
            "{}",
        );
        check_absent(&text, &["Augustina"]);
        assert!(text.contains("sha256"), "{text}");
    }

    // Issue 35, defect 3: the key in other spellings, and keys never sent in a header.
    const KEY: &str = "csk_0123456789abcdef0123456789abcdef";
    const OTHER: &str = "csk_fedcba9876543210fedcba9876543210";

    #[test]
    fn a_percent_encoded_key_in_a_path_or_query_is_scrubbed() {
        let encoded = "csk%5f0123456789abcdef0123456789abcdef";
        let text = recorded(
            &format!(
                "/store-api/2026-08/stores/{encoded}/orders?key={encoded}&k2=csk%255F{}",
                &KEY[4..]
            ),
            KEY,
            "{}",
            "{}",
        );
        check_absent(&text, &[KEY, encoded, &KEY[4..]]);
    }

    #[test]
    fn a_key_never_sent_in_a_header_is_scrubbed_by_its_shape() {
        let text = recorded(
            &format!("{ORDERS}?api_key={OTHER}"),
            "",
            &json!({"note": format!("key {}", OTHER.to_uppercase())}).to_string(),
            "{}",
        );
        check_absent(&text, &[OTHER]);
    }

    #[test]
    fn the_keys_of_an_emulator_stores_answer_are_scrubbed() {
        let text = recorded(
            "/_emulator/stores",
            KEY,
            "",
            &json!([{"id": "store_beta", "apiKey": OTHER}]).to_string(),
        );
        check_absent(&text, &[OTHER, &OTHER[4..]]);
        // Another brand of the service's length, learned from the header.
        let branded = "xyz_0123456789abcdef0123456789abcdef";
        let text = recorded(
            ORDERS,
            branded,
            "{}",
            &json!({"keys": ["xyz_ffffffffffffffffffffffffffffffff"]}).to_string(),
        );
        check_absent(&text, &[branded, "ffffffffffffffffffffffffffffffff"]);
    }

    #[test]
    fn tokens_are_found_through_encodings_and_not_in_ids_dates_or_amounts() {
        let check = |text: &str, expected: &[(Shape, &str)]| {
            let tokens = find_tokens(text, Some(&Keys::default()), true);
            let got: Vec<(Shape, &str)> = tokens
                .iter()
                .map(|token| (token.shape, token.text.as_str()))
                .collect();
            assert_eq!(got, expected, "{text}");
        };
        check("ada@example.org", &[(Shape::Email, "ada@example.org")]);
        check("x=ada%40Example.ORG.", &[(Shape::Email, "ada@Example.ORG")]);
        check("a%2540b.co", &[(Shape::Email, "a@b.co")]);
        check(
            "call +1 212-555-0147.",
            &[(Shape::Phone, "+1 212-555-0147")],
        );
        check("(212) 555-0147", &[(Shape::Phone, "(212) 555-0147")]);
        check("212.555.0147", &[(Shape::Phone, "212.555.0147")]);
        check("tel. 01 23 45 67 89", &[(Shape::Phone, "01 23 45 67 89")]);
        check("%2B442079460000", &[(Shape::Phone, "+442079460000")]);
        check(
            "CSK%5F0123456789abcdef0123456789abcdef",
            &[(Shape::Key, "CSK_0123456789abcdef0123456789abcdef")],
        );
        for plain in [
            "2026-08-01T00:00:00.000Z",
            "2026-08-01",
            "ord_0123456789abcdef",
            "0190f5a3-7c1e-7abc-8def-0123456789ab",
            "1234567.89",
            "http://127.0.0.1:40123/store-api/2026-08",
            "192.168.100.200",
            "payload larger than 1048576 bytes",
            "AA-TEE-SUN-BLK-M",
            "1Z0123456789ABCDEF",
            "csk_any_key_for_a_replay",
            "2125550147",
            "items 1 2 3 4 5 6 7",
            "12 34 56",
        ] {
            check(plain, &[]);
        }
    }

    // Issue 35, defect 5 (the digest of a huge body): the view kept a range per byte (16 bytes each:
    // 640 MB for a 40 MB body). A text without escapes is now its own view; with escapes, each token
    // still maps back to the whole of its encoded form, through every layer.
    #[test]
    fn a_text_without_escapes_is_its_own_view_and_tokens_map_back_through_layers() {
        let plain = format!("{{\"note\": \"{KEY} and ada@example.org\"}}");
        let view = DecodedView::new(&plain);
        assert!(matches!(view.bytes, Cow::Borrowed(_)) && view.starts.is_none());
        fn ranges(text: &str) -> Vec<&str> {
            find_tokens(text, Some(&Keys::default()), true)
                .iter()
                .map(|token| &text[token.range.clone()])
                .collect()
        }
        assert_eq!(ranges(&plain), [KEY, "ada@example.org"]);
        let layered = format!("a=csk%255F{}&b=x%2540y.co&c=%", &KEY[4..]);
        assert_eq!(
            ranges(&layered),
            [format!("csk%255F{}", &KEY[4..]).as_str(), "x%2540y.co"]
        );
        assert_eq!(
            Keys::default().scrub(&layered),
            format!("a={KEY_PLACEHOLDER}&b=x%2540y.co&c=%")
        );
    }

    #[test]
    fn placeholders_are_tokens_of_their_shape_where_they_stand() {
        let mut redactor = Redactor::default();
        let text = "x +1 212-555-0147 y ada@example.org";
        let json = redactor.scrub_text(text, Place::Text);
        let url = redactor.scrub_text(text, Place::Url);
        assert_eq!(json, "x +1 555-0001 y customer-1@example.com");
        assert_eq!(url, "x %2B1%20555-0001 y customer-1@example.com");
        let mut bound = Vec::new();
        let mut bind = |field: Field, recorded: &str, live: &str| {
            bound.push((field, recorded.to_owned(), live.to_owned()));
            true
        };
        assert!(bind_people(text, &json, &mut bind));
        assert!(bind_people(text, &url, &mut bind));
        assert_eq!(bound.len(), 4);
        assert_eq!(
            bound[1],
            (
                Field::Email,
                "customer-1@example.com".to_owned(),
                "ada@example.org".to_owned()
            )
        );
        assert!(!bind_people("z +1 212-555-0147", &json, &mut |_, _, _| {
            true
        }));
    }
}
