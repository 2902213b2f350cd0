//! Worked examples of replica division (static, dynamic and aggregated, first schedules, scale-ups and
//! scale-downs), each as Karmada's scheduler answers it, through the whole pipeline.

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::policy::v1alpha1::Placement;
use flotilla_api::work::v1alpha2::ResourceBindingSpec;

use super::*;
use crate::scheduler::ErrorKind;

fn abc(pods: [i64; 3]) -> Vec<Cluster> {
    vec![
        cluster("A", pods[0]),
        cluster("B", pods[1]),
        cluster("C", pods[2]),
    ]
}

fn with_uid(mut spec: ResourceBindingSpec, uid: &str) -> ResourceBindingSpec {
    spec.resource.uid = uid.into();
    spec
}

#[test]
fn static_two_to_one() {
    let spec = binding(3, static_weights(&[("A", 2), ("B", 1)]));
    assert_eq!(
        result(&run(&spec, &abc([100; 3]))),
        map(&[("A", 2), ("B", 1)])
    );
}

#[test]
fn static_equal_weights_tie_break_by_uid_parity() {
    let even = uid_with_parity(false);
    let odd = uid_with_parity(true);
    for placement in [
        static_weights(&[("A", 1), ("B", 1), ("C", 1)]),
        divided_without_weights(),
    ] {
        let spec = binding(10, placement);
        let got = result(&run(&with_uid(spec.clone(), &even), &abc([100; 3])));
        assert_eq!(got, map(&[("A", 4), ("B", 3), ("C", 3)]), "UID even");
        let got = result(&run(&with_uid(spec, &odd), &abc([100; 3])));
        assert_eq!(got, map(&[("A", 3), ("B", 3), ("C", 4)]), "UID odd");
    }
}

/// `replicaScheduling: {}`: Divided, defaulted to Weighted, no weight preference ⇒ equal weights.
fn divided_without_weights() -> Placement {
    Placement {
        replica_scheduling: Some(Default::default()),
        ..Default::default()
    }
}

#[test]
fn static_one_to_two_and_one_to_three() {
    let two = binding(9, static_weights(&[("A", 1), ("B", 2)]));
    assert_eq!(
        result(&run(&two, &abc([100; 3]))),
        map(&[("A", 3), ("B", 6)])
    );
    let three = binding(9, static_weights(&[("A", 1), ("B", 3)]));
    assert_eq!(
        result(&run(&three, &abc([100; 3]))),
        map(&[("A", 2), ("B", 7)])
    );
}

#[test]
fn static_three_two_one_fewer_seats_win() {
    let spec = binding(5, static_weights(&[("A", 3), ("B", 2), ("C", 1)]));
    assert_eq!(
        result(&run(&spec, &abc([100; 3]))),
        map(&[("A", 2), ("B", 2), ("C", 1)])
    );
}

#[test]
fn static_ignores_the_previous_result() {
    let mut spec = binding(3, static_weights(&[("A", 2), ("B", 1)]));
    spec.clusters = targets(&[("A", 0), ("B", 3)]);
    assert_eq!(
        result(&run(&spec, &abc([100; 3]))),
        map(&[("A", 2), ("B", 1)])
    );
}

#[test]
fn dynamic_first_schedule() {
    let spec = binding(12, dynamic_weight());
    assert_eq!(
        result(&run(&spec, &abc([6, 12, 18]))),
        map(&[("A", 2), ("B", 4), ("C", 6)])
    );
}

#[test]
fn dynamic_scale_up_divides_only_the_delta() {
    let mut spec = binding(18, dynamic_weight());
    spec.clusters = targets(&[("A", 2), ("B", 4), ("C", 6)]);
    assert_eq!(
        result(&run(&spec, &abc([4, 8, 12]))),
        map(&[("A", 3), ("B", 6), ("C", 9)])
    );
}

#[test]
fn dynamic_scale_down_uses_previous_as_weights() {
    let mut spec = binding(6, dynamic_weight());
    spec.clusters = targets(&[("A", 2), ("B", 4), ("C", 6)]);
    assert_eq!(
        result(&run(&spec, &abc([0, 0, 0]))),
        map(&[("A", 1), ("B", 2), ("C", 3)])
    );
}

#[test]
fn aggregated_first_schedule_packs_one_cluster() {
    let spec = binding(12, aggregated());
    assert_eq!(result(&run(&spec, &abc([6, 12, 18]))), map(&[("C", 12)]));
}

#[test]
fn aggregated_twenty_replicas_uses_two_clusters() {
    let spec = binding(20, aggregated());
    assert_eq!(
        result(&run(&spec, &abc([6, 12, 18]))),
        map(&[("B", 8), ("C", 12)])
    );
}

#[test]
fn aggregated_scale_up_prefers_clusters_holding_replicas() {
    let mut spec = binding(20, aggregated());
    spec.clusters = targets(&[("C", 12)]);
    assert_eq!(
        result(&run(&spec, &abc([6, 12, 6]))),
        map(&[("B", 5), ("C", 15)])
    );
}

#[test]
fn aggregated_scale_down_shrinks_the_cluster_count() {
    let mut spec = binding(6, aggregated());
    spec.clusters = targets(&[("A", 2), ("B", 4), ("C", 6)]);
    assert_eq!(result(&run(&spec, &abc([0, 0, 0]))), map(&[("C", 6)]));
}

