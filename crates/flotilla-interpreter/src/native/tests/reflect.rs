use serde_json::{Value, json};

use super::{err, mk, ok};
use crate::layer::{Request, Response};

fn reflect(object: Value) -> Option<Value> {
    match ok(Request::InterpretStatus { object }) {
        Response::Status(s) => s,
        other => panic!("unexpected {other:?}"),
    }
}

fn member(api: &str, kind: &str, status: Value) -> Value {
    mk(
        api,
        kind,
        json!({"metadata": {"generation": 3, "annotations": {"resourcetemplate.karmada.io/generation": "7"}}, "status": status}),
    )
}

#[test]
fn workloads_reflect_counters_with_generations() {
    let cases = [
        (
            member(
                "apps/v1",
                "Deployment",
                json!({"observedGeneration": 3, "replicas": 2, "readyReplicas": 0, "conditions": []}),
            ),
            json!({"generation": 3, "resourceTemplateGeneration": 7, "observedGeneration": 3, "replicas": 2}),
        ),
        (
            member("apps/v1", "ReplicaSet", json!({"replicas": 0})),
            json!({"generation": 3, "resourceTemplateGeneration": 7, "replicas": 0}),
        ),
        (
            member(
                "apps/v1",
                "DaemonSet",
                json!({"currentNumberScheduled": 1, "desiredNumberScheduled": 1, "numberMisscheduled": 0, "numberReady": 1}),
            ),
            json!({"generation": 3, "resourceTemplateGeneration": 7, "currentNumberScheduled": 1, "desiredNumberScheduled": 1, "numberMisscheduled": 0, "numberReady": 1}),
        ),
        (
            member(
                "apps/v1",
                "StatefulSet",
                json!({"replicas": 2, "observedGeneration": 3, "currentReplicas": 2}),
            ),
            // Karmada reflects no observedGeneration for StatefulSets.
            json!({"generation": 3, "resourceTemplateGeneration": 7, "replicas": 2, "availableReplicas": 0, "currentReplicas": 2}),
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(reflect(input), Some(expected));
    }
    let empty = mk(
        "apps/v1",
        "Deployment",
        json!({"metadata": {"annotations": {"resourcetemplate.karmada.io/generation": "0"}}, "status": {}}),
    );
    assert_eq!(
        reflect(empty),
        None,
        "an empty Deployment result is no status"
    );
}

#[test]
fn workloads_need_the_template_generation_annotation() {
    let missing = mk("apps/v1", "Deployment", json!({"status": {"replicas": 1}}));
    assert!(
        err(Request::InterpretStatus { object: missing })
            .contains("resourcetemplate.karmada.io/generation")
    );
    let bad = mk(
        "apps/v1",
        "StatefulSet",
        json!({"metadata": {"annotations": {"resourcetemplate.karmada.io/generation": "x"}}, "status": {}}),
    );
    assert!(err(Request::InterpretStatus { object: bad }).contains("not an integer"));
    let no_status = mk("apps/v1", "Deployment", json!({}));
    assert_eq!(
        reflect(no_status),
        None,
        "no status is checked before the annotation"
    );
}

#[test]
fn specific_and_generic_reflection() {
    let lb = mk(
        "v1",
        "Service",
        json!({"spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}, "conditions": [{"type": "x"}]}}),
    );
    assert_eq!(
        reflect(lb),
        Some(json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}))
    );
    let cluster_ip = mk("v1", "Service", json!({"status": {"loadBalancer": {}}}));
    assert_eq!(reflect(cluster_ip), None);

    let job = mk(
        "batch/v1",
        "Job",
        json!({"status": {"active": 1, "succeeded": 0, "ready": 1, "startTime": "2026-01-01T00:00:00Z"}}),
    );
    assert_eq!(
        reflect(job),
        Some(json!({"active": 1, "startTime": "2026-01-01T00:00:00Z"}))
    );

    let pdb = mk(
        "policy/v1",
        "PodDisruptionBudget",
        json!({"status": {"currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1, "disruptionsAllowed": 0, "observedGeneration": 2}}),
    );
    assert_eq!(
        reflect(pdb),
        Some(
            json!({"currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1, "disruptionsAllowed": 0})
        )
    );

    let hpa = mk(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        json!({"status": {"desiredReplicas": 2, "currentMetrics": [{"type": "Resource"}]}}),
    );
    assert_eq!(
        reflect(hpa),
        Some(json!({"desiredReplicas": 2, "currentMetrics": null}))
    );

    let custom = mk(
        "example.io/v1",
        "Widget",
        json!({"status": {"anything": [1, null]}}),
    );
    assert_eq!(reflect(custom), Some(json!({"anything": [1, null]})));
    let ingress = mk(
        "networking.k8s.io/v1",
        "Ingress",
        json!({"status": {"loadBalancer": {}}}),
    );
    assert_eq!(reflect(ingress), Some(json!({"loadBalancer": {}})));
    assert_eq!(reflect(mk("v1", "ConfigMap", json!({"data": {}}))), None);
    assert!(
        err(Request::InterpretStatus {
            object: mk("v1", "ConfigMap", json!({"status": "up"}))
        })
        .contains("status")
    );
}
