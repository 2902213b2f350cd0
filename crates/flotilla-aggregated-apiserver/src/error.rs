//! The crate's errors: [`Error`] for what the binary calls (serving, registering), and [`RequestError`] for
//! what a request can fail with, turned into a `Status` once, here, in its [`IntoResponse`].
//!
//! Where Karmada's aggregated API server has a message for a failure, the Status carries that exact text
//! (typos included: clients and scripts match on it).

use axum::response::{IntoResponse, Response};
use flotilla_apimachinery::field::{FieldError, invalid_message};
use http::{StatusCode, header};
use serde_json::{Value, json};

use crate::names;

/// What starting, serving or registering the server can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The serving certificate or key is unusable.
    #[error("failed to use the serving certificate")]
    Identity(#[source] flotilla_webhook::Error),
    /// rustls refused the serving certificate and key.
    #[error("failed to build the TLS server configuration")]
    Tls(#[source] rustls::Error),
    /// The listener's address could not be read.
    #[error("failed to read the listening address")]
    LocalAddr(#[source] std::io::Error),
    /// The control plane refused a write or a read the registration needs.
    #[error("failed to {action} {object}")]
    Register {
        /// What was being done (`apply`, `read`).
        action: &'static str,
        /// The object, `Kind namespace/name`.
        object: String,
        /// The control plane's answer.
        #[source]
        source: kube::Error,
    },
    /// The APIService did not become Available in time.
    #[error("APIService {name} is not Available after {waited:?}: {reason}")]
    NotAvailable {
        /// The APIService.
        name: String,
        /// How long was waited.
        waited: std::time::Duration,
        /// Its Available condition's reason and message, or why it could not be read.
        reason: String,
    },
}

/// Why a request failed. Each variant maps to one Status in [`RequestError::status`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum RequestError {
    /// No verified front-proxy certificate or no user name (kube's `Unauthorized`).
    #[error("Unauthorized")]
    Unauthorized,
    /// The control plane's SubjectAccessReview denied the request.
    #[error("{}", forbidden_message(user, verb, cluster, reason))]
    Forbidden {
        /// The caller.
        user: String,
        /// The verb asked for.
        verb: String,
        /// The cluster (the resource name).
        cluster: String,
        /// The authorizer's reason, often empty.
        reason: String,
    },
    /// The cluster does not exist (the store's NotFound).
    #[error("clusters.cluster.karmada.io {cluster:?} not found")]
    ClusterNotFound {
        /// The cluster.
        cluster: String,
    },
    /// A Secret a cluster refers to does not exist (the Secret getter's NotFound, as Karmada passes it on).
    #[error("secrets {name:?} not found")]
    SecretNotFound {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
    },
    /// Karmada's `ConnectCluster` message for a cluster without `spec.impersonatorSecretRef`.
    #[error("the impersonatorSecretRef of cluster {cluster} is nil")]
    NoImpersonatorSecretRef {
        /// The cluster.
        cluster: String,
    },
    /// Karmada's message for an impersonator Secret without `token` (its spelling).
    #[error(
        "failed to get impresonateToken for cluster {cluster}: the impresonate token of cluster {cluster} is empty"
    )]
    NoImpersonatorToken {
        /// The cluster.
        cluster: String,
    },
    /// Karmada's message for a cluster without `spec.apiEndpoint`.
    #[error("API endpoint of cluster {cluster} should not be empty")]
    NoApiEndpoint {
        /// The cluster.
        cluster: String,
    },
    /// The member's connection settings are unusable (endpoint, proxy URL, CA bundle).
    #[error("failed to connect to cluster {cluster}")]
    MemberClient {
        /// The cluster.
        cluster: String,
        /// Why, naming the field.
        #[source]
        source: Box<flotilla_controllers::Error>,
    },
    /// The member did not answer.
    #[error("error trying to reach cluster {cluster}")]
    MemberUnreachable {
        /// The cluster.
        cluster: String,
        /// The transport's error.
        #[source]
        source: kube::Error,
    },
    /// The control plane did not answer, or answered something unusable.
    #[error("failed to {action}")]
    ControlPlane {
        /// What was asked, e.g. `ask the control plane for a SubjectAccessReview`.
        action: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
    /// The request body is larger than the server reads.
    #[error("Request entity too large: limit is {limit}")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The request body could not be read.
    #[error("failed to read the request body")]
    ReadBody(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The caller accepts no media type this server answers with.
    #[error("only the following media types are accepted: application/json")]
    NotAcceptable,
    /// A Table was asked for with options kube-apiserver refuses (an unknown `includeObject`).
    #[error("{message}")]
    TableOptions {
        /// kube-apiserver's message.
        message: String,
    },
    /// A new Cluster breaks Karmada's validation (`ValidateCluster`); nothing was written.
    #[error("{}", invalid_message("Cluster", names::GROUP, name, errors))]
    Invalid {
        /// The Cluster's name (empty when it was to be generated).
        name: String,
        /// What is wrong, field by field.
        errors: Vec<FieldError>,
    },
    /// The caller asked to switch protocols on a connection that cannot (only HTTP/1.1 can); nothing was sent.
    #[error(
        "cannot upgrade this connection to reach cluster {cluster}: exec, attach and port-forward need HTTP/1.1"
    )]
    NotUpgradable {
        /// The cluster.
        cluster: String,
    },
    /// The member answered an upgrade request with neither `101 Switching Protocols` nor an error (Karmada's
    /// upgrade-aware handler's text).
    #[error("invalid upgrade response: status code {status}")]
    InvalidUpgradeResponse {
        /// The member's status code.
        status: u16,
    },
    /// A response could not be assembled (a header value the member sent, say).
    #[error("failed to assemble the response")]
    Response(#[source] http::Error),
}

