//! Artwork URL rules: the checks `POST /artworks` applies to `image.url` that need no network.
//!
//! [`check_url`] refuses what the service refuses before it downloads anything: a URL that cannot be
//! parsed, a scheme other than HTTPS, embedded credentials, and a host written as a literal IP address
//! that is not public. Host *names* (even `localhost`) pass here: whether they resolve, and to what,
//! is decided by the downloader, which checks every resolved address with [`is_public_ip`].
//!
//! ```
//! use store_api_rules::artwork_url::{check_url, UrlViolation};
//!
//! assert!(check_url("https://cdn.example.com/art.png").is_ok());
//! assert_eq!(check_url("http://cdn.example.com/art.png"), Err(UrlViolation::NotHttps));
//! assert_eq!(check_url("https://127.1/art.png"), Err(UrlViolation::PrivateAddress));
//! assert_eq!(
//!     UrlViolation::Credentials.to_string(),
//!     "The URL must not carry credentials"
//! );
//! ```

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// Why the service refuses an artwork URL. `Display` is the service's exact 400 message.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlViolation {
    /// The text cannot be parsed as an absolute URL with a host.
    #[error("The URL is not a valid URL")]
    InvalidUrl,
    /// The scheme is not `https`.
    #[error("The URL must use HTTPS")]
    NotHttps,
    /// A username or password is embedded in the URL.
    #[error("The URL must not carry credentials")]
    Credentials,
    /// The host name did not resolve to any address (found by the downloader, never by [`check_url`]).
    #[error("The URL host could not be resolved")]
    Unresolvable,
    /// The host is, or resolves to, a private, loopback or otherwise reserved address.
    #[error("The URL must not point to a private address")]
    PrivateAddress,
    /// The download failed, timed out, was too large, was redirected, or was not PNG/JPEG
    /// (found by the downloader, never by [`check_url`]).
    #[error("Could not download the artwork image from the URL")]
    DownloadFailed,
}

impl UrlViolation {
    /// Every violation, in the order the service checks them.
    pub const ALL: [UrlViolation; 6] = [
        UrlViolation::InvalidUrl,
        UrlViolation::NotHttps,
        UrlViolation::Credentials,
        UrlViolation::Unresolvable,
        UrlViolation::PrivateAddress,
        UrlViolation::DownloadFailed,
    ];

    /// The service's exact 400 message for this violation.
    pub fn message(&self) -> &'static str {
        match self {
            UrlViolation::InvalidUrl => "The URL is not a valid URL",
            UrlViolation::NotHttps => "The URL must use HTTPS",
            UrlViolation::Credentials => "The URL must not carry credentials",
            UrlViolation::Unresolvable => "The URL host could not be resolved",
            UrlViolation::PrivateAddress => "The URL must not point to a private address",
            UrlViolation::DownloadFailed => "Could not download the artwork image from the URL",
        }
    }

    /// The violation whose message is exactly `message`, for reading a service 400 back into a type.
    pub fn from_message(message: &str) -> Option<UrlViolation> {
        UrlViolation::ALL
            .into_iter()
            .find(|violation| violation.message() == message)
    }
}

/// Checks an artwork URL without any I/O and returns it parsed.
///
/// Order (the first failing rule wins): [`UrlViolation::InvalidUrl`], [`UrlViolation::NotHttps`],
/// [`UrlViolation::Credentials`], [`UrlViolation::PrivateAddress`] (literal IP hosts only, including
/// the decimal, hex and octal IPv4 forms the URL parser normalizes, e.g. `https://0x7f000001/`).
///
/// Stricter than a browser on purpose, so that what passes here means the same to every parser:
/// leading/trailing whitespace or control characters, and an `https:` URL without exactly `//`
/// before a non-empty authority (`https:///path`, `https:host`), are [`UrlViolation::InvalidUrl`],
/// although WHATWG parsing would silently repair them. A parsable URL of another scheme (including
/// `data:` and `mailto:`) is [`UrlViolation::NotHttps`].
pub fn check_url(raw: &str) -> Result<Url, UrlViolation> {
    if raw.chars().any(|c| c.is_control()) || raw.trim() != raw {
        return Err(UrlViolation::InvalidUrl);
    }
    let url = Url::parse(raw).map_err(|_| UrlViolation::InvalidUrl)?;
    if url.scheme() != "https" {
        return Err(UrlViolation::NotHttps);
    }
    let authority = raw_authority(raw).ok_or(UrlViolation::InvalidUrl)?;
    let host = url.host().ok_or(UrlViolation::InvalidUrl)?;
    // An '@' in the authority is userinfo even when empty (`https://@host/`, `https://:@host/`),
    // which the parser drops silently; refuse it like any other credentials.
    if !url.username().is_empty() || url.password().is_some() || authority.contains('@') {
        return Err(UrlViolation::Credentials);
    }
    let literal_ip = match host {
        Host::Domain(_) => None,
        Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
    };
    if let Some(ip) = literal_ip
        && !is_public_ip(ip)
    {
        return Err(UrlViolation::PrivateAddress);
    }
    Ok(url)
}

