//! What a cassette must never hold: the API key anywhere, and (unless the recording keeps it) the
//! customer data of orders, replaced by placeholders that stay valid for their field.
//!
//! Customer data is the `shippingAddress` of an order wherever it appears in a body (a create-order
//! request, an order, a page of orders, a 409's body that carries the order): `firstName`, `lastName`,
//! `email`, `phone` and the address's `streetAddress`, `apartmentOrSuite`, `cityOrTown`,
//! `stateOrProvince` and `zipOrPostalCode`. The `country` is kept (the rules depend on it), empty
//! strings stay empty (emptiness is what some rules check) and values that are not strings are left
//! alone. The same value of a field gets the same placeholder throughout a cassette, numbered by first
//! appearance.

use std::collections::HashMap;

use serde_json::{Map, Value};
use store_api_rules::countries::{US_STATES, is_us_state};

/// What replaces an API key wherever it occurs.
pub(crate) const KEY_PLACEHOLDER: &str = "<api-key>";

/// A key shorter than this is not searched for inside paths and bodies (a one-letter test key would
/// turn every `a` of a cassette into `<api-key>`); its header is dropped all the same.
pub(crate) const MIN_SCRUBBED_KEY: usize = 4;

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
}

impl Field {
    /// The field of a `shippingAddress` object's own key.
    fn of_shipping_address(key: &str) -> Option<Field> {
        Some(match key {
            "firstName" => Field::FirstName,
            "lastName" => Field::LastName,
            "email" => Field::Email,
            "phone" => Field::Phone,
            _ => return None,
        })
    }

    /// The field of an `address` object's key, in an address whose country is the US or not.
    fn of_address(key: &str, us: bool) -> Option<Field> {
        Some(match key {
            "streetAddress" => Field::Street,
            "apartmentOrSuite" => Field::Apartment,
            "cityOrTown" => Field::City,
            "stateOrProvince" if us => Field::UsState,
            "stateOrProvince" => Field::State,
            "zipOrPostalCode" => Field::Zip,
            _ => return None,
        })
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
        }
    }
}

/// Calls `visit` with every field of customer data in `value` (every `shippingAddress` object at any
/// depth), mutably.
pub(crate) fn visit_customer_data(value: &mut Value, visit: &mut impl FnMut(Field, &mut Value)) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object.iter_mut() {
                if key == "shippingAddress"
                    && let Value::Object(address) = inner
                {
                    visit_shipping_address(address, visit);
                    continue;
                }
                visit_customer_data(inner, visit);
            }
        }
        Value::Array(items) => {
            for item in items {
                visit_customer_data(item, visit);
            }
        }
        _ => {}
    }
}

fn visit_shipping_address(
    shipping: &mut Map<String, Value>,
    visit: &mut impl FnMut(Field, &mut Value),
) {
    for (key, inner) in shipping.iter_mut() {
        if let Some(field) = Field::of_shipping_address(key) {
            visit(field, inner);
        } else if key == "address"
            && let Value::Object(address) = inner
        {
            let us = is_us(address);
            for (key, inner) in address.iter_mut() {
                if let Some(field) = Field::of_address(key, us) {
                    visit(field, inner);
                }
            }
        }
    }
}

/// Whether an `address` object is a US one (its `country` is `US`).
pub(crate) fn is_us(address: &Map<String, Value>) -> bool {
    address.get("country").and_then(Value::as_str) == Some("US")
}

/// Whether `key` of a request's object is one of the fields of a `shippingAddress` object, and which.
pub(crate) fn shipping_field(key: &str) -> Option<Field> {
    Field::of_shipping_address(key)
}

/// Whether `key` of an `address` object is customer data, and which field.
pub(crate) fn address_field(key: &str, us: bool) -> Option<Field> {
    Field::of_address(key, us)
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

    /// Replaces every field of customer data in `value` by its placeholder.
    pub(crate) fn redact(&mut self, value: &mut Value) {
        visit_customer_data(value, &mut |field, inner| {
            if let Value::String(text) = inner {
                *text = self.placeholder(field, text);
            }
        });
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

/// The API keys to scrub: each one and its percent-encoded form, longest first.
#[derive(Debug, Default, Clone)]
pub(crate) struct Keys {
    forms: Vec<String>,
}

impl Keys {
    /// Adds `key` (ignored when shorter than [`MIN_SCRUBBED_KEY`]).
    pub(crate) fn add(&mut self, key: &str) {
        if key.len() < MIN_SCRUBBED_KEY || self.forms.iter().any(|known| known == key) {
            return;
        }
        self.forms.push(key.to_owned());
        let encoded: String = url::form_urlencoded::byte_serialize(key.as_bytes()).collect();
        if encoded != key {
            self.forms.push(encoded);
        }
        self.forms.sort_by_key(|form| std::cmp::Reverse(form.len()));
    }

    /// Adds the key an `x-api-key` header carries, if any.
    pub(crate) fn add_from(&mut self, headers: &http::HeaderMap) {
        for value in headers.get_all("x-api-key") {
            if let Ok(key) = value.to_str() {
                self.add(key.trim());
            }
        }
    }

    /// `text` with every known key replaced by [`KEY_PLACEHOLDER`].
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for form in &self.forms {
            if text.contains(form.as_str()) {
                text = text.replace(form.as_str(), KEY_PLACEHOLDER);
            }
        }
        text
    }

    /// `value` with every known key replaced, in strings and in object keys.
    pub(crate) fn scrub_json(&self, value: &mut Value) {
        if self.forms.is_empty() {
            return;
        }
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
        assert_eq!(page["items"][0]["shippingAddress"]["lastName"], 7);
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
}
