//! karmada-webhook's admission of bindings: a created ResourceBinding or ClusterResourceBinding without a
//! permanent id gets one (a new UUID; nothing else of the binding is read, so a binding of any shape is
//! admitted), and a ResourceBinding's dependencies annotation and, with `MultiplePodTemplatesScheduling`, its
//! component names are validated.

use flotilla_api::names::labels;
use flotilla_api::work::v1alpha2::ResourceBinding;
use flotilla_core::validation::{validate_binding_annotations, validate_components};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};

use super::decide::{answer, decode, mutate};
use super::refuse;
use crate::features::{Feature, FeatureGates};

/// `/validate-resourcebinding`. Karmada also checks the binding against its namespace's
/// FederatedResourceQuotas under `FederatedQuotaEnforcement`, a gate whose feature Flotilla does not have yet.
pub fn validate_resource_binding(
    request: &AdmissionRequest<DynamicObject>,
    gates: &FeatureGates,
) -> AdmissionResponse {
    let binding = decode::<ResourceBinding>(request, request.object.as_ref()).and_then(|binding| {
        if request.operation == Operation::Update {
            decode::<ResourceBinding>(request, request.old_object.as_ref())?;
        }
        Ok(binding)
    });
    let binding = match binding {
        Ok(binding) => binding,
        Err(message) => return refuse(request, 400, &message),
    };
    let annotations = validate_binding_annotations(
        binding
            .metadata
            .annotations
            .as_ref()
            .unwrap_or(&Default::default()),
    );
    if !annotations.is_empty() {
        return answer(request, &annotations);
    }
    if gates.enabled(Feature::MultiplePodTemplatesScheduling) {
        return answer(request, &validate_components(&binding.spec.components));
    }
    answer(request, &[])
}

/// `/mutate-resourcebinding`.
pub fn mutate_resource_binding(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    give_permanent_id(request, labels::RESOURCE_BINDING_PERMANENT_ID)
}

/// `/mutate-clusterresourcebinding`.
pub fn mutate_cluster_resource_binding(
    request: &AdmissionRequest<DynamicObject>,
) -> AdmissionResponse {
    give_permanent_id(request, labels::CLUSTER_RESOURCE_BINDING_PERMANENT_ID)
}

fn give_permanent_id(
    request: &AdmissionRequest<DynamicObject>,
    id_label: &str,
) -> AdmissionResponse {
    mutate::<DynamicObject>(request, |binding, _| {
        let labels_map = binding.metadata.labels.get_or_insert_with(Default::default);
        if labels_map.get(id_label).is_none_or(String::is_empty) {
            labels_map.insert(id_label.to_owned(), uuid::Uuid::new_v4().to_string());
        }
    })
}
