//! Deviations: switches that make the emulator differ from the spec on one chosen assumption, so that a
//! check of the spec's assumptions (`store_api_conformance`, `store-api doctor`) can be shown to notice, and
//! a team can rehearse what a service that differs looks like. All are off by default; each is
//! implemented in the layer where the behaviour it changes lives.

/// One way the emulator can differ from the spec, set with
/// [`EmulatorBuilder::deviate`](crate::EmulatorBuilder::deviate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Deviation {
    /// `X-RateLimit-Reset` is the Unix time (seconds) when the bucket is full again, not the seconds
    /// until then (`server/auth`, where the headers are written).
    ResetAsUnixTime,
    /// A 401 for a known store carries no rate-limit headers (`server/auth`).
    NoRateLimitHeadersOn401,
    /// A page past the last one reports totals of zero instead of the collection's (`state/list`).
    PastEndPageWithoutTotals,
    /// A `limit` below the minimum is read as the default instead of refused (`state/list`).
    LimitBelowMinimumDefaulted,
    /// A declared request field sent as `null` is read as absent instead of refused (`server/body`,
    /// where request bodies are decoded).
    NullFieldsAsAbsent,
    /// A create-order request whose `externalOrderId` the store already has is answered 409 before its
    /// body is validated (`orders/creation`, called by the route before decoding).
    ConflictBeforeValidation,
    /// An empty `productVariantId`, `sku` or `catalogProductVariantId` of a line item is refused as a
    /// validation failure instead of counting as absent (`orders/creation`, after decoding, before the
    /// shared order rules, which stay as the client's pre-flight check runs them).
    EmptyIdsRefused,
    /// An order's shipping address is kept normalised (whitespace, a US state's name as its code, a
    /// phone's punctuation dropped, empty fields omitted) instead of as sent (`orders/creation`).
    NormalisesAddresses,
}

impl Deviation {
    /// Every deviation.
    pub const ALL: &'static [Deviation] = &[
        Deviation::ResetAsUnixTime,
        Deviation::NoRateLimitHeadersOn401,
        Deviation::PastEndPageWithoutTotals,
        Deviation::LimitBelowMinimumDefaulted,
        Deviation::NullFieldsAsAbsent,
        Deviation::ConflictBeforeValidation,
        Deviation::EmptyIdsRefused,
        Deviation::NormalisesAddresses,
    ];

    /// The id of the spec's assumption this deviation breaks (`store_api_raw::contract::ASSUMPTIONS`).
    pub fn assumption(self) -> &'static str {
        match self {
            Deviation::ResetAsUnixTime => "rate-limit-reset",
            Deviation::NoRateLimitHeadersOn401 => "rate-limit-headers",
            Deviation::PastEndPageWithoutTotals => "page-past-end",
            Deviation::LimitBelowMinimumDefaulted => "page-limit-minimum",
            Deviation::NullFieldsAsAbsent => "null-fields",
            Deviation::ConflictBeforeValidation => "create-order-check-order",
            Deviation::EmptyIdsRefused => "empty-ids",
            Deviation::NormalisesAddresses => "address-as-sent",
        }
    }

    /// The deviation that breaks the assumption with this id (each assumption has at most one), as
    /// `store-api emulator --deviate` names them.
    pub fn breaking(assumption: &str) -> Option<Deviation> {
        Deviation::ALL
            .iter()
            .copied()
            .find(|deviation| deviation.assumption() == assumption)
    }

    fn bit(self) -> u8 {
        match self {
            Deviation::ResetAsUnixTime => 1,
            Deviation::NoRateLimitHeadersOn401 => 2,
            Deviation::PastEndPageWithoutTotals => 4,
            Deviation::LimitBelowMinimumDefaulted => 8,
            Deviation::NullFieldsAsAbsent => 16,
            Deviation::ConflictBeforeValidation => 32,
            Deviation::EmptyIdsRefused => 64,
            Deviation::NormalisesAddresses => 128,
        }
    }
}

/// The deviations an emulator was started with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Deviations(u8);

impl Deviations {
    /// These and `deviation`.
    pub fn with(self, deviation: Deviation) -> Deviations {
        Deviations(self.0 | deviation.bit())
    }

    /// Whether `deviation` is on.
    pub fn has(self, deviation: Deviation) -> bool {
        self.0 & deviation.bit() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_deviation_is_its_own_switch_and_names_an_assumption_of_the_spec() {
        let all = Deviation::ALL
            .iter()
            .fold(Deviations::default(), |set, d| set.with(*d));
        for deviation in Deviation::ALL {
            let alone = Deviations::default().with(*deviation);
            assert!(alone.has(*deviation) && all.has(*deviation));
            assert_eq!(Deviation::ALL.iter().filter(|d| alone.has(**d)).count(), 1);
            assert!(
                store_api_raw::contract::assumption(deviation.assumption()).is_some(),
                "{deviation:?}"
            );
            assert_eq!(
                Deviation::breaking(deviation.assumption()),
                Some(*deviation)
            );
        }
    }
}
