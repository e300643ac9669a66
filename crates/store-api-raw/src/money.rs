//! Money as a decimal rounded to cents.
//!
//! The spec marks every money field with the `Money` schema (`type: number, format: decimal`); the code
//! generator replaces that schema with [`Money`], so the wire types themselves carry decimals and no
//! hand-written copy of them is needed to convert.

use std::fmt;
use std::str::FromStr;

use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Rounds a wire amount to cents (half away from zero), as the service asks clients to do before display
/// or storage. Non-finite numbers (never sent by the service) become zero rather than an error.
pub fn to_cents(amount: f64) -> Decimal {
    Decimal::from_f64_retain(amount)
        .map(round_to_cents)
        .unwrap_or_default()
}

fn round_to_cents(amount: Decimal) -> Decimal {
    amount.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// An amount of money (US dollars for costs), rounded to cents when decoded.
///
/// On the wire it is a JSON number; it decodes through [`to_cents`] and encodes as the nearest `f64` to
/// its decimal value, so `27.49` goes out as `27.49`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money(Decimal);

impl Money {
    /// An exact number of cents.
    pub fn from_cents(cents: i64) -> Self {
        Money(Decimal::new(cents, 2))
    }

    /// The amount as a decimal.
    pub fn amount(self) -> Decimal {
        self.0
    }

    /// The amount in whole cents (rounded half away from zero), saturating at the `i64` range.
    pub fn cents(self) -> i64 {
        let cents = round_to_cents(self.0) * Decimal::ONE_HUNDRED;
        i64::try_from(cents).unwrap_or(if cents.is_sign_negative() {
            i64::MIN
        } else {
            i64::MAX
        })
    }

    /// The nearest `f64` to the amount.
    pub fn to_f64(self) -> f64 {
        // Through the decimal text: the parse is correctly rounded, arithmetic conversion may not be.
        self.0.to_string().parse().unwrap_or_default()
    }
}

impl From<Decimal> for Money {
    /// Keeps the decimal as given (no rounding): a value built in code is taken at its word.
    fn from(amount: Decimal) -> Self {
        Money(amount)
    }
}

impl From<f64> for Money {
    /// Rounds to cents, like decoding.
    fn from(amount: f64) -> Self {
        Money(to_cents(amount))
    }
}

impl From<Money> for Decimal {
    fn from(money: Money) -> Self {
        money.0
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl FromStr for Money {
    type Err = rust_decimal::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Decimal::from_str(s).map(|d| Money(round_to_cents(d)))
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.to_f64())
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        f64::deserialize(deserializer).map(Money::from)
    }
}

// On the wire a plain JSON number (see `Serialize`), whatever the decimal inside.
#[cfg(feature = "schemars")]
impl schemars::JsonSchema for Money {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Money")
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "number",
            "description": "An amount of money in US dollars; rounded to cents when read.",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_is_rounded_to_cents() {
        assert_eq!(to_cents(11.449999999).to_string(), "11.45");
        assert_eq!(to_cents(0.125).to_string(), "0.13");
        assert_eq!(to_cents(23.0).to_string(), "23");
        assert_eq!(to_cents(f64::NAN), Decimal::ZERO);
    }

    #[test]
    fn money_decodes_rounded_and_encodes_as_the_nearest_number() {
        let money: Money = serde_json::from_str("27.49000001").unwrap();
        assert_eq!(money.to_string(), "27.49");
        assert_eq!(serde_json::to_string(&money).unwrap(), "27.49");
        let whole: Money = serde_json::from_str("23").unwrap();
        assert_eq!(serde_json::to_string(&whole).unwrap(), "23.0");
        assert_eq!(Money::from_cents(2749), money);
        assert_eq!(money.cents(), 2749);
        assert_eq!(Money::from_cents(1475).to_f64(), 14.75);
    }
}
