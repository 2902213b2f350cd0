//! Which bindings the scheduler handles, when a binding needs a full schedule, and which Cluster changes
//! requeue which bindings, as Karmada's scheduler decides them (`doScheduleBinding` and its event handlers).

use std::borrow::Borrow;
use std::collections::BTreeMap;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::{annotations, labels};
use flotilla_api::policy::v1alpha1::{DEFAULT_SCHEDULER_NAME, Placement, ReplicaSchedulingType};
use flotilla_api::work::v1alpha2::{ResourceBindingSpec, ResourceBindingStatus};

use super::core::reschedule_requested;
use super::defaults::default_placement;
use super::filter::{ApiEnablement, api_enablement, is_workload};
use crate::selector::cluster_matches;

/// Whether the scheduler named `scheduler_name` handles a binding with these labels and spec: its
/// `schedulerName` (empty = `default-scheduler`) matches, scheduling is not suspended, and it carries a
/// non-empty PP or CPP permanent-id label or `binding.karmada.io/managed-by`.
pub fn accepts(
    scheduler_name: &str,
    binding_labels: &BTreeMap<String, String>,
    spec: &ResourceBindingSpec,
) -> bool {
    scheduler_matches(scheduler_name, spec)
        && [
            labels::PROPAGATION_POLICY_PERMANENT_ID,
            labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID,
            labels::BINDING_MANAGED_BY,
        ]
        .iter()
        .any(|key| binding_labels.get(*key).is_some_and(|v| !v.is_empty()))
}

/// `schedulerName` matches and scheduling is not suspended.
fn scheduler_matches(scheduler_name: &str, spec: &ResourceBindingSpec) -> bool {
    let wanted = if spec.scheduler_name.is_empty() {
        DEFAULT_SCHEDULER_NAME
    } else {
        spec.scheduler_name.as_str()
    };
    wanted == scheduler_name && spec.suspension.as_ref().and_then(|s| s.scheduling) != Some(true)
}

/// Why a binding gets a full schedule: the first of these, in this order, that holds. A Divided workload whose
/// placement and replicas are unchanged is not rescheduled, so new or changed clusters never redistribute it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScheduleReason {
    /// The placement differs from `policy.karmada.io/applied-placement` (or that annotation is missing).
    PlacementChanged,
    /// The replica total differs from the current result.
    ReplicasChanged,
    /// `rescheduleTriggeredAt` is later than `lastScheduledTime`.
    RescheduleRequested,
    /// Duplicated bindings and non-workloads are scheduled on every trigger.
    DuplicatedOrNonWorkload,
    /// A cluster in the current result is being deleted.
    TerminatingCluster,
    /// A member started serving the binding's kind (Flotilla only: the scheduler forces this one).
    KindNewlyServed,
}

/// What to do with a binding the scheduler was woken for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The binding is being deleted: record a `ScheduleBindingFailed` event, nothing else.
    SkipDeleting,
    /// Run a full schedule.
    Schedule(ScheduleReason),
    /// Nothing to schedule; only set `status.schedulerObservedGeneration` to the generation.
    ObserveGeneration,
    /// Nothing to do.
    Nothing,
}

/// Decides what a binding needs (Karmada's `doScheduleBinding`). `clusters` is the current Cluster snapshot (for
/// terminating targets). A missing placement is decided as a schedule, which then reports the error.
pub fn decide<C: Borrow<Cluster>>(
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    generation: i64,
    binding_annotations: &BTreeMap<String, String>,
    deleting: bool,
    clusters: &[C],
) -> Decision {
    if deleting {
        return Decision::SkipDeleting;
    }
    let Some(placement) = spec.placement.as_ref() else {
        return Decision::Schedule(ScheduleReason::PlacementChanged);
    };
    let mut placement = placement.clone();
    default_placement(&mut placement);
    let applied = binding_annotations
        .get(annotations::APPLIED_PLACEMENT)
        .map(String::as_str);
    if placement_changed(
        &placement,
        applied,
        &status.scheduler_observed_affinity_name,
    ) {
        return Decision::Schedule(ScheduleReason::PlacementChanged);
    }
    if replicas_changed(spec, &placement) {
        return Decision::Schedule(ScheduleReason::ReplicasChanged);
    }
    if reschedule_requested(spec, status) {
        return Decision::Schedule(ScheduleReason::RescheduleRequested);
    }
    let duplicated = placement
        .replica_scheduling
        .as_ref()
        .is_none_or(|s| s.replica_scheduling_type == ReplicaSchedulingType::Duplicated);
    if !is_workload(spec) || duplicated {
        return Decision::Schedule(ScheduleReason::DuplicatedOrNonWorkload);
    }
    let terminating = clusters.iter().map(Borrow::borrow).any(|c: &Cluster| {
        c.metadata.deletion_timestamp.is_some()
            && spec
                .clusters
                .iter()
                .any(|t| Some(t.name.as_str()) == c.metadata.name.as_deref())
    });
    if terminating {
        return Decision::Schedule(ScheduleReason::TerminatingCluster);
    }
    if generation != status.scheduler_observed_generation {
        Decision::ObserveGeneration
    } else {
        Decision::Nothing
    }
}

