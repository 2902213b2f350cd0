use serde_json::{Value, json};

use super::{err, mk, ok};
use crate::layer::{Request, Response};

fn healthy(object: Value) -> bool {
    match ok(Request::InterpretHealth { object }) {
        Response::Healthy(h) => h,
        other => panic!("unexpected {other:?}"),
    }
}

fn workload(kind: &str, spec: Value, status: Value) -> Value {
    mk(
        "apps/v1",
        kind,
        json!({"metadata": {"generation": 2}, "spec": spec, "status": status}),
    )
}

#[test]
fn workload_health_table() {
    let cases = [
        (
            "deployment rolled out",
            workload(
                "Deployment",
                json!({"replicas": 2}),
                json!({"observedGeneration": 2, "updatedReplicas": 2, "availableReplicas": 2}),
            ),
            true,
        ),
        (
            "deployment old generation",
            workload(
                "Deployment",
                json!({"replicas": 2}),
                json!({"observedGeneration": 1, "updatedReplicas": 2, "availableReplicas": 2}),
            ),
            false,
        ),
        (
            "deployment updating",
            workload(
                "Deployment",
                json!({"replicas": 2}),
                json!({"observedGeneration": 2, "updatedReplicas": 1, "availableReplicas": 1}),
            ),
            false,
        ),
        (
            "deployment unavailable",
            workload(
                "Deployment",
                json!({"replicas": 2}),
                json!({"observedGeneration": 2, "updatedReplicas": 2, "availableReplicas": 1}),
            ),
            false,
        ),
        (
            "deployment without replicas",
            workload("Deployment", json!({}), json!({"observedGeneration": 2})),
            true,
        ),
        (
            "statefulset rolled out",
            workload(
                "StatefulSet",
                json!({"replicas": 1}),
                json!({"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1}),
            ),
            true,
        ),
        (
            "statefulset updating",
            workload(
                "StatefulSet",
                json!({"replicas": 1}),
                json!({"observedGeneration": 2, "replicas": 1}),
            ),
            false,
        ),
        (
            "replicaset available",
            workload(
                "ReplicaSet",
                json!({"replicas": 2}),
                json!({"observedGeneration": 2, "replicas": 2, "availableReplicas": 2}),
            ),
            true,
        ),
        (
            "replicaset short",
            workload(
                "ReplicaSet",
                json!({"replicas": 2}),
                json!({"observedGeneration": 2, "replicas": 2, "availableReplicas": 1}),
            ),
            false,
        ),
        (
            "daemonset healthy",
            workload(
                "DaemonSet",
                json!({}),
                json!({"observedGeneration": 2, "desiredNumberScheduled": 2, "updatedNumberScheduled": 2, "numberAvailable": 2, "currentNumberScheduled": 2, "numberMisscheduled": 0, "numberReady": 2}),
            ),
            true,
        ),
        (
            "daemonset updating",
            workload(
                "DaemonSet",
                json!({}),
                json!({"observedGeneration": 2, "desiredNumberScheduled": 2, "updatedNumberScheduled": 1, "numberAvailable": 1, "currentNumberScheduled": 2, "numberMisscheduled": 0, "numberReady": 2}),
            ),
            false,
        ),
    ];
    for (name, object, expected) in cases {
        assert_eq!(healthy(object), expected, "{name}");
    }
}

#[test]
fn core_kind_health_table() {
    let cases = [
        (
            "cluster ip service",
            mk("v1", "Service", json!({"spec": {"type": "ClusterIP"}})),
            true,
        ),
        (
            "lb without address",
            mk(
                "v1",
                "Service",
                json!({"spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {"ingress": [{"hostname": ""}]}}}),
            ),
            false,
        ),
        (
            "lb with ip",
            mk(
                "v1",
                "Service",
                json!({"spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}),
            ),
            true,
        ),
        (
            "ingress with hostname",
            mk(
                "networking.k8s.io/v1",
                "Ingress",
                json!({"status": {"loadBalancer": {"ingress": [{"hostname": "a"}]}}}),
            ),
            true,
        ),
        (
            "ingress pending",
            mk("networking.k8s.io/v1", "Ingress", json!({})),
            false,
        ),
        (
            "pvc bound",
            mk(
                "v1",
                "PersistentVolumeClaim",
                json!({"status": {"phase": "Bound"}}),
            ),
            true,
        ),
        (
            "pvc pending",
            mk(
                "v1",
                "PersistentVolumeClaim",
                json!({"status": {"phase": "Pending"}}),
            ),
            false,
        ),
        (
            "pod succeeded",
            mk("v1", "Pod", json!({"status": {"phase": "Succeeded"}})),
            true,
        ),
        (
            "pod running ready",
            mk(
                "v1",
                "Pod",
                json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
            ),
            true,
        ),
        (
            "pod running not ready",
            mk(
                "v1",
                "Pod",
                json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}}),
            ),
            false,
        ),
        (
            "pod pending",
            mk("v1", "Pod", json!({"status": {"phase": "Pending"}})),
            false,
        ),
        (
            "pdb healthy",
            mk(
                "policy/v1",
                "PodDisruptionBudget",
                json!({"status": {"currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 2, "disruptionsAllowed": 0}}),
            ),
            true,
        ),
        (
            "pdb short",
            mk(
                "policy/v1",
                "PodDisruptionBudget",
                json!({"status": {"currentHealthy": 1, "desiredHealthy": 2, "expectedPods": 2, "disruptionsAllowed": 0}}),
            ),
            false,
        ),
    ];
    for (name, object, expected) in cases {
        assert_eq!(healthy(object), expected, "{name}");
    }
}

#[test]
fn health_errors() {
    let bad = mk(
        "apps/v1",
        "Deployment",
        json!({"status": {"updatedReplicas": "all"}}),
    );
    assert!(err(Request::InterpretHealth { object: bad }).contains("Deployment ns/web"));
    let job = mk("batch/v1", "Job", json!({}));
    assert_eq!(
        err(Request::InterpretHealth { object: job }),
        r#"default InterpretHealth interpreter for "batch/v1, Kind=Job" not found"#
    );
}
