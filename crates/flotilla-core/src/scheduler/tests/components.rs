//! Multi-template workloads (gate `MultiplePodTemplatesScheduling`): whole sets of components.

use flotilla_api::cluster::v1alpha1::{
    AllocatableModeling, Cluster, ResourceModel, ResourceModelRange, ResourceSummary,
};
use flotilla_api::policy::v1alpha1::{SpreadConstraint, SpreadFieldValue};
use flotilla_api::work::v1alpha2::{Component, ComponentReplicaRequirements, TargetComponent};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::*;
use crate::scheduler::components::{applicable, component_sets};
use crate::scheduler::schedule_once;

fn list(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Quantity((*v).to_owned())))
        .collect()
}

fn component(name: &str, replicas: i32, cpu: &str) -> Component {
    Component {
        name: name.into(),
        replicas,
        replica_requirements: Some(ComponentReplicaRequirements {
            resource_request: list(&[("cpu", cpu)]),
            ..Default::default()
        }),
    }
}

fn with_summary(name: &str, summary: ResourceSummary) -> Cluster {
    let mut c = cluster(name, 0);
    c.status.as_mut().unwrap().resource_summary = Some(summary);
    c
}

/// A cluster of `nodes` model nodes whose minimum is `node_cpu`, with `total_cpu` in its summary.
fn modelled(name: &str, total_cpu: &str, node_cpu: &str, nodes: i64) -> Cluster {
    let mut c = with_summary(
        name,
        ResourceSummary {
            allocatable: list(&[("pods", "110"), ("cpu", total_cpu)]),
            allocatable_modelings: vec![
                AllocatableModeling { grade: 0, count: 0 },
                AllocatableModeling {
                    grade: 1,
                    count: nodes,
                },
            ],
            ..Default::default()
        },
    );
    let range = |min: &str, max: &str| ResourceModelRange {
        name: "cpu".into(),
        min: Quantity(min.into()),
        max: Quantity(max.into()),
    };
    c.spec.resource_models = vec![
        ResourceModel {
            grade: 0,
            ranges: vec![range("0", node_cpu)],
        },
        ResourceModel {
            grade: 1,
            ranges: vec![range(node_cpu, "1000")],
        },
    ];
    c
}

#[test]
fn summaries_bound_sets_by_pods_and_every_resource() {
    let c = with_summary(
        "m",
        ResourceSummary {
            allocatable: list(&[("pods", "20"), ("cpu", "10")]),
            allocated: list(&[("pods", "2"), ("cpu", "1500m")]),
            ..Default::default()
        },
    );
    let set = [component("leader", 1, "500m"), component("worker", 2, "1")];
    // cpu: 8500m free / 2500m per set = 3; pods: 18 / 3 = 6.
    assert_eq!(component_sets(&c, &set), 3);
    let many = [
        component("leader", 1, "100m"),
        component("worker", 8, "100m"),
    ];
    // pods: 18 / 9 = 2 although cpu would allow 9.
    assert_eq!(component_sets(&c, &many), 2);
    // A resource the cluster does not offer at all: no set.
    let gpu = [Component {
        replica_requirements: Some(ComponentReplicaRequirements {
            resource_request: list(&[("nvidia.com/gpu", "1")]),
            ..Default::default()
        }),
        ..component("trainer", 1, "1")
    }];
    assert_eq!(component_sets(&c, &gpu), 0);
    // No requests: the free pods.
    let bare = [Component {
        name: "bare".into(),
        replicas: 0,
        replica_requirements: None,
    }];
    assert_eq!(component_sets(&c, &bare), 18);
    assert_eq!(component_sets(&cluster("empty", 0), &set), 0);
}

#[test]
fn model_nodes_must_hold_every_component_of_a_set() {
    let set = [component("leader", 1, "1"), component("worker", 1, "3")];
    // Each 2-cpu node holds the leader but never the worker: no whole set, whatever the summary says.
    assert_eq!(component_sets(&modelled("small", "96", "2", 3), &set), 0);
    // 4-cpu nodes hold one set each.
    assert_eq!(component_sets(&modelled("fit", "96", "4", 3), &set), 3);
    // 6-cpu nodes: first fit puts components into earlier nodes' leftovers (node 1: three leaders and a
    // worker, node 2: two workers, node 3: a leader and a worker), so four sets fit on three nodes; a fifth
    // worker finds no 3 cpu left.
    assert_eq!(component_sets(&modelled("packed", "96", "6", 3), &set), 4);
    // The summary still bounds the sets.
    assert_eq!(component_sets(&modelled("short", "8", "4", 3), &set), 2);
}

#[test]
fn only_one_cluster_placements_schedule_by_components() {
    let one = SpreadConstraint {
        spread_by_field: Some(SpreadFieldValue::Cluster),
        min_groups: 1,
        max_groups: 1,
        ..Default::default()
    };
    let mut spec = binding(
        0,
        Placement {
            spread_constraints: vec![one.clone()],
            ..Default::default()
        },
    );
    assert!(!applicable(&spec), "no components");
    spec.components = vec![component("leader", 1, "1"), component("worker", 1, "3")];
    assert!(applicable(&spec));
    spec.placement.as_mut().unwrap().spread_constraints = vec![SpreadConstraint {
        max_groups: 2,
        ..one
    }];
    assert!(!applicable(&spec), "up to two clusters");
}

#[test]
fn a_set_goes_where_it_fits_and_records_its_components() {
    let mut spec = binding(
        0,
        Placement {
            spread_constraints: vec![SpreadConstraint {
                spread_by_field: Some(SpreadFieldValue::Cluster),
                min_groups: 1,
                max_groups: 1,
                ..Default::default()
            }],
            ..Default::default()
        },
    );
    spec.components = vec![component("leader", 1, "1"), component("worker", 1, "3")];
    let clusters = [modelled("a", "96", "2", 3), modelled("b", "96", "4", 3)];
    let placement = spec.placement.clone().unwrap();
    let status = ResourceBindingStatus::default();
    let on = ScheduleOptions {
        multiple_pod_templates: true,
        ..ScheduleOptions::default()
    };
    let result = schedule_once(&spec, &placement, &status, "", &clusters, on).unwrap();
    assert_eq!(
        result,
        [TargetCluster {
            name: "b".into(),
            replicas: 0,
            components: vec![
                TargetComponent {
                    name: "leader".into(),
                    replicas: 1
                },
                TargetComponent {
                    name: "worker".into(),
                    replicas: 1
                },
            ],
        }]
    );
    // Without the gate the components are not estimated: both clusters hold 110 pods and "a" comes first.
    let off = ScheduleOptions::default();
    let result = schedule_once(&spec, &placement, &status, "", &clusters, off).unwrap();
    assert_eq!(
        result.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["a"]
    );
    assert!(result[0].components.is_empty());
}
