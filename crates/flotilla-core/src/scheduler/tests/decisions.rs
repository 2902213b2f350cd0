//! Acceptance (which bindings the scheduler handles), the per-binding decision and cluster-event requeueing.

use std::collections::BTreeMap;

use flotilla_api::names::{annotations, labels};
use flotilla_api::policy::v1alpha1::{ClusterAffinityTerm, Placement};
use flotilla_api::work::v1alpha2::{ResourceBindingSpec, ResourceBindingStatus, Suspension};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::scheduler::decision::{
    Decision, ScheduleReason, accepts, cluster_change_affects, cluster_update_trigger, decide,
    placement_changed,
};

fn applied(placement: &Placement) -> BTreeMap<String, String> {
    [(
        annotations::APPLIED_PLACEMENT.to_owned(),
        serde_json::to_string(placement).unwrap(),
    )]
    .into()
}

#[test]
fn acceptance_rules() {
    let label =
        |k: &str, v: &str| -> BTreeMap<String, String> { [(k.to_owned(), v.to_owned())].into() };
    let spec = binding(1, Placement::default());
    assert!(accepts(
        "default-scheduler",
        &label(labels::PROPAGATION_POLICY_PERMANENT_ID, "id"),
        &spec
    ));
    assert!(accepts(
        "default-scheduler",
        &label(labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID, "id"),
        &spec
    ));
    assert!(accepts(
        "default-scheduler",
        &label(labels::BINDING_MANAGED_BY, "mcs"),
        &spec
    ));
    assert!(!accepts(
        "default-scheduler",
        &label(labels::PROPAGATION_POLICY_PERMANENT_ID, ""),
        &spec
    ));
    assert!(
        !accepts("default-scheduler", &BTreeMap::new(), &spec),
        "dependency-attached bindings"
    );
    assert!(!accepts(
        "other",
        &label(labels::PROPAGATION_POLICY_PERMANENT_ID, "id"),
        &spec
    ));
    let named = ResourceBindingSpec {
        scheduler_name: "other".into(),
        ..spec.clone()
    };
    assert!(accepts(
        "other",
        &label(labels::PROPAGATION_POLICY_PERMANENT_ID, "id"),
        &named
    ));
    let suspended = ResourceBindingSpec {
        suspension: Some(Suspension {
            scheduling: Some(true),
            ..Default::default()
        }),
        ..spec
    };
    assert!(!accepts(
        "default-scheduler",
        &label(labels::PROPAGATION_POLICY_PERMANENT_ID, "id"),
        &suspended
    ));
}

#[test]
fn decision_table() {
    let divided = dynamic_weight();
    let settled = |replicas: i32, clusters: &[(&str, i32)]| {
        let mut spec = binding(replicas, divided.clone());
        spec.clusters = targets(clusters);
        spec
    };
    let status = |generation: i64| ResourceBindingStatus {
        scheduler_observed_generation: generation,
        ..Default::default()
    };
    let now = Time(jiff::Timestamp::from_second(100).unwrap());
    let later = Time(jiff::Timestamp::from_second(200).unwrap());
    let mut deleting_cluster = cluster("A", 1);
    deleting_cluster.metadata.deletion_timestamp = Some(now.clone());

    struct Case {
        what: &'static str,
        spec: ResourceBindingSpec,
        status: ResourceBindingStatus,
        annotations: BTreeMap<String, String>,
        deleting: bool,
        clusters: Vec<flotilla_api::cluster::v1alpha1::Cluster>,
        want: Decision,
    }
    let base = || Case {
        what: "",
        spec: settled(3, &[("A", 1), ("B", 2)]),
        status: status(1),
        annotations: applied(&divided),
        deleting: false,
        clusters: vec![cluster("A", 1), cluster("B", 1)],
        want: Decision::Nothing,
    };
    let cases = vec![
        Case {
            what: "deleting binding",
            deleting: true,
            want: Decision::SkipDeleting,
            ..base()
        },
        Case {
            what: "settled divided",
            ..base()
        },
        Case {
            what: "stale generation",
            status: status(0),
            want: Decision::ObserveGeneration,
            ..base()
        },
        Case {
            what: "no applied placement",
            annotations: BTreeMap::new(),
            want: Decision::Schedule(ScheduleReason::PlacementChanged),
            ..base()
        },
        Case {
            what: "placement differs",
            annotations: applied(&aggregated()),
            want: Decision::Schedule(ScheduleReason::PlacementChanged),
            ..base()
        },
        Case {
            what: "unparseable annotation counts as unchanged",
            annotations: [(
                annotations::APPLIED_PLACEMENT.to_owned(),
                "{not json".to_owned(),
            )]
            .into(),
            ..base()
        },
        Case {
            what: "replicas scaled",
            spec: settled(5, &[("A", 1), ("B", 2)]),
            want: Decision::Schedule(ScheduleReason::ReplicasChanged),
            ..base()
        },
        Case {
            what: "reschedule requested",
            spec: ResourceBindingSpec {
                reschedule_triggered_at: Some(later.clone()),
                ..settled(3, &[("A", 1), ("B", 2)])
            },
            status: ResourceBindingStatus {
                last_scheduled_time: Some(now.clone()),
                ..status(1)
            },
            want: Decision::Schedule(ScheduleReason::RescheduleRequested),
            ..base()
        },
        Case {
            what: "reschedule older than last schedule",
            spec: ResourceBindingSpec {
                reschedule_triggered_at: Some(now.clone()),
                ..settled(3, &[("A", 1), ("B", 2)])
            },
            status: ResourceBindingStatus {
                last_scheduled_time: Some(later.clone()),
                ..status(1)
            },
            ..base()
        },
        Case {
            what: "duplicated always",
            spec: ResourceBindingSpec {
                clusters: targets(&[("A", 3)]),
                ..binding(3, Placement::default())
            },
            annotations: applied(&Placement::default()),
            want: Decision::Schedule(ScheduleReason::DuplicatedOrNonWorkload),
            ..base()
        },
        Case {
            what: "non-workload always",
            spec: settled(0, &[]),
            want: Decision::Schedule(ScheduleReason::DuplicatedOrNonWorkload),
            ..base()
        },
        Case {
            what: "target cluster terminating",
            clusters: vec![deleting_cluster.clone(), cluster("B", 1)],
            want: Decision::Schedule(ScheduleReason::TerminatingCluster),
            ..base()
        },
        Case {
            what: "new clusters do not rebalance divided workloads",
            clusters: vec![cluster("A", 1), cluster("B", 1), cluster("C", 100)],
            ..base()
        },
    ];
    for c in cases {
        let got = decide(
            &c.spec,
            &c.status,
            1,
            &c.annotations,
            c.deleting,
            &c.clusters,
        );
        assert_eq!(got, c.want, "{}", c.what);
    }
}

