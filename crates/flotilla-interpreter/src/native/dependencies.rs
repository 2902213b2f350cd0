//! InterpretDependency for the native kinds (spec §3.8): what a workload needs in the member cluster before
//! it can run there.

use std::collections::BTreeMap;

use flotilla_api::config::v1alpha1::{DependentObjectReference, OrdLabelSelector};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::PodSpec;
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::Value;

use super::object::{at, decode, decode_object, describe, namespace, str_at};
use super::pod::dependencies as pod_dependencies;
use super::{NativeError, NativeKind};

/// The objects `object` depends on, in the namespace it is written with.
pub(crate) fn get_dependencies(
    kind: NativeKind,
    object: &Value,
) -> Result<Vec<DependentObjectReference>, NativeError> {
    let ns = namespace(object);
    // Only the pod spec is decoded (typed, so a malformed field fails as in Karmada); the rest of the object
    // does not affect the answer.
    let of_spec = |path: &[&str]| -> Result<Vec<DependentObjectReference>, NativeError> {
        match at(object, path) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(spec) => {
                let spec: PodSpec = decode(spec, || {
                    format!("{} of {}", path.join("."), describe(object))
                })?;
                Ok(pod_dependencies(&spec, ns))
            }
        }
    };
    Ok(match kind {
        NativeKind::Deployment
        | NativeKind::ReplicaSet
        | NativeKind::DaemonSet
        | NativeKind::Job => of_spec(&["spec", "template", "spec"])?,
        NativeKind::CronJob => of_spec(&["spec", "jobTemplate", "spec", "template", "spec"])?,
        NativeKind::Pod => of_spec(&["spec"])?,
        NativeKind::StatefulSet => {
            let sts: StatefulSet = decode_object(object)?;
            let spec = sts.spec.unwrap_or_default();
            // Claims from volumeClaimTemplates are created by the StatefulSet controller in the member.
            let templates: Vec<String> = spec
                .volume_claim_templates
                .iter()
                .flatten()
                .filter_map(|t| t.metadata.name.clone())
                .collect();
            spec.template
                .spec
                .as_ref()
                .map(|s| pod_dependencies(s, ns))
                .unwrap_or_default()
                .into_iter()
                .filter(|r| r.kind != "PersistentVolumeClaim" || !templates.contains(&r.name))
                .collect()
        }
        NativeKind::Ingress => {
            let ingress: Ingress = decode_object(object)?;
            // Karmada fails the whole call on a TLS entry without secretName; Flotilla skips the entry
            // (spec §0, quirk 25 fixed): such an entry uses the ingress controller's default certificate.
            let tls = ingress.spec.and_then(|s| s.tls).unwrap_or_default();
            tls.into_iter()
                .filter_map(|t| t.secret_name.filter(|n| !n.is_empty()))
                .map(|name| reference("v1", "Secret", ns, name))
                .collect()
        }
        NativeKind::ServiceImport => {
            let name = str_at(object, &["metadata", "name"]).unwrap_or_default();
            let derived = format!("derived-{name}");
            let selector = LabelSelector {
                match_labels: Some(BTreeMap::from([(
                    "kubernetes.io/service-name".to_owned(),
                    derived.clone(),
                )])),
                ..LabelSelector::default()
            };
            vec![
                reference("v1", "Service", ns, derived),
                DependentObjectReference {
                    label_selector: Some(OrdLabelSelector(selector)),
                    ..reference("discovery.k8s.io/v1", "EndpointSlice", ns, String::new())
                },
            ]
        }
        _ => {
            return Err(NativeError::Field {
                object: describe(object),
                field: "kind".to_owned(),
                reason: "no native dependency handler".to_owned(),
            });
        }
    })
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
