//! Criterion benchmark of the pure scheduling core over 100 clusters: the issue's "scheduler throughput
//! (bindings per second with 100 clusters)" target of at least 1,000 bindings/s.
//!
//! Each iteration schedules a mixed batch of 1,000 Deployment bindings (Duplicated, static weights, dynamic
//! weights, Aggregated; some with label affinities, tolerations, spread constraints or `clusterAffinities`)
//! against 100 clusters in 5 regions with resource summaries, taints and labels. It measures what one
//! scheduling attempt costs (filter, score, estimate, order, select, assign), not API round trips.
//!
//! Run: `cargo bench -p flotilla-core --bench scheduler`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use flotilla_api::cluster::v1alpha1::{
    APIEnablement, APIResource, Cluster, ClusterSpec, ClusterStatus, ResourceSummary,
};
use flotilla_api::names::conditions;
use flotilla_api::policy::v1alpha1::{
    ClusterAffinity, ClusterAffinityTerm, ClusterPreferences, DynamicWeightFactor, Placement,
    ReplicaDivisionPreference, ReplicaSchedulingStrategy, ReplicaSchedulingType, SpreadConstraint,
    SpreadFieldValue, StaticClusterWeight,
};
use flotilla_api::work::v1alpha2::{
    ObjectReference, ReplicaRequirements, ResourceBindingSpec, ResourceBindingStatus,
};
use flotilla_core::scheduler::{BindingRef, ScheduleOptions, schedule_binding};
use k8s_openapi::api::core::v1::{Taint, Toleration};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, Time};

const CLUSTERS: usize = 100;
const BINDINGS: usize = 1000;

fn q(s: impl Into<String>) -> Quantity {
    Quantity(s.into())
}

fn clusters() -> Vec<Cluster> {
    (0..CLUSTERS)
        .map(|i| {
            let mut c = Cluster::new(
                &format!("member-{i:03}"),
                ClusterSpec {
                    region: format!("region-{}", i % 5),
                    provider: "sim".into(),
                    zones: vec![format!("zone-{}", i % 10)],
                    taints: if i % 10 == 9 {
                        vec![Taint {
                            key: "dedicated".into(),
                            value: Some("batch".into()),
                            effect: "NoSchedule".into(),
                            time_added: None,
                        }]
                    } else {
                        Vec::new()
                    },
                    ..Default::default()
                },
            );
            c.metadata.labels = Some(
                [(
                    "env".to_owned(),
                    if i % 2 == 0 { "prod" } else { "staging" }.to_owned(),
                )]
                .into(),
            );
            c.status = Some(ClusterStatus {
                api_enablements: vec![APIEnablement {
                    group_version: "apps/v1".into(),
                    resources: vec![APIResource {
                        name: "deployments".into(),
                        kind: "Deployment".into(),
                    }],
                }],
                conditions: vec![Condition {
                    type_: conditions::CLUSTER_COMPLETE_API_ENABLEMENTS.into(),
                    status: "True".into(),
                    reason: "Complete".into(),
                    message: String::new(),
                    last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
                    observed_generation: None,
                }],
                resource_summary: Some(ResourceSummary {
                    allocatable: [
                        ("pods".to_owned(), q(format!("{}", 110 * (1 + i % 7)))),
                        ("cpu".to_owned(), q(format!("{}", 16 * (1 + i % 5)))),
                        ("memory".to_owned(), q(format!("{}Gi", 64 * (1 + i % 3)))),
                    ]
                    .into(),
                    allocated: [("pods".to_owned(), q("20")), ("cpu".to_owned(), q("3500m"))]
                        .into(),
                    ..Default::default()
                }),
                ..Default::default()
            });
            c
        })
        .collect()
}

fn divided(
    preference: ReplicaDivisionPreference,
    weights: Option<ClusterPreferences>,
) -> Option<ReplicaSchedulingStrategy> {
    Some(ReplicaSchedulingStrategy {
        replica_scheduling_type: ReplicaSchedulingType::Divided,
        replica_division_preference: Some(preference),
        weight_preference: weights,
    })
}

fn prod() -> ClusterAffinity {
    ClusterAffinity {
        label_selector: Some(LabelSelector {
            match_labels: Some([("env".to_owned(), "prod".to_owned())].into()),
            match_expressions: None,
        }),
        ..Default::default()
    }
}

