use std::collections::BTreeSet;
use std::time::Duration;

use flotilla_api::policy::v1alpha1::{
    ApplicationFailoverBehavior, DecisionConditions, PurgeMode, StatePreservation,
    StatePreservationRule,
};
use flotilla_api::work::v1alpha2::{
    AggregatedStatusItem, GracefulEvictionTask, ResourceBindingSpec, ResourceHealth, TargetCluster,
};
use flotilla_core::state_preservation::StatePreservationError;
use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use super::build::{
    Detection, EvictError, Gates, Unhealthy, detect, evict, forget, split_by_health,
};
use crate::controllers::binding::build::preserved_labels;

const PRODUCER: &str = "resource-binding-application-failover-controller";
const ALL_GATES: Gates = Gates {
    graceful_eviction: true,
    stateful_failover_injection: true,
};

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(second).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn item(cluster: &str, health: Option<ResourceHealth>) -> AggregatedStatusItem {
    AggregatedStatusItem {
        cluster_name: cluster.to_owned(),
        health,
        status: Some(json!({"readyReplicas": 2, "phase": "Degraded"})),
        ..AggregatedStatusItem::default()
    }
}

fn spec(clusters: &[(&str, i32)]) -> ResourceBindingSpec {
    ResourceBindingSpec {
        clusters: clusters
            .iter()
            .map(|(name, replicas)| TargetCluster {
                name: (*name).to_owned(),
                replicas: *replicas,
                ..TargetCluster::default()
            })
            .collect(),
        ..ResourceBindingSpec::default()
    }
}

fn behavior(purge_mode: PurgeMode) -> ApplicationFailoverBehavior {
    ApplicationFailoverBehavior {
        decision_conditions: DecisionConditions {
            toleration_seconds: Some(10),
        },
        grace_period_seconds: (purge_mode == PurgeMode::Gracefully).then_some(30),
        purge_mode,
        state_preservation: Some(StatePreservation {
            rules: vec![StatePreservationRule {
                alias_label_name: "failover.example.com/ready".into(),
                json_path: "{ .readyReplicas }".into(),
            }],
        }),
    }
}

#[test]
fn unhealthy_clusters_being_evicted_are_left_out() {
    let mut s = spec(&[("m1", 1), ("m2", 1)]);
    s.graceful_eviction_tasks.push(GracefulEvictionTask {
        from_cluster: "m3".into(),
        ..GracefulEvictionTask::default()
    });
    let items = [
        item("m1", Some(ResourceHealth::Unhealthy)),
        item("m2", Some(ResourceHealth::Healthy)),
        item("m3", Some(ResourceHealth::Unhealthy)),
        item("m4", Some(ResourceHealth::Unknown)),
        item("m5", None),
    ];
    let (unhealthy, others) = split_by_health(&items, &s);
    assert_eq!(unhealthy, ["m1"]);
    assert_eq!(others, ["m2", "m4"]);
}

#[test]
fn toleration_runs_from_the_first_unhealthy_sighting() {
    let mut tracked = Unhealthy::new();
    let m1 = vec!["m1".to_owned()];
    // First sighting: the toleration starts, look again when it ends.
    let first = detect(&mut tracked, &m1, 10, at(100));
    assert!(first.evict.is_empty());
    assert_eq!(first.recheck, Some(Duration::from_millis(10_100)));
    // Still within it (exactly at the end is not past it): the remainder.
    let later = detect(&mut tracked, &m1, 10, at(107));
    assert_eq!(later.recheck, Some(Duration::from_millis(3_100)));
    assert!(detect(&mut tracked, &m1, 10, at(110)).evict.is_empty());
    // Past it: evicted, measured from the first sighting, not the last.
    assert_eq!(
        detect(&mut tracked, &m1, 10, at(111)),
        Detection {
            evict: m1.clone(),
            recheck: None
        }
    );
    // The earliest end among several clusters decides the recheck.
    let both = vec!["m1".to_owned(), "m2".to_owned()];
    let mut tracked = Unhealthy::new();
    detect(&mut tracked, &m1, 10, at(100));
    let d = detect(&mut tracked, &both, 10, at(104));
    assert_eq!(d.recheck, Some(Duration::from_millis(6_100)));
}

#[test]
fn a_healthy_or_removed_cluster_starts_afresh() {
    let mut tracked = Unhealthy::new();
    let m = vec!["m1".to_owned(), "m2".to_owned(), "m3".to_owned()];
    detect(&mut tracked, &m, 10, at(100));
    let clusters: BTreeSet<String> = ["m1".to_owned(), "m2".to_owned()].into();
    forget(&mut tracked, &clusters, &["m2".to_owned()]);
    assert_eq!(tracked.keys().collect::<Vec<_>>(), ["m1"]);
    // m2, healthy in between, is unhealthy again: a new toleration.
    let d = detect(&mut tracked, &["m2".to_owned()], 10, at(150));
    assert!(d.evict.is_empty());
}