#[test]
fn applied_placement_compares_defaulted() {
    // The scheduler writes the defaulted placement; an undefaulted spec equal after defaulting is unchanged.
    let raw = Placement {
        replica_scheduling: Some(Default::default()),
        ..Default::default()
    };
    let mut defaulted = raw.clone();
    crate::scheduler::defaults::default_placement(&mut defaulted);
    let mut current = raw.clone();
    crate::scheduler::defaults::default_placement(&mut current);
    assert!(!placement_changed(
        &current,
        Some(&serde_json::to_string(&defaulted).unwrap()),
        ""
    ));
    assert!(!placement_changed(
        &current,
        Some(&serde_json::to_string(&raw).unwrap()),
        ""
    ));
}

#[test]
fn cluster_affinities_only_count_the_observed_term() {
    let term = |name: &str, clusters: &[&str]| ClusterAffinityTerm {
        affinity_name: name.into(),
        cluster_affinity: names_affinity(clusters),
        overflow_affinities: Vec::new(),
    };
    let old = Placement {
        cluster_affinities: vec![term("a", &["x"]), term("b", &["y"])],
        ..Default::default()
    };
    let other_term_changed = Placement {
        cluster_affinities: vec![term("a", &["x"]), term("b", &["z"])],
        ..Default::default()
    };
    let observed_changed = Placement {
        cluster_affinities: vec![term("a", &["w"]), term("b", &["y"])],
        ..Default::default()
    };
    let old_json = serde_json::to_string(&old).unwrap();
    assert!(!placement_changed(
        &other_term_changed,
        Some(&old_json),
        "a"
    ));
    assert!(placement_changed(&observed_changed, Some(&old_json), "a"));
    assert!(
        placement_changed(&other_term_changed, Some(&old_json), ""),
        "no observed term"
    );
    assert!(
        placement_changed(&other_term_changed, Some(&old_json), "gone"),
        "observed term missing"
    );
    let tolerations_changed = Placement {
        cluster_tolerations: vec![Default::default()],
        ..other_term_changed
    };
    assert!(placement_changed(
        &tolerations_changed,
        Some(&old_json),
        "a"
    ));
}

#[test]
fn cluster_events() {
    let old = cluster("m", 1);
    let mut status_only = old.clone();
    status_only.status.as_mut().unwrap().kubernetes_version = "v1.36".into();
    assert!(
        cluster_update_trigger(&old, &status_only).is_empty(),
        "status changes never requeue"
    );
    let mut relabelled = old.clone();
    relabelled.metadata.labels = Some([("env".to_owned(), "prod".to_owned())].into());
    assert_eq!(cluster_update_trigger(&old, &relabelled).len(), 2);
    let mut respecced = old.clone();
    respecced.metadata.generation = Some(2);
    assert_eq!(cluster_update_trigger(&old, &respecced).len(), 2);
    let mut deleting = old.clone();
    deleting.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
    assert_eq!(cluster_update_trigger(&old, &deleting).len(), 1);

    let affinity = Placement {
        cluster_affinity: Some(names_affinity(&["m"])),
        ..Default::default()
    };
    let elsewhere = Placement {
        cluster_affinity: Some(names_affinity(&["n"])),
        ..Default::default()
    };
    let st = ResourceBindingStatus::default();
    assert!(
        cluster_change_affects(&binding(1, Placement::default()), &st, 0, &old),
        "no affinity"
    );
    assert!(cluster_change_affects(&binding(1, affinity), &st, 0, &old));
    assert!(!cluster_change_affects(
        &binding(1, elsewhere.clone()),
        &st,
        0,
        &old
    ));
    let terms = Placement {
        cluster_affinities: vec![ClusterAffinityTerm {
            affinity_name: "t".into(),
            cluster_affinity: names_affinity(&["n"]),
            overflow_affinities: Vec::new(),
        }],
        ..Default::default()
    };
    assert!(
        cluster_change_affects(&binding(1, terms.clone()), &st, 1, &old),
        "stale schedule with terms"
    );
    assert!(!cluster_change_affects(&binding(1, terms), &st, 0, &old));
}

#[test]
fn a_member_starting_to_serve_the_kind_is_noticed() {
    use crate::scheduler::decision::kind_newly_served;
    let spec = binding(1, Placement::default());
    let mut without = cluster("m", 1);
    without.status.as_mut().unwrap().api_enablements.clear();
    let with = cluster("m", 1);
    assert!(kind_newly_served(&without, &with, &spec));
    assert!(!kind_newly_served(&with, &with, &spec), "already served");
    assert!(
        !kind_newly_served(&with, &without, &spec),
        "no longer served"
    );
}
