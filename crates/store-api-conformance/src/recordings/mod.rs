//! The recorded evidence: every statement a recording can show and every assumption of the spec,
//! judged on the exchanges of a cassette, held, differs (with the exchange that shows it) or not
//! checked.
//!
//! Unlike the probe, which sends only `GET`s, a recording holds what a team's own code sent: orders
//! created, refused and retried. So it shows what a read-only probe cannot: how a create-order request
//! is validated and in which order, `null` fields, empty ids, the body size limit. Every detector is
//! precise: a recording of a service that behaves as the spec says (the emulator by default) is
//! reported held or not checked throughout, never differs. One file per group of facts; [`recordings`]
//! walks the exchanges through each.

mod answers;
mod bodies;
mod exchange;
mod facts;
mod limits;
mod lists;
mod orders;

use store_api_cassette::{Cassette, CustomerData};

use self::exchange::Seen;
use self::facts::Facts;
use crate::report::{Evidence, Finding, Report};
use crate::statements::{
    ERROR_ENVELOPE, FILTERS_AND_SORTS, LIST_ENVELOPE, ORDER_CREATED, PAGE_SIZE_MAXIMUM,
    RATE_LIMIT_HEADERS_SENT, STATUS, Statement, TOO_MANY_REQUESTS, UNAUTHORIZED,
};

/// The statements judged, in the order the report lists them.
const STATEMENTS: &[Statement] = &[
    STATUS,
    UNAUTHORIZED,
    ERROR_ENVELOPE,
    LIST_ENVELOPE,
    PAGE_SIZE_MAXIMUM,
    FILTERS_AND_SORTS,
    ORDER_CREATED,
    RATE_LIMIT_HEADERS_SENT,
    TOO_MANY_REQUESTS,
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

/// Judges every statement a recording can show and every assumption of the spec on the exchanges of
/// `cassette`. Sends nothing.
///
/// ```
/// use store_api_cassette::{Cassette, CustomerData};
/// use store_api_conformance::{Evidence, recordings};
///
/// let report = recordings(&Cassette::new(CustomerData::Redacted));
/// assert_eq!(report.differing().count(), 0);
/// assert!(matches!(report.evidence, Evidence::Recordings { exchanges: 0, .. }));
/// println!("{report}");
/// ```
pub fn recordings(cassette: &Cassette) -> Report {
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
    let stated = STATEMENTS
        .iter()
        .map(|statement| Finding {
            id: statement.id,
            says: statement.says,
            verdict: facts.verdict(statement.id, || unseen(statement.id, redacted)),
        })
        .collect();
    let evidence = Evidence::Recordings {
        api_version: cassette.api_version.clone(),
        exchanges: all.len(),
    };
    Report::new(evidence, stated, |assumption| {
        facts.verdict(assumption.id, || unseen(assumption.id, redacted))
    })
}

#[cfg(test)]
mod tests;
