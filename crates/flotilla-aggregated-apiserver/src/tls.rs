//! The TLS side of the server: the serving identity, HTTP/2 and HTTP/1.1 by ALPN, and a client certificate
//! *requested* but not required, as Go's `tls.RequestClientCert` that every Kubernetes API server uses.
//!
//! The handshake proves only that the client holds the key of the certificate it presents; whether that
//! certificate is a trusted front proxy's is decided per request ([`crate::authn`]) against the CA the control
//! plane publishes at that moment, so a rotated CA needs no new TLS configuration, and a certificate that is
//! not trusted is answered 401 instead of failing the handshake.

use std::sync::Arc;

use flotilla_webhook::TlsIdentity;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};

use crate::Error;

/// The server's rustls configuration for `identity`.
///
/// # Errors
/// [`Error::Identity`] when the PEMs do not parse, [`Error::Tls`] when rustls refuses them.
pub(crate) fn server_config(identity: &TlsIdentity) -> Result<Arc<rustls::ServerConfig>, Error> {
    // Read again from its files as they change, when it came from files (`--aggregated-apiserver-cert-dir`).
    let resolver = identity.resolver().map_err(Error::Identity)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(RequestClientCertificate {
        algorithms: provider.signature_verification_algorithms,
    });
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(Error::Tls)?
        .with_client_cert_verifier(verifier)
        .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Asks for a client certificate, accepts any (or none), and checks the handshake signatures made with it.
#[derive(Debug)]
struct RequestClientCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ClientCertVerifier for RequestClientCertificate {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        // No hints: a Go client skips its certificate when hints are given and none matches.
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        // Trust is decided per request against the current request-header CA (see the module docs).
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
