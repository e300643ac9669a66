//! Body-validation rules of the shipping address: required text present, a real country code, and for
//! the US an existing state.

use store_api_raw::types;

use super::countries::{is_country_code, is_us_state};
use super::{Violation, ViolationKind};

/// Appends the shipping address's field violations to `out`, in the wire's field order.
///
/// `lastName`, `streetAddress` and `cityOrTown` must not be empty. The generated types already refuse an
/// empty value when they are built or decoded, so these checks only matter if the spec's bounds change;
/// they cost nothing and keep the validator's verdict independent of how the request was built.
///
/// `country` must be an officially assigned ISO 3166-1 alpha-2 code in upper case (`us`, `UK`, `XK` are
/// refused). When it is `US`, `stateOrProvince` must be one of the 50 states or DC, by USPS code or full
/// name, ignoring case ([`is_us_state`]). Other countries' states are not checked and may be empty.
pub(crate) fn check_shipping_address(
    shipping: &types::ShippingAddressInput,
    out: &mut Vec<Violation>,
) {
    let address = &shipping.address;
    let required_text: [(&str, &str); 3] = [
        ("shippingAddress.lastName", &shipping.last_name),
        (
            "shippingAddress.address.streetAddress",
            &address.street_address,
        ),
        ("shippingAddress.address.cityOrTown", &address.city_or_town),
    ];
    for (path, value) in required_text {
        if value.is_empty() {
            out.push(Violation::new(ViolationKind::EmptyString, path, ""));
        }
    }

    let country: &str = &address.country;
    if country == "US" && !is_us_state(&address.state_or_province) {
        out.push(Violation::new(
            ViolationKind::UnknownUsState,
            "shippingAddress.address.stateOrProvince",
            address.state_or_province.as_str(),
        ));
    }
    if !is_country_code(country) {
        out.push(Violation::new(
            ViolationKind::InvalidCountry,
            "shippingAddress.address.country",
            country,
        ));
    }
}
