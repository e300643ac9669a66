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

impl ShipToAddress {
    /// An address in `country`, in the order written on an envelope.
    ///
    /// ```
    /// use store_api::ShipToAddress;
    /// let berlin = ShipToAddress::new("Unter den Linden 1", "Berlin", "", "10117", "DE")?;
    /// let err = ShipToAddress::new("1 Main St", "London", "", "SW1A 1AA", "UK").unwrap_err();
    /// assert_eq!(err.field(), "shippingAddress.address.country");
    /// # Ok::<(), store_api::BuildError>(())
    /// ```
    pub fn new(
        street_address: &str,
        city_or_town: &str,
        state_or_province: &str,
        postal_code: &str,
        country: &str,
    ) -> Result<Self, BuildError> {
        let street = street_address
            .parse()
            .map_err(|e| BuildError::at("shippingAddress.address.streetAddress", e))?;
        let city = city_or_town
            .parse()
            .map_err(|e| BuildError::at("shippingAddress.address.cityOrTown", e))?;
        let country_code = country
            .parse()
            .map_err(|e| BuildError::at("shippingAddress.address.country", e))?;
        let address = types::AddressInput::new(
            city,
            country_code,
            state_or_province.to_owned(),
            street,
            postal_code.to_owned(),
        );
        let mut violations = Vec::new();
        check_address(&address, &mut violations);
        if violations.is_empty() {
            Ok(Self(address))
        } else {
            Err(BuildError::Invalid { violations })
        }
    }

    /// A US address; `state` is a USPS code or a state's name (`TX`, `Texas`).
    ///
    /// ```
    /// use store_api::ShipToAddress;
    /// assert!(ShipToAddress::us("1 Main St", "Austin", "TX", "78701").is_ok());
    /// let err = ShipToAddress::us("1 Main St", "San Juan", "PR", "00901").unwrap_err();
    /// assert_eq!(err.field(), "shippingAddress.address.stateOrProvince");
    /// ```
    pub fn us(
        street_address: &str,
        city: &str,
        state: &str,
        zip: &str,
    ) -> Result<Self, BuildError> {
        Self::new(street_address, city, state, zip, "US")
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
