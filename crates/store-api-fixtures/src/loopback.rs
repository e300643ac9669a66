//! What counts as this machine: the emulator's control plane and its webhook deliveries stay on loopback
//! unless the user opens them explicitly (`allow_remote`, `allow_remote_webhooks`).

use std::net::IpAddr;

/// Whether a `Host` header (`name[:port]`, `[v6]:port`) names a loopback host: `localhost` or a loopback
/// IP literal. Any other name could resolve anywhere (DNS rebinding points a public name at 127.0.0.1, so
/// a web page's request would carry that public name), so only these pass. The emulator's control plane
/// and the `store-api proxy` command admit requests by this one rule.
///
/// ```
/// use store_api_fixtures::is_loopback_host;
/// assert!(is_loopback_host("127.0.0.1:8080") && is_loopback_host("[::1]:80"));
/// assert!(!is_loopback_host("attacker.example:8080") && !is_loopback_host("127.0.0.1.nip.io"));
/// ```
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        // `[::1]:8080`
        rest.split_once(']')
            .map(|(name, _)| name)
            .unwrap_or_default()
    } else if host.matches(':').count() == 1 {
        host.split(':').next().unwrap_or_default()
    } else {
        host
    };
    is_loopback_name(name)
}

/// Whether a URL's host is `localhost` or a loopback IP literal.
pub(crate) fn is_loopback_url(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => is_loopback_name(name),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

fn is_loopback_name(name: &str) -> bool {
    let name = name.trim_end_matches('.');
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        for host in [
            "127.0.0.1",
            "127.0.0.1:8080",
            "127.1.2.3:1",
            "localhost",
            "LOCALHOST:80",
            "localhost.:80",
            "[::1]:9000",
            "::1",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "",
            "example.com",
            "127.0.0.1.nip.io:80",
            "localhost.example.com",
            "10.0.0.1:80",
            "0.0.0.0:8080",
            "[2001:db8::1]:80",
            "[::1",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn urls() {
        let loopback = |u: &str| is_loopback_url(&url::Url::parse(u).unwrap());
        assert!(loopback("http://127.0.0.1:9/x"));
        assert!(loopback("https://localhost/hook"));
        assert!(loopback("http://[::1]:80/"));
        assert!(!loopback("http://192.168.1.10/hook"));
        assert!(!loopback("https://example.com/hook"));
        assert!(!loopback("http://127.0.0.1.nip.io/hook"));
    }
}