/// The authority text of a raw `scheme://authority/...` URL, or `None` when the `//` is missing or
/// the authority is empty.
fn raw_authority(raw: &str) -> Option<&str> {
    let (_scheme, rest) = raw.split_once(':')?;
    let after_slashes = rest.strip_prefix("//")?;
    let end = after_slashes
        .find(['/', '\\', '?', '#'])
        .unwrap_or(after_slashes.len());
    let authority = &after_slashes[..end];
    (!authority.is_empty()).then_some(authority)
}

/// Whether `ip` is a publicly routable unicast address, the only kind an artwork may be fetched from.
///
/// The ranges are written out here because `IpAddr::is_global` is not stable. Where an IPv6 address
/// embeds an IPv4 one (IPv4-mapped `::ffff:0:0/96`, IPv4-compatible `::/96`, NAT64 `64:ff9b::/96`,
/// 6to4 `2002::/16`), the embedded address decides. Other IPv6 addresses are public only inside
/// global unicast `2000::/3`, minus its special-purpose blocks.
pub fn is_public_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_ipv4(v4),
        IpAddr::V6(v6) => is_public_ipv6(v6),
    }
}

/// IPv4 blocks that are not publicly routable unicast (IANA special-purpose registry, RFC 6890 and
/// successors), as (network, prefix length).
const NON_PUBLIC_IPV4: [(Ipv4Addr, u8); 16] = [
    (Ipv4Addr::new(0, 0, 0, 0), 8), // "this network", includes unspecified
    (Ipv4Addr::new(10, 0, 0, 0), 8), // private
    (Ipv4Addr::new(100, 64, 0, 0), 10), // shared address space (carrier-grade NAT)
    (Ipv4Addr::new(127, 0, 0, 0), 8), // loopback
    (Ipv4Addr::new(169, 254, 0, 0), 16), // link-local
    (Ipv4Addr::new(172, 16, 0, 0), 12), // private
    (Ipv4Addr::new(192, 0, 0, 0), 24), // IETF protocol assignments (whole block, conservatively)
    (Ipv4Addr::new(192, 0, 2, 0), 24), // documentation TEST-NET-1
    (Ipv4Addr::new(192, 88, 99, 0), 24), // deprecated 6to4 relay anycast
    (Ipv4Addr::new(192, 168, 0, 0), 16), // private
    (Ipv4Addr::new(198, 18, 0, 0), 15), // benchmarking
    (Ipv4Addr::new(198, 51, 100, 0), 24), // documentation TEST-NET-2
    (Ipv4Addr::new(203, 0, 113, 0), 24), // documentation TEST-NET-3
    (Ipv4Addr::new(224, 0, 0, 0), 4), // multicast
    (Ipv4Addr::new(240, 0, 0, 0), 4), // reserved for future use
    (Ipv4Addr::new(255, 255, 255, 255), 32), // limited broadcast (inside 240/4; listed for clarity)
];

fn is_public_ipv4(ip: Ipv4Addr) -> bool {
    let bits = u32::from(ip);
    !NON_PUBLIC_IPV4.iter().any(|&(network, prefix)| {
        let mask = u32::MAX << (32 - u32::from(prefix));
        bits & mask == u32::from(network) & mask
    })
}

/// Special-purpose blocks inside global unicast `2000::/3` that are not publicly routable.
const NON_PUBLIC_IPV6_IN_GLOBAL_UNICAST: [(Ipv6Addr, u8); 3] = [
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23), // IETF protocol assignments (Teredo, ORCHID, benchmarking ...)
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32), // documentation
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20), // documentation (RFC 9637)
];

