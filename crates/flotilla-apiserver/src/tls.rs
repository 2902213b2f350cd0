//! Certificates the server generates into its data dir and the rustls server config.
//!
//! A self-signed CA (`ca.crt`, `ca.key`) and a serving leaf it signs (`serving.crt`, `serving.key`) with
//! SANs for localhost, the loopback addresses, the in-cluster names and any configured host. Existing
//! files are reused so kubeconfigs stay valid across restarts; the leaf is re-issued when its SANs change.
//!
//! And, as kubeadm gives kube-apiserver, a front-proxy CA (`front-proxy-ca.crt`, `front-proxy-ca.key`) with its
//! client certificate (`front-proxy-client.crt`, `front-proxy-client.key`, CN `front-proxy-client`), which the
//! aggregator presents to aggregated API servers; they trust it through the published
//! `kube-system/extension-apiserver-authentication` ConfigMap.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::ServerConfig;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};

/// Errors while preparing certificates.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A certificate or key could not be generated.
    #[error("failed to generate {what}")]
    Generate {
        /// Which artefact.
        what: &'static str,
        /// Cause.
        #[source]
        source: rcgen::Error,
    },
    /// A file could not be read or written.
    #[error("failed to access {path}")]
    Io {
        /// File.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// A PEM file could not be parsed.
    #[error("failed to parse {path}")]
    Pem {
        /// File.
        path: PathBuf,
    },
    /// rustls refused the certificate or key.
    #[error("failed to build the TLS configuration")]
    Rustls(#[source] rustls::Error),
}

/// The CA and serving material in PEM form.
pub struct Certs {
    /// CA certificate PEM (goes into kubeconfigs and SA token secrets).
    pub ca_pem: String,
    /// Serving leaf certificate PEM.
    pub cert_pem: String,
    /// Serving leaf key PEM.
    pub key_pem: String,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TlsError + '_ {
    move |source| TlsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn write_private(path: &Path, content: &str) -> Result<(), TlsError> {
    std::fs::write(path, content).map_err(io_err(path))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(io_err(path))?;
    }
    Ok(())
}

/// The front-proxy client certificate's common name, the one name aggregated API servers allow.
pub const FRONT_PROXY_CLIENT: &str = "front-proxy-client";

/// The front-proxy CA and client certificate in PEM form.
#[derive(Debug, Clone)]
pub struct FrontProxy {
    /// The front-proxy CA certificate (`requestheader-client-ca-file`).
    pub ca_pem: String,
    /// The client certificate, CN [`FRONT_PROXY_CLIENT`].
    pub cert_pem: String,
    /// Its private key.
    pub key_pem: String,
}

fn ca_params(common_name: &str) -> CertificateParams {
    let mut params = CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params
}

/// The SANs the serving certificate carries.
pub fn sans(extra_hosts: &[String]) -> Vec<String> {
    let mut v: Vec<String> = [
        "localhost",
        "127.0.0.1",
        "::1",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for h in extra_hosts {
        if !v.contains(h) {
            v.push(h.clone());
        }
    }
    v
}

/// Loads the CA `<name>.crt`/`<name>.key` from `dir`, generating it (with CN `common_name`) when missing.
fn load_or_create_ca(
    dir: &Path,
    name: &str,
    common_name: &str,
) -> Result<(String, KeyPair), TlsError> {
    let ca_crt = dir.join(format!("{name}.crt"));
    let ca_key = dir.join(format!("{name}.key"));
    if ca_crt.exists() && ca_key.exists() {
        let pem = std::fs::read_to_string(&ca_crt).map_err(io_err(&ca_crt))?;
        let key_pem = std::fs::read_to_string(&ca_key).map_err(io_err(&ca_key))?;
        let key = KeyPair::from_pem(&key_pem).map_err(|_| TlsError::Pem {
            path: ca_key.clone(),
        })?;
        return Ok((pem, key));
    }
    let key = KeyPair::generate().map_err(|source| TlsError::Generate {
        what: "CA key",
        source,
    })?;
    let cert = ca_params(common_name)
        .self_signed(&key)
        .map_err(|source| TlsError::Generate {
            what: "CA certificate",
            source,
        })?;
    write_private(&ca_key, &key.serialize_pem())?;
    std::fs::write(&ca_crt, cert.pem()).map_err(io_err(&ca_crt))?;
    Ok((cert.pem(), key))
}

/// Loads the front-proxy CA and client certificate from `dir`, generating them once.
pub fn ensure_front_proxy(dir: &Path) -> Result<FrontProxy, TlsError> {
    let (ca_pem, ca_key) = load_or_create_ca(dir, "front-proxy-ca", "front-proxy-ca")?;
    let crt = dir.join("front-proxy-client.crt");
    let key = dir.join("front-proxy-client.key");
    if crt.exists() && key.exists() {
        return Ok(FrontProxy {
            ca_pem,
            cert_pem: std::fs::read_to_string(&crt).map_err(io_err(&crt))?,
            key_pem: std::fs::read_to_string(&key).map_err(io_err(&key))?,
        });
    }
    let issuer = Issuer::new(ca_params("front-proxy-ca"), ca_key);
    let (cert_pem, key_pem) = issue_leaf(
        CertificateParams::default(),
        FRONT_PROXY_CLIENT,
        ExtendedKeyUsagePurpose::ClientAuth,
        &issuer,
        "front-proxy client certificate",
    )?;
    write_private(&key, &key_pem)?;
    std::fs::write(&crt, &cert_pem).map_err(io_err(&crt))?;
    Ok(FrontProxy {
        ca_pem,
        cert_pem,
        key_pem,
    })
}

/// A leaf certificate with `params`' names, CN `common_name` and the one extended usage `usage`, signed by
/// `issuer`, and its new key, both PEM.
fn issue_leaf(
    mut params: CertificateParams,
    common_name: &str,
    usage: ExtendedKeyUsagePurpose,
    issuer: &Issuer<'_, KeyPair>,
    what: &'static str,
) -> Result<(String, String), TlsError> {
    let key = KeyPair::generate().map_err(|source| TlsError::Generate { what, source })?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![usage];
    params.use_authority_key_identifier_extension = true;
    let cert = params
        .signed_by(&key, issuer)
        .map_err(|source| TlsError::Generate { what, source })?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// The cluster CA of `dir` as an issuer of certificates (the CSR signer's), creating it when missing.
///
/// # Errors
/// As [`ensure`].
pub fn ca_issuer(dir: &Path) -> Result<Issuer<'static, KeyPair>, TlsError> {
    let (_, key) = load_or_create_ca(dir, "ca", "flotilla-ca")?;
    Ok(Issuer::new(ca_params("flotilla-ca"), key))
}

/// Loads the certificates from `dir`, generating whatever is missing or stale.
pub fn ensure(dir: &Path, extra_hosts: &[String]) -> Result<Certs, TlsError> {
    let (ca_pem, ca_key_pair) = load_or_create_ca(dir, "ca", "flotilla-ca")?;
    let wanted = sans(extra_hosts);
    let leaf_crt = dir.join("serving.crt");
    let leaf_key = dir.join("serving.key");
    let sans_file = dir.join("serving.sans");
    let recorded = std::fs::read_to_string(&sans_file).unwrap_or_default();
    if leaf_crt.exists() && leaf_key.exists() && recorded == wanted.join(",") {
        let cert_pem = std::fs::read_to_string(&leaf_crt).map_err(io_err(&leaf_crt))?;
        let key_pem = std::fs::read_to_string(&leaf_key).map_err(io_err(&leaf_key))?;
        return Ok(Certs {
            ca_pem,
            cert_pem,
            key_pem,
        });
    }
    let issuer = Issuer::new(ca_params("flotilla-ca"), ca_key_pair);
    let params = CertificateParams::new(wanted.clone()).map_err(|source| TlsError::Generate {
        what: "serving certificate parameters",
        source,
    })?;
    let (cert_pem, key_pem) = issue_leaf(
        params,
        "flotilla-apiserver",
        ExtendedKeyUsagePurpose::ServerAuth,
        &issuer,
        "serving certificate",
    )?;
    write_private(&leaf_key, &key_pem)?;
    std::fs::write(&leaf_crt, &cert_pem).map_err(io_err(&leaf_crt))?;
    std::fs::write(&sans_file, wanted.join(",")).map_err(io_err(&sans_file))?;
    Ok(Certs {
        ca_pem,
        cert_pem,
        key_pem,
    })
}

/// A rustls server configuration (TLS 1.2 and 1.3) for the serving certificate, offering HTTP/2 and HTTP/1.1 by
/// ALPN as kube-apiserver does (client-go speaks HTTP/2 whenever the server offers it), and taking client
/// certificates issued by the cluster CA.
pub fn server_config(certs: &Certs) -> Result<Arc<ServerConfig>, TlsError> {
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(certs.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|_| TlsError::Pem {
                path: PathBuf::from("serving.crt"),
            })?;
    let key =
        PrivateKeyDer::from_pem_slice(certs.key_pem.as_bytes()).map_err(|_| TlsError::Pem {
            path: PathBuf::from("serving.key"),
        })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    // `--client-ca-file`: a client certificate is optional, and verified against the cluster CA when given.
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(certs.ca_pem.as_bytes()) {
        let ca = ca.map_err(|_| TlsError::Pem {
            path: PathBuf::from("ca.crt"),
        })?;
        roots.add(ca).map_err(TlsError::Rustls)?;
    }
    let clients = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .allow_unauthenticated()
    .build()
    .map_err(|e| TlsError::Rustls(rustls::Error::General(e.to_string())))?;
    let mut cfg = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Rustls)?
        .with_client_cert_verifier(clients)
        .with_single_cert(chain, key)
        .map_err(TlsError::Rustls)?;
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_are_generated_once_and_reused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = ensure(dir.path(), &[]).expect("generate");
        let b = ensure(dir.path(), &[]).expect("reuse");
        assert_eq!(a.ca_pem, b.ca_pem);
        assert_eq!(a.cert_pem, b.cert_pem);
        let c = ensure(dir.path(), &["flotilla.example".into()]).expect("reissue");
        assert_eq!(a.ca_pem, c.ca_pem);
        assert_ne!(a.cert_pem, c.cert_pem);
        assert!(server_config(&c).is_ok());
    }

    #[test]
    fn the_front_proxy_client_is_issued_once_by_its_own_ca() {
        let dir = tempfile::tempdir().expect("tempdir");
        let serving = ensure(dir.path(), &[]).expect("serving");
        let a = ensure_front_proxy(dir.path()).expect("generate");
        let b = ensure_front_proxy(dir.path()).expect("reuse");
        assert_eq!(
            (a.ca_pem.as_str(), a.cert_pem.as_str()),
            (b.ca_pem.as_str(), b.cert_pem.as_str())
        );
        assert_ne!(a.ca_pem, serving.ca_pem);
        let der = CertificateDer::from_pem_slice(a.cert_pem.as_bytes()).expect("pem");
        let (_, cert) = x509_parser::parse_x509_certificate(&der).expect("x509");
        let cn: Vec<&str> = cert
            .subject()
            .iter_common_name()
            .filter_map(|c| c.as_str().ok())
            .collect();
        assert_eq!(cn, [FRONT_PROXY_CLIENT]);
        let ca = CertificateDer::from_pem_slice(a.ca_pem.as_bytes()).expect("pem");
        let (_, ca) = x509_parser::parse_x509_certificate(&ca).expect("x509");
        assert!(cert.verify_signature(Some(ca.public_key())).is_ok());
        let eku = cert.extended_key_usage().expect("eku").expect("present");
        assert!(eku.value.client_auth && !eku.value.server_auth);
    }
}
