use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use flotilla_interpreter::ResourceInterpreter;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn binding() -> ResourceBinding {
    serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
        "metadata": {"name": "web-deployment", "namespace": "default",
            "labels": {"resourcebinding.karmada.io/permanent-id": "rb-1",
                       "propagationpolicy.karmada.io/permanent-id": "pp-1"},
            "annotations": {"propagationpolicy.karmada.io/namespace": "default",
                            "propagationpolicy.karmada.io/name": "web-policy"}},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web"},
            "replicas": 3,
            "clusters": [{"name": "member2", "replicas": 2}, {"name": "member1", "replicas": 1}]},
        "status": {
            "conditions": [
                {"type": "FullyApplied", "status": "True", "reason": "FullyAppliedSuccess",
                 "message": "All works have been successfully applied", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": "Scheduled", "status": "True", "reason": "Success",
                 "message": "Binding has been scheduled successfully.", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "aggregatedStatus": [
                {"clusterName": "member2", "applied": true, "health": "Unhealthy", "status": {"readyReplicas": 1}},
                {"clusterName": "member1", "applied": true, "health": "Healthy", "status": {"readyReplicas": 1}}]}
    }))
    .unwrap()
}

fn work(cluster: &str, binding_id: &str, health: Option<&str>) -> Work {
    let mut status = json!({"conditions": [{"type": "Applied", "status": "True", "reason": "AppliedSuccessful",
        "message": "Manifest has been successfully applied", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    if let Some(health) = health {
        status["manifestStatuses"] = json!([{"identifier": {"ordinal": 0, "group": "apps", "version": "v1",
            "kind": "Deployment", "resource": "deployments", "namespace": "default", "name": "web"},
            "health": health}]);
    }
    serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
        "metadata": {"name": "web-687f7fb96f", "namespace": format!("karmada-es-{cluster}"),
                     "labels": {"resourcebinding.karmada.io/permanent-id": binding_id}},
        "spec": {"workload": {"manifests": []}},
        "status": status,
    }))
    .unwrap()
}

#[test]
fn a_binding_becomes_its_templates_journey_with_only_its_own_works() {
    let works = [
        work("member2", "rb-1", Some("Unhealthy")),
        work("member1", "rb-1", Some("Healthy")),
        work("member1", "another-binding", Some("Healthy")),
    ];
    let works: Vec<&Work> = works.iter().collect();
    let journeys = build([&binding()], &works, None);
    assert_eq!(journeys.len(), 1);
    let journey = &journeys[0];
    assert_eq!(journey.template.to_string(), "Deployment default/web");
    assert_eq!(
        journey.policy.as_ref().map(ToString::to_string).as_deref(),
        Some("PropagationPolicy default/web-policy")
    );
    assert_eq!(
        journey.binding.to_string(),
        "ResourceBinding default/web-deployment"
    );
    assert_eq!(journey.replicas, 3);
    let conditions: Vec<(&str, &str, &str)> = journey
        .conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.status.as_str(), c.reason.as_str()))
        .collect();
    assert_eq!(
        conditions,
        [
            ("Scheduled", "True", "Success"),
            ("FullyApplied", "True", "FullyAppliedSuccess")
        ]
    );
    let clusters: Vec<(&str, i32)> = journey
        .clusters
        .iter()
        .map(|c| (c.name.as_str(), c.replicas))
        .collect();
    assert_eq!(clusters, [("member1", 1), ("member2", 2)]);
    let works: Vec<(&str, &str, Option<&str>, Option<&str>)> = journey
        .works
        .iter()
        .map(|w| {
            (
                w.cluster.as_str(),
                w.namespace.as_str(),
                w.applied.as_ref().map(|c| c.status.as_str()),
                w.health.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        works,
        [
            (
                "member1",
                "karmada-es-member1",
                Some("True"),
                Some("Healthy")
            ),
            (
                "member2",
                "karmada-es-member2",
                Some("True"),
                Some("Unhealthy")
            ),
        ]
    );
    let aggregated: Vec<(&str, bool, Option<&str>)> = journey
        .aggregated
        .iter()
        .map(|a| (a.cluster.as_str(), a.applied, a.health.as_deref()))
        .collect();
    assert_eq!(
        aggregated,
        [
            ("member1", true, Some("Healthy")),
            ("member2", true, Some("Unhealthy"))
        ]
    );
    assert_eq!(
        journey.aggregated[0].status,
        Some(json!({"readyReplicas": 1}))
    );
    assert!(journey.operations.is_empty(), "no journal, no operations");
}

#[test]
fn a_cluster_binding_names_its_cluster_policy_and_a_fresh_binding_has_no_result_yet() {
    let binding: ClusterResourceBinding = serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ClusterResourceBinding",
        "metadata": {"name": "ns-a-namespace",
            "annotations": {"clusterpropagationpolicy.karmada.io/name": "all-namespaces"}},
        "spec": {"resource": {"apiVersion": "v1", "kind": "Namespace", "name": "ns-a"}}
    }))
    .unwrap();
    let journeys = build([&binding], &[], None);
    let journey = &journeys[0];
    assert_eq!(journey.template.to_string(), "Namespace ns-a");
    assert_eq!(
        journey.policy.as_ref().map(ToString::to_string).as_deref(),
        Some("ClusterPropagationPolicy all-namespaces")
    );
    assert_eq!(
        journey.binding.to_string(),
        "ClusterResourceBinding ns-a-namespace"
    );
    assert!(journey.conditions.is_empty() && journey.clusters.is_empty());
    assert!(journey.works.is_empty() && journey.aggregated.is_empty());
}

#[tokio::test]
async fn the_interpreters_journal_gives_each_operation_its_layer() {
    let interpreter = ResourceInterpreter::builder().native().build().unwrap();
    let template = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 3}});
    interpreter.get_replicas(template.clone()).await.unwrap();
    // A template of another namespace with the same name keeps its own record.
    let mut other = template;
    other["metadata"]["namespace"] = json!("other");
    interpreter.get_replicas(other).await.unwrap();

    let snapshot = from_lists(&[binding()], &[], &[], Some(interpreter.journal()));
    assert!(snapshot.interpreter);
    let operations = &snapshot.templates[0].operations;
    assert_eq!(operations.len(), 1);
    let replica = &operations[0];
    assert_eq!(
        (
            replica.operation.as_str(),
            replica.layer.as_str(),
            replica.calls,
            replica.failed
        ),
        ("InterpretReplica", "native", 1, false)
    );
    assert!(replica.last_error.is_none());
    assert!(!replica.rule.is_empty());
}

#[test]
fn snapshots_sort_templates_and_read_back_from_json() {
    let mut second = binding();
    second.spec.resource.name = "api".to_owned();
    let mut third = binding();
    third.spec.resource.namespace = "a-team".to_owned();
    let snapshot = from_lists(&[binding(), second, third], &[], &[], None);
    let names: Vec<String> = snapshot
        .templates
        .iter()
        .map(|j| j.template.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "Deployment a-team/web",
            "Deployment default/api",
            "Deployment default/web"
        ]
    );
    assert!(!snapshot.interpreter);
    let text = serde_json::to_string(&snapshot).unwrap();
    let read: Snapshot = serde_json::from_str(&text).unwrap();
    assert_eq!(read, snapshot);
}