impl RequestError {
    /// The HTTP status, Status `reason` and `details` of this error.
    fn parts(&self) -> (StatusCode, &'static str, Option<Value>) {
        match self {
            RequestError::Unauthorized => (StatusCode::UNAUTHORIZED, "Unauthorized", None),
            RequestError::Forbidden { cluster, .. } => (
                StatusCode::FORBIDDEN,
                "Forbidden",
                Some(json!({"name": cluster, "group": names::GROUP, "kind": names::RESOURCE})),
            ),
            RequestError::ClusterNotFound { cluster } => (
                StatusCode::NOT_FOUND,
                "NotFound",
                Some(json!({"name": cluster, "group": names::GROUP, "kind": names::RESOURCE})),
            ),
            RequestError::SecretNotFound { name, .. } => (
                StatusCode::NOT_FOUND,
                "NotFound",
                Some(json!({"name": name, "kind": "secrets"})),
            ),
            // Karmada's connect errors are plain Go errors, which the generic API server answers as a 500
            // whose reason is empty (StatusReasonUnknown).
            RequestError::NoImpersonatorSecretRef { .. }
            | RequestError::NoImpersonatorToken { .. }
            | RequestError::NoApiEndpoint { .. }
            | RequestError::MemberClient { .. }
            | RequestError::InvalidUpgradeResponse { .. } => {
                (StatusCode::INTERNAL_SERVER_ERROR, "", None)
            }
            RequestError::MemberUnreachable { .. } => {
                (StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable", None)
            }
            RequestError::ControlPlane { .. } | RequestError::Response(_) => {
                (StatusCode::INTERNAL_SERVER_ERROR, "InternalError", None)
            }
            RequestError::TooLarge { .. } => {
                (StatusCode::PAYLOAD_TOO_LARGE, "RequestEntityTooLarge", None)
            }
            RequestError::ReadBody(_)
            | RequestError::NotUpgradable { .. }
            | RequestError::TableOptions { .. } => (StatusCode::BAD_REQUEST, "BadRequest", None),
            RequestError::Invalid { name, errors } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "Invalid",
                Some(invalid_details(name, errors)),
            ),
            RequestError::NotAcceptable => (StatusCode::NOT_ACCEPTABLE, "NotAcceptable", None),
        }
    }

    /// The error as a `metav1.Status` and its HTTP status code.
    pub(crate) fn status(&self) -> (StatusCode, Value) {
        let (code, reason, details) = self.parts();
        let mut message = chain(self);
        if matches!(self, RequestError::ControlPlane { .. }) {
            message = format!("Internal error occurred: {message}");
        }
        (code, status_json(code, reason, &message, details))
    }
}

impl IntoResponse for RequestError {
    fn into_response(self) -> Response {
        let (code, body) = self.status();
        if code.is_server_error() {
            tracing::warn!(error = %chain(&self), "request failed");
        } else {
            tracing::debug!(error = %chain(&self), "request refused");
        }
        json_response(code, &body)
    }
}

/// kube's message for a denied request on a cluster-scoped subresource (`ForbiddenStatusError`).
fn forbidden_message(user: &str, verb: &str, cluster: &str, reason: &str) -> String {
    let mut message = format!(
        "{}.{} {cluster:?} is forbidden: User {user:?} cannot {verb} resource \"{}/{}\" in API group {:?} at \
         the cluster scope",
        names::RESOURCE,
        names::GROUP,
        names::RESOURCE,
        names::PROXY,
        names::GROUP,
    );
    if !reason.is_empty() {
        message.push_str(": ");
        message.push_str(reason);
    }
    message
}

/// The `details` of a `422 Invalid` Status: the Cluster and one cause per error (`name` left out when empty, as
/// kube encodes it).
fn invalid_details(name: &str, errors: &[FieldError]) -> Value {
    let causes: Vec<Value> = errors
        .iter()
        .map(|error| json!({"reason": error.reason(), "message": error.body(), "field": error.field}))
        .collect();
    let mut details = json!({"group": names::GROUP, "kind": "Cluster", "causes": causes});
    if !name.is_empty() {
        details["name"] = json!(name);
    }
    details
}

