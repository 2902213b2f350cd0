//! Defaults and enum validation of the typed API: absent fields take the CRD defaults, invalid enum values are
//! rejected with an error naming the field.

use flotilla_api::decode::from_value;
use flotilla_api::policy::v1alpha1::{
    ConflictResolution, PreemptionBehavior, PropagationPolicy, PurgeMode, ReplicaSchedulingType,
};
use flotilla_api::work::v1alpha2::ResourceBinding;
use serde_json::json;

fn pp(spec: serde_json::Value) -> serde_json::Value {
    json!({
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": spec,
    })
}

#[test]
fn absent_policy_fields_take_crd_defaults() {
    let policy: PropagationPolicy = from_value(&pp(
        json!({"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap"}]}),
    ))
    .unwrap();
    assert_eq!(policy.spec.priority, 0);
    assert_eq!(policy.spec.preemption, PreemptionBehavior::Never);
    assert_eq!(policy.spec.conflict_resolution, ConflictResolution::Abort);
    assert_eq!(policy.spec.scheduler_name, "default-scheduler");
    assert!(
        policy.spec.placement.replica_scheduling.is_none(),
        "no replicaScheduling means Duplicated, left unset"
    );
}

#[test]
fn empty_replica_scheduling_means_divided() {
    let policy: PropagationPolicy = from_value(&pp(json!({
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
        "placement": {"replicaScheduling": {}},
    })))
    .unwrap();
    let strategy = policy.spec.placement.replica_scheduling.unwrap();
    assert_eq!(
        strategy.replica_scheduling_type,
        ReplicaSchedulingType::Divided
    );
    assert_eq!(strategy.replica_division_preference, None);
}

#[test]
fn failover_defaults_match_the_crd() {
    let policy: PropagationPolicy = from_value(&pp(json!({
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
        "failover": {"application": {"decisionConditions": {}}, "cluster": {}},
    })))
    .unwrap();
    let failover = policy.spec.failover.unwrap();
    let app = failover.application.unwrap();
    assert_eq!(app.decision_conditions.toleration_seconds, Some(300));
    assert_eq!(app.purge_mode, PurgeMode::Gracefully);
    assert_eq!(failover.cluster.unwrap().purge_mode, PurgeMode::Gracefully);
}

#[test]
fn a_value_of_the_wrong_type_names_the_field_and_value() {
    // An unknown string is kept (Karmada's field is a plain string); a number is no string at all.
    let err = from_value::<PropagationPolicy>(&pp(json!({
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
        "placement": {"replicaScheduling": {"replicaSchedulingType": 3}},
    })))
    .unwrap_err();
    assert_eq!(
        err.path,
        "spec.placement.replicaScheduling.replicaSchedulingType"
    );
    assert_eq!(err.kind, "PropagationPolicy");
    assert_eq!(err.name, "p");
    let message = err.source.to_string();
    assert!(
        message.contains("integer `3`") && message.contains("expected a string"),
        "{message}"
    );
    assert!(
        err.to_string()
            .contains("spec.placement.replicaScheduling.replicaSchedulingType"),
        "{err}"
    );
}

#[test]
fn a_wrong_type_in_a_list_names_the_index() {
    let err = from_value::<ResourceBinding>(&json!({
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "b"},
        "spec": {"resource": {"apiVersion": "v1", "kind": "Pod", "name": "x"}},
        "status": {"aggregatedStatus": [{"clusterName": "m1", "health": ["Fine"]}]},
    }))
    .unwrap_err();
    assert_eq!(err.path, "status.aggregatedStatus[0].health");
    assert!(err.source.to_string().contains("invalid type: sequence"));
}

#[test]
fn binding_conflict_resolution_defaults_to_abort() {
    let rb: ResourceBinding = from_value(&json!({
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {"resource": {"apiVersion": "v1", "kind": "Pod", "name": "x"}, "schedulePriority": {}},
    }))
    .unwrap();
    assert_eq!(rb.spec.conflict_resolution, ConflictResolution::Abort);
    assert_eq!(rb.spec.schedule_priority.unwrap().priority, 0);
}

#[test]
fn quantities_may_be_written_as_numbers() {
    // The CRD declares quantities int-or-string, so an API server stores `cpu: 2` as a number.
    let rb: ResourceBinding = from_value(&json!({
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "Pod", "name": "x"},
            "replicaRequirements": {"resourceRequest": {"cpu": 2, "memory": "1Gi"}},
        },
    }))
    .unwrap();
    let request = rb.spec.replica_requirements.unwrap().resource_request;
    assert_eq!(request["cpu"].0, "2");
    assert_eq!(request["memory"].0, "1Gi");
}
