//! The client that reaches one APIService's service, as kube-aggregator's `BuildTransportConfig` configures it:
//! TLS with the front-proxy client certificate, the server verified against `spec.caBundle` (the system roots
//! without one) under the name `<service>.<namespace>.svc`, or not verified at all with
//! `insecureSkipTLSVerify`. Connections are pooled per APIService; HTTP/1.1, which upgrades need.

use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, pem::PemObject};

use super::apiservice::ApiService;
use crate::tls::FrontProxy;
use crate::upstream::{BackendClient, NoVerification, https_client};

/// Why an APIService's client cannot be built (kube-aggregator answers its requests with 500 and this text).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TransportError {
    /// The APIService has no service.
    #[error("the APIService has no service")]
    Local,
    /// `caBundle` is not base64.
    #[error("{0}")]
    CaBundleEncoding(String),
    /// Both a CA bundle and `insecureSkipTLSVerify`, which Go's transport refuses.
    #[error("specifying a root certificates file with the insecure flag is not allowed")]
    InsecureWithCa,
    /// `caBundle` holds no certificate.
    #[error("unable to load root certificates: unable to parse bytes as PEM block")]
    CaBundle,
    /// The server name is not a valid DNS name.
    #[error("invalid server name {0:?}")]
    ServerName(String),
    /// rustls refused the client certificate or the settings.
    #[error("failed to build the TLS configuration: {0}")]
    Tls(String),
}

/// A pooled HTTPS client for one APIService's service.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    client: BackendClient,
}

impl Transport {
    /// The client for `spec`, presenting `front_proxy`'s certificate.
    ///
    /// # Errors
    /// The reasons of [`TransportError`].
    pub(crate) fn build(
        spec: &ApiService,
        front_proxy: &FrontProxy,
    ) -> Result<Self, TransportError> {
        let server_name = spec.server_name().ok_or(TransportError::Local)?;
        let ca = spec
            .ca_bundle
            .clone()
            .map_err(TransportError::CaBundleEncoding)?;
        let tls = tls_config(&ca, spec.insecure, front_proxy)?;
        let name = ServerName::try_from(server_name.clone())
            .map_err(|_| TransportError::ServerName(server_name))?;
        let client = https_client(tls, Some(name));
        Ok(Self { client })
    }

    /// The pooled client.
    pub(crate) fn client(&self) -> &BackendClient {
        &self.client
    }
}

fn tls_config(
    ca: &[u8],
    insecure: bool,
    front_proxy: &FrontProxy,
) -> Result<rustls::ClientConfig, TransportError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TransportError::Tls(e.to_string()))?;
    let builder = if insecure {
        if !ca.is_empty() {
            return Err(TransportError::InsecureWithCa);
        }
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
    } else {
        builder.with_root_certificates(roots(ca)?)
    };
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(front_proxy.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|e| TransportError::Tls(e.to_string()))?;
    let key = PrivateKeyDer::from_pem_slice(front_proxy.key_pem.as_bytes())
        .map_err(|e| TransportError::Tls(e.to_string()))?;
    builder
        .with_client_auth_cert(chain, key)
        .map_err(|e| TransportError::Tls(e.to_string()))
}

/// The CA bundle's certificates, or the system's roots for an empty bundle (as Go's transport does).
fn roots(ca: &[u8]) -> Result<RootCertStore, TransportError> {
    let mut roots = RootCertStore::empty();
    if ca.is_empty() {
        for cert in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(cert);
        }
        return Ok(roots);
    }
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(ca)
        .filter_map(Result::ok)
        .collect();
    if certs.is_empty() {
        return Err(TransportError::CaBundle);
    }
    for cert in certs {
        roots
            .add(cert)
            .map_err(|e| TransportError::Tls(e.to_string()))?;
    }
    Ok(roots)
}