fn placement(i: usize) -> Placement {
    match i % 6 {
        0 => Placement::default(),
        1 => Placement {
            cluster_affinity: Some(prod()),
            replica_scheduling: divided(
                ReplicaDivisionPreference::Weighted,
                Some(ClusterPreferences {
                    static_weight_list: (0..4)
                        .map(|r| StaticClusterWeight {
                            target_cluster: ClusterAffinity {
                                field_selector: Some(
                                    flotilla_api::policy::v1alpha1::FieldSelector {
                                        match_expressions: vec![
                                            k8s_openapi::api::core::v1::NodeSelectorRequirement {
                                                key: "region".into(),
                                                operator: "In".into(),
                                                values: Some(vec![format!("region-{r}")]),
                                            },
                                        ],
                                    },
                                ),
                                ..Default::default()
                            },
                            weight: 1 + r,
                        })
                        .collect(),
                    dynamic_weight: None,
                }),
            ),
            ..Default::default()
        },
        2 => Placement {
            replica_scheduling: divided(
                ReplicaDivisionPreference::Weighted,
                Some(ClusterPreferences {
                    static_weight_list: Vec::new(),
                    dynamic_weight: Some(DynamicWeightFactor::AvailableReplicas),
                }),
            ),
            cluster_tolerations: vec![Toleration {
                key: Some("dedicated".into()),
                operator: Some("Exists".into()),
                ..Default::default()
            }],
            ..Default::default()
        },
        3 => Placement {
            replica_scheduling: divided(ReplicaDivisionPreference::Aggregated, None),
            spread_constraints: vec![SpreadConstraint {
                spread_by_field: Some(SpreadFieldValue::Cluster),
                min_groups: 2,
                max_groups: 10,
                ..Default::default()
            }],
            ..Default::default()
        },
        4 => Placement {
            spread_constraints: vec![
                SpreadConstraint {
                    spread_by_field: Some(SpreadFieldValue::Region),
                    min_groups: 2,
                    max_groups: 3,
                    ..Default::default()
                },
                SpreadConstraint {
                    spread_by_field: Some(SpreadFieldValue::Cluster),
                    min_groups: 4,
                    max_groups: 8,
                    ..Default::default()
                },
            ],
            ..Default::default()
        },
        _ => Placement {
            cluster_affinities: vec![
                ClusterAffinityTerm {
                    affinity_name: "nowhere".into(),
                    cluster_affinity: ClusterAffinity {
                        cluster_names: vec!["gone".into()],
                        ..Default::default()
                    },
                    overflow_affinities: Vec::new(),
                },
                ClusterAffinityTerm {
                    affinity_name: "prod".into(),
                    cluster_affinity: prod(),
                    overflow_affinities: Vec::new(),
                },
            ],
            replica_scheduling: divided(ReplicaDivisionPreference::Weighted, None),
            ..Default::default()
        },
    }
}

fn bindings() -> Vec<ResourceBindingSpec> {
    (0..BINDINGS)
        .map(|i| ResourceBindingSpec {
            resource: ObjectReference {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: "default".into(),
                name: format!("app-{i}"),
                uid: format!("00000000-0000-4000-8000-{i:012}"),
                ..Default::default()
            },
            replicas: 3 + (i % 20) as i32,
            replica_requirements: Some(ReplicaRequirements {
                resource_request: [
                    ("cpu".to_owned(), q("250m")),
                    ("memory".to_owned(), q("512Mi")),
                ]
                .into(),
                ..Default::default()
            }),
            placement: Some(placement(i)),
            ..Default::default()
        })
        .collect()
}

fn scheduler_throughput(c: &mut Criterion) {
    let clusters = clusters();
    let bindings = bindings();
    let status = ResourceBindingStatus::default();
    // Every binding must schedule, or the benchmark would measure error paths.
    for (i, spec) in bindings.iter().enumerate() {
        let outcome = schedule_binding(
            BindingRef {
                namespace: "default",
                name: "b",
            },
            spec,
            &status,
            &clusters,
            ScheduleOptions::default(),
        );
        assert!(
            outcome.error.is_none(),
            "binding {i} failed: {:?}",
            outcome.error
        );
    }
    let mut group = c.benchmark_group("scheduler");
    group.throughput(Throughput::Elements(BINDINGS as u64));
    group.sample_size(20);
    group.bench_function("schedule_binding/100-clusters/1000-mixed-bindings", |b| {
        b.iter(|| {
            for spec in &bindings {
                let outcome = schedule_binding(
                    BindingRef {
                        namespace: "default",
                        name: "b",
                    },
                    black_box(spec),
                    &status,
                    black_box(&clusters),
                    ScheduleOptions::default(),
                );
                black_box(outcome);
            }
        });
    });
    group.finish();
}

criterion_group!(benches, scheduler_throughput);
criterion_main!(benches);
