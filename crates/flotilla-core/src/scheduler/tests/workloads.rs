//! Workload affinity and anti-affinity between the ResourceBindings of one group (gate `WorkloadAffinity`).

use flotilla_api::policy::v1alpha1::Placement;
use flotilla_api::work::v1alpha2::{ResourceBinding, ResourceBindingSpec, WorkloadAffinityGroups};

use super::*;
use crate::scheduler::workload_affinity::{
    REASON_AFFINITY_GROUP, REASON_ANTI_AFFINITY_GROUP, WorkloadRules,
};
use crate::scheduler::{ErrorKind, ScheduleOptions};

fn groups(affinity: &str, anti: &str) -> Option<WorkloadAffinityGroups> {
    Some(WorkloadAffinityGroups {
        affinity_group: affinity.into(),
        anti_affinity_group: anti.into(),
    })
}

/// ResourceBinding `ns/name` of `groups` scheduled to `clusters`.
fn peer(
    ns: &str,
    name: &str,
    groups: Option<WorkloadAffinityGroups>,
    clusters: &[&str],
) -> ResourceBinding {
    let mut spec: ResourceBindingSpec = binding(1, Placement::default());
    spec.workload_affinity_groups = groups;
    spec.clusters = targets(&clusters.iter().map(|c| (*c, 1)).collect::<Vec<_>>());
    let mut rb = ResourceBinding::new(name, spec);
    rb.metadata.namespace = Some(ns.into());
    rb
}

fn scheduled(rb: &ResourceBinding) -> Vec<String> {
    rb.spec.clusters.iter().map(|t| t.name.clone()).collect()
}

fn rules_for(rb: &ResourceBinding, peers: &[ResourceBinding]) -> WorkloadRules {
    WorkloadRules::of(rb, peers, scheduled)
}

#[test]
fn affinity_requires_every_scheduled_peers_clusters() {
    let me = peer("ns", "me", groups("app=shop", ""), &[]);
    let peers = [
        me.clone(),
        peer("ns", "a", groups("app=shop", ""), &["m1", "m2"]),
        peer("ns", "b", groups("app=shop", ""), &["m2", "m3"]),
        // Not scheduled yet, another group, another namespace: no constraint.
        peer("ns", "c", groups("app=shop", ""), &[]),
        peer("ns", "d", groups("app=other", ""), &["m1"]),
        peer("other", "e", groups("app=shop", ""), &["m1"]),
    ];
    let rules = rules_for(&me, &peers);
    assert_eq!(rules.check("m2", false), Ok(()));
    assert_eq!(
        rules.check("m1", false),
        Err(REASON_AFFINITY_GROUP.to_owned())
    );
    // A cluster the binding already has always passes.
    assert_eq!(rules.check("m1", true), Ok(()));
    // The first of a group schedules freely.
    let alone = rules_for(&me, &[me.clone(), peers[3].clone()]);
    assert_eq!(alone.check("m1", false), Ok(()));
}

#[test]
fn anti_affinity_avoids_every_peers_clusters() {
    let me = peer("ns", "me", groups("", "app=web"), &[]);
    let peers = [
        peer("ns", "a", groups("", "app=web"), &["m1"]),
        peer("ns", "b", groups("app=web", ""), &["m2"]),
    ];
    let rules = rules_for(&me, &peers);
    assert_eq!(
        rules.check("m1", false),
        Err(REASON_ANTI_AFFINITY_GROUP.to_owned())
    );
    assert_eq!(rules.check("m2", false), Ok(()));
}

#[test]
fn unmet_rules_leave_the_binding_unscheduled() {
    let me = peer("ns", "me", groups("", "app=web"), &[]);
    let peers = [peer("ns", "a", groups("", "app=web"), &["a", "b", "c"])];
    let rules = rules_for(&me, &peers);
    let options = ScheduleOptions {
        workload_rules: Some(&rules),
        ..ScheduleOptions::default()
    };
    let outcome = schedule_binding(
        RB,
        &me.spec,
        &Default::default(),
        &[cluster("a", 5), cluster("b", 5), cluster("c", 5)],
        options,
    );
    let error = outcome.error.expect("unschedulable");
    assert!(matches!(error.kind, ErrorKind::NoClusterFit(ref fit) if !fit.is_transient()));
    assert_eq!(
        error.message,
        "0/3 clusters are available: 3 cluster already has workload with the same anti-affinity group."
    );
    assert_eq!(outcome.clusters, Some(Vec::new()));

    let free = peer("ns", "a", groups("", "app=web"), &["a"]);
    let rules = rules_for(&me, &[free]);
    let options = ScheduleOptions {
        workload_rules: Some(&rules),
        ..ScheduleOptions::default()
    };
    let outcome = schedule_binding(
        RB,
        &me.spec,
        &Default::default(),
        &[cluster("a", 5), cluster("b", 5), cluster("c", 5)],
        options,
    );
    assert_eq!(result(&outcome), map(&[("b", 1), ("c", 1)]));
}
