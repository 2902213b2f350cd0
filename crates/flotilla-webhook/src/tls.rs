//! Serving certificates: PEM files or in-memory PEMs turned into a rustls server config, and a self-signed CA
//! with a serving certificate for tests and `flotilla up --webhook-example`. A certificate read from files is
//! served from those files as they change (`flotilla_serving::certificate`).

use std::path::Path;
use std::sync::Arc;

use flotilla_serving::certificate::{self, Files, Reloading};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::Error;

/// A serving certificate chain and its private key, both PEM.
#[derive(Clone, PartialEq, Eq)]
pub struct TlsIdentity {
    /// The certificate chain, leaf first.
    pub cert_pem: Vec<u8>,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key_pem: Vec<u8>,
    /// The files the PEMs were read from, which a server follows as they change.
    files: Option<Files>,
}

impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key stays out of logs.
        f.debug_struct("TlsIdentity")
            .field("cert_pem", &String::from_utf8_lossy(&self.cert_pem))
            .finish_non_exhaustive()
    }
}

impl TlsIdentity {
    /// Reads the certificate and key PEM files.
    pub fn from_files(cert: &Path, key: &Path) -> Result<Self, Error> {
        let read = |path: &Path| {
            std::fs::read(path).map_err(|source| Error::ReadFile {
                path: path.to_owned(),
                source,
            })
        };
        Ok(TlsIdentity {
            cert_pem: read(cert)?,
            key_pem: read(key)?,
            files: Some(Files {
                cert: cert.to_owned(),
                key: key.to_owned(),
            }),
        })
    }

    /// The certificate chain (leaf first) and the private key, parsed from their PEMs.
    pub fn parse(&self) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), Error> {
        let chain = CertificateDer::pem_slice_iter(&self.cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(Error::Certificate)?;
        if chain.is_empty() {
            return Err(Error::NoCertificate);
        }
        let key = PrivateKeyDer::from_pem_slice(&self.key_pem).map_err(Error::PrivateKey)?;
        Ok((chain, key))
    }

    /// What serves this identity in a TLS handshake: read from its files again whenever they change (every
    /// [`certificate::POLL`]) when it came from files, else these PEMs. Must be called within a Tokio runtime.
    pub fn resolver(&self) -> Result<Arc<Reloading>, Error> {
        match &self.files {
            Some(files) => Reloading::watch(files.clone(), certificate::POLL),
            None => Reloading::from_pem(&self.cert_pem, &self.key_pem),
        }
        .map_err(Error::Serving)
    }

    /// A rustls server config (ring provider, HTTP/1.1 ALPN) serving this identity (see [`Self::resolver`]).
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, Error> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(Error::Tls)?
            .with_no_client_auth()
            .with_cert_resolver(self.resolver()?);
        // Karmada's client negotiates HTTP/2 for localhost URLs when offered; the server speaks HTTP/1.1 only.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

/// A self-signed CA and a serving certificate it signed.
#[derive(Clone, Debug)]
pub struct SelfSigned {
    /// The CA certificate, PEM: what a webhook configuration's `caBundle` holds.
    pub ca_pem: Vec<u8>,
    /// The serving certificate and key.
    pub identity: TlsIdentity,
}

impl SelfSigned {
    /// The `caBundle` for a webhook configuration (the CA certificate PEM).
    pub fn ca_bundle(&self) -> &[u8] {
        &self.ca_pem
    }
}

/// Generates a CA and a serving certificate for `hosts` (DNS names or IP addresses), valid from now on.
pub fn generate_self_signed(hosts: &[&str]) -> Result<SelfSigned, Error> {
    let mut ca_params =
        CertificateParams::new(Vec::<String>::new()).map_err(Error::GenerateCertificate)?;
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "flotilla webhook CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_key = KeyPair::generate().map_err(Error::GenerateCertificate)?;
    let ca_cert = ca_params
        .self_signed(&ca_key)
        .map_err(Error::GenerateCertificate)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let names: Vec<String> = hosts.iter().map(|host| (*host).to_owned()).collect();
    let mut leaf_params = CertificateParams::new(names).map_err(Error::GenerateCertificate)?;
    leaf_params.distinguished_name.push(
        DnType::CommonName,
        hosts.first().copied().unwrap_or("webhook"),
    );
    leaf_params.use_authority_key_identifier_extension = true;
    let leaf_key = KeyPair::generate().map_err(Error::GenerateCertificate)?;
    let leaf = leaf_params
        .signed_by(&leaf_key, &issuer)
        .map_err(Error::GenerateCertificate)?;
    Ok(SelfSigned {
        ca_pem: ca_cert.pem().into_bytes(),
        identity: TlsIdentity {
            cert_pem: leaf.pem().into_bytes(),
            key_pem: leaf_key.serialize_pem().into_bytes(),
            files: None,
        },
    })
}
