//! Choosing the address to connect to from a host's resolved addresses.

use std::net::SocketAddr;

use store_api_rules::artwork_url::{UrlViolation, is_public_ip};

/// The address to download from, given every address the host resolved to.
///
/// No address is [`UrlViolation::Unresolvable`]. If ANY address is not public the whole host is
/// [`UrlViolation::PrivateAddress`]: a host that also resolves to a private address could be served
/// from it on another attempt, so picking only its public addresses would not be safe. Otherwise the
/// first address is chosen, and the download connects to it alone, so a second, rebinding DNS
/// answer cannot slip in between this check and the connection.
///
/// ```
/// use std::net::SocketAddr;
/// use store_api_fixtures::artwork::{choose_address, UrlViolation};
///
/// let public: SocketAddr = "93.184.216.34:443".parse().unwrap();
/// let loopback: SocketAddr = "127.0.0.1:443".parse().unwrap();
/// assert_eq!(choose_address(&[public]), Ok(public));
/// assert_eq!(choose_address(&[public, loopback]), Err(UrlViolation::PrivateAddress));
/// assert_eq!(choose_address(&[]), Err(UrlViolation::Unresolvable));
/// ```
pub fn choose_address(addrs: &[SocketAddr]) -> Result<SocketAddr, UrlViolation> {
    let first = addrs.first().ok_or(UrlViolation::Unresolvable)?;
    if addrs.iter().all(|addr| is_public_ip(addr.ip())) {
        Ok(*first)
    } else {
        Err(UrlViolation::PrivateAddress)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn check(addrs: &[&str], expected: Result<&str, UrlViolation>) {
        let addrs: Vec<SocketAddr> = addrs.iter().map(|a| a.parse().unwrap()).collect();
        let expected = expected.map(|a| a.parse::<SocketAddr>().unwrap());
        assert_eq!(choose_address(&addrs), expected, "addresses {addrs:?}");
    }

    #[test]
    fn every_resolved_address_is_checked() {
        use UrlViolation::*;
        let cases: &[(&[&str], Result<&str, UrlViolation>)] = &[
            (&[], Err(Unresolvable)),
            (&["93.184.216.34:443"], Ok("93.184.216.34:443")),
            (
                &["93.184.216.34:443", "[2606:2800:220:1::248]:443"],
                Ok("93.184.216.34:443"),
            ),
            (
                &["[2606:2800:220:1::248]:443", "93.184.216.34:443"],
                Ok("[2606:2800:220:1::248]:443"),
            ),
            (&["127.0.0.1:443"], Err(PrivateAddress)),
            (&["[::1]:443"], Err(PrivateAddress)),
            // A private address anywhere in the answer refuses the host, first or last.
            (&["10.0.0.1:443", "93.184.216.34:443"], Err(PrivateAddress)),
            (&["93.184.216.34:443", "10.0.0.1:443"], Err(PrivateAddress)),
            (
                &["93.184.216.34:443", "8.8.8.8:443", "[fd00::1]:443"],
                Err(PrivateAddress),
            ),
            (
                &["93.184.216.34:443", "[::ffff:192.168.0.1]:443"],
                Err(PrivateAddress),
            ),
            (&["169.254.169.254:443"], Err(PrivateAddress)),
        ];
        for (addrs, expected) in cases {
            check(addrs, expected.clone());
        }
    }
}
