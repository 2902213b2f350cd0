//! Unit tests of the object watcher's pure steps.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::build::{
    check_ownership, detached_manifest, fingerprint, is_subset, needs_update, retain_cluster_fields,
};
use crate::error::Error;

fn mk_manifest() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": "nginx", "namespace": "default",
            "labels": {"app": "nginx", "karmada.io/managed": "true"},
            "annotations": {
                "work.karmada.io/name": "nginx-687f7fb96f",
                "resourcetemplate.karmada.io/managed-annotations": "resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,work.karmada.io/name",
                "resourcetemplate.karmada.io/managed-labels": "app,karmada.io/managed"
            }
        },
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}
    })
}

fn mk_observed() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": "nginx", "namespace": "default", "uid": "member-uid", "resourceVersion": "42",
            "generation": 3, "finalizers": ["member.io/f"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "x"}],
            "labels": {"app": "nginx", "karmada.io/managed": "true", "old": "gone-from-template", "member": "added"},
            "annotations": {
                "work.karmada.io/name": "nginx-687f7fb96f",
                "deployment.kubernetes.io/revision": "3",
                "member-note": "added",
                "resourcetemplate.karmada.io/managed-annotations": "resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,work.karmada.io/name",
                "resourcetemplate.karmada.io/managed-labels": "app,karmada.io/managed,old"
            }
        },
        "spec": {"replicas": 2, "progressDeadlineSeconds": 600,
                 "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx",
                                                      "terminationMessagePath": "/dev/termination-log"}]}}},
        "status": {"readyReplicas": 2}
    })
}

#[test]
fn generic_retention_keeps_member_owned_metadata_and_drops_removed_keys() {
    let mut desired = mk_manifest();
    retain_cluster_fields(&mut desired, &mk_observed());
    let meta = &desired["metadata"];
    assert_eq!(meta["resourceVersion"], json!("42"));
    assert_eq!(meta["finalizers"], json!(["member.io/f"]));
    assert_eq!(meta["ownerReferences"][0]["name"], json!("o"));
    // `old` was propagated before (listed in managed-labels) and is gone from the template: not kept.
    assert_eq!(
        meta["labels"],
        json!({"app": "nginx", "karmada.io/managed": "true", "member": "added"})
    );
    assert_eq!(meta["annotations"]["member-note"], json!("added"));
    assert_eq!(
        meta["annotations"]["deployment.kubernetes.io/revision"],
        json!("3")
    );
}

#[test]
fn retention_drops_desired_finalizers_when_the_member_has_none() {
    let mut desired = mk_manifest();
    desired["metadata"]["finalizers"] = json!(["mine"]);
    let mut observed = mk_observed();
    observed["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("finalizers");
    retain_cluster_fields(&mut desired, &observed);
    assert!(desired["metadata"].get("finalizers").is_none());
}

#[test]
fn unmanaged_objects_need_overwrite_permission() {
    let mut observed = mk_observed();
    observed["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("karmada.io/managed");
    let err = check_ownership(&mk_manifest(), &observed, "member1").unwrap_err();
    assert!(matches!(err, Error::Conflict { .. }));
    assert!(err.to_string().contains(
        "resource(kind=Deployment, default/nginx) already exists in the cluster member1"
    ));

    let mut overwrite = mk_manifest();
    overwrite["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] =
        json!("overwrite");
    assert!(check_ownership(&overwrite, &observed, "member1").is_ok());
    assert!(check_ownership(&mk_manifest(), &mk_observed(), "member1").is_ok());
}

#[test]
fn member_defaults_and_status_are_not_drift_but_changed_fields_are() {
    // The member copy of the current manifest: same managed lists, plus member-side additions.
    let in_sync = || {
        let mut observed = mk_observed();
        observed["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("old");
        observed["metadata"]["annotations"]["resourcetemplate.karmada.io/managed-labels"] =
            json!("app,karmada.io/managed");
        observed
    };
    let mut desired = mk_manifest();
    retain_cluster_fields(&mut desired, &in_sync());
    assert!(!needs_update(&desired, &in_sync()));
    // The template dropped label `old`: the lists differ, so the member is updated.
    let mut stale = mk_manifest();
    retain_cluster_fields(&mut stale, &mk_observed());
    assert!(needs_update(&stale, &mk_observed()));

    let mut scaled = in_sync();
    scaled["spec"]["replicas"] = json!(5);
    assert!(needs_update(&desired, &scaled));

    let mut new_image = in_sync();
    new_image["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    assert!(needs_update(&desired, &new_image));

    let mut extra_container = in_sync();
    extra_container["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "sidecar"}));
    assert!(
        needs_update(&desired, &extra_container),
        "lists must match element for element"
    );
}

#[test]
fn subset_compares_numbers_by_value_and_treats_empty_as_absent() {
    assert!(is_subset(
        &json!({"a": 1, "b": {}}),
        &json!({"a": 1.0, "c": 2})
    ));
    assert!(!is_subset(&json!({"a": 1}), &json!({"a": 2})));
    assert!(!is_subset(&json!({"a": "x"}), &json!({})));
}

#[test]
fn preserved_objects_lose_every_flotilla_key() {
    let manifest = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default",
            "labels": {"app": "a", "propagationpolicy.karmada.io/permanent-id": "p",
                       "resourcebinding.karmada.io/permanent-id": "r", "work.karmada.io/permanent-id": "w",
                       "karmada.io/managed": "true"},
            "annotations": {"note": "n", "propagationpolicy.karmada.io/name": "pp",
                            "propagationpolicy.karmada.io/namespace": "default",
                            "resourcebinding.karmada.io/name": "c-configmap",
                            "resourcebinding.karmada.io/namespace": "default",
                            "resourcetemplate.karmada.io/uid": "u", "resourcetemplate.karmada.io/generation": "1",
                            "work.karmada.io/name": "w", "work.karmada.io/namespace": "karmada-es-m1",
                            "resourcetemplate.karmada.io/managed-labels": "x",
                            "resourcetemplate.karmada.io/managed-annotations": "y",
                            "work.karmada.io/conflict-resolution": "abort"}}
    });
    let detached = detached_manifest(&manifest);
    assert_eq!(detached["metadata"]["labels"], json!({"app": "a"}));
    assert_eq!(
        detached["metadata"]["annotations"],
        json!({
            "note": "n", "work.karmada.io/conflict-resolution": "abort"
        })
    );
}

#[test]
fn fingerprints_follow_content_not_key_order() {
    let a = json!({"a": 1, "b": {"c": 2, "d": 3}});
    let b: Value = serde_json::from_str(r#"{"b": {"d": 3, "c": 2}, "a": 1}"#).unwrap();
    assert_eq!(fingerprint(&a), fingerprint(&b));
    assert_ne!(fingerprint(&a), fingerprint(&json!({"a": 2})));
}
