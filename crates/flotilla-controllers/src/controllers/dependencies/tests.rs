//! Unit tests of the dependencies distributor's pure steps.

use flotilla_api::config::v1alpha1::{DependentObjectReference, OrdLabelSelector};
use flotilla_api::policy::v1alpha1::ConflictResolution;
use flotilla_api::work::v1alpha2::{
    BindingSnapshot, ResourceBinding, ResourceBindingSpec, TargetCluster,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::ResourceExt;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::build::{
    combined_policy, desired_attached, detach, entry_matches, merge_required_by, snapshot_of,
};

fn mk_independent() -> ResourceBinding {
    let mut rb = ResourceBinding::new(
        "nginx-deployment",
        ResourceBindingSpec {
            propagate_deps: true,
            clusters: vec![TargetCluster {
                name: "member1".into(),
                replicas: 2,
                ..TargetCluster::default()
            }],
            conflict_resolution: ConflictResolution::Overwrite,
            preserve_resources_on_deletion: Some(true),
            ..ResourceBindingSpec::default()
        },
    );
    rb.metadata.namespace = Some("default".into());
    rb
}

fn mk_entry(name: &str, selector: Option<&str>) -> DependentObjectReference {
    DependentObjectReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: "default".into(),
        name: name.into(),
        label_selector: selector.map(|app| {
            OrdLabelSelector(LabelSelector {
                match_labels: Some([("app".into(), app.into())].into()),
                ..LabelSelector::default()
            })
        }),
    }
}

#[test]
fn entries_match_by_name_or_by_labels() {
    let labels = [("app".to_owned(), "web".to_owned())].into();
    assert!(entry_matches(
        &mk_entry("cfg", None),
        "v1",
        "ConfigMap",
        "default",
        "cfg",
        &labels
    ));
    assert!(!entry_matches(
        &mk_entry("cfg", None),
        "v1",
        "ConfigMap",
        "default",
        "other",
        &labels
    ));
    assert!(!entry_matches(
        &mk_entry("cfg", None),
        "v1",
        "Secret",
        "default",
        "cfg",
        &labels
    ));
    assert!(!entry_matches(
        &mk_entry("cfg", None),
        "v1",
        "ConfigMap",
        "other",
        "cfg",
        &labels
    ));
    assert!(entry_matches(
        &mk_entry("", Some("web")),
        "v1",
        "ConfigMap",
        "default",
        "any",
        &labels
    ));
    assert!(!entry_matches(
        &mk_entry("", Some("db")),
        "v1",
        "ConfigMap",
        "default",
        "any",
        &labels
    ));
    assert!(!entry_matches(
        &mk_entry("", None),
        "v1",
        "ConfigMap",
        "default",
        "any",
        &labels
    ));
}

#[test]
fn attached_binding_carries_the_referrer_snapshot_and_policy() {
    let dependency = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "default", "uid": "cm-uid", "resourceVersion": "3"}});
    let attached = desired_attached(&mk_independent(), "rb-id", &dependency);
    assert_eq!(attached.name_any(), "cfg-configmap");
    assert_eq!(attached.namespace().as_deref(), Some("default"));
    assert_eq!(
        attached
            .labels()
            .get("resourcebinding.karmada.io/depended-by-5bdc5c4dcf")
            .map(String::as_str),
        Some("rb-id")
    );
    assert_eq!(
        attached.finalizers(),
        &["karmada.io/binding-controller".to_owned()]
    );
    assert_eq!(attached.owner_references()[0].uid, "cm-uid");
    assert_eq!(attached.spec.placement, None);
    assert_eq!(
        attached.spec.required_by,
        vec![snapshot_of(&mk_independent())]
    );
    assert_eq!(
        attached.spec.conflict_resolution,
        ConflictResolution::Overwrite
    );
    assert_eq!(attached.spec.resource.uid, "cm-uid");
}

#[test]
fn snapshots_merge_by_binding_and_detach_removes_label_and_snapshot() {
    let mut list = vec![BindingSnapshot {
        namespace: "default".into(),
        name: "a".into(),
        clusters: vec![],
    }];
    let mut newer = snapshot_of(&mk_independent());
    merge_required_by(&mut list, newer.clone());
    assert_eq!(list.len(), 2);
    newer.clusters.clear();
    merge_required_by(&mut list, newer);
    assert_eq!(list.len(), 2);
    assert!(list[1].clusters.is_empty());

    let dependency = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default", "uid": "u"}});
    let mut attached = desired_attached(&mk_independent(), "rb-id", &dependency);
    assert!(detach(&mut attached, "default", "nginx-deployment"));
    assert!(attached.spec.required_by.is_empty());
    assert!(attached.labels().is_empty());
    assert!(!detach(&mut attached, "default", "nginx-deployment"));
}

#[test]
fn referrers_combine_to_the_most_permissive_policy() {
    let abort = ResourceBindingSpec::default();
    let overwrite = ResourceBindingSpec {
        conflict_resolution: ConflictResolution::Overwrite,
        preserve_resources_on_deletion: Some(true),
        ..ResourceBindingSpec::default()
    };
    let overwrite_only = ResourceBindingSpec {
        conflict_resolution: ConflictResolution::Overwrite,
        ..ResourceBindingSpec::default()
    };
    let both = combined_policy(&[&abort, &overwrite]);
    assert_eq!(
        (&both.resolution, both.preserve),
        (&ConflictResolution::Overwrite, Some(true))
    );
    assert_eq!(
        both.conflict_message().as_deref(),
        Some(
            "Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort); \
             PreserveResourcesOnDeletion conflicted (true vs false)."
        )
    );

    // An unset preserve counts as false, so only the resolutions disagree.
    let resolution_only = combined_policy(&[&abort, &overwrite_only]);
    assert_eq!(
        (&resolution_only.resolution, resolution_only.preserve),
        (&ConflictResolution::Overwrite, Some(false))
    );
    assert_eq!(
        resolution_only.conflict_message().as_deref(),
        Some(
            "Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort)."
        )
    );
    let preserve_only = combined_policy(&[&overwrite_only, &overwrite]);
    assert_eq!(preserve_only.preserve, Some(true));
    assert_eq!(
        preserve_only.conflict_message().as_deref(),
        Some(
            "Dependency policy conflict detected: PreserveResourcesOnDeletion conflicted (true vs false)."
        )
    );

    let agreed = combined_policy(&[&abort, &abort]);
    assert_eq!(
        (
            &agreed.resolution,
            agreed.preserve,
            agreed.conflict_message()
        ),
        (&ConflictResolution::Abort, Some(false), None)
    );
    let nobody = combined_policy(&[]);
    assert_eq!(
        (
            &nobody.resolution,
            nobody.preserve,
            nobody.conflict_message()
        ),
        (&ConflictResolution::Abort, None, None)
    );
}
