//! The TLS set-up that HTTPS needs before any `reqwest::Client` is built.
//!
//! The `rustls` feature builds reqwest with `rustls-no-provider` and rustls with the `ring` provider,
//! instead of reqwest's own `rustls` feature, which brings aws-lc-rs (a large C library that needs cmake
//! and minutes of build time). reqwest then takes the process-wide default provider when it builds a
//! client, and panics if there is none, so this crate installs ring as that default first: from
//! `store-api`'s `ClientBuilder::build`. A program that builds its own `reqwest::Client` in the same
//! process (with reqwest's `default-features = false`) calls [`install_crypto_provider`] first.

/// Installs rustls' `ring` provider as the process-wide default, unless a provider is installed already
/// (the program's own choice wins). Safe to call any number of times, from any thread. Does nothing
/// without the `rustls` feature.
pub fn install_crypto_provider() {
    #[cfg(feature = "rustls")]
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race with another thread installing one is fine: a provider is installed either way.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// The TLS implementation compiled in, if any: `Some("rustls")`, `Some("native-tls")` or `None` (plain
/// HTTP only).
pub const fn backend() -> Option<&'static str> {
    if cfg!(feature = "rustls") {
        Some("rustls")
    } else if cfg!(feature = "native-tls") {
        Some("native-tls")
    } else {
        None
    }
}
