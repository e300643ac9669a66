//! Open enumerations: the value sets the Store API may grow within version 2026-08.
//!
//! typify would generate closed enums, so one unknown value (a new decoration method, a new order status)
//! would fail the whole response. `cargo xtask codegen` replaces each schema the spec writes as an open
//! enumeration (an `anyOf` of its known values and any string) with the type here (`with_replacement`),
//! generated with the spec's values: a
//! known value decodes into its variant, any other string into `Unknown(String)`, and every value
//! re-encodes to exactly the string it came from.

pub use crate::contract::open_enums::*;

// `FulfillmentStatus::LADDER`, `rung()` and its `PartialOrd` are generated from the spec's `x-ladder`.

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_round_trip_through_their_wire_names() {
        for method in DecorationMethod::KNOWN {
            let json = serde_json::to_string(method).unwrap();
            assert_eq!(json, format!("\"{}\"", method.as_str()));
            assert_eq!(
                &serde_json::from_str::<DecorationMethod>(&json).unwrap(),
                method
            );
        }
    }

    #[test]
    fn unknown_values_are_kept_verbatim() {
        let status: OrderStatus = serde_json::from_str("\"awaiting_artwork\"").unwrap();
        assert_eq!(status, OrderStatus::Unknown("awaiting_artwork".into()));
        assert!(!status.is_known());
        assert_eq!(
            serde_json::to_string(&status).unwrap(),
            "\"awaiting_artwork\""
        );
    }

    #[test]
    fn the_ladder_is_ordered() {
        assert_eq!(FulfillmentStatus::Pending.rung(), Some(0));
        assert_eq!(FulfillmentStatus::Fulfilled.rung(), Some(4));
        assert_eq!(FulfillmentStatus::from("lost_in_space").rung(), None);
        assert!(FulfillmentStatus::Pending < FulfillmentStatus::InProduction);
        assert!(FulfillmentStatus::Fulfilled > FulfillmentStatus::SentToProduction);
        let unknown = FulfillmentStatus::from("lost_in_space");
        assert_eq!(unknown.partial_cmp(&FulfillmentStatus::Pending), None);
        assert_eq!(
            unknown.partial_cmp(&unknown.clone()),
            Some(std::cmp::Ordering::Equal)
        );
    }
}
