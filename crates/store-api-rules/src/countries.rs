//! Reference tables for address validation: ISO 3166-1 alpha-2 country codes and the US states.

/// Every officially assigned ISO 3166-1 alpha-2 code (249 codes), upper case, sorted.
///
/// User-assigned codes (`AA`, `QM`..`QZ`, `XA`..`XZ`, `ZZ`), exceptionally reserved codes (`UK`, `EU`, ...)
/// and transitional codes are not in the list, so the validator refuses them.
pub const ISO_3166_ALPHA2: [&str; 249] = [
    "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN",
    "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE",
    "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE", "GF",
    "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK", "HM",
    "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM",
    "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC",
    "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK",
    "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA",
    "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG",
    "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU", "RW",
    "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS",
    "ST", "SV", "SX", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO",
    "TR", "TT", "TV", "TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI",
    "VN", "VU", "WF", "WS", "YE", "YT", "ZA", "ZM", "ZW",
];

/// The 50 US states and the District of Columbia: `(USPS code, name)`, sorted by code.
///
/// Territories (`PR`, `GU`, `VI`, ...) are not states; they have their own ISO country codes.
pub const US_STATES: [(&str, &str); 51] = [
    ("AK", "Alaska"),
    ("AL", "Alabama"),
    ("AR", "Arkansas"),
    ("AZ", "Arizona"),
    ("CA", "California"),
    ("CO", "Colorado"),
    ("CT", "Connecticut"),
    ("DC", "District of Columbia"),
    ("DE", "Delaware"),
    ("FL", "Florida"),
    ("GA", "Georgia"),
    ("HI", "Hawaii"),
    ("IA", "Iowa"),
    ("ID", "Idaho"),
    ("IL", "Illinois"),
    ("IN", "Indiana"),
    ("KS", "Kansas"),
    ("KY", "Kentucky"),
    ("LA", "Louisiana"),
    ("MA", "Massachusetts"),
    ("MD", "Maryland"),
    ("ME", "Maine"),
    ("MI", "Michigan"),
    ("MN", "Minnesota"),
    ("MO", "Missouri"),
    ("MS", "Mississippi"),
    ("MT", "Montana"),
    ("NC", "North Carolina"),
    ("ND", "North Dakota"),
    ("NE", "Nebraska"),
    ("NH", "New Hampshire"),
    ("NJ", "New Jersey"),
    ("NM", "New Mexico"),
    ("NV", "Nevada"),
    ("NY", "New York"),
    ("OH", "Ohio"),
    ("OK", "Oklahoma"),
    ("OR", "Oregon"),
    ("PA", "Pennsylvania"),
    ("RI", "Rhode Island"),
    ("SC", "South Carolina"),
    ("SD", "South Dakota"),
    ("TN", "Tennessee"),
    ("TX", "Texas"),
    ("UT", "Utah"),
    ("VA", "Virginia"),
    ("VT", "Vermont"),
    ("WA", "Washington"),
    ("WI", "Wisconsin"),
    ("WV", "West Virginia"),
    ("WY", "Wyoming"),
];

/// Whether `code` is an officially assigned ISO 3166-1 alpha-2 code, written in upper case.
pub fn is_country_code(code: &str) -> bool {
    ISO_3166_ALPHA2.binary_search(&code).is_ok()
}

/// Whether `state` names one of the 50 US states or the District of Columbia, by its two-letter USPS code
/// or its full name, ignoring ASCII case (`CA`, `ca`, `California` and `CALIFORNIA` all match).
///
/// Surrounding whitespace is not trimmed: `" CA"` does not match.
pub fn is_us_state(state: &str) -> bool {
    us_state_code(state).is_some()
}

/// The USPS code of the US state (or DC) that `state` names by code or full name, ignoring ASCII case:
/// `Some("TX")` for `tx`, `TX`, `Texas` and `TEXAS`. What a service that normalises addresses would keep.
pub fn us_state_code(state: &str) -> Option<&'static str> {
    // A two-letter input can only be a code: one probe of the sorted codes instead of a scan.
    if let &[first, second] = state.as_bytes() {
        let code = [first.to_ascii_uppercase(), second.to_ascii_uppercase()];
        return US_STATES
            .binary_search_by(|(known, _)| known.as_bytes().cmp(&code[..]))
            .ok()
            .map(|at| US_STATES[at].0);
    }
    US_STATES
        .iter()
        .find(|(_, name)| name.eq_ignore_ascii_case(state))
        .map(|(code, _)| *code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn country_table_is_sorted_and_unique_so_binary_search_works() {
        assert!(ISO_3166_ALPHA2.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(
            ISO_3166_ALPHA2
                .iter()
                .all(|code| code.len() == 2 && code.bytes().all(|b| b.is_ascii_uppercase()))
        );
    }

    #[test]
    fn assigned_codes_pass_and_others_fail() {
        for code in ["US", "DE", "GB", "AX", "SS", "SX", "ZW", "AD"] {
            assert!(is_country_code(code), "{code}");
        }
        // Lower case, user-assigned, exceptionally reserved, withdrawn, wrong length.
        for code in [
            "us", "Us", "AA", "ZZ", "XK", "QM", "UK", "EU", "AN", "YU", "USA", "U", "",
        ] {
            assert!(!is_country_code(code), "{code}");
        }
    }

    #[test]
    fn us_states_by_code_or_name_ignoring_case() {
        assert_eq!(US_STATES.len(), 51);
        assert!(US_STATES.windows(2).all(|pair| pair[0].0 < pair[1].0));
        assert!(US_STATES.iter().all(|(_, name)| name.len() > 2));
        for state in [
            "CA",
            "ca",
            "California",
            "cALIFORNIA",
            "DC",
            "District of Columbia",
            "WY",
            "new york",
        ] {
            assert!(is_us_state(state), "{state}");
        }
        for state in [
            "PR",
            "Puerto Rico",
            "GU",
            "XX",
            "",
            " CA",
            "Calif",
            "NewYork",
        ] {
            assert!(!is_us_state(state), "{state}");
        }
    }
}