#[test]
fn eviction_records_the_task_karmada_builds() {
    let items = [item("m1", Some(ResourceHealth::Unhealthy))];
    let mut s = spec(&[("m1", 2), ("m2", 1)]);
    assert_eq!(
        evict(
            &mut s,
            &items,
            &behavior(PurgeMode::Directly),
            "m1",
            PRODUCER,
            ALL_GATES
        ),
        Ok(true)
    );
    assert_eq!(s.clusters.len(), 1);
    assert_eq!(
        s.graceful_eviction_tasks,
        [GracefulEvictionTask {
            from_cluster: "m1".into(),
            purge_mode: Some(PurgeMode::Directly),
            replicas: Some(2),
            reason: "ApplicationFailure".into(),
            producer: PRODUCER.into(),
            preserved_label_state: [("failover.example.com/ready".into(), "2".into())].into(),
            clusters_before_failover: vec!["m1".into(), "m2".into()],
            ..GracefulEvictionTask::default()
        }]
    );
    // Again: nothing listed, nothing added.
    assert_eq!(
        evict(
            &mut s,
            &items,
            &behavior(PurgeMode::Directly),
            "m1",
            PRODUCER,
            ALL_GATES
        ),
        Ok(false)
    );
    assert_eq!(s.graceful_eviction_tasks.len(), 1);
}

#[test]
fn purge_modes_and_gates_shape_the_task() {
    let items = [item("m1", Some(ResourceHealth::Unhealthy))];
    let mut s = spec(&[("m1", 0)]);
    evict(
        &mut s,
        &items,
        &behavior(PurgeMode::Gracefully),
        "m1",
        PRODUCER,
        ALL_GATES,
    )
    .unwrap_or_default();
    let task = &s.graceful_eviction_tasks[0];
    assert_eq!(
        (
            task.grace_period_seconds,
            task.suppress_deletion,
            task.replicas
        ),
        (Some(30), None, None)
    );

    let mut s = spec(&[("m1", 1)]);
    evict(
        &mut s,
        &items,
        &behavior(PurgeMode::Never),
        "m1",
        PRODUCER,
        ALL_GATES,
    )
    .unwrap_or_default();
    assert_eq!(s.graceful_eviction_tasks[0].suppress_deletion, Some(true));

    // Without StatefulFailoverInjection nothing is preserved; without GracefulEviction, Gracefully fails.
    let mut s = spec(&[("m1", 1)]);
    let off = Gates {
        graceful_eviction: false,
        stateful_failover_injection: false,
    };
    evict(
        &mut s,
        &items,
        &behavior(PurgeMode::Directly),
        "m1",
        PRODUCER,
        off,
    )
    .unwrap_or_default();
    assert!(
        s.graceful_eviction_tasks[0]
            .preserved_label_state
            .is_empty()
    );
    assert!(
        s.graceful_eviction_tasks[0]
            .clusters_before_failover
            .is_empty()
    );
    let mut s = spec(&[("m1", 1)]);
    assert_eq!(
        evict(
            &mut s,
            &items,
            &behavior(PurgeMode::Gracefully),
            "m1",
            PRODUCER,
            off
        ),
        Err(EvictError::GracefulEvictionDisabled)
    );
    assert_eq!(
        s,
        spec(&[("m1", 1)]),
        "a failed eviction leaves the spec alone"
    );
}

#[test]
fn state_preservation_needs_the_collected_status() {
    let mut s = spec(&[("m1", 1)]);
    let uncollected = [AggregatedStatusItem {
        status: None,
        ..item("m1", Some(ResourceHealth::Unhealthy))
    }];
    assert_eq!(
        evict(
            &mut s,
            &uncollected,
            &behavior(PurgeMode::Directly),
            "m1",
            PRODUCER,
            ALL_GATES
        ),
        Err(EvictError::StatePreservation(
            StatePreservationError::StatusNotCollected("m1".into())
        ))
    );
    let mut missing = behavior(PurgeMode::Directly);
    if let Some(p) = missing.state_preservation.as_mut() {
        p.rules[0].json_path = "{.availableReplicas}".into();
    }
    let items = [item("m1", Some(ResourceHealth::Unhealthy))];
    assert!(matches!(
        evict(&mut s, &items, &missing, "m1", PRODUCER, ALL_GATES),
        Err(EvictError::StatePreservation(_))
    ));
    assert_eq!(s, spec(&[("m1", 1)]));
}

#[test]
fn preserved_labels_go_only_to_the_one_new_cluster_of_a_direct_purge() {
    let items = [item("m1", Some(ResourceHealth::Unhealthy))];
    let mut s = spec(&[("m1", 1)]);
    evict(
        &mut s,
        &items,
        &behavior(PurgeMode::Directly),
        "m1",
        PRODUCER,
        ALL_GATES,
    )
    .unwrap_or_default();
    let want = [("failover.example.com/ready".to_owned(), "2".to_owned())].into();
    assert_eq!(preserved_labels(&s, "m2", 1), &want);
    // Not to a cluster the binding had before, nor when it targets several.
    assert!(preserved_labels(&s, "m1", 1).is_empty());
    assert!(preserved_labels(&s, "m2", 2).is_empty());
    // Only the last task counts, and only a Directly one.
    let mut graceful = s.clone();
    graceful.graceful_eviction_tasks[0].purge_mode = Some(PurgeMode::Gracefully);
    assert!(preserved_labels(&graceful, "m2", 1).is_empty());
    let mut later = s.clone();
    later.graceful_eviction_tasks.push(GracefulEvictionTask {
        from_cluster: "m3".into(),
        purge_mode: Some(PurgeMode::Directly),
        ..GracefulEvictionTask::default()
    });
    assert!(preserved_labels(&later, "m2", 1).is_empty());
    // Once the task is gone, so are the labels.
    s.graceful_eviction_tasks.clear();
    assert!(preserved_labels(&s, "m2", 1).is_empty());
}
