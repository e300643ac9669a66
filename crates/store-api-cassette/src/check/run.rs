//! [`check`]: every group of facts over the exchanges of one cassette.

use super::exchange::Seen;
use super::report::{Facts, RecordingsReport, Statement};
use super::{answers, bodies, limits, lists, orders};
use crate::format::{Cassette, CustomerData};

/// The statements judged, in the order the report lists them.
const STATEMENTS: &[Statement] = &[
    answers::STATUS,
    answers::UNAUTHORIZED,
    answers::ERROR_ENVELOPE,
    lists::ENVELOPE,
    lists::PAGE_SIZE_MAXIMUM,
    lists::FILTERS_AND_SORTS,
    answers::CREATED,
    limits::HEADERS_SENT,
    limits::TOO_MANY,
];

/// Assumptions no recorded exchange can show, and why.
fn unseen(id: &str, redacted: bool) -> String {
    match id {
        "us-states" if redacted => {
            "the cassette's states are placeholders (customer data redacted): record with customer data kept to judge it".to_owned()
        }
        "webhook-signature" | "webhook-delivery" | "event-id-redelivery" => {
            "webhook deliveries never pass through the client or the proxy".to_owned()
        }
        "costs"
        | "cancellation"
        | "is-test"
        | "price-currency"
        | "product-types"
        | "offset-defaults"
        | "quantity-unbounded"
        | "address-required-fields" => {
            "the recordings check does not judge it (nothing in an answer contradicts it)"
                .to_owned()
        }
        "duplicate-variants" | "placement-tolerance" => {
            "judging it needs the store's catalog, which a cassette does not hold".to_owned()
        }
        _ => "no recorded exchange shows it".to_owned(),
    }
}

/// Judges every statement and assumption of the spec on the exchanges of `cassette`.
pub fn check(cassette: &Cassette) -> RecordingsReport {
    let all: Vec<Seen<'_>> = cassette
        .exchanges
        .iter()
        .enumerate()
        .map(|(index, exchange)| Seen::new(index, exchange))
        .collect();
    let mut facts = Facts::default();
    answers::check(&all, &mut facts);
    limits::check(&all, &mut facts);
    lists::check(&all, &mut facts);
    let redacted = cassette.customer_data != CustomerData::Kept;
    orders::check(&all, redacted, &mut facts);
    bodies::check(&all, &mut facts);
    facts.report(&cassette.api_version, all.len(), STATEMENTS, |id| {
        unseen(id, redacted)
    })
}
