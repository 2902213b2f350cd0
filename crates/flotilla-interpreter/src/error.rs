//! The interpreter's error type: every failure names the layer, the rule and the object where it can.

use flotilla_api::config::v1alpha1::InterpreterOperation;

/// Everything an interpreter call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The object has no `kind`, so no rule can be chosen.
    #[error("object 'Kind' is missing")]
    MissingKind,
    /// No layer has a rule for this operation on this kind.
    #[error("rule is not enabled for {operation} on {gvk}")]
    NotEnabled {
        /// The operation.
        operation: InterpreterOperation,
        /// `group/version, Kind=kind`.
        gvk: String,
    },
    /// No layer has a rule for this operation on this kind; the message is the native layer's, as in Karmada
    /// (e.g. `default InterpretReplica interpreter for "apps/v1, Kind=DaemonSet" not found`).
    #[error("{}", crate::native::not_found_message(.operation, .gvk))]
    NotFound {
        /// The operation.
        operation: InterpreterOperation,
        /// Go's spelling of the kind: `apps/v1, Kind=Deployment`.
        gvk: String,
    },
    /// The interpreter was called before every layer loaded its configuration.
    #[error("interpreter is not ready: {layer} has not loaded its configuration")]
    NotReady {
        /// The layer still loading.
        layer: &'static str,
    },
    /// A layer returned a result of the wrong shape for the operation (a bug in that layer).
    #[error("{layer} returned an unexpected result for {operation}")]
    UnexpectedResponse {
        /// The layer.
        layer: &'static str,
        /// The operation.
        operation: InterpreterOperation,
    },
    /// A layer failed; the source says how.
    #[error("{layer} interpreter failed for {operation} on {object}")]
    Layer {
        /// The layer.
        layer: &'static str,
        /// The operation.
        operation: InterpreterOperation,
        /// `kind namespace/name` of the object.
        object: String,
        /// The layer's own error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// A dependency reference any layer produced is invalid (no `apiVersion` or `kind`, neither name nor label
    /// selector, or an invalid selector).
    #[error("invalid dependency: {0}")]
    InvalidDependency(String),
}
