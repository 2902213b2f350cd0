//! Serving certificates for the HTTPS servers tests stand up (admission webhooks, aggregated backends): a CA of
//! the test's own and a serving certificate it signed, as a rustls config and the CA PEM a client trusts; and
//! the certificate requests of clients that ask an API server's signer for a certificate.

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// What a test server serves and what its clients trust.
pub struct Serving {
    /// The CA certificate, PEM (a webhook configuration's `caBundle`, an APIService's `caBundle`).
    pub ca_pem: String,
    /// The server side: the certificate for the hosts asked for, offering HTTP/2 and HTTP/1.1.
    pub config: Arc<rustls::ServerConfig>,
}

/// A fresh CA and a serving certificate for `hosts` (DNS names or IP addresses).
pub fn serving(hosts: &[&str]) -> Serving {
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_key = KeyPair::generate().expect("CA key");
    let ca_pem = ca.self_signed(&ca_key).expect("CA certificate").pem();
    let issuer = Issuer::new(ca, ca_key);
    let names = hosts.iter().map(|h| (*h).to_string()).collect::<Vec<_>>();
    let key = KeyPair::generate().expect("serving key");
    let leaf = CertificateParams::new(names)
        .expect("serving parameters")
        .signed_by(&key, &issuer)
        .expect("serving certificate");
    let chain = vec![CertificateDer::from(leaf.der().to_vec())];
    let key =
        PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).expect("serving key PEM");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("serving config");
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Serving {
        ca_pem,
        config: Arc::new(config),
    }
}

/// A fresh key and a PEM certificate request for common name `cn` in organizations `orgs`.
pub fn certificate_request(cn: &str, orgs: &[&str]) -> (KeyPair, String) {
    let key = KeyPair::generate().expect("request key");
    let mut params = CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    for org in orgs {
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, *org);
    }
    let request = params.serialize_request(&key).expect("certificate request");
    (key, request.pem().expect("certificate request PEM"))
}
