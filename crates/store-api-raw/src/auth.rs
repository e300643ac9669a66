//! The API key on a request: the one header the built requests ([`crate::requests`]) leave to
//! whoever sends them.

use http::header::{HeaderMap, HeaderName, HeaderValue};

use crate::key::ApiKey;

/// Name of the header that carries the API key.
pub const API_KEY_HEADER: &str = "x-api-key";

/// Puts `api_key` in the `X-API-Key` header of `headers` (replacing any), marked sensitive so HTTP
/// debug output hides it. A key that cannot be a header value is refused without being echoed.
///
/// ```
/// use store_api_raw::{ApiKey, auth, requests};
///
/// let mut request = requests::get_status("https://api.example/store-api/2026-08", "store_1")?;
/// auth::set_api_key(&mut request.headers, &ApiKey::new("csk_0123456789abcdef0123456789abcdef"))?;
/// assert!(request.headers[auth::API_KEY_HEADER].is_sensitive());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn set_api_key(headers: &mut HeaderMap, api_key: &ApiKey) -> Result<(), InvalidApiKey> {
    let mut key = HeaderValue::from_str(api_key.expose_secret()).map_err(|_| InvalidApiKey)?;
    key.set_sensitive(true);
    headers.insert(HeaderName::from_static(API_KEY_HEADER), key);
    Ok(())
}

/// An API key with characters that cannot be sent in an HTTP header (the key itself is not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidApiKey;

impl std::fmt::Display for InvalidApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the API key contains characters that cannot be sent in an HTTP header")
    }
}

impl std::error::Error for InvalidApiKey {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_sensitive_and_a_bad_one_is_not_echoed() {
        let mut headers = HeaderMap::new();
        set_api_key(&mut headers, &ApiKey::new("csk_old")).unwrap();
        set_api_key(&mut headers, &ApiKey::new("csk_new")).unwrap();
        assert_eq!(headers[API_KEY_HEADER], "csk_new");
        assert!(headers[API_KEY_HEADER].is_sensitive());
        let error = set_api_key(&mut headers, &ApiKey::new("csk_bad\nkey")).unwrap_err();
        assert!(!format!("{error} {error:?}").contains("csk_bad"));
    }
}
