//! karmada-webhook's `resourcedeletionprotection`: any object labelled
//! `resourcetemplate.karmada.io/deletion-protected: Always` cannot be deleted until the label is removed. Other
//! values of the label, and every operation but DELETE, are allowed.

use flotilla_api::names::labels;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};

use super::refuse;

/// Decides one request: refuses the DELETE of a protected object with Karmada's message.
pub fn review(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    if request.operation != Operation::Delete {
        return AdmissionResponse::from(request);
    }
    // The API server sends the object being deleted as the old object.
    let Some(object) = &request.old_object else {
        return refuse(request, 400, "the DELETE request has no oldObject");
    };
    let protected = object
        .metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(labels::DELETION_PROTECTED))
        .is_some_and(|value| value == labels::DELETION_PROTECTED_ALWAYS);
    if protected {
        tracing::debug!(
            kind = %request.kind.kind,
            namespace = request.namespace.as_deref().unwrap_or_default(),
            name = %request.name,
            "refused the deletion of a protected resource"
        );
        return refuse(request, 403, &message());
    }
    AdmissionResponse::from(request)
}

/// Karmada's denial message.
pub fn message() -> String {
    format!(
        "This resource is protected, please make sure to remove the label: {}",
        labels::DELETION_PROTECTED
    )
}
