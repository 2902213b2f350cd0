//! The SDK's error type: setting up TLS and listening. Request-level failures are not errors here; they become
//! `Errored` responses (`successful: false` with a status code and message), as in Karmada's Go SDK.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Everything starting a webhook server can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A certificate or key file could not be read.
    #[error("failed to read {path}")]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The certificate PEM holds no certificate.
    #[error("no PEM certificate found in the serving certificate")]
    NoCertificate,
    /// The key PEM holds no private key, or a malformed one.
    #[error("failed to read a PEM private key from the serving key")]
    PrivateKey(#[source] rustls::pki_types::pem::Error),
    /// The certificate PEM is malformed.
    #[error("failed to read the PEM serving certificate")]
    Certificate(#[source] rustls::pki_types::pem::Error),
    /// rustls refused the certificate and key (e.g. they do not match).
    #[error("failed to build the TLS server configuration")]
    Tls(#[source] rustls::Error),
    /// The serving certificate is unusable (the file it came from is named).
    #[error("failed to use the serving certificate")]
    Serving(#[source] flotilla_serving::certificate::Error),
    /// Generating a self-signed certificate failed.
    #[error("failed to generate a self-signed certificate")]
    GenerateCertificate(#[source] rcgen::Error),
    /// The listen address could not be bound.
    #[error("failed to listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The bound address could not be read back.
    #[error("failed to read the listening address")]
    LocalAddr(#[source] std::io::Error),
}
