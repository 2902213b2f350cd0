//! Pure steps of applying a policy: claiming a template, building the desired binding, merging it into an
//! existing one, and removing claims (when a policy goes or stops selecting a template).

use std::collections::BTreeMap;

use flotilla_api::names::{annotations, finalizers, labels};
use flotilla_api::policy::v1alpha1::{Placement, PropagationSpec};
use flotilla_api::work::v1alpha2::{
    Component, ObjectReference, ReplicaRequirements, ResourceBindingSpec, SchedulePriority,
    Suspension, WorkloadAffinityGroups,
};
use flotilla_core::names::binding_name;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde_json::Value;

use super::filter::Claim;
use crate::objects;

/// Sets the claim of `policy` on a template (a PropagationPolicy's replaces a ClusterPropagationPolicy's);
/// returns whether anything changed.
pub(crate) fn claim_template(template: &mut Value, policy: &Claim) -> bool {
    match policy {
        Claim::Namespaced {
            namespace,
            name,
            id,
        } => {
            let has_cpp_claim =
                objects::label(template, labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID).is_some()
                    || objects::annotation(template, annotations::CLUSTER_PROPAGATION_POLICY_NAME)
                        .is_some();
            if !has_cpp_claim
                && objects::label(template, labels::PROPAGATION_POLICY_PERMANENT_ID)
                    == Some(id.as_str())
            {
                return false;
            }
            objects::remove_labels(template, &[labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID]);
            objects::remove_annotations(template, &[annotations::CLUSTER_PROPAGATION_POLICY_NAME]);
            objects::set_label(template, labels::PROPAGATION_POLICY_PERMANENT_ID, id);
            objects::set_annotation(
                template,
                annotations::PROPAGATION_POLICY_NAMESPACE,
                namespace,
            );
            objects::set_annotation(template, annotations::PROPAGATION_POLICY_NAME, name);
            true
        }
        Claim::Cluster { name, id } => {
            if objects::label(template, labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID)
                == Some(id.as_str())
            {
                return false;
            }
            objects::set_label(
                template,
                labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID,
                id,
            );
            objects::set_annotation(template, annotations::CLUSTER_PROPAGATION_POLICY_NAME, name);
            true
        }
    }
}

/// The label and annotation keys of a claim.
pub(crate) fn claim_keys(claim: &Claim) -> (&'static str, &'static [&'static str]) {
    match claim {
        Claim::Namespaced { .. } => (
            labels::PROPAGATION_POLICY_PERMANENT_ID,
            &[
                annotations::PROPAGATION_POLICY_NAMESPACE,
                annotations::PROPAGATION_POLICY_NAME,
            ],
        ),
        Claim::Cluster { .. } => (
            labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID,
            &[annotations::CLUSTER_PROPAGATION_POLICY_NAME],
        ),
    }
}

fn claim_id(claim: &Claim) -> &str {
    match claim {
        Claim::Namespaced { id, .. } | Claim::Cluster { id, .. } => id,
    }
}

/// Removes the claim of `policy` from an object's labels and annotations, only if the object still carries
/// this policy's id (a fast delete and recreate must not strip a newer claim). Returns whether it changed.
pub(crate) fn remove_claim_maps(
    labels_map: &mut BTreeMap<String, String>,
    annotations_map: &mut BTreeMap<String, String>,
    policy: &Claim,
) -> bool {
    let (label, annotation_keys) = claim_keys(policy);
    if labels_map.get(label).map(String::as_str) != Some(claim_id(policy)) {
        return false;
    }
    labels_map.remove(label);
    for key in annotation_keys {
        annotations_map.remove(*key);
    }
    true
}

/// [`remove_claim_maps`] on an object in JSON form.
pub(crate) fn remove_claim(object: &mut Value, policy: &Claim) -> bool {
    let mut labels_map = objects::labels(object);
    let mut annotations_map = objects::annotations(object);
    if !remove_claim_maps(&mut labels_map, &mut annotations_map, policy) {
        return false;
    }
    objects::set_string_map(object, "labels", &labels_map);
    objects::set_string_map(object, "annotations", &annotations_map);
    true
}

/// [`remove_claim_maps`] on typed metadata.
pub(crate) fn remove_claim_meta(meta: &mut ObjectMeta, policy: &Claim) -> bool {
    let mut labels_map = meta.labels.clone().unwrap_or_default();
    let mut annotations_map = meta.annotations.clone().unwrap_or_default();
    if !remove_claim_maps(&mut labels_map, &mut annotations_map, policy) {
        return false;
    }
    meta.labels = (!labels_map.is_empty()).then_some(labels_map);
    meta.annotations = (!annotations_map.is_empty()).then_some(annotations_map);
    true
}

/// What InterpretReplica (or, for multi-template workloads, InterpretComponent) said about a template.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ReplicaInfo {
    /// `spec.replicas` of the binding.
    pub replicas: i32,
    /// `spec.replicaRequirements` of the binding.
    pub requirements: Option<ReplicaRequirements>,
    /// `spec.components` of the binding (InterpretComponent; then replicas and requirements stay unset).
    pub components: Vec<Component>,
}

