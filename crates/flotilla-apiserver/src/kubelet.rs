//! kube-apiserver's kubelet client, with which the connect subresources `pods/log` and `pods/exec` reach the kubelet
//! of a pod's Node (`crate::handlers::connect`; where that kubelet is, is `flotilla_registry::connect`'s).
//!
//! As kube-apiserver's with no `--kubelet-certificate-authority` and no `--kubelet-client-certificate`: HTTPS, the
//! kubelet's certificate not verified, no client certificate; HTTP/1.1, which upgrades need; connections pooled.

use std::sync::Arc;

use crate::upstream::{BackendClient, NoVerification, https_client};

/// The client of every kubelet the server proxies to.
#[derive(Debug, Clone)]
pub struct Kubelets {
    client: BackendClient,
}

impl Kubelets {
    /// The client.
    ///
    /// # Errors
    /// When rustls refuses the protocol versions of its default provider.
    pub fn new() -> Result<Self, rustls::Error> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
            .with_no_client_auth();
        Ok(Self {
            client: https_client(tls, None),
        })
    }

    /// The pooled client.
    pub(crate) fn client(&self) -> &BackendClient {
        &self.client
    }
}
