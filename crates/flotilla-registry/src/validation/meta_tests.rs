use super::*;
use crate::validation::invalid_status;
use serde_json::json;

const CM: KindInfo<'static> = KindInfo {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    namespaced: true,
    crd_version: None,
};
const NS: KindInfo<'static> = KindInfo {
    group: "",
    version: "v1",
    kind: "Namespace",
    namespaced: false,
    crd_version: None,
};

fn errors_of(obj: Value, kind: &KindInfo<'_>) -> Vec<String> {
    validate_object_meta(&obj, kind, crate::kinds::name_rule(kind))
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn names_follow_the_rule_of_their_kind() {
    let role = KindInfo::builtin("rbac.authorization.k8s.io", "v1", "ClusterRole", false);
    let svc = KindInfo::builtin("", "v1", "Service", true);
    let version = json!({"name": "v1"});
    let cr = KindInfo::custom("x.io", "v1", "Foo", true, &version);
    let core_event = KindInfo::builtin("", "v1", "Event", true);
    let new_event = KindInfo::builtin("events.k8s.io", "v1", "Event", true);
    let cases: Vec<(&KindInfo<'_>, &str, bool)> = vec![
        (&CM, "web.config-1", true),
        (&CM, "Web", false),
        (&CM, "a..b", false),
        (&NS, "team-a", true),
        (&NS, "team.a", false),
        (&svc, "web", true),
        (&svc, "1web", false),
        (&role, "system:controller:karmada", true),
        (&role, "a/b", false),
        (&role, "..", false),
        (&cr, "my.foo", true),
        (&cr, "My_Foo", false),
        // kube-apiserver checks no syntax in the names of core Events, only in those of events.k8s.io.
        (&core_event, "web.", true),
        (&core_event, "We_b", true),
        (&new_event, "We_b", false),
    ];
    for (kind, name, ok) in cases {
        let ns = if kind.namespaced {
            json!("d")
        } else {
            Value::Null
        };
        let errs = errors_of(json!({"metadata": {"name": name, "namespace": ns}}), kind);
        assert_eq!(errs.is_empty(), ok, "{} {name}: {errs:?}", kind.kind);
    }
    assert_eq!(crate::kinds::name_rule(&NS), NameRule::Dns1123Label);
    assert_eq!(crate::kinds::name_rule(&role), NameRule::PathSegment);
}

#[test]
fn generate_name_and_required_name() {
    assert!(
        errors_of(
            json!({"metadata": {"generateName": "web-", "name": "web-x7k2p", "namespace": "d"}}),
            &CM
        )
        .is_empty()
    );
    assert_eq!(
        errors_of(json!({"metadata": {"namespace": "d"}}), &CM),
        ["metadata.name: Required value: name or generateName is required"]
    );
    let errs = errors_of(
        json!({"metadata": {"generateName": "Web-", "name": "x", "namespace": "d"}}),
        &CM,
    );
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].starts_with(
            "metadata.generateName: Invalid value: \"Web-\": a lowercase RFC 1123 subdomain"
        ),
        "{errs:?}"
    );
}

#[test]
fn namespace_presence_depends_on_scope() {
    assert_eq!(
        errors_of(json!({"metadata": {"name": "x"}}), &CM),
        ["metadata.namespace: Required value"]
    );
    assert_eq!(
        errors_of(json!({"metadata": {"name": "x", "namespace": "d"}}), &NS),
        ["metadata.namespace: Forbidden: not allowed on this type"]
    );
    let errs = errors_of(
        json!({"metadata": {"name": "x", "namespace": "Bad_NS"}}),
        &CM,
    );
    assert!(
        errs[0].starts_with("metadata.namespace: Invalid value: \"Bad_NS\""),
        "{errs:?}"
    );
}

