//! Body-validation rules of the shipping address that the spec cannot express: a real country code,
//! and for the US an existing state. (Its required, non-empty text is checked by the generated rules.)

use store_api_raw::types;

use super::countries::{is_country_code, is_us_state};
use super::{Violation, ViolationKind};

/// The wire path of the address's country.
const COUNTRY_PATH: &str = "shippingAddress.address.country";

/// Appends the shipping address's violations of the rules the spec cannot express to `out`, after the
/// generated rules' findings, in the wire's field order.
///
/// `country` must be an officially assigned ISO 3166-1 alpha-2 code in upper case (`us`, `UK`, `XK` are
/// refused); a code of the wrong length, already reported by the schema's bounds, is not reported twice.
/// When it is `US`, `stateOrProvince` must be one of the 50 states or DC, by USPS code or full name,
/// ignoring case ([`is_us_state`]). Other countries' states are not checked and may be empty.
/// `store_api::Address` runs this same check when an address is made.
pub fn check_address(address: &types::AddressInput, out: &mut Vec<Violation>) {
    let country: &str = &address.country;
    if country == "US" && !is_us_state(&address.state_or_province) {
        out.push(Violation::new(
            ViolationKind::UnknownUsState,
            "shippingAddress.address.stateOrProvince",
            address.state_or_province.as_str(),
        ));
    }
    let reported = out
        .iter()
        .any(|v| v.kind == ViolationKind::InvalidCountry && v.path == COUNTRY_PATH);
    if !reported && !is_country_code(country) {
        out.push(Violation::new(
            ViolationKind::InvalidCountry,
            COUNTRY_PATH,
            country,
        ));
    }
}
