//! The controllers' error type: one enum for every reconcile, whose [`Error::category`] is the metric label and
//! whose [`Error::is_permanent`] decides between backoff and waiting for a change.

use flotilla_api::config::v1alpha1::InterpreterOperation;
use flotilla_client::api_error::{error_chain, kube_error_text};

/// Result of controller operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything a reconcile can fail with. Variants name the action that failed and the object it failed on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to an API server failed.
    #[error("failed to {action} {object}")]
    Kube {
        /// What was attempted, e.g. `update`, `list`.
        action: &'static str,
        /// `Kind namespace/name` (or a description of the collection).
        object: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The resource interpreter failed.
    #[error("failed to interpret {operation} for {object}")]
    Interpret {
        /// The operation.
        operation: InterpreterOperation,
        /// `Kind namespace/name` of the object interpreted.
        object: String,
        /// The interpreter's error (boxed: it is large, and errors travel in every `Result`).
        #[source]
        source: Box<flotilla_interpreter::Error>,
    },
    /// An object does not have the shape the controller needs; retrying cannot help until it changes.
    #[error("invalid {object}: {reason}")]
    Invalid {
        /// `Kind namespace/name`.
        object: String,
        /// What is wrong, naming the field.
        reason: String,
    },
    /// A JSON value did not decode into the expected type; retrying cannot help until it changes.
    #[error("failed to decode {object}")]
    Decode {
        /// `Kind namespace/name` or a field path.
        object: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// The member cluster is not ready; retried with backoff.
    #[error("cluster({cluster}) not ready")]
    ClusterNotReady {
        /// The cluster.
        cluster: String,
    },
    /// A client for a member cluster could not be built.
    #[error("failed to build a client for cluster {cluster}: {reason}")]
    MemberClient {
        /// The cluster.
        cluster: String,
        /// Why.
        reason: String,
    },
    /// Something the reconcile needs does not exist yet (a policy's dependent overrides, a CRD, an old binding
    /// awaiting garbage collection); retried with backoff.
    #[error("waiting for {what}")]
    Waiting {
        /// What is awaited.
        what: String,
    },
    /// A member object exists and is not managed by Flotilla, and the Work does not allow taking it over.
    #[error(
        "resource(kind={kind}, {namespace}/{name}) already exists in the cluster {cluster} and the \
         work.karmada.io/conflict-resolution strategy value is empty, Karmada will not manage this resource"
    )]
    Conflict {
        /// Kind of the member object.
        kind: String,
        /// Namespace of the member object (empty for cluster-scoped objects).
        namespace: String,
        /// Name of the member object.
        name: String,
        /// The member cluster.
        cluster: String,
    },
    /// Several independent steps failed (e.g. one Work per cluster); each is reported.
    #[error("{}", join_errors(.0))]
    Multiple(Vec<Error>),
    /// A reconcile panicked (a bug); retried with backoff.
    #[error("reconcile of {object} panicked")]
    Panicked {
        /// `Kind namespace/name`.
        object: String,
    },
    /// Scheduling a binding failed in a way that may clear up (no capacity, a member not serving the kind
    /// yet, a scheduler error); the `Scheduled` condition already says why. Retried with backoff.
    #[error("failed to schedule {object}: {message}")]
    Schedule {
        /// `Kind namespace/name` of the binding.
        object: String,
        /// The `Scheduled` condition reason (`Unschedulable`, `NoClusterFit`, `SchedulerError`).
        reason: &'static str,
        /// The scheduler's message.
        message: String,
    },
}

fn join_errors(errors: &[Error]) -> String {
    let parts: Vec<String> = errors.iter().map(|e| error_chain(e)).collect();
    format!("[{}]", parts.join(", "))
}

