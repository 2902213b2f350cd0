//! karmada-webhook's mutation of created ResourceBindings and ClusterResourceBindings: one without a permanent id
//! gets one (a new UUID). Nothing else of the binding is read, so a binding of any shape is admitted.

use flotilla_api::names::labels;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse};

use super::decide::mutate;

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
