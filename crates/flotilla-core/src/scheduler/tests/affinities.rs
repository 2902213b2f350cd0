//! `clusterAffinities` term iteration and overflow tiers.

use flotilla_api::policy::v1alpha1::{ClusterAffinityTerm, OverflowClusterAffinity, Placement};
use flotilla_api::work::v1alpha2::ResourceBindingStatus;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::scheduler::{ErrorKind, schedule_binding};

fn term(name: &str, clusters: &[&str]) -> ClusterAffinityTerm {
    ClusterAffinityTerm {
        affinity_name: name.into(),
        cluster_affinity: names_affinity(clusters),
        overflow_affinities: Vec::new(),
    }
}

fn with_terms(mut placement: Placement, terms: Vec<ClusterAffinityTerm>) -> Placement {
    placement.cluster_affinities = terms;
    placement
}

fn status(observed: &str) -> ResourceBindingStatus {
    ResourceBindingStatus {
        scheduler_observed_affinity_name: observed.into(),
        ..Default::default()
    }
}

fn clusters() -> Vec<flotilla_api::cluster::v1alpha1::Cluster> {
    vec![cluster("a", 10), cluster("b", 10), cluster("c", 10)]
}

#[test]
fn falls_through_terms_until_one_fits() {
    let spec = binding(
        2,
        with_terms(
            Placement::default(),
            vec![term("gone", &["x"]), term("backup", &["b"])],
        ),
    );
    let outcome = schedule_binding(RB, &spec, &status(""), &clusters(), Default::default());
    assert_eq!(result(&outcome), map(&[("b", 2)]));
    assert_eq!(outcome.affinity_name.as_deref(), Some("backup"));
    assert_eq!(
        outcome.term_failures,
        [
            "failed to schedule ResourceBinding(default/nginx-deployment) with clusterAffiliates index(0): \
          0/3 clusters are available: 3 cluster(s) did not match the placement cluster affinity constraint."
        ]
    );
}

#[test]
fn starts_from_the_observed_term_and_never_goes_back() {
    let spec = binding(
        2,
        with_terms(
            Placement::default(),
            vec![term("primary", &["a"]), term("backup", &["b"])],
        ),
    );
    let outcome = schedule_binding(
        RB,
        &spec,
        &status("backup"),
        &clusters(),
        Default::default(),
    );
    assert_eq!(result(&outcome), map(&[("b", 2)]));
    assert!(outcome.term_failures.is_empty());

    // An unknown observed name starts from the first term.
    let outcome = schedule_binding(
        RB,
        &spec,
        &status("renamed"),
        &clusters(),
        Default::default(),
    );
    assert_eq!(result(&outcome), map(&[("a", 2)]));
    assert_eq!(outcome.affinity_name.as_deref(), Some("primary"));
}

#[test]
fn reschedule_restarts_from_the_first_term() {
    let mut spec = binding(
        2,
        with_terms(
            Placement::default(),
            vec![term("primary", &["a"]), term("backup", &["b"])],
        ),
    );
    spec.reschedule_triggered_at = Some(Time(jiff::Timestamp::from_second(20).unwrap()));
    let mut st = status("backup");
    st.last_scheduled_time = Some(Time(jiff::Timestamp::from_second(10).unwrap()));
    let outcome = schedule_binding(RB, &spec, &st, &clusters(), Default::default());
    assert_eq!(result(&outcome), map(&[("a", 2)]));
    assert_eq!(outcome.affinity_name.as_deref(), Some("primary"));
}

#[test]
fn all_terms_failing_with_a_fit_error_empties_the_result_and_keeps_the_name() {
    let spec = binding(
        2,
        with_terms(
            Placement::default(),
            vec![term("x", &["x"]), term("y", &["y"])],
        ),
    );
    let outcome = schedule_binding(RB, &spec, &status("x"), &clusters(), Default::default());
    assert_eq!(outcome.clusters, Some(Vec::new()));
    assert_eq!(outcome.affinity_name.as_deref(), Some("x"));
    assert!(matches!(
        outcome.error.map(|e| e.kind),
        Some(ErrorKind::NoClusterFit(_))
    ));
    assert_eq!(outcome.term_failures.len(), 2);
}

#[test]
fn all_terms_failing_otherwise_keeps_the_result() {
    // Dynamic weights with too little room everywhere: Unschedulable on every term.
    let mut spec = binding(
        100,
        with_terms(dynamic_weight(), vec![term("a", &["a"]), term("b", &["b"])]),
    );
    spec.clusters = targets(&[("a", 1)]);
    let outcome = schedule_binding(RB, &spec, &status(""), &clusters(), Default::default());
    assert_eq!(outcome.clusters, None);
    assert_eq!(
        outcome.error.map(|e| e.kind),
        Some(ErrorKind::Unschedulable)
    );
}

#[test]
fn overflow_tiers_fill_in_order() {
    let mut primary = term("main", &["a"]);
    primary.overflow_affinities = vec![
        OverflowClusterAffinity {
            affinity_name: "burst".into(),
            cluster_affinity: names_affinity(&["b"]),
        },
        OverflowClusterAffinity {
            affinity_name: "last".into(),
            cluster_affinity: names_affinity(&["c"]),
        },
    ];
    let clusters = vec![cluster("a", 4), cluster("b", 3), cluster("c", 10)];
    let spec = binding(10, with_terms(dynamic_weight(), vec![primary.clone()]));
    let outcome = schedule_binding(RB, &spec, &status("main"), &clusters, Default::default());
    assert_eq!(result(&outcome), map(&[("a", 4), ("b", 3), ("c", 3)]));

    // Not enough in all tiers together.
    let spec = binding(30, with_terms(dynamic_weight(), vec![primary]));
    let outcome = schedule_binding(RB, &spec, &status("main"), &clusters, Default::default());
    let err = outcome.error.expect("error");
    assert_eq!(err.kind, ErrorKind::Unschedulable);
    assert_eq!(
        err.message,
        "failed to assign replicas: Clusters available replicas are not enough to schedule."
    );
}

#[test]
fn overflow_tiers_only_admit_workloads() {
    let mut primary = term("main", &["a"]);
    primary.overflow_affinities = vec![OverflowClusterAffinity {
        affinity_name: "burst".into(),
        cluster_affinity: names_affinity(&["b"]),
    }];
    let mut spec = binding(0, with_terms(Placement::default(), vec![primary]));
    spec.resource.kind = "Deployment".into();
    let outcome = schedule_binding(RB, &spec, &status("main"), &clusters(), Default::default());
    assert_eq!(result(&outcome), map(&[("a", 0)]));
}
