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
}

impl Error {
    /// A `Kube` error for `action` on `object`.
    pub(crate) fn kube(
        action: &'static str,
        object: impl Into<String>,
        source: kube::Error,
    ) -> Self {
        Error::Kube(CallError::new(action, object, source))
    }
}
