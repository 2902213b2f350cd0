//! What registering a member can fail with; variants name the action that failed and the object it failed on.

use flotilla_client::api_error::CallError;

/// Result of registration steps.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a registration step failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to an API server failed.
    #[error(transparent)]
    Kube(#[from] CallError),
    /// A member's token controller did not fill a ServiceAccount token Secret in time (registration).
    #[error(
        "the member issued no token for ServiceAccount {namespace}/{service_account} within {}s: Secret \
         {namespace}/{service_account} (type kubernetes.io/service-account-token) has no `token` (does the member \
         run kube-controller-manager's ServiceAccount token controller?)",
        .waited.as_secs()
    )]
    TokenNotIssued {
        /// The member namespace.
        namespace: String,
        /// The ServiceAccount, and its token Secret's name.
        service_account: String,
        /// How long it was waited on.
        waited: std::time::Duration,
    },
    /// The control plane refused or failed an agent's certificate request.
    #[error("CertificateSigningRequest {name} was {verdict}: {reason}: {message}")]
    CertificateRefused {
        /// The CertificateSigningRequest.
        name: String,
        /// `denied` or `failed`.
        verdict: &'static str,
        /// The condition's reason.
        reason: String,
        /// The condition's message.
        message: String,
    },
    /// No certificate was issued for an agent's request in time.
    #[error(
        "no certificate was issued for CertificateSigningRequest {name} within {}s: approve it with `kubectl \
         certificate approve {name}` on the control plane, or run the agentcsrapproving controller",
        .waited.as_secs()
    )]
    CertificateNotIssued {
        /// The CertificateSigningRequest.
        name: String,
        /// How long it was waited on.
        waited: std::time::Duration,
    },
    /// A certificate, key or kubeconfig could not be made or read.
    #[error("{what}: {message}")]
    Credentials {
        /// What was being made or read.
        what: String,
        /// Why it failed.
        message: String,
    },
}

impl Error {
    /// A `Credentials` error about `what`.
    pub(crate) fn credentials(what: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Error::Credentials {
            what: what.into(),
            message: message.to_string(),
        }
    }

    /// A `Kube` error for `action` on `object`.
    pub(crate) fn kube(
        action: &'static str,
        object: impl Into<String>,
        source: kube::Error,
    ) -> Self {
        Error::Kube(CallError::new(action, object, source))
    }
}
