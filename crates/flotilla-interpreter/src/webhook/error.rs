//! Why a webhook call failed. Every failure names the webhook (`<configuration>/<webhook>`) and carries the
//! reason as its source, so the edge that prints the error chain shows both.

use std::error::Error as StdError;

/// A failed call to one interpreter webhook.
#[derive(Debug, thiserror::Error)]
#[error("failed calling webhook \"{webhook}\"")]
pub struct WebhookError {
    /// `<configuration name>/<webhook name>`.
    pub webhook: String,
    /// What went wrong.
    #[source]
    pub reason: Reason,
}

/// What went wrong in a webhook call. The texts of the response checks are Karmada's, so users searching for
/// them find the same explanations.
#[derive(Debug, thiserror::Error)]
pub enum Reason {
    /// `interpreterContextVersions` does not list `v1alpha1`.
    #[error("webhook does not accept known ResourceInterpreterContext versions (v1alpha1)")]
    UnsupportedVersions,
    /// The client config is unusable (neither `url` nor `service`, a URL that does not parse or is not HTTPS,
    /// a bad `timeoutSeconds`).
    #[error("invalid clientConfig: {0}")]
    InvalidClientConfig(String),
    /// `caBundle` holds no parsable PEM certificate.
    #[error("invalid clientConfig.caBundle: {0}")]
    InvalidCaBundle(String),
    /// The HTTP client could not be built from the client config.
    #[error("failed to build the HTTP client")]
    BuildClient(#[source] reqwest::Error),
    /// The request replica count does not fit the wire format's int32.
    #[error("replicas {0} does not fit in an int32")]
    ReplicasOutOfRange(i64),
    /// The request could not be serialised.
    #[error("failed to encode the request")]
    EncodeRequest(#[source] serde_json::Error),
    /// No complete answer within the timeout.
    #[error("timed out after {0}s")]
    Timeout(u64),
    /// Connecting or sending failed (refused connection, TLS verification, DNS, service resolution).
    #[error("failed to send the request to {url}")]
    Send {
        /// The URL called.
        url: String,
        /// The transport's error.
        #[source]
        source: reqwest::Error,
    },
    /// Reading the response body failed.
    #[error("failed to read the response body")]
    ReadBody(#[source] reqwest::Error),
    /// The response body exceeds the size Flotilla accepts.
    #[error("response body exceeds {0} bytes")]
    BodyTooLarge(usize),
    /// The webhook answered with a non-2xx HTTP status.
    #[error("unexpected HTTP status {status}: {body}")]
    HttpStatus {
        /// The HTTP status code.
        status: u16,
        /// The start of the response body.
        body: String,
    },
    /// The body is not a `ResourceInterpreterContext`.
    #[error("failed to decode the response body as a ResourceInterpreterContext")]
    DecodeResponse(#[source] serde_json::Error),
    /// The body has no `response`.
    #[error("webhook response was absent")]
    MissingResponse,
    /// The response answers another request.
    #[error("expected response.uid={expected:?}, got {got:?}")]
    UidMismatch {
        /// The request's uid.
        expected: String,
        /// The response's uid.
        got: String,
    },
    /// `successful: false` without a `status`.
    #[error("webhook require response.status when response.successful is false")]
    FailedWithoutStatus,
    /// `successful: false`.
    #[error("webhook call failed, get status code: {code}, msg: {message}")]
    Failed {
        /// `response.status.code`.
        code: i32,
        /// `response.status.message`.
        message: String,
    },
    /// InterpretReplica without `replicas`.
    #[error("webhook returned nil response.replicas")]
    MissingReplicas,
    /// InterpretStatus without `rawStatus` (Karmada's spelling, typo included).
    #[error("webhook returned nill response.rawStatus")]
    MissingRawStatus,
    /// InterpretHealth without `healthy`.
    #[error("webhook returned nil response.healthy")]
    MissingHealthy,
    /// A patch without a patch type.
    #[error("webhook returned nil response.patchType")]
    MissingPatchType,
    /// A patch type without a patch.
    #[error("webhook returned empty response.patch")]
    EmptyPatch,
    /// A patch type other than `JSONPatch`.
    #[error("webhook returned invalid response.patchType of {0:?}")]
    InvalidPatchType(String),
    /// The patch is not an RFC 6902 document.
    #[error("failed to decode response.patch as a JSON Patch")]
    DecodePatch(#[source] serde_json::Error),
    /// The patch does not apply to the object.
    #[error("failed to apply response.patch")]
    ApplyPatch(#[source] json_patch::PatchError),
    /// The patched object lost its `kind`.
    #[error("patched object has no 'kind'")]
    PatchedObjectWithoutKind,
}

/// The reason a service-mode webhook could not be reached, raised while resolving its address.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Looking the Service up in the control plane failed.
    #[error("failed to get service {namespace}/{name}")]
    Get {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// A headless Service has no address to call.
    #[error("cannot route to service {namespace}/{name} with ClusterIP set to None")]
    Headless {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
    },
    /// The Service has no address.
    #[error("service {namespace}/{name} has no clusterIP")]
    NoClusterIp {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
    },
    /// The Service does not expose the configured port.
    #[error("unable to find service port {port} in service {namespace}/{name}")]
    PortNotFound {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// The configured port.
        port: u16,
    },
    /// Only ClusterIP, NodePort, LoadBalancer and ExternalName Services can be called.
    #[error("unsupported service type {service_type:?} of service {namespace}/{name}")]
    UnsupportedType {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// `spec.type`.
        service_type: String,
    },
    /// Resolving the Service's target host failed.
    #[error("failed to resolve {host}")]
    Lookup {
        /// The host looked up.
        host: String,
        /// The resolver's error.
        #[source]
        source: std::io::Error,
    },
}

/// Every message of an error and its sources, joined by `": "`: what the edges print.
pub fn error_chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
