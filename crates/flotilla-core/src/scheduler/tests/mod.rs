//! Scheduler unit tests: fixtures here, cases by area in the submodules.

mod affinities;
mod components;
mod decisions;
mod estimates;
mod filters;
mod spread;
mod worked_examples;
mod workloads;

use std::collections::BTreeMap;

use flotilla_api::cluster::v1alpha1::{
    APIEnablement, APIResource, Cluster, ClusterSpec, ClusterStatus, ResourceSummary,
};
use flotilla_api::names::conditions;
use flotilla_api::policy::v1alpha1::{
    ClusterAffinity, ClusterPreferences, DynamicWeightFactor, Placement, ReplicaDivisionPreference,
    ReplicaSchedulingStrategy, ReplicaSchedulingType, StaticClusterWeight,
};
use flotilla_api::work::v1alpha2::{
    ObjectReference, ResourceBindingSpec, ResourceBindingStatus, TargetCluster,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use super::{BindingRef, Outcome, ScheduleOptions, schedule_binding};
use crate::names::fnv1a_32;

/// A ready member serving `apps/v1` Deployments with room for `pods` more pods.
pub(super) fn cluster(name: &str, pods: i64) -> Cluster {
    let mut c = Cluster::new(name, ClusterSpec::default());
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
            allocatable: [("pods".to_owned(), Quantity(pods.to_string()))].into(),
            ..Default::default()
        }),
        ..Default::default()
    });
    c
}

/// A cluster in a region.
pub(super) fn regional(name: &str, pods: i64, region: &str) -> Cluster {
    let mut c = cluster(name, pods);
    c.spec.region = region.into();
    c
}

/// A Deployment binding with `replicas` and `placement`.
pub(super) fn binding(replicas: i32, placement: Placement) -> ResourceBindingSpec {
    ResourceBindingSpec {
        resource: ObjectReference {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: "default".into(),
            name: "nginx".into(),
            ..Default::default()
        },
        replicas,
        placement: Some(placement),
        ..Default::default()
    }
}

pub(super) fn divided(
    preference: ReplicaDivisionPreference,
    weights: Option<ClusterPreferences>,
) -> Placement {
    Placement {
        replica_scheduling: Some(ReplicaSchedulingStrategy {
            replica_scheduling_type: ReplicaSchedulingType::Divided,
            replica_division_preference: Some(preference),
            weight_preference: weights,
        }),
        ..Default::default()
    }
}

pub(super) fn dynamic_weight() -> Placement {
    divided(
        ReplicaDivisionPreference::Weighted,
        Some(ClusterPreferences {
            static_weight_list: Vec::new(),
            dynamic_weight: Some(DynamicWeightFactor::AvailableReplicas),
        }),
    )
}

pub(super) fn aggregated() -> Placement {
    divided(ReplicaDivisionPreference::Aggregated, None)
}

pub(super) fn static_weights(weights: &[(&str, i64)]) -> Placement {
    divided(
        ReplicaDivisionPreference::Weighted,
        Some(ClusterPreferences {
            static_weight_list: weights
                .iter()
                .map(|(name, weight)| StaticClusterWeight {
                    target_cluster: names_affinity(&[name]),
                    weight: *weight,
                })
                .collect(),
            dynamic_weight: None,
        }),
    )
}

pub(super) fn names_affinity(names: &[&str]) -> ClusterAffinity {
    ClusterAffinity {
        cluster_names: names.iter().map(|n| (*n).to_owned()).collect(),
        ..Default::default()
    }
}

pub(super) fn targets(pairs: &[(&str, i32)]) -> Vec<TargetCluster> {
    pairs
        .iter()
        .map(|(name, replicas)| TargetCluster {
            name: (*name).into(),
            replicas: *replicas,
            components: Vec::new(),
        })
        .collect()
}

/// A UID whose FNV-1a-32 has the given parity (odd ⇒ descending name tie-break).
pub(super) fn uid_with_parity(odd: bool) -> String {
    (0..)
        .map(|i| format!("5f1c2a4e-0000-4000-8000-{i:012}"))
        .find(|u| (fnv1a_32(u.as_bytes()) & 1 == 1) == odd)
        .unwrap_or_default()
}

pub(super) const RB: BindingRef<'static> = BindingRef {
    namespace: "default",
    name: "nginx-deployment",
};

/// Schedules with the default options and an empty status.
pub(super) fn run(spec: &ResourceBindingSpec, clusters: &[Cluster]) -> Outcome {
    schedule_binding(
        RB,
        spec,
        &ResourceBindingStatus::default(),
        clusters,
        ScheduleOptions::default(),
    )
}

/// The scheduled result as (name, replicas) pairs sorted by name; panics (test only) on failure.
pub(super) fn result(outcome: &Outcome) -> BTreeMap<String, i32> {
    assert!(
        outcome.error.is_none(),
        "unexpected error: {:?}",
        outcome.error
    );
    outcome
        .clusters
        .as_ref()
        .expect("a result")
        .iter()
        .map(|t| (t.name.clone(), t.replicas))
        .collect()
}

pub(super) fn map(pairs: &[(&str, i32)]) -> BTreeMap<String, i32> {
    pairs.iter().map(|(n, r)| ((*n).to_owned(), *r)).collect()
}