/// A failed `metav1.Status`.
pub(crate) fn status_json(
    code: StatusCode,
    reason: &str,
    message: &str,
    details: Option<Value>,
) -> Value {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
    });
    if !reason.is_empty() {
        status["reason"] = json!(reason);
    }
    if let Some(details) = details {
        status["details"] = details;
    }
    status["code"] = json!(code.as_u16());
    status
}

/// A JSON response.
pub(crate) fn json_response(code: StatusCode, body: &Value) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A plain-text error as Go's `http.Error` writes it (Karmada's `*` proxy answers some failures so).
pub(crate) fn plain_error(code: StatusCode, message: &str) -> Response {
    (
        code,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        format!("{message}\n"),
    )
        .into_response()
}

/// An error and its sources, `outer: inner: innermost`, the one place a chain is printed.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(next) = source {
        let shown = next.to_string();
        // kube's and hyper's errors often repeat their source's text; print each step once.
        if !text.ends_with(&shown) {
            text.push_str(": ");
            text.push_str(&shown);
        }
        source = next.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_reads_as_kube_apiservers() {
        let error = RequestError::Forbidden {
            user: "tom".into(),
            verb: "get".into(),
            cluster: "member1".into(),
            reason: String::new(),
        };
        let (code, status) = error.status();
        assert_eq!(code, StatusCode::FORBIDDEN);
        assert_eq!(
            status["message"],
            "clusters.cluster.karmada.io \"member1\" is forbidden: User \"tom\" cannot get resource \
             \"clusters/proxy\" in API group \"cluster.karmada.io\" at the cluster scope"
        );
        assert_eq!(status["reason"], "Forbidden");
        assert_eq!(
            status["details"],
            json!({"name": "member1", "group": "cluster.karmada.io", "kind": "clusters"})
        );
        assert_eq!(status["code"], 403);
        let with_reason = RequestError::Forbidden {
            user: "tom".into(),
            verb: "get".into(),
            cluster: "m".into(),
            reason: "no RBAC policy matched".into(),
        };
        assert!(
            with_reason.status().1["message"]
                .as_str()
                .is_some_and(|m| m.ends_with("at the cluster scope: no RBAC policy matched"))
        );
    }

    #[test]
    fn karmadas_connect_errors_keep_their_text_and_have_no_reason() {
        let error = RequestError::NoImpersonatorToken {
            cluster: "member1".into(),
        };
        let (code, status) = error.status();
        assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            status["message"],
            "failed to get impresonateToken for cluster member1: the impresonate token of cluster member1 is empty"
        );
        assert!(status.get("reason").is_none());
        let (_, status) = RequestError::NoImpersonatorSecretRef {
            cluster: "m2".into(),
        }
        .status();
        assert_eq!(
            status["message"],
            "the impersonatorSecretRef of cluster m2 is nil"
        );
    }

    #[test]
    fn not_found_names_the_object_as_the_store_does() {
        let (code, status) = RequestError::ClusterNotFound {
            cluster: "nope".into(),
        }
        .status();
        assert_eq!(code, StatusCode::NOT_FOUND);
        assert_eq!(
            status["message"],
            "clusters.cluster.karmada.io \"nope\" not found"
        );
        assert_eq!(status["reason"], "NotFound");
        let (_, status) = RequestError::SecretNotFound {
            namespace: "karmada-cluster".into(),
            name: "m-impersonator".into(),
        }
        .status();
        assert_eq!(status["message"], "secrets \"m-impersonator\" not found");
    }

    #[test]
    fn unauthorized_is_kubes_status() {
        let (code, status) = RequestError::Unauthorized.status();
        assert_eq!(code, StatusCode::UNAUTHORIZED);
        assert_eq!(
            status,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
        );
    }

    #[test]
    fn an_invalid_cluster_is_kubes_422_with_one_cause_per_error() {
        let error = RequestError::Invalid {
            name: "a.b".into(),
            errors: vec![
                FieldError::invalid("metadata.name", "a.b", "must not contain dots"),
                FieldError::required("spec.syncMode", ""),
            ],
        };
        let (code, status) = error.status();
        assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            status,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "Cluster.cluster.karmada.io \"a.b\" is invalid: [metadata.name: Invalid value: \"a.b\": \
                               must not contain dots, spec.syncMode: Required value]",
                   "reason": "Invalid",
                   "details": {"name": "a.b", "group": "cluster.karmada.io", "kind": "Cluster", "causes": [
                       {"reason": "FieldValueInvalid", "message": "Invalid value: \"a.b\": must not contain dots",
                        "field": "metadata.name"},
                       {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.syncMode"}]},
                   "code": 422})
        );
        let generated = RequestError::Invalid {
            name: String::new(),
            errors: vec![FieldError::invalid(
                "metadata.generateName",
                "a.b-",
                "must not contain dots",
            )],
        };
        assert!(generated.status().1["details"].get("name").is_none());
    }
}
