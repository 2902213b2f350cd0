//! The request-header (front-proxy) settings an API server publishes in ConfigMap
//! `kube-system/extension-apiserver-authentication`, and the check of one request against them, as
//! k8s.io/apiserver's request-header authenticator does it.

use std::collections::BTreeMap;
use std::sync::Arc;

use http::{HeaderMap, HeaderName};
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;

use crate::user::UserInfo;

/// The ConfigMap keys (kube-apiserver's `--requestheader-*` flags); every value but the CA is a JSON array.
const CLIENT_CA: &str = "requestheader-client-ca-file";
const ALLOWED_NAMES: &str = "requestheader-allowed-names";
const USERNAME_HEADERS: &str = "requestheader-username-headers";
const UID_HEADERS: &str = "requestheader-uid-headers";
const GROUP_HEADERS: &str = "requestheader-group-headers";
const EXTRA_PREFIXES: &str = "requestheader-extra-headers-prefix";

/// A ConfigMap value that is not what the API server writes.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    /// A list value is not a JSON array of strings.
    #[error("{key} is not a JSON array of strings")]
    NotAList {
        /// The key.
        key: &'static str,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// A header name is not one.
    #[error("{key} names an invalid header {name:?}")]
    HeaderName {
        /// The key.
        key: &'static str,
        /// The value.
        name: String,
    },
    /// The CA bundle holds no usable certificate.
    #[error("{CLIENT_CA} holds no usable CA certificate")]
    ClientCa(#[source] Option<rustls::Error>),
    /// rustls could not build a verifier from the CA bundle.
    #[error("failed to build a verifier for {CLIENT_CA}")]
    Verifier(#[source] rustls::server::VerifierBuilderError),
}

/// Why a request's front-proxy credentials were not accepted.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Rejected {
    /// No client certificate was presented.
    #[error("no client certificate")]
    NoCertificate,
    /// The API server publishes no request-header CA: nobody can be a front proxy.
    #[error("no {CLIENT_CA} is published")]
    NoClientCa,
    /// The certificate does not chain to the request-header CA (or is expired, or not for client auth).
    #[error("the client certificate is not signed by the request-header CA")]
    Untrusted(#[source] rustls::Error),
    /// The certificate's common name is not an allowed front-proxy name.
    #[error("x509: subject with cn={0} is not in the allowed list")]
    NameNotAllowed(String),
    /// None of the user-name headers holds a value.
    #[error("no user name header")]
    NoUser,
}

/// The settings of one version of the ConfigMap.
#[derive(Debug)]
pub(crate) struct RequestHeaderConfig {
    verifier: Option<Arc<dyn ClientCertVerifier>>,
    allowed_names: Vec<String>,
    username_headers: Vec<HeaderName>,
    uid_headers: Vec<HeaderName>,
    group_headers: Vec<HeaderName>,
    /// Lower-case.
    extra_prefixes: Vec<String>,
}

impl RequestHeaderConfig {
    /// The settings in the ConfigMap's `data`.
    ///
    /// # Errors
    /// [`ConfigError`] naming the key whose value is malformed.
    pub(crate) fn from_data(data: &BTreeMap<String, String>) -> Result<Self, ConfigError> {
        let verifier = match data.get(CLIENT_CA).filter(|pem| !pem.trim().is_empty()) {
            Some(pem) => Some(verifier(pem.as_bytes())?),
            None => None,
        };
        Ok(RequestHeaderConfig {
            verifier,
            allowed_names: list(data, ALLOWED_NAMES)?,
            username_headers: headers(data, USERNAME_HEADERS)?,
            uid_headers: headers(data, UID_HEADERS)?,
            group_headers: headers(data, GROUP_HEADERS)?,
            extra_prefixes: list(data, EXTRA_PREFIXES)?
                .into_iter()
                .map(|prefix| prefix.to_ascii_lowercase())
                .collect(),
        })
    }

    /// The user a front proxy asserts in `headers`, over a connection that presented `peer` (leaf first).
    ///
    /// # Errors
    /// [`Rejected`] saying which check failed.
    pub(crate) fn authenticate(
        &self,
        peer: &[CertificateDer<'static>],
        headers: &HeaderMap,
    ) -> Result<UserInfo, Rejected> {
        self.verify_peer(peer)?;
        self.identity(headers)
    }

    /// Checks that `peer` is a front proxy: a chain to the request-header CA, for client authentication, whose
    /// leaf's common name is allowed (any, when no names are listed).
    fn verify_peer(&self, peer: &[CertificateDer<'static>]) -> Result<(), Rejected> {
        let (leaf, intermediates) = peer.split_first().ok_or(Rejected::NoCertificate)?;
        let verifier = self.verifier.as_ref().ok_or(Rejected::NoClientCa)?;
        verifier
            .verify_client_cert(leaf, intermediates, UnixTime::now())
            .map_err(Rejected::Untrusted)?;
        if !self.allowed_names.is_empty() {
            let name = common_name(leaf).unwrap_or_default();
            if !self.allowed_names.contains(&name) {
                return Err(Rejected::NameNotAllowed(name));
            }
        }
        Ok(())
    }

    /// The identity in the configured headers: the first non-empty user name and uid, every group value,
    /// and the extras.
    fn identity(&self, headers: &HeaderMap) -> Result<UserInfo, Rejected> {
        let name = first_value(headers, &self.username_headers).ok_or(Rejected::NoUser)?;
        Ok(UserInfo {
            name,
            uid: first_value(headers, &self.uid_headers).unwrap_or_default(),
            groups: self
                .group_headers
                .iter()
                .flat_map(|header| headers.get_all(header))
                .filter_map(|value| value.to_str().ok())
                .filter(|value| !value.is_empty())
                .map(str::to_owned)
                .collect(),
            extra: self.extra(headers),
        })
    }

    /// Whether `name` is a header this configuration reads an identity from (and so must never be forwarded).
    pub(crate) fn is_identity_header(&self, name: &HeaderName) -> bool {
        self.username_headers.contains(name)
            || self.uid_headers.contains(name)
            || self.group_headers.contains(name)
            || self
                .extra_prefixes
                .iter()
                .any(|prefix| name.as_str().starts_with(prefix.as_str()))
    }

    /// `X-Remote-Extra-<key>` headers: keys lower-cased and percent-decoded (kept as sent when malformed).
    fn extra(&self, headers: &HeaderMap) -> BTreeMap<String, Vec<String>> {
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for prefix in &self.extra_prefixes {
            for (name, value) in headers {
                let Some(key) = name.as_str().strip_prefix(prefix.as_str()) else {
                    continue;
                };
                let key = percent_encoding::percent_decode_str(key)
                    .decode_utf8()
                    .map_or_else(|_| key.to_owned(), |decoded| decoded.into_owned());
                if let Ok(value) = value.to_str() {
                    extra.entry(key).or_default().push(value.to_owned());
                }
            }
        }
        extra
    }
}

/// A verifier of client certificates chaining to the PEM bundle `ca`, for client authentication.
fn verifier(ca: &[u8]) -> Result<Arc<dyn ClientCertVerifier>, ConfigError> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca) {
        let cert = cert.map_err(|_| ConfigError::ClientCa(None))?;
        roots
            .add(cert)
            .map_err(|error| ConfigError::ClientCa(Some(error)))?;
    }
    if roots.is_empty() {
        return Err(ConfigError::ClientCa(None));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(ConfigError::Verifier)
}

/// The common name of a certificate's subject.
fn common_name(cert: &CertificateDer<'_>) -> Option<String> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref()).ok()?;
    let name = parsed
        .subject()
        .iter_common_name()
        .next()?
        .as_str()
        .ok()?
        .to_owned();
    Some(name)
}

fn first_value(headers: &HeaderMap, names: &[HeaderName]) -> Option<String> {
    names
        .iter()
        .filter_map(|name| headers.get(name)?.to_str().ok())
        .find(|value| !value.is_empty())
        .map(str::to_owned)
}

fn list(data: &BTreeMap<String, String>, key: &'static str) -> Result<Vec<String>, ConfigError> {
    match data.get(key).map(|value| value.trim()) {
        None | Some("") => Ok(Vec::new()),
        Some(value) => {
            serde_json::from_str(value).map_err(|source| ConfigError::NotAList { key, source })
        }
    }
}

fn headers(
    data: &BTreeMap<String, String>,
    key: &'static str,
) -> Result<Vec<HeaderName>, ConfigError> {
    list(data, key)?
        .into_iter()
        .map(|name| {
            HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| ConfigError::HeaderName { key, name })
        })
        .collect()
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