/// Whether `placement` differs from the applied-placement annotation (Karmada's `placementChanged`): a
/// missing annotation is a change, an unparseable one is not; with `clusterAffinities`, only the shared
/// fields and the observed term count.
pub fn placement_changed(
    placement: &Placement,
    applied: Option<&str>,
    observed_affinity: &str,
) -> bool {
    let Some(applied) = applied.filter(|a| !a.is_empty()) else {
        return true;
    };
    let Ok(mut applied) = serde_json::from_str::<Placement>(applied) else {
        return false;
    };
    default_placement(&mut applied);
    if *placement == applied {
        return false;
    }
    if placement.cluster_affinity != applied.cluster_affinity
        || placement.cluster_tolerations != applied.cluster_tolerations
        || placement.spread_constraints != applied.spread_constraints
        || placement.replica_scheduling != applied.replica_scheduling
    {
        return true;
    }
    if observed_affinity.is_empty() {
        return true;
    }
    let term = |p: &Placement| {
        p.cluster_affinities
            .iter()
            .find(|t| t.affinity_name == observed_affinity)
            .cloned()
    };
    match (term(placement), term(&applied)) {
        (Some(current), Some(applied)) => current != applied,
        _ => true,
    }
}

/// Whether the replica total moved away from the current result (only with `replicaScheduling`):
/// Duplicated ⇒ some cluster's replicas differ from `spec.replicas`; Divided ⇒ their sum differs.
pub fn replicas_changed(spec: &ResourceBindingSpec, placement: &Placement) -> bool {
    match placement
        .replica_scheduling
        .as_ref()
        .map(|s| &s.replica_scheduling_type)
    {
        // Karmada compares the totals for its two types only: an unknown type never counts as changed.
        None | Some(ReplicaSchedulingType::Other(_)) => false,
        Some(ReplicaSchedulingType::Duplicated) => {
            spec.clusters.iter().any(|c| c.replicas != spec.replicas)
        }
        Some(ReplicaSchedulingType::Divided) => {
            spec.clusters
                .iter()
                .map(|c| i64::from(c.replicas))
                .sum::<i64>()
                != i64::from(spec.replicas)
        }
    }
}

/// Whether a Cluster update is a scheduling trigger, and which versions of the cluster to test bindings
/// against: deletion newly started ⇒ the new object; labels or generation changed ⇒ both; otherwise (status
/// changes) none.
pub fn cluster_update_trigger<'a>(old: &'a Cluster, new: &'a Cluster) -> Vec<&'a Cluster> {
    if old.metadata.deletion_timestamp.is_none() && new.metadata.deletion_timestamp.is_some() {
        return vec![new];
    }
    let labels_changed = old.metadata.labels.as_ref().filter(|l| !l.is_empty())
        != new.metadata.labels.as_ref().filter(|l| !l.is_empty());
    if labels_changed || old.metadata.generation != new.metadata.generation {
        return vec![old, new];
    }
    Vec::new()
}

/// Whether a change of `cluster` requeues a binding (already accepted by [`accepts`]): bindings with
/// `clusterAffinities` whose last schedule is stale always; otherwise when the relevant affinity (inline, or
/// the observed term, the first if none) is absent or matches the cluster.
pub fn cluster_change_affects(
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    generation: i64,
    cluster: &Cluster,
) -> bool {
    let Some(placement) = spec.placement.as_ref() else {
        return false;
    };
    let affinity = if placement.cluster_affinities.is_empty() {
        placement.cluster_affinity.as_ref()
    } else {
        if status.scheduler_observed_generation != generation {
            return true;
        }
        let observed = &status.scheduler_observed_affinity_name;
        let index = placement
            .cluster_affinities
            .iter()
            .position(|t| &t.affinity_name == observed)
            .unwrap_or(0);
        placement
            .cluster_affinities
            .get(index)
            .map(|t| &t.cluster_affinity)
    };
    affinity.is_none_or(|a| cluster_matches(cluster, a))
}

/// Whether `new` serves the binding's kind and `old` did not (its `apiEnablements` gained it).
pub fn kind_newly_served(old: &Cluster, new: &Cluster, spec: &ResourceBindingSpec) -> bool {
    let served = |c: &Cluster| {
        api_enablement(c, &spec.resource.api_version, &spec.resource.kind) == ApiEnablement::Enabled
    };
    served(new) && !served(old)
}
