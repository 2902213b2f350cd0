//! The client that reaches one APIService's service, as kube-aggregator's `BuildTransportConfig` configures it:
//! TLS with the front-proxy client certificate, the server verified against `spec.caBundle` (the system roots
//! without one) under the name `<service>.<namespace>.svc`, or not verified at all with
//! `insecureSkipTLSVerify`. Connections are pooled per APIService; HTTP/1.1, which upgrades need.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use hyper_rustls::{FixedServerNameResolver, HttpsConnector};
use hyper_util::client::legacy::{Client, connect::HttpConnector};
use hyper_util::rt::TokioExecutor;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime, pem::PemObject};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::apiservice::ApiService;
use crate::tls::FrontProxy;

/// A boxed error of a streamed body.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// The body of a request sent to a backend.
pub(crate) type ProxyBody = UnsyncBoxBody<Bytes, BoxError>;

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
    client: Client<HttpsConnector<HttpConnector>, ProxyBody>,
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
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        // Go's dialer gives up after 30 s.
        http.set_connect_timeout(Some(Duration::from_secs(30)));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .with_server_name_resolver(FixedServerNameResolver::new(name))
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(https);
        Ok(Self { client })
    }

    /// The pooled client.
    pub(crate) fn client(&self) -> &Client<HttpsConnector<HttpConnector>, ProxyBody> {
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

/// `insecureSkipTLSVerify`: any certificate is accepted (signatures of the handshake are still checked).
#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A transport error as Go's `net/http` words the common ones (`dial tcp <addr>: connect: connection refused`),
/// the error chain otherwise: what kube-aggregator's 503 answers and `FailedDiscoveryCheck` messages carry.
pub(crate) fn describe(err: &(dyn std::error::Error + 'static), addr: &str) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    let mut chain = Vec::new();
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return format!("dial tcp {addr}: connect: connection refused");
                }
                std::io::ErrorKind::TimedOut => return format!("dial tcp {addr}: i/o timeout"),
                _ => {}
            }
        }
        let text = e.to_string();
        if !text.is_empty() && chain.last() != Some(&text) {
            chain.push(text);
        }
        source = e.source();
    }
    chain.join(": ")
}
