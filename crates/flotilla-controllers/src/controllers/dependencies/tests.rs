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
    assert_eq!(
        combined_policy(&[&abort, &overwrite]),
        (ConflictResolution::Overwrite, Some(true), true)
    );
    assert_eq!(
        combined_policy(&[&abort, &abort]),
        (ConflictResolution::Abort, Some(false), false)
    );
    assert_eq!(
        combined_policy(&[]),
        (ConflictResolution::Abort, None, false)
    );
}
