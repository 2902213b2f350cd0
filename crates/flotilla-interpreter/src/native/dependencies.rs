//! InterpretDependency for the native kinds: what a workload needs in the member cluster before
//! it can run there.

use std::collections::BTreeMap;

use flotilla_api::config::v1alpha1::{DependentObjectReference, OrdLabelSelector};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::PodSpec;
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::Value;

use super::NativeError;
use super::object::{at, decode, decode_object, describe, namespace, str_at};
use super::pod::dependencies as pod_dependencies;

// Every handler answers with the objects `object` depends on, in the namespace it is written with.

/// The dependencies of the pod spec at `path` (typed, so a malformed field fails as in Karmada); the rest of
/// the object does not affect the answer.
fn of_pod_spec(
    object: &Value,
    path: &[&str],
) -> Result<Vec<DependentObjectReference>, NativeError> {
    match at(object, path) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(spec) => {
            let spec: PodSpec = decode(spec, || {
                format!("{} of {}", path.join("."), describe(object))
            })?;
            Ok(pod_dependencies(&spec, namespace(object)))
        }
    }
}

/// Deployments, ReplicaSets, DaemonSets and Jobs: what their pod template uses.
pub(super) fn workload(object: &Value) -> Result<Vec<DependentObjectReference>, NativeError> {
    of_pod_spec(object, &["spec", "template", "spec"])
}

/// CronJobs: what their job's pod template uses.
pub(super) fn cron_job(object: &Value) -> Result<Vec<DependentObjectReference>, NativeError> {
    of_pod_spec(object, &["spec", "jobTemplate", "spec", "template", "spec"])
}

/// Pods: what their spec uses.
pub(super) fn pod(object: &Value) -> Result<Vec<DependentObjectReference>, NativeError> {
    of_pod_spec(object, &["spec"])
}

/// StatefulSets: what their pod template uses, less the claims of their volumeClaimTemplates (the
/// StatefulSet controller in the member creates those).
pub(super) fn stateful_set(object: &Value) -> Result<Vec<DependentObjectReference>, NativeError> {
    let sts: StatefulSet = decode_object(object)?;
    let spec = sts.spec.unwrap_or_default();
    let templates: Vec<String> = spec
        .volume_claim_templates
        .iter()
        .flatten()
        .filter_map(|t| t.metadata.name.clone())
        .collect();
    Ok(spec
        .template
        .spec
        .as_ref()
        .map(|s| pod_dependencies(s, namespace(object)))
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.kind != "PersistentVolumeClaim" || !templates.contains(&r.name))
        .collect())
}

/// Ingresses: their TLS Secrets.
pub(super) fn ingress(object: &Value) -> Result<Vec<DependentObjectReference>, NativeError> {
    let ingress: Ingress = decode_object(object)?;
    // Karmada fails the whole call on a TLS entry without secretName; Flotilla skips the entry (a fixed bug,
    // docs/INTERPRETER.md): such an entry uses the ingress controller's default certificate.
    let tls = ingress.spec.and_then(|s| s.tls).unwrap_or_default();
    Ok(tls
        .into_iter()
        .filter_map(|t| t.secret_name.filter(|n| !n.is_empty()))
        .map(|name| reference("v1", "Secret", namespace(object), name))
        .collect())
}

/// ServiceImports: the derived Service and its EndpointSlices.
pub(super) fn service_import(object: &Value) -> Result<Vec<DependentObjectReference>, NativeError> {
    let ns = namespace(object);
    let name = str_at(object, &["metadata", "name"]).unwrap_or_default();
    let derived = format!("derived-{name}");
    let selector = LabelSelector {
        match_labels: Some(BTreeMap::from([(
            "kubernetes.io/service-name".to_owned(),
            derived.clone(),
        )])),
        ..LabelSelector::default()
    };
    Ok(vec![
        reference("v1", "Service", ns, derived),
        DependentObjectReference {
            label_selector: Some(OrdLabelSelector(selector)),
            ..reference("discovery.k8s.io/v1", "EndpointSlice", ns, String::new())
        },
    ])
}

fn reference(
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: String,
) -> DependentObjectReference {
    DependentObjectReference {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        namespace: namespace.to_owned(),
        name,
        label_selector: None,
    }
}