/// The binding a policy derives from a template, as metadata and spec; `cluster_scoped` builds a
/// ClusterResourceBinding (no namespace, no `spec.resource.namespace`, CRB finalizer).
///
/// `spec` must already carry the policy defaults. `priority` is the PriorityClass value when the policy asks
/// for one.
pub(crate) fn build_binding(
    template: &Value,
    policy: &Claim,
    spec: &PropagationSpec,
    replicas: Option<ReplicaInfo>,
    priority: Option<i32>,
    cluster_scoped: bool,
) -> (ObjectMeta, ResourceBindingSpec) {
    let kind = objects::kind(template);
    let name = objects::name(template);
    let namespace = objects::namespace(template);
    let (label, annotation_keys) = claim_keys(policy);
    let mut binding_labels = BTreeMap::new();
    binding_labels.insert(label.to_owned(), claim_id(policy).to_owned());
    let mut binding_annotations = BTreeMap::new();
    match policy {
        Claim::Namespaced {
            namespace: pns,
            name: pname,
            ..
        } => {
            binding_annotations.insert(annotation_keys[0].to_owned(), pns.clone());
            binding_annotations.insert(annotation_keys[1].to_owned(), pname.clone());
        }
        Claim::Cluster { name: pname, .. } => {
            binding_annotations.insert(annotation_keys[0].to_owned(), pname.clone());
        }
    }
    let meta = ObjectMeta {
        name: Some(binding_name(kind, name)),
        namespace: (!cluster_scoped).then(|| namespace.to_owned()),
        labels: Some(binding_labels),
        annotations: Some(binding_annotations),
        finalizers: Some(vec![
            if cluster_scoped {
                finalizers::CLUSTER_RESOURCE_BINDING
            } else {
                finalizers::BINDING
            }
            .to_owned(),
        ]),
        owner_references: Some(vec![OwnerReference {
            api_version: objects::api_version(template).to_owned(),
            kind: kind.to_owned(),
            name: name.to_owned(),
            uid: objects::uid(template).to_owned(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]),
        ..ObjectMeta::default()
    };
    let replicas = replicas.unwrap_or_default();
    let binding_spec = ResourceBindingSpec {
        resource: ObjectReference {
            api_version: objects::api_version(template).to_owned(),
            kind: kind.to_owned(),
            namespace: if cluster_scoped {
                String::new()
            } else {
                namespace.to_owned()
            },
            name: name.to_owned(),
            uid: objects::uid(template).to_owned(),
            resource_version: objects::resource_version(template).to_owned(),
        },
        propagate_deps: spec.propagate_deps,
        replica_requirements: replicas.requirements,
        replicas: replicas.replicas,
        components: replicas.components,
        placement: Some(spec.placement.clone()),
        scheduler_name: spec.scheduler_name.clone(),
        failover: spec.failover.clone(),
        conflict_resolution: spec.conflict_resolution.clone(),
        suspension: spec.suspension.clone().map(|policy| Suspension {
            policy,
            scheduling: None,
        }),
        preserve_resources_on_deletion: spec.preserve_resources_on_deletion,
        schedule_priority: if cluster_scoped {
            None
        } else {
            priority.map(|priority| SchedulePriority { priority })
        },
        ..ResourceBindingSpec::default()
    };
    (meta, binding_spec)
}

/// The binding's workload affinity groups (gate `WorkloadAffinity`, ResourceBindings only): for each of the
/// placement's workload affinity and anti-affinity terms whose label the template carries, the group
/// `<labelKey>=<labelValue>`; `None` when neither applies.
pub(crate) fn workload_affinity_groups(
    template: &Value,
    placement: &Placement,
) -> Option<WorkloadAffinityGroups> {
    let rules = placement.workload_affinity.as_ref()?;
    let labels = template.pointer("/metadata/labels");
    let group = |key: &str| {
        labels
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
            .map(|value| format!("{key}={value}"))
            .unwrap_or_default()
    };
    let groups = WorkloadAffinityGroups {
        affinity_group: rules
            .affinity
            .as_ref()
            .map(|t| group(&t.group_by_label_key))
            .unwrap_or_default(),
        anti_affinity_group: rules
            .anti_affinity
            .as_ref()
            .map(|t| group(&t.group_by_label_key))
            .unwrap_or_default(),
    };
    (!groups.affinity_group.is_empty() || !groups.anti_affinity_group.is_empty()).then_some(groups)
}

/// Merges the desired binding into an existing one; returns whether the existing one changed.
///
/// Guarantees: labels and annotations overwritten key by key (others kept), finalizers unioned, owner
/// references replaced, the policy-derived spec fields replaced, `suspension` merged (the binding's own
/// `scheduling` kept); `clusters`, `requiredBy`, `gracefulEvictionTasks`, `rescheduleTriggeredAt` and status
/// untouched. For a PP-applied binding any CPP claim is removed.
pub(crate) fn merge_binding(
    existing: (&mut ObjectMeta, &mut ResourceBindingSpec),
    desired: (&ObjectMeta, &ResourceBindingSpec),
    policy: &Claim,
    cluster_scoped: bool,
) -> bool {
    let (meta, spec) = existing;
    let (want_meta, want) = desired;
    let before = (meta.clone(), spec.clone());

    let mut labels_map = meta.labels.clone().unwrap_or_default();
    let mut annotations_map = meta.annotations.clone().unwrap_or_default();
    if matches!(policy, Claim::Namespaced { .. }) {
        labels_map.remove(labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID);
        annotations_map.remove(annotations::CLUSTER_PROPAGATION_POLICY_NAME);
    }
    labels_map.extend(want_meta.labels.clone().unwrap_or_default());
    annotations_map.extend(want_meta.annotations.clone().unwrap_or_default());
    meta.labels = Some(labels_map);
    meta.annotations = Some(annotations_map);
    let mut finalizer_list = meta.finalizers.clone().unwrap_or_default();
    for finalizer in want_meta.finalizers.iter().flatten() {
        if !finalizer_list.contains(finalizer) {
            finalizer_list.push(finalizer.clone());
        }
    }
    meta.finalizers = Some(finalizer_list);
    meta.owner_references = want_meta.owner_references.clone();

    spec.resource = want.resource.clone();
    spec.replica_requirements = want.replica_requirements.clone();
    spec.replicas = want.replicas;
    spec.components = want.components.clone();
    if !cluster_scoped {
        spec.propagate_deps = want.propagate_deps;
        spec.schedule_priority = want.schedule_priority.clone();
        spec.workload_affinity_groups = want.workload_affinity_groups.clone();
    }
    spec.scheduler_name = want.scheduler_name.clone();
    spec.placement = want.placement.clone();
    spec.failover = want.failover.clone();
    spec.conflict_resolution
        .clone_from(&want.conflict_resolution);
    spec.preserve_resources_on_deletion = want.preserve_resources_on_deletion;
    spec.suspension = merge_suspension(spec.suspension.take(), want.suspension.as_ref());

    before != (meta.clone(), spec.clone())
}

fn merge_suspension(
    existing: Option<Suspension>,
    desired: Option<&Suspension>,
) -> Option<Suspension> {
    let scheduling = existing.and_then(|s| s.scheduling);
    let policy = desired.map(|d| d.policy.clone()).unwrap_or_default();
    let empty_policy = policy.dispatching.is_none() && policy.dispatching_on_clusters.is_none();
    if empty_policy && scheduling.is_none() {
        None
    } else {
        Some(Suspension { policy, scheduling })
    }
}
