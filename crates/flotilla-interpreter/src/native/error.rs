//! Errors of the native layer: each names the object or field that was wrong.

use flotilla_apimachinery::quantity::QuantityError;

/// Everything a native handler can fail with.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// The object does not decode as its Kubernetes type (a field has the wrong type).
    #[error("failed to convert {what} to its typed form")]
    Decode {
        /// What was decoded, e.g. `apps/v1 Deployment default/web` or `status of member1`.
        what: String,
        /// The decoder's message names the field.
        #[source]
        source: serde_json::Error,
    },
    /// A resource quantity does not parse.
    #[error("failed to parse quantity {value:?} of {field}")]
    Quantity {
        /// Where it was, e.g. `spec.containers[web].resources.requests.cpu`.
        field: String,
        /// The text.
        value: String,
        /// Why it does not parse.
        #[source]
        source: QuantityError,
    },
    /// A field has a value the handler cannot use.
    #[error("invalid {field} of {object}: {reason}")]
    Field {
        /// The object, `kind namespace/name`.
        object: String,
        /// The field path.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The member object lacks the `resourcetemplate.karmada.io/generation` annotation or it is not an integer.
    #[error("failed to get annotation {annotation} of {object}: {reason}")]
    Annotation {
        /// The member object, `kind namespace/name`.
        object: String,
        /// The annotation key.
        annotation: &'static str,
        /// Missing or unparsable.
        reason: String,
    },
    /// The native layer has no handler for this kind and operation.
    #[error("{}", not_found_message(.operation, .gvk))]
    NotFound {
        /// The operation.
        operation: flotilla_api::config::v1alpha1::InterpreterOperation,
        /// Go's spelling of the kind: `apps/v1, Kind=Deployment`.
        gvk: String,
    },
}

/// Karmada's messages for an operation the native layer does not implement for a kind.
pub fn not_found_message(
    operation: &flotilla_api::config::v1alpha1::InterpreterOperation,
    gvk: &str,
) -> String {
    use flotilla_api::config::v1alpha1::InterpreterOperation as Op;
    match operation {
        Op::InterpretDependency => {
            "default interpreter for operation InterpretDependency not found".to_owned()
        }
        Op::InterpretComponent => "interface GetComponents not implemented yet".to_owned(),
        op => format!("default {op} interpreter for {gvk:?} not found"),
    }
}
