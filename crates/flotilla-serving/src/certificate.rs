//! Serving certificates that follow their files: a rustls certificate resolver whose certificate is swapped when
//! the files' contents change, polled every few seconds.
//!
//! A change that does not parse, or whose key does not match its certificate, keeps the certificate served
//! before and is logged once, naming the file; a certificate and key written one after the other are picked up
//! together once both are in place.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// How often [`Reloading::watch`] reads the files when not told otherwise.
pub const POLL: Duration = Duration::from_secs(5);

/// Why a serving certificate cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("failed to read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The certificate PEM does not parse.
    #[error("failed to parse the certificates in {}", origin.display())]
    Certificates {
        /// The file (or what the PEM was).
        origin: PathBuf,
        /// Cause.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// The certificate PEM holds no certificate.
    #[error("no certificate in {}", origin.display())]
    NoCertificate {
        /// The file (or what the PEM was).
        origin: PathBuf,
    },
    /// The private key PEM does not parse.
    #[error("failed to parse the private key in {}", origin.display())]
    PrivateKey {
        /// The file (or what the PEM was).
        origin: PathBuf,
        /// Cause.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// rustls refuses the key, or the key does not belong to the certificate.
    #[error("the certificate in {} and the key in {} are unusable together", cert.display(), key.display())]
    Unusable {
        /// The certificate's file.
        cert: PathBuf,
        /// The key's file.
        key: PathBuf,
        /// Cause.
        #[source]
        source: rustls::Error,
    },
    /// Watching files needs a Tokio runtime to poll them from.
    #[error("failed to watch the certificate files: no Tokio runtime")]
    NoRuntime,
}

/// A certificate chain's and key's files (PEM).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Files {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// The certificate a server serves, replaceable while it serves; use it with
/// `rustls::ServerConfig::builder().with_no_client_auth().with_cert_resolver(..)` (or a client verifier).
#[derive(Debug)]
pub struct Reloading {
    current: RwLock<Arc<CertifiedKey>>,
    /// New file contents found unusable so far.
    refused: AtomicU64,
}

impl ResolvesServerCert for Reloading {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

impl Reloading {
    /// A resolver that serves the PEMs `cert_pem` and `key_pem` and never changes.
    ///
    /// # Errors
    /// When they do not parse or do not belong together.
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8]) -> Result<Arc<Self>, Error> {
        let origin = Files {
            cert: PathBuf::from("the certificate PEM"),
            key: PathBuf::from("the private key PEM"),
        };
        Ok(Arc::new(Self::serving(certified(
            &origin, cert_pem, key_pem,
        )?)))
    }

    /// A resolver serving `files`, read again every `poll` for as long as the resolver is in use.
    ///
    /// # Errors
    /// When the files cannot be read or used now, or no Tokio runtime is running.
    pub fn watch(files: Files, poll: Duration) -> Result<Arc<Self>, Error> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| Error::NoRuntime)?;
        let (cert_pem, key_pem) = read(&files)?;
        let resolver = Arc::new(Self::serving(certified(&files, &cert_pem, &key_pem)?));
        let seen = (cert_pem, key_pem);
        runtime.spawn(follow(Arc::downgrade(&resolver), files, poll, seen));
        Ok(resolver)
    }

    fn serving(key: CertifiedKey) -> Self {
        Self {
            current: RwLock::new(Arc::new(key)),
            refused: AtomicU64::new(0),
        }
    }

    /// The certificate served now.
    pub fn current(&self) -> Arc<CertifiedKey> {
        // A poisoned lock still holds a whole `Arc`: a writer only ever replaces it.
        match self.current.read() {
            Ok(current) => current.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// How many new contents of the files were found unusable (and not served) so far.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    fn replace(&self, key: CertifiedKey) {
        let mut current = match self.current.write() {
            Ok(current) => current,
            Err(poisoned) => poisoned.into_inner(),
        };
        *current = Arc::new(key);
    }
}

/// Polls `files` every `poll` until the resolver is dropped, serving each new pair of contents that is usable.
async fn follow(
    resolver: Weak<Reloading>,
    files: Files,
    poll: Duration,
    mut seen: (Vec<u8>, Vec<u8>),
) {
    let mut ticks = tokio::time::interval(poll);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let Some(resolver) = resolver.upgrade() else {
            return;
        };
        let contents = match read(&files) {
            Ok(contents) => contents,
            Err(error) => {
                // A file being replaced may be missing for a moment; the next poll reads it again.
                tracing::debug!(error = %error, "serving certificate unreadable; keeping the current one");
                continue;
            }
        };
        if contents == seen {
            continue;
        }
        match certified(&files, &contents.0, &contents.1) {
            Ok(key) => {
                resolver.replace(key);
                tracing::info!(cert = %files.cert.display(), "serving certificate reloaded");
            }
            Err(error) => {
                resolver.refused.fetch_add(1, Ordering::Relaxed);
                // Logged once per change of contents: `seen` moves on, so the same bad files are not reported
                // again, and the next change is tried.
                tracing::error!(error = %error, "new serving certificate unusable; keeping the current one");
            }
        }
        seen = contents;
    }
}

fn read(files: &Files) -> Result<(Vec<u8>, Vec<u8>), Error> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })
    };
    Ok((read(&files.cert)?, read(&files.key)?))
}

/// The certificate and key in `cert_pem` and `key_pem` (from `origin`), checked to belong together.
fn certified(origin: &Files, cert_pem: &[u8], key_pem: &[u8]) -> Result<CertifiedKey, Error> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| Error::Certificates {
            origin: origin.cert.clone(),
            source,
        })?;
    if chain.is_empty() {
        return Err(Error::NoCertificate {
            origin: origin.cert.clone(),
        });
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|source| Error::PrivateKey {
        origin: origin.key.clone(),
        source,
    })?;
    let provider: CryptoProvider = rustls::crypto::ring::default_provider();
    CertifiedKey::from_der(chain, key, &provider).map_err(|source| Error::Unusable {
        cert: origin.cert.clone(),
        key: origin.key.clone(),
        source,
    })
}
