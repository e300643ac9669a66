//! The shipping address, checked as it is built.

use store_api_raw::types;

use super::BuildError;
use store_api_rules::check_address;

/// Where the parcel goes: street, city, state or province, postal code and country.
///
/// The country must be an ISO 3166-1 alpha-2 code in upper case, and a US address must name one of the
/// 50 states or DC (by USPS code or full name): the rules the service applies, checked when the address is
/// made, by the validator's own code.
#[derive(Clone, Debug, PartialEq)]
pub struct ShipToAddress(types::AddressInput);

/// The lines of a postal address, by name: what [`ShipToAddress::new`] checks. `Default` leaves every
/// line empty (write the ones an address has).
///
/// ```
/// use store_api::{AddressLines, ShipToAddress};
/// let austin = ShipToAddress::new(AddressLines {
///     street_address: "1 Main St",
///     city_or_town: "Austin",
///     state_or_province: "TX",
///     postal_code: "78701",
///     country: "US",
/// })?;
/// # let _ = austin;
/// # Ok::<(), store_api::BuildError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddressLines<'a> {
    /// Street and number; not empty.
    pub street_address: &'a str,
    /// City or town; not empty.
    pub city_or_town: &'a str,
    /// State or province; for a US address a USPS code or a state's name (`TX`, `Texas`).
    pub state_or_province: &'a str,
    /// ZIP or postal code.
    pub postal_code: &'a str,
    /// ISO 3166-1 alpha-2 code, upper case (`US`, `DE`).
    pub country: &'a str,
}

impl ShipToAddress {
    /// The address `lines` name, checked.
    ///
    /// ```
    /// use store_api::{AddressLines, ShipToAddress};
    /// let berlin = ShipToAddress::new(AddressLines {
    ///     street_address: "Unter den Linden 1",
    ///     city_or_town: "Berlin",
    ///     postal_code: "10117",
    ///     country: "DE",
    ///     ..AddressLines::default()
    /// })?;
    /// let london = AddressLines {
    ///     street_address: "1 Main St",
    ///     city_or_town: "London",
    ///     postal_code: "SW1A 1AA",
    ///     country: "UK",
    ///     ..AddressLines::default()
    /// };
    /// let err = ShipToAddress::new(london).unwrap_err();
    /// assert_eq!(err.field(), "shippingAddress.address.country");
    /// let san_juan = AddressLines {
    ///     street_address: "1 Main St",
    ///     city_or_town: "San Juan",
    ///     state_or_province: "PR",
    ///     postal_code: "00901",
    ///     country: "US",
    /// };
    /// let err = ShipToAddress::new(san_juan).unwrap_err();
    /// assert_eq!(err.field(), "shippingAddress.address.stateOrProvince");
    /// # Ok::<(), store_api::BuildError>(())
    /// ```
    pub fn new(lines: AddressLines<'_>) -> Result<Self, BuildError> {
        let street = lines
            .street_address
            .parse()
            .map_err(|e| BuildError::at("shippingAddress.address.streetAddress", e))?;
        let city = lines
            .city_or_town
            .parse()
            .map_err(|e| BuildError::at("shippingAddress.address.cityOrTown", e))?;
        let country_code = lines
            .country
            .parse()
            .map_err(|e| BuildError::at("shippingAddress.address.country", e))?;
        let address = types::AddressInput::new(types::AddressInputRequired {
            city_or_town: city,
            country: country_code,
            state_or_province: lines.state_or_province.to_owned(),
            street_address: street,
            zip_or_postal_code: lines.postal_code.to_owned(),
        });
        let mut violations = Vec::new();
        check_address(&address, &mut violations);
        if violations.is_empty() {
            Ok(Self(address))
        } else {
            Err(BuildError::Invalid { violations })
        }
    }

    /// With an apartment, suite or floor line.
    pub fn apartment_or_suite(mut self, line: impl Into<String>) -> Self {
        self.0.apartment_or_suite = Some(line.into());
        self
    }
}

/// The recipient and their [`ShipToAddress`]: the order's `shippingAddress`.
#[derive(Clone, Debug, PartialEq)]
pub struct ShipTo(pub(crate) types::ShippingAddressInput);

impl ShipTo {
    /// `first_name last_name` at `address`; the last name must not be empty.
    pub fn new(
        first_name: &str,
        last_name: &str,
        address: ShipToAddress,
    ) -> Result<Self, BuildError> {
        let last_name = last_name
            .parse()
            .map_err(|e| BuildError::at("shippingAddress.lastName", e))?;
        Ok(Self(types::ShippingAddressInput::new(
            address.0,
            first_name.to_owned(),
            last_name,
        )))
    }

    /// With an email address for the carrier's notices.
    pub fn email(mut self, email: impl Into<String>) -> Self {
        self.0.email = Some(email.into());
        self
    }

    /// With a phone number for the carrier.
    pub fn phone(mut self, phone: impl Into<String>) -> Self {
        self.0.phone = Some(phone.into());
        self
    }

    /// The wire value.
    pub fn as_input(&self) -> &types::ShippingAddressInput {
        &self.0
    }
}