fn is_public_ipv6(ip: Ipv6Addr) -> bool {
    let bits = u128::from(ip);
    let in_block = |network: Ipv6Addr, prefix: u8| {
        let mask = u128::MAX << (128 - u32::from(prefix));
        bits & mask == u128::from(network) & mask
    };
    let embedded_v4_low = Ipv4Addr::from((bits & 0xffff_ffff) as u32);

    // IPv4-mapped ::ffff:0:0/96 and IPv4-compatible ::/96 (the latter holds :: and ::1, whose
    // embedded 0.0.0.0 and 0.0.0.1 are in 0/8, so they are refused too).
    if in_block(Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96)
        || in_block(Ipv6Addr::UNSPECIFIED, 96)
    {
        return is_public_ipv4(embedded_v4_low);
    }
    // NAT64 well-known prefix: the gateway forwards to the embedded IPv4 address.
    if in_block(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        return is_public_ipv4(embedded_v4_low);
    }
    // 6to4: the IPv4 address of the site is bits 16..48.
    if in_block(Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
        let embedded = Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32);
        return is_public_ipv4(embedded);
    }
    // Everything outside global unicast is unicast-reserved, ULA fc00::/7, link-local fe80::/10,
    // site-local fec0::/10, multicast ff00::/8, discard 100::/64, local NAT64 64:ff9b:1::/48 ...
    if !in_block(Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3) {
        return false;
    }
    !NON_PUBLIC_IPV6_IN_GLOBAL_UNICAST
        .iter()
        .any(|&(network, prefix)| in_block(network, prefix))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn check(raw: &str, expected: Result<&str, UrlViolation>) {
        let actual = check_url(raw);
        match expected {
            Ok(serialized) => {
                assert_eq!(
                    actual.as_ref().map(Url::as_str),
                    Ok(serialized),
                    "input {raw:?}"
                );
            }
            Err(violation) => assert_eq!(actual, Err(violation), "input {raw:?}"),
        }
    }

    #[test]
    fn url_rules_table() {
        use UrlViolation::*;
        let cases: &[(&str, Result<&str, UrlViolation>)] = &[
            // Accepted.
            (
                "https://cdn.example.com/a.png",
                Ok("https://cdn.example.com/a.png"),
            ),
            ("HTTPS://EXAMPLE.COM/a.png", Ok("https://example.com/a.png")),
            (
                "https://example.com:8443/x/y.jpg?v=2#frag",
                Ok("https://example.com:8443/x/y.jpg?v=2#frag"),
            ),
            ("https://localhost/x.png", Ok("https://localhost/x.png")),
            ("https://8.8.8.8/a.png", Ok("https://8.8.8.8/a.png")),
            (
                "https://[2606:4700:4700::1111]/a.png",
                Ok("https://[2606:4700:4700::1111]/a.png"),
            ),
            (
                "https://example.com/my art.png",
                Ok("https://example.com/my%20art.png"),
            ),
            // Not parsable, or no authority.
            ("", Err(InvalidUrl)),
            ("not a url", Err(InvalidUrl)),
            ("example.com/a.png", Err(InvalidUrl)),
            ("https://", Err(InvalidUrl)),
            ("https:///path", Err(InvalidUrl)),
            ("https:example.com/a.png", Err(InvalidUrl)),
            ("https:\\\\example.com/a.png", Err(InvalidUrl)),
            ("https://exa mple.com/a.png", Err(InvalidUrl)),
            (" https://example.com/a.png", Err(InvalidUrl)),
            ("https://example.com/a.png\n", Err(InvalidUrl)),
            ("https://exam\tple.com/a.png", Err(InvalidUrl)),
            ("https://[::1/a.png", Err(InvalidUrl)),
            ("https://example.com:99999/a.png", Err(InvalidUrl)),
            ("http://", Err(InvalidUrl)),
            // Other schemes.
            ("http://example.com/a.png", Err(NotHttps)),
            ("ftp://example.com/a.png", Err(NotHttps)),
            ("file:///etc/passwd", Err(NotHttps)),
            ("data:image/png;base64,iVBORw0KGgo=", Err(NotHttps)),
            ("httpss://example.com/a.png", Err(NotHttps)),
            // Scheme is checked before credentials and addresses.
            ("http://user:pw@127.0.0.1/a.png", Err(NotHttps)),
            // Credentials.
            ("https://user@host/", Err(Credentials)),
            ("https://:pw@host/", Err(Credentials)),
            ("https://user:pw@example.com/a.png", Err(Credentials)),
            ("https://@example.com/a.png", Err(Credentials)),
            ("https://:@example.com/a.png", Err(Credentials)),
            // Credentials are checked before the address.
            ("https://user@10.0.0.1/a.png", Err(Credentials)),
            // Literal non-public addresses, in every form the parser normalizes.
            ("https://127.0.0.1/a.png", Err(PrivateAddress)),
            ("https://127.1/", Err(PrivateAddress)),
            ("https://0x7f000001/", Err(PrivateAddress)),
            ("https://2130706433/", Err(PrivateAddress)),
            ("https://0177.0.0.1/", Err(PrivateAddress)),
            ("https://0/", Err(PrivateAddress)),
            ("https://10.0.0.1/a.png", Err(PrivateAddress)),
            ("https://192.168.1.1:8443/a.png", Err(PrivateAddress)),
            (
                "https://169.254.169.254/latest/meta-data",
                Err(PrivateAddress),
            ),
            ("https://[::1]/", Err(PrivateAddress)),
            ("https://[::]/", Err(PrivateAddress)),
            ("https://[::ffff:10.0.0.1]/", Err(PrivateAddress)),
            ("https://[::ffff:127.0.0.1]/", Err(PrivateAddress)),
            ("https://[fd00::1]/", Err(PrivateAddress)),
            ("https://[fe80::1]/", Err(PrivateAddress)),
            ("https://[2001:db8::1]/", Err(PrivateAddress)),
        ];
        for (raw, expected) in cases {
            check(raw, expected.clone());
        }
    }

    fn check_ip(ip: &str, public: bool) {
        let parsed: IpAddr = ip.parse().unwrap();
        assert_eq!(is_public_ip(parsed), public, "address {ip}");
    }

    #[test]
    fn ipv4_ranges_table() {
        let cases: &[(&str, bool)] = &[
            ("8.8.8.8", true),
            ("1.1.1.1", true),
            ("93.184.216.34", true),
            ("9.255.255.255", true),
            ("11.0.0.0", true),
            ("100.63.255.255", true),
            ("100.128.0.0", true),
            ("126.255.255.255", true),
            ("128.0.0.0", true),
            ("172.15.255.255", true),
            ("172.32.0.0", true),
            ("192.0.1.1", true),
            ("192.167.255.255", true),
            ("192.169.0.0", true),
            ("198.17.255.255", true),
            ("198.20.0.0", true),
            ("223.255.255.255", true),
            ("0.0.0.0", false),
            ("0.1.2.3", false),
            ("10.0.0.1", false),
            ("10.255.255.255", false),
            ("100.64.0.1", false),
            ("100.127.255.255", false),
            ("127.0.0.1", false),
            ("127.255.255.254", false),
            ("169.254.169.254", false),
            ("172.16.0.1", false),
            ("172.31.255.255", false),
            ("192.0.0.8", false),
            ("192.0.2.1", false),
            ("192.88.99.1", false),
            ("192.168.0.1", false),
            ("198.18.0.1", false),
            ("198.19.255.255", false),
            ("198.51.100.7", false),
            ("203.0.113.9", false),
            ("224.0.0.1", false),
            ("239.255.255.255", false),
            ("240.0.0.1", false),
            ("255.255.255.255", false),
        ];
        for &(ip, public) in cases {
            check_ip(ip, public);
        }
    }

    #[test]
    fn ipv6_ranges_table() {
        let cases: &[(&str, bool)] = &[
            ("2606:4700:4700::1111", true),
            ("2a00:1450:4001:80b::200e", true),
            ("2001:4860:4860::8888", true),
            ("::ffff:8.8.8.8", true),
            ("::8.8.8.8", true),
            ("64:ff9b::808:808", true),
            ("2002:808:808::1", true),
            ("::", false),
            ("::1", false),
            ("::ffff:10.0.0.1", false),
            ("::ffff:127.0.0.1", false),
            ("::ffff:169.254.169.254", false),
            ("::10.0.0.1", false),
            ("64:ff9b::7f00:1", false),
            ("64:ff9b::a00:1", false),
            ("64:ff9b:1::1", false),
            ("2002:a00:1::1", false),
            ("2002:7f00:1::", false),
            ("100::1", false),
            ("2001::1", false),
            ("2001:2::1", false),
            ("2001:db8::1", false),
            ("2001:db8:ffff::1", false),
            ("3fff::1", false),
            ("3fff:fff::1", false),
            ("5f00::1", false),
            ("fc00::1", false),
            ("fd12:3456::1", false),
            ("fe80::1", false),
            ("febf::1", false),
            ("fec0::1", false),
            ("ff02::1", false),
            ("ff0e::1", false),
        ];
        for &(ip, public) in cases {
            check_ip(ip, public);
        }
    }

    #[test]
    fn messages_are_the_service_text_and_round_trip() {
        let expected = [
            (UrlViolation::InvalidUrl, "The URL is not a valid URL"),
            (UrlViolation::NotHttps, "The URL must use HTTPS"),
            (
                UrlViolation::Credentials,
                "The URL must not carry credentials",
            ),
            (
                UrlViolation::Unresolvable,
                "The URL host could not be resolved",
            ),
            (
                UrlViolation::PrivateAddress,
                "The URL must not point to a private address",
            ),
            (
                UrlViolation::DownloadFailed,
                "Could not download the artwork image from the URL",
            ),
        ];
        for (violation, message) in expected {
            assert_eq!(violation.message(), message);
            assert_eq!(violation.to_string(), message);
            assert_eq!(UrlViolation::from_message(message), Some(violation));
        }
        assert_eq!(UrlViolation::from_message("The URL must use https"), None);
    }
}
