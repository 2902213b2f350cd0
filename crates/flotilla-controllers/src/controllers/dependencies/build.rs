//! Pure steps of the dependencies distributor: matching objects to dependency
//! entries, building attached bindings, merging `requiredBy` snapshots, and detaching.

use std::collections::BTreeMap;

use flotilla_api::config::v1alpha1::DependentObjectReference;
use flotilla_api::policy::v1alpha1::ConflictResolution;
use flotilla_api::work::v1alpha2::{
    BindingSnapshot, ObjectReference, ResourceBinding, ResourceBindingSpec,
};
use flotilla_core::names::{binding_name, depended_by_label_key};
use flotilla_core::selector::label_selector_matches;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::ResourceExt;
use serde_json::Value;

use crate::objects;

/// Whether a dependency entry names an object (same apiVersion, kind and namespace, and the same name, or no
/// name and a label selector matching `labels`).
pub(crate) fn entry_matches(
    entry: &DependentObjectReference,
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
    labels: &BTreeMap<String, String>,
) -> bool {
    if entry.api_version != api_version || entry.kind != kind || entry.namespace != namespace {
        return false;
    }
    if !entry.name.is_empty() {
        return entry.name == name;
    }
    entry
        .label_selector
        .as_ref()
        .is_some_and(|selector| label_selector_matches(&selector.0, labels))
}

/// The dependencies recorded in an RB's `resourcebinding.karmada.io/dependencies` annotation.
pub(crate) fn recorded_dependencies(rb: &ResourceBinding) -> Vec<DependentObjectReference> {
    rb.annotations()
        .get(flotilla_api::names::annotations::DEPENDENCIES)
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

/// The attached binding wanted for dependency object `dependency` of independent binding `independent`: named
/// after the dependency and owned by it, labelled with the independent binding's permanent id, and required by
/// the independent binding's clusters (no placement of its own).
pub(crate) fn desired_attached(
    independent: &ResourceBinding,
    independent_id: &str,
    dependency: &Value,
) -> ResourceBinding {
    let namespace = independent.namespace().unwrap_or_default();
    let mut binding = ResourceBinding::new(
        &binding_name(objects::kind(dependency), objects::name(dependency)),
        ResourceBindingSpec {
            resource: ObjectReference {
                api_version: objects::api_version(dependency).to_owned(),
                kind: objects::kind(dependency).to_owned(),
                namespace: objects::namespace(dependency).to_owned(),
                name: objects::name(dependency).to_owned(),
                uid: objects::uid(dependency).to_owned(),
                resource_version: objects::resource_version(dependency).to_owned(),
            },
            required_by: vec![snapshot_of(independent)],
            // As Karmada writes it: the combined policy of the one referrer, preserve always set.
            preserve_resources_on_deletion: Some(
                independent
                    .spec
                    .preserve_resources_on_deletion
                    .unwrap_or(false),
            ),
            conflict_resolution: independent.spec.conflict_resolution.clone(),
            ..ResourceBindingSpec::default()
        },
    );
    binding.metadata = ObjectMeta {
        name: binding.metadata.name.take(),
        namespace: Some(namespace.clone()),
        labels: Some(
            [(
                depended_by_label_key(&namespace, &independent.name_any()),
                independent_id.to_owned(),
            )]
            .into(),
        ),
        finalizers: Some(vec![flotilla_api::names::finalizers::BINDING.to_owned()]),
        owner_references: Some(vec![OwnerReference {
            api_version: objects::api_version(dependency).to_owned(),
            kind: objects::kind(dependency).to_owned(),
            name: objects::name(dependency).to_owned(),
            uid: objects::uid(dependency).to_owned(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]),
        ..ObjectMeta::default()
    };
    binding
}

/// The snapshot of an independent binding recorded in its dependencies' `requiredBy`.
pub(crate) fn snapshot_of(independent: &ResourceBinding) -> BindingSnapshot {
    BindingSnapshot {
        namespace: independent.namespace().unwrap_or_default(),
        name: independent.name_any(),
        clusters: independent.spec.clusters.clone(),
    }
}

/// Merges a snapshot into `requiredBy`: the entry of the same binding gets the new clusters, a new one is
/// appended.
pub(crate) fn merge_required_by(list: &mut Vec<BindingSnapshot>, snapshot: BindingSnapshot) {
    match list
        .iter_mut()
        .find(|s| s.namespace == snapshot.namespace && s.name == snapshot.name)
    {
        Some(existing) => existing.clusters = snapshot.clusters,
        None => list.push(snapshot),
    }
}

/// What the referrers of a dependency-only binding say together (Karmada's rules): `Overwrite` if any says so
/// (an unset value counts as `Abort`), preserve if any does (unset counts as false), and which of the two they
/// disagree on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CombinedPolicy {
    pub(crate) resolution: ConflictResolution,
    /// `None` when nothing refers to the binding any more (Karmada clears the field then).
    pub(crate) preserve: Option<bool>,
    /// Some referrers say `Overwrite` and others `Abort`.
    pub(crate) resolution_conflicted: bool,
    /// Some referrers preserve member objects on deletion and others do not.
    pub(crate) preserve_conflicted: bool,
}

impl CombinedPolicy {
    /// The message of Karmada's `DependencyPolicyConflict` Event, when the referrers disagree.
    pub(crate) fn conflict_message(&self) -> Option<String> {
        let mut reasons = Vec::new();
        if self.resolution_conflicted {
            reasons.push("ConflictResolution conflicted (Overwrite vs Abort)");
        }
        if self.preserve_conflicted {
            reasons.push("PreserveResourcesOnDeletion conflicted (true vs false)");
        }
        (!reasons.is_empty()).then(|| {
            format!(
                "Dependency policy conflict detected: {}.",
                reasons.join("; ")
            )
        })
    }
}

/// Combines the policies of the bindings in a dependency-only binding's `requiredBy`.
pub(crate) fn combined_policy(referrers: &[&ResourceBindingSpec]) -> CombinedPolicy {
    let overwrite = referrers
        .iter()
        .any(|r| r.conflict_resolution == ConflictResolution::Overwrite);
    let abort = referrers
        .iter()
        .any(|r| r.conflict_resolution != ConflictResolution::Overwrite);
    let preserving = referrers
        .iter()
        .any(|r| r.preserve_resources_on_deletion == Some(true));
    let deleting = referrers
        .iter()
        .any(|r| r.preserve_resources_on_deletion != Some(true));
    CombinedPolicy {
        resolution: if overwrite {
            ConflictResolution::Overwrite
        } else {
            ConflictResolution::Abort
        },
        preserve: (!referrers.is_empty()).then_some(preserving),
        resolution_conflicted: overwrite && abort,
        preserve_conflicted: preserving && deleting,
    }
}

/// Detaches an attached binding from independent binding `namespace/name`: drops its label and
/// snapshot. Returns whether it changed; the caller recomputes the combined policy of dependency-only
/// bindings.
pub(crate) fn detach(attached: &mut ResourceBinding, namespace: &str, name: &str) -> bool {
    let label = depended_by_label_key(namespace, name);
    let had_label = attached.labels_mut().remove(&label).is_some();
    let before = attached.spec.required_by.len();
    attached
        .spec
        .required_by
        .retain(|s| !(s.namespace == namespace && s.name == name));
    had_label || before != attached.spec.required_by.len()
}