#[test]
fn labels_annotations_and_the_annotation_budget() {
    let errs = errors_of(
        json!({"metadata": {"name": "x", "namespace": "d", "labels": {"app": "a b", "-bad": "ok"}}}),
        &CM,
    );
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(
        errs.iter()
            .all(|e| e.starts_with("metadata.labels: Invalid value: "))
    );
    assert!(
        errs.iter()
            .any(|e| e.contains("\"-bad\": name part must consist of"))
    );
    assert!(
        errs.iter()
            .any(|e| e.contains("\"a b\": a valid label must be an empty string"))
    );
    // Annotation keys are case-insensitive qualified names; values are free.
    assert!(errors_of(json!({"metadata": {"name": "x", "namespace": "d", "annotations": {"Example.COM/Key": "any value / at all"}}}), &CM).is_empty());
    let big = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT);
    let obj = json!({"metadata": {"name": "crd", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": big}}});
    let errs = validate_object_meta(&obj, &NS, crate::kinds::name_rule(&NS));
    assert_eq!(
        errs.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    );
    let status = invalid_status(
        "CustomResourceDefinition",
        "apiextensions.k8s.io",
        "crd",
        &errs,
    );
    assert_eq!(
        status.message,
        "CustomResourceDefinition.apiextensions.k8s.io \"crd\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes"
    );
    assert_eq!(
        status.details.map(|d| d.causes[0].reason.clone()),
        Some("FieldValueTooLong".to_string())
    );
    // Exactly at the limit is fine.
    let exact = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT - 1);
    assert!(
        errors_of(
            json!({"metadata": {"name": "x", "annotations": {"k": exact}}}),
            &NS
        )
        .is_empty()
    );
    assert_eq!(
        errors_of(
            json!({"metadata": {"name": "x", "namespace": "d", "labels": {"a": 1}}}),
            &CM
        ),
        ["metadata.labels: Invalid value: 1: must be a string"]
    );
}

#[test]
fn owner_references_and_finalizers() {
    let obj = json!({"metadata": {"name": "x", "namespace": "d", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "1", "controller": true},
        {"apiVersion": "", "kind": "", "name": "", "uid": ""},
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "2", "controller": true}]}});
    let errs = errors_of(obj, &CM);
    assert_eq!(
        &errs[..4],
        [
            "metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty",
            "metadata.ownerReferences.kind: Invalid value: \"\": kind must not be empty",
            "metadata.ownerReferences.name: Invalid value: \"\": name must not be empty",
            "metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty",
        ]
    );
    assert!(errs[4].ends_with("Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/rs and Pod/p"), "{errs:?}");
    let errs = errors_of(
        json!({"metadata": {"name": "x", "namespace": "d", "finalizers": ["example.com/f", "bad finalizer", "orphan", "foregroundDeletion"]}}),
        &CM,
    );
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0].starts_with("metadata.finalizers: Invalid value: \"bad finalizer\""));
    assert!(errs[1].ends_with("finalizer orphan and foregroundDeletion cannot be both set"));
    let errs = errors_of(
        json!({"metadata": {"name": "x", "namespace": "d", "ownerReferences": [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}]}}),
        &CM,
    );
    assert!(
        errs[0].ends_with("/v1, Kind=Event is disallowed from being an owner"),
        "{errs:?}"
    );
}

#[test]
fn managed_fields_entries_are_checked() {
    let obj = json!({"metadata": {"name": "x", "namespace": "d", "managedFields": [
        {"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1"},
        {"manager": "m", "operation": "Patch", "fieldsType": "FieldsV2"}]}});
    assert_eq!(
        errors_of(obj, &CM),
        [
            "metadata.managedFields[1].operation: Invalid value: \"Patch\": must be `Apply` or `Update`",
            "metadata.managedFields[1].fieldsType: Invalid value: \"FieldsV2\": must be `FieldsV1`",
        ]
    );
}

#[test]
fn updates_keep_identity_and_refuse_new_finalizers_while_deleting() {
    let old = json!({"metadata": {"name": "x", "namespace": "d", "uid": "u1", "finalizers": ["a"], "deletionTimestamp": "2026-11-22T10:00:00Z"}});
    let mut new = old.clone();
    new["metadata"]["finalizers"] = json!(["a", "c", "b"]);
    let errs: Vec<String> = validate_object_meta_update(&new, &old)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        [
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"b\", \"c\"}"
        ]
    );
    new["metadata"]["finalizers"] = json!([]);
    assert!(
        validate_object_meta_update(&new, &old).is_empty(),
        "removing finalizers is fine"
    );
    new["metadata"]["name"] = json!("y");
    new["metadata"]["uid"] = json!("");
    let errs: Vec<String> = validate_object_meta_update(&new, &old)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        ["metadata.name: Invalid value: \"y\": field is immutable"]
    );
    new["metadata"]["uid"] = json!("u2");
    assert_eq!(validate_object_meta_update(&new, &old).len(), 2);
}
