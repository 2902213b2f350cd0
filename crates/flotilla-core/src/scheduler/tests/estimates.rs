//! The general estimator: available replicas from a cluster's resource summary or resource models.

use flotilla_api::cluster::v1alpha1::{
    AllocatableModeling, Cluster, ResourceModel, ResourceModelRange, ResourceSummary,
};
use flotilla_api::work::v1alpha2::ReplicaRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::*;
use crate::scheduler::estimate::{allocatable_replicas, general_estimate};

fn q(s: &str) -> Quantity {
    Quantity(s.to_owned())
}

fn list(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), q(v))).collect()
}

fn with_summary(summary: ResourceSummary) -> Cluster {
    let mut c = cluster("m", 0);
    c.status.as_mut().unwrap().resource_summary = Some(summary);
    c
}

fn requests(pairs: &[(&str, &str)]) -> ReplicaRequirements {
    ReplicaRequirements {
        resource_request: list(pairs),
        ..Default::default()
    }
}

#[test]
fn summary_based_estimates() {
    let summary = ResourceSummary {
        allocatable: list(&[("pods", "110"), ("cpu", "8"), ("memory", "16Gi")]),
        allocated: list(&[("pods", "10"), ("cpu", "2500m"), ("memory", "4Gi")]),
        allocating: list(&[("pods", "5"), ("cpu", "500m")]),
        allocatable_modelings: Vec::new(),
    };
    let c = with_summary(summary);
    assert_eq!(general_estimate(&c, None), 95, "pods only");
    assert_eq!(
        general_estimate(&c, Some(&requests(&[("cpu", "250m")]))),
        20,
        "5 free cores in millicores"
    );
    assert_eq!(
        general_estimate(&c, Some(&requests(&[("memory", "1Gi")]))),
        12
    );
    assert_eq!(
        general_estimate(&c, Some(&requests(&[("cpu", "100m"), ("memory", "2Gi")]))),
        6,
        "the scarcest resource"
    );
    assert_eq!(
        general_estimate(&c, Some(&requests(&[("nvidia.com/gpu", "1")]))),
        0,
        "resource not offered"
    );
    assert_eq!(
        general_estimate(&c, Some(&requests(&[("cpu", "0")]))),
        95,
        "zero requests are ignored"
    );
    assert_eq!(
        general_estimate(&c, Some(&requests(&[("cpu", "1m")]))),
        95,
        "capped by pods"
    );

    let mut no_summary = cluster("m", 0);
    no_summary.status.as_mut().unwrap().resource_summary = None;
    assert_eq!(general_estimate(&no_summary, None), 0);
    let full = with_summary(ResourceSummary {
        allocatable: list(&[("pods", "10")]),
        allocated: list(&[("pods", "12")]),
        ..Default::default()
    });
    assert_eq!(general_estimate(&full, None), 0);
}

#[test]
fn model_based_estimates() {
    let range = |name: &str, min: &str, max: &str| ResourceModelRange {
        name: name.into(),
        min: q(min),
        max: q(max),
    };
    let mut c = with_summary(ResourceSummary {
        allocatable: list(&[("pods", "1000"), ("cpu", "100"), ("memory", "1Ti")]),
        allocatable_modelings: vec![
            AllocatableModeling { grade: 0, count: 3 },
            AllocatableModeling { grade: 1, count: 2 },
        ],
        ..Default::default()
    });
    c.spec.resource_models = vec![
        ResourceModel {
            grade: 0,
            ranges: vec![range("cpu", "0", "1"), range("memory", "0", "4Gi")],
        },
        ResourceModel {
            grade: 1,
            ranges: vec![range("cpu", "2", "4"), range("memory", "8Gi", "16Gi")],
        },
    ];
    // Grade 0 nodes have 0 cpu at their minimum, so only the two grade-1 nodes fit: 2 x min(2000/500, 8/1).
    assert_eq!(
        general_estimate(&c, Some(&requests(&[("cpu", "500m"), ("memory", "1Gi")]))),
        8
    );
    // Without models defined the summary decides.
    c.spec.resource_models.clear();
    assert_eq!(
        general_estimate(&c, Some(&requests(&[("cpu", "500m")]))),
        200
    );
}

#[test]
fn non_workloads_are_not_estimated() {
    let c = cluster("m", 3);
    let mut spec = binding(0, Default::default());
    assert_eq!(allocatable_replicas(&[&c], &spec), [i32::MAX]);
    spec.replicas = 5;
    assert_eq!(allocatable_replicas(&[&c], &spec), [3]);
}
