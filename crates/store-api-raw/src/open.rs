//! Open enumerations: the value sets the Store API may grow within version 2026-08.
//!
//! typify would generate closed enums, so one unknown value (a new decoration method, a new order status)
//! would fail the whole response. `cargo xtask codegen` replaces each of these schemas with the type
//! here (`with_replacement`): a known value decodes into its variant, any other string into
//! `Unknown(String)`, and every value re-encodes to exactly the string it came from.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Defines an open string enum with its wire names, `Unknown(String)` fallback and string conversions.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $wire:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this version of the SDK does not know; kept verbatim.
            Unknown(String),
        }

        impl $name {
            /// Every value known to this SDK, in the specification's order.
            pub const KNOWN: &'static [$name] = &[ $( $name::$variant, )+ ];

            /// The wire form of the value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )+
                    $name::Unknown(other) => other.as_str(),
                }
            }

            /// Whether this value is one the SDK knows (not `Unknown`).
            pub fn is_known(&self) -> bool {
                !matches!(self, $name::Unknown(_))
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                match value {
                    $( $wire => $name::$variant, )+
                    other => $name::Unknown(other.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                match $name::from(value.as_str()) {
                    $name::Unknown(_) => $name::Unknown(value),
                    known => known,
                }
            }
        }

        impl FromStr for $name {
            type Err = std::convert::Infallible;

            fn from_str(value: &str) -> Result<Self, Self::Err> {
                Ok($name::from(value))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer).map($name::from)
            }
        }
    };
}

open_enum! {
    /// How a design is applied to a blank. New methods can appear without a new API version.
    DecorationMethod {
        /// Direct to garment.
        DirectToGarment => "direct_to_garment",
        /// Direct to film.
        DirectToFilm => "direct_to_film",
        /// Screen printing.
        ScreenPrinting => "screen_printing",
        /// Screen print transfer.
        ScreenPrintTransfer => "screen_print_transfer",
        /// Heat transfer vinyl.
        HeatTransferVinyl => "heat_transfer_vinyl",
        /// Heat seal patch.
        HeatSealPatch => "heat_seal_patch",
        /// Sewn-on patch.
        SewnOnPatch => "sewn_on_patch",
        /// Embroidery.
        Embroidery => "embroidery",
        /// Engraving.
        Engraving => "engraving",
        /// UV printing.
        UvPrinting => "uv_printing",
        /// Liquid 3D.
        Liquid3d => "liquid_3d",
    }
}

open_enum! {
    /// Status of a product. Only active and unlisted products can be ordered.
    ProductStatus {
        /// Published and for sale.
        Active => "active",
        /// Being built in the app; not orderable.
        Draft => "draft",
        /// Hidden from listings, reachable by direct link; orderable.
        Unlisted => "unlisted",
        /// Retired; not orderable.
        Archived => "archived",
    }
}

open_enum! {
    /// Status of an order: usually the fulfillment stage, but also interruptions (hold, cancellation).
    OrderStatus {
        /// Received, not yet moving.
        Pending => "pending",
        /// Queued, waiting to be sent to production.
        ProductionRequested => "production_requested",
        /// Handed to the production system.
        SentToProduction => "sent_to_production",
        /// Being printed and packed.
        InProduction => "in_production",
        /// Paused in the app; the fulfillment status keeps its stage.
        OnHold => "on_hold",
        /// A cancellation awaits a decision.
        CancellationRequested => "cancellation_requested",
        /// Canceled; processing stops.
        Canceled => "canceled",
        /// Shipped.
        Fulfilled => "fulfilled",
    }
}

open_enum! {
    /// The production ladder of an order; it only moves forward.
    FulfillmentStatus {
        /// Received, not yet moving.
        Pending => "pending",
        /// Queued, waiting to be sent.
        ProductionRequested => "production_requested",
        /// Handed to the production system.
        SentToProduction => "sent_to_production",
        /// Being printed and packed.
        InProduction => "in_production",
        /// Shipped; tracking info and fulfilledAt are set.
        Fulfilled => "fulfilled",
    }
}

open_enum! {
    /// What the store owes the provider for an order (not the customer's payment).
    PaymentStatus {
        /// Invoiced, unpaid.
        Due => "due",
        /// Settled.
        Paid => "paid",
        /// A payment attempt failed.
        Failed => "failed",
        /// Refunded to the merchant.
        Refunded => "refunded",
        /// Invoice canceled, usually with the order.
        Canceled => "canceled",
    }
}

open_enum! {
    /// The event name of a webhook event. Receivers ignore topics they do not know.
    WebhookTopic {
        /// A product was created.
        ProductsCreate => "products_create",
        /// A product changed.
        ProductsUpdate => "products_update",
        /// A product was deleted.
        ProductsDelete => "products_delete",
        /// An order was created.
        OrdersCreate => "orders_create",
        /// An order changed.
        OrdersUpdate => "orders_update",
    }
}

impl FulfillmentStatus {
    /// Position on the production ladder (0 = pending … 4 = fulfilled); `None` for an unknown value.
    pub fn rung(&self) -> Option<usize> {
        Self::KNOWN.iter().position(|known| known == self)
    }
}

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
    }
}
