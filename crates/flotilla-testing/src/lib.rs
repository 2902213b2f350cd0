//! What the workspace's test harnesses share, so that every suite waits, connects, starts processes and runs
//! kubectl the same way. Used only as a dev-dependency; a failure here fails the calling test (these helpers
//! panic with a message that says what was being waited for or run).
#![allow(clippy::panic, clippy::expect_used)]

pub mod kubectl;
pub mod process;
pub mod suites;
pub mod tls;

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// How long any condition may take: generous, as tests share two cores with each other and with builds.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Polls `check` every 20 ms until it returns `Some`, and returns that; fails the test after [`PATIENCE`].
pub async fn eventually<T, F, Fut>(what: &str, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    eventually_within(PATIENCE, what, check).await
}

/// [`eventually`] with a deadline of `patience`.
pub async fn eventually_within<T, F, Fut>(patience: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out after {patience:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A client for `context` (the current one when `None`) of the kubeconfig held in `yaml`.
pub async fn client_from_yaml(yaml: &str, context: Option<&str>) -> Client {
    let kubeconfig = Kubeconfig::from_yaml(yaml).expect("the kubeconfig parses");
    client_from(kubeconfig, context).await
}

/// A client for `context` (the current one when `None`) of the kubeconfig file at `path`.
pub async fn client_from_file(path: &Path, context: Option<&str>) -> Client {
    let kubeconfig = Kubeconfig::read_from(path)
        .unwrap_or_else(|e| panic!("reading kubeconfig {}: {e}", path.display()));
    client_from(kubeconfig, context).await
}

async fn client_from(kubeconfig: Kubeconfig, context: Option<&str>) -> Client {
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..KubeConfigOptions::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .expect("the kubeconfig makes a client configuration");
    Client::try_from(config).expect("the client builds")
}

/// An HTTPS client that trusts the certificates in the PEM bundle `ca` and nothing else, for calling a
/// server directly as its clients (an API server calling a webhook, say) would.
pub fn https_client_trusting(ca: &[u8]) -> reqwest::Client {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca) {
        roots
            .add(cert.expect("the CA bundle holds PEM certificates"))
            .expect("the CA certificate is usable as a root");
    }
    let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("ring supports the default protocol versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .expect("the HTTPS client builds")
}
