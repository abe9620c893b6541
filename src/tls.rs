//! The one TLS crypto provider: rustls on *ring*, installed before any HTTPS client is
//! built (reqwest's model APIs and MCP servers, the OpenTelemetry exporter, Temporal's
//! tonic). One provider compiled instead of two, and *ring* builds in a fraction of
//! aws-lc's time (BENCHMARKS.md, "Build").

use std::sync::Once;

/// Makes *ring* the process's rustls provider; cheap after the first call. Every place that
/// builds an HTTP client calls it first (reqwest, built with no provider of its own,
/// refuses to build a client before one is installed).
pub fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Another part of the process may have installed one first: either serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A reqwest client builder, with the provider installed.
pub fn client_builder() -> reqwest::ClientBuilder {
    install();
    reqwest::Client::builder()
}

/// A default reqwest client (for loopback tools and tests).
///
/// # Panics
/// When the TLS configuration cannot be built, which a fixed provider rules out.
#[must_use]
pub fn client() -> reqwest::Client {
    client_builder()
        .build()
        .expect("a default HTTP client builds")
}

#[cfg(test)]
mod tests {
    #[test]
    fn clients_build_with_the_one_provider() {
        // Without an installed provider, reqwest (built with none of its own) panics here.
        let client = super::client_builder().https_only(true).build();
        assert!(client.is_ok(), "{client:?}");
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
