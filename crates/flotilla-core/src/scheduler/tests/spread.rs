//! Cluster selection with spread constraints: the cluster and region algorithms.

use flotilla_api::policy::v1alpha1::{Placement, SpreadConstraint, SpreadFieldValue};

use super::*;

fn constraint(field: SpreadFieldValue, min: i64, max: i64) -> SpreadConstraint {
    SpreadConstraint {
        spread_by_field: Some(field),
        min_groups: min,
        max_groups: max,
        ..Default::default()
    }
}

fn spread(mut placement: Placement, constraints: Vec<SpreadConstraint>) -> Placement {
    placement.spread_constraints = constraints;
    placement
}

fn names(outcome: &Outcome) -> Vec<String> {
    outcome
        .clusters
        .as_ref()
        .expect("a result")
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

#[test]
fn cluster_constraint_takes_the_best_clusters_in_order() {
    let clusters = vec![cluster("a", 1), cluster("b", 9), cluster("c", 5)];
    let p = spread(
        Placement::default(),
        vec![constraint(SpreadFieldValue::Cluster, 1, 2)],
    );
    let outcome = run(&binding(2, p), &clusters);
    // Duplicated ignores capacity; the order is available replicas descending.
    assert_eq!(names(&outcome), ["b", "c"]);
}

#[test]
fn max_groups_omitted_selects_no_cluster() {
    let clusters = vec![cluster("a", 10), cluster("b", 10)];
    // `minGroups` is defaulted to 1; `maxGroups` stays 0.
    let p = spread(Placement::default(), vec![SpreadConstraint::default()]);
    let err = run(&binding(2, p), &clusters).error.expect("error");
    assert_eq!(
        err.message,
        "failed to assign replicas: no clusters available to schedule"
    );

    let p = spread(dynamic_weight(), vec![SpreadConstraint::default()]);
    let err = run(&binding(2, p), &clusters).error.expect("error");
    assert_eq!(
        err.message,
        "failed to select clusters: no enough resource when selecting 0 clusters"
    );
}

#[test]
fn too_few_clusters_for_min_groups() {
    let p = spread(
        Placement::default(),
        vec![constraint(SpreadFieldValue::Cluster, 3, 3)],
    );
    let err = run(&binding(1, p), &[cluster("a", 1), cluster("b", 1)])
        .error
        .expect("error");
    assert_eq!(
        err.message,
        "failed to select clusters: the number of feasible clusters is less than spreadConstraint.MinGroups"
    );
}

#[test]
fn cluster_constraint_swaps_in_larger_clusters_when_short() {
    // `a` already holds a replica, so locality puts it first although it has the least room.
    let mut spec = binding(
        8,
        spread(
            dynamic_weight(),
            vec![constraint(SpreadFieldValue::Cluster, 1, 1)],
        ),
    );
    spec.clusters = targets(&[("a", 1)]);
    let clusters = vec![cluster("a", 1), cluster("b", 5), cluster("c", 9)];
    assert_eq!(result(&run(&spec, &clusters)), map(&[("c", 8)]));

    let spec = binding(
        20,
        spread(
            dynamic_weight(),
            vec![constraint(SpreadFieldValue::Cluster, 1, 1)],
        ),
    );
    let err = run(&spec, &clusters).error.expect("error");
    assert_eq!(
        err.message,
        "failed to select clusters: no enough resource when selecting 1 clusters"
    );
}

#[test]
fn static_weights_ignore_spread_constraints() {
    let p = spread(
        static_weights(&[("a", 1), ("b", 1)]),
        vec![constraint(SpreadFieldValue::Cluster, 1, 1)],
    );
    let got = result(&run(&binding(4, p), &[cluster("a", 1), cluster("b", 1)]));
    assert_eq!(got, map(&[("a", 2), ("b", 2)]));
}

#[test]
fn zone_or_provider_constraints_alone_are_unsupported() {
    let mut c = cluster("a", 1);
    c.spec.zones = vec!["z".into()];
    let p = spread(
        Placement::default(),
        vec![constraint(SpreadFieldValue::Zone, 1, 1)],
    );
    let err = run(&binding(1, p), &[c]).error.expect("error");
    assert_eq!(
        err.message,
        "failed to select clusters: just support cluster and region spread constraint"
    );
}

fn regions_fixture() -> Vec<Cluster> {
    vec![
        regional("r1-a", 3, "r1"),
        regional("r1-b", 8, "r1"),
        regional("r2-a", 5, "r2"),
        regional("r3-a", 1, "r3"),
        regional("r3-b", 7, "r3"),
        regional("r3-c", 2, "r3"),
    ]
}

use flotilla_api::cluster::v1alpha1::Cluster;

#[test]
fn region_algorithm_picks_regions_then_fills_clusters() {
    // Duplicated, 1 replica: every cluster is valid, so a region's score is 1000 per cluster.
    // Feasible pairs of regions with >= 3 clusters: {r2,r1}, {r2,r3}, {r1,r3}; {r1,r3} weighs most.
    let p = spread(
        Placement::default(),
        vec![
            constraint(SpreadFieldValue::Region, 2, 2),
            constraint(SpreadFieldValue::Cluster, 3, 4),
        ],
    );
    let outcome = run(&binding(1, p), &regions_fixture());
    // The heaviest region first (r3), each region's best cluster, then the best of the rest up to 4.
    assert_eq!(names(&outcome), ["r3-b", "r1-b", "r1-a", "r3-c"]);
}

#[test]
fn region_algorithm_errors() {
    let p = spread(
        Placement::default(),
        vec![
            constraint(SpreadFieldValue::Region, 4, 4),
            constraint(SpreadFieldValue::Cluster, 1, 4),
        ],
    );
    let err = run(&binding(1, p), &regions_fixture())
        .error
        .expect("error");
    assert_eq!(
        err.message,
        "failed to select clusters: the number of feasible region is less than spreadConstraint.MinGroups"
    );

    let p = spread(
        Placement::default(),
        vec![
            constraint(SpreadFieldValue::Region, 1, 1),
            constraint(SpreadFieldValue::Cluster, 4, 4),
        ],
    );
    let err = run(&binding(1, p), &regions_fixture())
        .error
        .expect("error");
    assert_eq!(
        err.message,
        "failed to select clusters: the number of clusters is less than the cluster spreadConstraint.MinGroups"
    );
}

#[test]
fn region_algorithm_divided_scores_by_capacity_without_checking_it() {
    // Divided, one region of at least 2 clusters, 9 replicas: r1 (8+3) and r3 (7+2) both reach 9 with two
    // clusters and score 9000, r2 (5) scores 5000; the tie goes to the region with more clusters (r3).
    let p = || {
        spread(
            dynamic_weight(),
            vec![
                constraint(SpreadFieldValue::Region, 1, 1),
                constraint(SpreadFieldValue::Cluster, 2, 2),
            ],
        )
    };
    let outcome = run(&binding(9, p()), &regions_fixture());
    assert_eq!(result(&outcome), map(&[("r3-b", 7), ("r3-c", 2)]));
    // The region path does not check capacity, so 10 replicas fail in assignment, not selection.
    let err = run(&binding(10, p()), &regions_fixture())
        .error
        .expect("error");
    assert_eq!(err.kind, crate::scheduler::ErrorKind::Unschedulable);
}

#[test]
fn clusters_without_region_are_filtered_out() {
    let mut clusters = regions_fixture();
    clusters.push(cluster("no-region", 100));
    let p = spread(
        Placement::default(),
        vec![
            constraint(SpreadFieldValue::Region, 1, 1),
            constraint(SpreadFieldValue::Cluster, 1, 1),
        ],
    );
    let outcome = run(&binding(1, p), &clusters);
    assert_eq!(names(&outcome).len(), 1);
    assert!(!names(&outcome).contains(&"no-region".to_owned()));
}
