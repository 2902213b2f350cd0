//! karmada-webhook's mutation of Works: a Work without a permanent id gets one (a new UUID), and each manifest is
//! pruned and given its managed-label and managed-annotation lists and the Work's permanent id, as the binding
//! controllers write them (`crate::works`), so a Work written by anyone carries what Flotilla's own Works carry.

use flotilla_api::names::labels;
use flotilla_api::work::v1alpha1::Work;
use flotilla_core::prune::prune_for_work;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse};
use serde_json::Value;

use super::decide::mutate;
use super::refuse;

/// `/mutate-work`.
pub fn mutate_work(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    // A manifest that is no object with a kind cannot be normalised: refused as Karmada refuses it, a server
    // error. Read from the request as sent; decoding the Work is left to `mutate`.
    let manifests = request
        .object
        .as_ref()
        .and_then(|work| work.data.pointer("/spec/workload/manifests"))
        .and_then(Value::as_array);
    for manifest in manifests.into_iter().flatten() {
        if let Some(message) = unusable(manifest) {
            return refuse(request, 500, &message);
        }
    }
    mutate::<Work>(request, |work, _| {
        let labels_map = work.metadata.labels.get_or_insert_with(Default::default);
        if labels_map
            .get(labels::WORK_PERMANENT_ID)
            .is_none_or(String::is_empty)
        {
            labels_map.insert(
                labels::WORK_PERMANENT_ID.to_owned(),
                uuid::Uuid::new_v4().to_string(),
            );
        }
        let id = labels_map.get(labels::WORK_PERMANENT_ID).cloned();
        for manifest in &mut work.spec.workload.manifests {
            prune_for_work(&mut manifest.0);
            crate::works::finalize_manifest(&mut manifest.0, id.as_deref());
        }
    })
}

/// Why a manifest cannot be read as a Kubernetes object, in Karmada's words.
fn unusable(manifest: &Value) -> Option<String> {
    let written = || serde_json::to_string(manifest).unwrap_or_default();
    match manifest {
        Value::Object(map) => match map.get("kind").and_then(Value::as_str) {
            Some(kind) if !kind.is_empty() => None,
            _ => Some(format!("Object 'Kind' is missing in '{}'", written())),
        },
        _ => Some(format!(
            "cannot unmarshal a manifest that is not an object: {}",
            written()
        )),
    }
}