#[test]
fn duplicated_gives_every_cluster_all_replicas() {
    let spec = binding(3, Placement::default());
    assert_eq!(
        result(&run(&spec, &abc([1, 1, 1]))),
        map(&[("A", 3), ("B", 3), ("C", 3)])
    );
}

#[test]
fn insufficient_capacity_is_unschedulable_and_keeps_the_result() {
    let mut spec = binding(20, dynamic_weight());
    spec.clusters = Vec::new();
    let outcome = run(&spec, &abc([6, 6, 6]));
    let err = outcome.error.expect("an error");
    assert_eq!(err.kind, ErrorKind::Unschedulable);
    assert_eq!(
        err.message,
        "failed to assign replicas: failed to scale up: Clusters available replicas 18 are not enough to schedule."
    );
    assert_eq!(outcome.clusters, None, "spec.clusters untouched");
}

#[test]
fn steady_equal_total_keeps_the_previous_result() {
    let mut spec = binding(12, dynamic_weight());
    spec.clusters = targets(&[("A", 5), ("B", 7)]);
    assert_eq!(
        result(&run(&spec, &abc([100, 100, 100]))),
        map(&[("A", 5), ("B", 7)])
    );
}

#[test]
fn fresh_reschedule_redivides_everything() {
    use flotilla_api::work::v1alpha2::ResourceBindingStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    let mut spec = binding(12, dynamic_weight());
    spec.clusters = targets(&[("A", 12)]);
    spec.reschedule_triggered_at = Some(Time(jiff::Timestamp::from_second(2000).unwrap()));
    let status = ResourceBindingStatus {
        last_scheduled_time: Some(Time(jiff::Timestamp::from_second(1000).unwrap())),
        ..Default::default()
    };
    // Weights are allocatable + current replicas: A 0+12, B 12, C 12 ⇒ equal thirds.
    let outcome = crate::scheduler::schedule_binding(
        RB,
        &spec,
        &status,
        &abc([0, 12, 12]),
        Default::default(),
    );
    assert_eq!(result(&outcome), map(&[("A", 4), ("B", 4), ("C", 4)]));
}

#[test]
fn non_workloads_get_every_cluster_without_replicas() {
    let mut spec = binding(0, static_weights(&[("A", 1)]));
    spec.resource.kind = "ConfigMap".into();
    spec.resource.api_version = "v1".into();
    let mut clusters = abc([0, 0, 0]);
    for c in &mut clusters {
        c.status.as_mut().unwrap().api_enablements[0] =
            flotilla_api::cluster::v1alpha1::APIEnablement {
                group_version: "v1".into(),
                resources: vec![flotilla_api::cluster::v1alpha1::APIResource {
                    name: "configmaps".into(),
                    kind: "ConfigMap".into(),
                }],
            };
    }
    assert_eq!(
        result(&run(&spec, &clusters)),
        map(&[("A", 0), ("B", 0), ("C", 0)])
    );
}

#[test]
fn duplicated_scaled_to_zero_keeps_its_clusters() {
    let mut spec = binding(0, Placement::default());
    spec.replica_requirements = Some(Default::default());
    assert_eq!(
        result(&run(&spec, &abc([5, 5, 5]))),
        map(&[("A", 0), ("B", 0), ("C", 0)])
    );
}

/// A policy as a newer Karmada may write it: `replicaScheduling` with the given type and preference.
fn policy_placement(scheduling: serde_json::Value) -> Placement {
    let policy: flotilla_api::policy::v1alpha1::PropagationPolicy =
        serde_json::from_value(serde_json::json!({
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "PropagationPolicy",
            "metadata": {"name": "future", "namespace": "default"},
            "spec": {
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
                "placement": {"replicaScheduling": scheduling}
            }
        }))
        .expect("a policy with values this version does not know still decodes");
    policy.spec.placement
}

#[test]
fn a_division_preference_karmada_does_not_know_is_refused_with_its_value() {
    let placement = policy_placement(serde_json::json!({
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Future"
    }));
    let outcome = run(&binding(3, placement), &abc([100; 3]));
    let err = outcome.error.expect("an error");
    assert_eq!(err.kind, ErrorKind::Other);
    assert_eq!(
        err.message,
        "failed to assign replicas: unsupported replica scheduling strategy, replicaSchedulingType: Divided, \
         replicaDivisionPreference: Future, please try another scheduling strategy"
    );
    assert_eq!(outcome.clusters, None, "spec.clusters untouched");
    // The placement the scheduler reports (for the applied-placement annotation) keeps the value as written.
    let applied = serde_json::to_value(&outcome.placement).unwrap();
    assert_eq!(
        applied["replicaScheduling"]["replicaDivisionPreference"],
        "Future"
    );
}

#[test]
fn a_scheduling_type_karmada_does_not_know_is_neither_duplicated_nor_divided() {
    // Not Divided, so no division preference is defaulted; not Duplicated, so no cluster gets every replica.
    let placement = policy_placement(serde_json::json!({"replicaSchedulingType": "Tripled"}));
    let outcome = run(&binding(3, placement), &abc([100; 3]));
    assert_eq!(
        outcome.error.expect("an error").message,
        "failed to assign replicas: unsupported replica scheduling strategy, replicaSchedulingType: Tripled, \
         replicaDivisionPreference: , please try another scheduling strategy"
    );
}
