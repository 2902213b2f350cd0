use serde_json::{Value, json};

use super::{err, mk, ok};
use crate::layer::{Request, Response};

fn deps(object: Value) -> Value {
    match ok(Request::InterpretDependency { object }) {
        Response::Dependencies(d) => serde_json::to_value(d).unwrap_or_default(),
        other => panic!("unexpected {other:?}"),
    }
}

fn pod_spec() -> Value {
    json!({"serviceAccountName": "sa", "containers": [{"name": "c", "envFrom": [{"configMapRef": {"name": "cm"}}]}],
           "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data-web-0"}}, {"name": "w", "persistentVolumeClaim": {"claimName": "shared"}}]})
}

fn expected(namespace: &str, claims: &[&str]) -> Value {
    let mut refs = vec![
        json!({"apiVersion": "v1", "kind": "ConfigMap", "namespace": namespace, "name": "cm"}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "namespace": namespace, "name": "sa"}),
    ];
    refs.extend(claims.iter().map(|c| json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace, "name": c})));
    Value::Array(refs)
}

#[test]
fn workloads_depend_on_their_pod_template() {
    let template = json!({"template": {"spec": pod_spec()}});
    let cases = [
        mk("apps/v1", "Deployment", json!({ "spec": template })),
        mk("apps/v1", "ReplicaSet", json!({ "spec": template })),
        mk("apps/v1", "DaemonSet", json!({ "spec": template })),
        mk("batch/v1", "Job", json!({ "spec": template })),
        mk(
            "batch/v1",
            "CronJob",
            json!({"spec": {"schedule": "* * * * *", "jobTemplate": { "spec": template }}}),
        ),
        mk("v1", "Pod", json!({ "spec": pod_spec() })),
    ];
    for object in cases {
        let kind = object["kind"].clone();
        assert_eq!(
            deps(object),
            expected("ns", &["data-web-0", "shared"]),
            "{kind}"
        );
    }
    let mut cluster_scoped = mk("apps/v1", "Deployment", json!({ "spec": template }));
    if let Some(meta) = cluster_scoped["metadata"].as_object_mut() {
        meta.remove("namespace");
    }
    let refs = deps(cluster_scoped);
    assert!(
        refs.as_array()
            .into_iter()
            .flatten()
            .all(|r| r.get("namespace").is_none()),
        "namespace as written: {refs}"
    );
}

#[test]
fn statefulset_drops_claims_from_its_templates() {
    let sts = mk(
        "apps/v1",
        "StatefulSet",
        json!({"spec": {"template": {"spec": pod_spec()}, "volumeClaimTemplates": [{"metadata": {"name": "data-web-0"}}]}}),
    );
    assert_eq!(deps(sts), expected("ns", &["shared"]));
}

#[test]
fn ingress_and_service_import() {
    let ingress = mk(
        "networking.k8s.io/v1",
        "Ingress",
        json!({"spec": {"tls": [{"secretName": "tls-a"}, {"hosts": ["x"]}, {"secretName": "tls-a"}]}}),
    );
    assert_eq!(
        deps(ingress),
        json!([
            {"apiVersion": "v1", "kind": "Secret", "namespace": "ns", "name": "tls-a"},
            {"apiVersion": "v1", "kind": "Secret", "namespace": "ns", "name": "tls-a"}
        ])
    );
    let import = mk("multicluster.x-k8s.io/v1alpha1", "ServiceImport", json!({}));
    assert_eq!(
        deps(import),
        json!([
            {"apiVersion": "v1", "kind": "Service", "namespace": "ns", "name": "derived-web"},
            {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "namespace": "ns",
             "labelSelector": {"matchLabels": {"kubernetes.io/service-name": "derived-web"}}}
        ])
    );
    assert_eq!(
        deps(mk(
            "apps/v1",
            "Deployment",
            json!({"spec": {"template": {}}})
        )),
        json!([])
    );
    assert_eq!(
        err(Request::InterpretDependency {
            object: mk("v1", "Service", json!({}))
        }),
        "default interpreter for operation InterpretDependency not found"
    );
}