impl Error {
    /// A short, stable label for metrics and logs.
    pub fn category(&self) -> &'static str {
        match self {
            Error::Kube { source, .. } => match source {
                kube::Error::Api(status) if status.code == 409 => "conflict",
                kube::Error::Api(status) if status.code == 404 => "not_found",
                _ => "kube_api",
            },
            Error::Interpret { .. } => "interpreter",
            Error::Invalid { .. } => "invalid",
            Error::Decode { .. } => "decode",
            Error::ClusterNotReady { .. } => "cluster_not_ready",
            Error::MemberClient { .. } => "member_client",
            Error::Waiting { .. } => "waiting",
            Error::Conflict { .. } => "member_conflict",
            Error::Schedule { .. } => "schedule",
            Error::Panicked { .. } => "panicked",
            Error::Multiple(errors) => match errors.first() {
                Some(first) if errors.iter().all(|e| e.category() == first.category()) => {
                    first.category()
                }
                _ => "multiple",
            },
        }
    }

    /// Whether retrying without a change to the object cannot succeed (the error policy then waits for a
    /// change instead of backing off).
    pub fn is_permanent(&self) -> bool {
        match self {
            Error::Invalid { .. } | Error::Decode { .. } => true,
            Error::Multiple(errors) => !errors.is_empty() && errors.iter().all(Error::is_permanent),
            _ => false,
        }
    }

    /// Whether this is an API "409 Conflict" (optimistic concurrency), which callers retry at once.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Kube { source: kube::Error::Api(status), .. } if status.code == 409)
    }

    /// Whether this is a failed write (create, update or patch) rather than a read.
    pub fn is_write(&self) -> bool {
        matches!(self, Error::Kube { action, .. }
            if ["create", "update", "patch"].iter().any(|verb| action.starts_with(verb)))
    }

    /// Whether this is an API "404 Not Found".
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Kube { source: kube::Error::Api(status), .. } if status.code == 404)
    }

    /// A `Kube` error for `action` on `object`.
    pub fn kube(action: &'static str, object: impl Into<String>, source: kube::Error) -> Self {
        Error::Kube {
            action,
            object: object.into(),
            source,
        }
    }

    /// An `Invalid` error.
    pub fn invalid(object: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Invalid {
            object: object.into(),
            reason: reason.into(),
        }
    }

    /// A `Waiting` error.
    pub fn waiting(what: impl Into<String>) -> Self {
        Error::Waiting { what: what.into() }
    }

    /// The whole chain as one line, for conditions, events and status messages.
    pub fn message(&self) -> String {
        error_chain(self)
    }

    /// What the API server said when it refused a request (Karmada puts the API error itself in its Warning
    /// Events), else the whole chain.
    pub fn api_text(&self) -> String {
        match self {
            Error::Kube { source, .. } => kube_error_text(source),
            other => other.message(),
        }
    }

    /// `Ok` when `errors` is empty, the single error when there is one, else `Multiple`.
    pub fn aggregate(mut errors: Vec<Error>) -> Result<()> {
        match errors.len() {
            0 => Ok(()),
            1 => Err(errors.remove(0)),
            _ => Err(Error::Multiple(errors)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permanent_errors_wait_for_change_and_others_back_off() {
        assert!(
            Error::invalid("PropagationPolicy default/p", "spec.placement: bad").is_permanent()
        );
        assert!(!Error::waiting("dependent overrides").is_permanent());
        assert!(
            !Error::ClusterNotReady {
                cluster: "m1".into()
            }
            .is_permanent()
        );
        let mixed = Error::Multiple(vec![Error::invalid("a", "b"), Error::waiting("c")]);
        assert!(!mixed.is_permanent());
        assert_eq!(mixed.category(), "multiple");
        let same = Error::Multiple(vec![Error::waiting("a"), Error::waiting("c")]);
        assert_eq!(same.category(), "waiting");
    }

    #[test]
    fn conflict_message_matches_karmada() {
        let err = Error::Conflict {
            kind: "Deployment".into(),
            namespace: "default".into(),
            name: "nginx".into(),
            cluster: "member1".into(),
        };
        assert_eq!(
            err.to_string(),
            "resource(kind=Deployment, default/nginx) already exists in the cluster member1 and the \
             work.karmada.io/conflict-resolution strategy value is empty, Karmada will not manage this resource"
        );
    }

    #[test]
    fn aggregate_keeps_single_errors_whole() {
        assert!(Error::aggregate(vec![]).is_ok());
        let one = Error::aggregate(vec![Error::waiting("x")]).unwrap_err();
        assert_eq!(one.to_string(), "waiting for x");
        let two = Error::aggregate(vec![Error::waiting("x"), Error::waiting("y")]).unwrap_err();
        assert_eq!(two.to_string(), "[waiting for x, waiting for y]");
    }

    #[test]
    fn api_errors_read_as_sentences_without_a_debug_dump() {
        let status = kube::core::Status {
            code: 409,
            reason: "Conflict".into(),
            message: "Operation cannot be fulfilled on works.work.karmada.io \"w\": the object has been modified"
                .into(),
            ..kube::core::Status::default()
        };
        let err = Error::kube(
            "update",
            "Work karmada-es-m1/w",
            kube::Error::Api(Box::new(status)),
        );
        let message = err.message();
        assert_eq!(
            message,
            "failed to update Work karmada-es-m1/w: Operation cannot be fulfilled on works.work.karmada.io \"w\": \
             the object has been modified (Conflict)"
        );
        assert!(
            !message.contains("Some(") && !message.contains("Status {"),
            "{message}"
        );
        let bare = kube::Error::Api(Box::new(kube::core::Status {
            code: 500,
            reason: "InternalError".into(),
            ..kube::core::Status::default()
        }));
        assert_eq!(
            kube_error_text(&bare),
            "the API server answered 500 InternalError"
        );
    }
}
