//! Pure steps of the workload rebalancer controller: which changes it reacts to, the workloads its status
//! follows, what each workload's binding needs, what the status says once they are done, and when a finished
//! rebalancer goes.

use std::collections::BTreeSet;
use std::time::Duration;

use flotilla_api::apps::v1alpha1::{
    ObjectReference, ObservedWorkload, REBALANCE_FAILED, REBALANCE_OBJECT_NOT_FOUND,
    REBALANCE_SUCCESSFUL, WorkloadRebalancer, WorkloadRebalancerStatus,
};
use flotilla_core::names::binding_name;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::bindings::BindingRef;
use crate::runtime::Change;

/// Whether a change asks for a reconcile: a new rebalancer or a changed spec. Status changes (the controller's
/// own writes) do not, nor does a deletion: a rebalancer does its work once, and later only what its spec adds.
pub(crate) fn relevant(change: &Change<'_, WorkloadRebalancer>) -> bool {
    match change {
        Change::Added(_) => true,
        Change::Updated { old, new } => old.spec != new.spec,
        Change::Deleted(_) => false,
    }
}

/// The order of `status.observedWorkloads`: by `apiVersion kind namespace name` joined with spaces, as Karmada
/// sorts them (which differs from field-by-field order only for values holding characters below a space).
fn order_key(workload: &ObjectReference) -> String {
    format!(
        "{} {} {} {}",
        workload.api_version, workload.kind, workload.namespace, workload.name
    )
}

/// The status entries for `workloads` (the spec's), from the `observed` ones: an entry whose workload is still
/// in the spec is kept with its result; one whose workload left the spec is kept only when it succeeded (its
/// binding was asked to reschedule, which stays true); each workload of the spec without an entry gets an
/// empty one, still to be done. A workload changed in the spec is one gone and another new.
pub(crate) fn sync_workloads(
    workloads: &[ObjectReference],
    observed: &[ObservedWorkload],
) -> Vec<ObservedWorkload> {
    let mut unseen: BTreeSet<&ObjectReference> = workloads.iter().collect();
    let mut entries: Vec<ObservedWorkload> = observed
        .iter()
        .filter(|entry| unseen.remove(&entry.workload) || entry.result == REBALANCE_SUCCESSFUL)
        .cloned()
        .collect();
    entries.extend(unseen.into_iter().map(|workload| ObservedWorkload {
        workload: workload.clone(),
        ..ObservedWorkload::default()
    }));
    entries.sort_by_cached_key(|entry| order_key(&entry.workload));
    entries
}

/// Whether an entry still needs its binding asked: it has no result yet (neither succeeded nor failed).
pub(crate) fn pending(entry: &ObservedWorkload) -> bool {
    entry.result != REBALANCE_SUCCESSFUL && entry.result != REBALANCE_FAILED
}

/// The binding of a workload, as the detector names it: a ResourceBinding in the workload's namespace, or a
/// ClusterResourceBinding when the workload names none.
pub(crate) fn binding_of(workload: &ObjectReference) -> BindingRef {
    let name = binding_name(&workload.kind, &workload.name);
    if workload.namespace.is_empty() {
        BindingRef::Cluster { name }
    } else {
        BindingRef::Namespaced {
            namespace: workload.namespace.clone(),
            name,
        }
    }
}

/// Whether a binding whose reschedule was last requested at `requested` must be asked again for a rebalancer
/// created at `created`: never asked, or asked before. An equal or later request already covers this one, and
/// writing an earlier time would take a newer request back.
pub(crate) fn needs_trigger(created: &Time, requested: Option<&Time>) -> bool {
    requested.is_none_or(|requested| created.0 > requested.0)
}

/// What became of one workload's binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The binding asks for a reschedule at the rebalancer's creation or later.
    Requested,
    /// The workload has no binding.
    BindingNotFound,
}

/// Records `outcome` in a pending entry.
pub(crate) fn record(entry: &mut ObservedWorkload, outcome: Outcome) {
    match outcome {
        Outcome::Requested => REBALANCE_SUCCESSFUL.clone_into(&mut entry.result),
        Outcome::BindingNotFound => {
            REBALANCE_FAILED.clone_into(&mut entry.result);
            REBALANCE_OBJECT_NOT_FOUND.clone_into(&mut entry.reason);
        }
    }
}

/// The status to write after a pass over the entries, or `None` when `old` already says it: `entries` and the
/// `generation` they follow, and `finishTime` set to `now` when every entry has a result (`finished`) and the
/// status changed or has no finish time yet. While some entry waits for a retry, the finish time of an earlier
/// pass stays, as Karmada keeps it; it is only read once the rebalancer is finished.
pub(crate) fn conclude(
    old: &WorkloadRebalancerStatus,
    entries: Vec<ObservedWorkload>,
    generation: i64,
    finished: bool,
    now: Timestamp,
) -> Option<WorkloadRebalancerStatus> {
    let mut status = WorkloadRebalancerStatus {
        observed_workloads: entries,
        observed_generation: generation,
        finish_time: old.finish_time.clone(),
    };
    if finished && (status != *old || status.finish_time.is_none()) {
        status.finish_time = Some(Time(now));
    }
    (status != *old).then_some(status)
}

/// What to do about a rebalancer's lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cleanup {
    /// Keep it: no `ttlSecondsAfterFinished`, or not finished.
    Keep,
    /// Look again after this long, when its time is up.
    After(Duration),
    /// Delete it now.
    Delete,
}

/// When a rebalancer finished at `finished` with `ttlSecondsAfterFinished` `ttl` goes, seen at `now`: at
/// `finished + ttl` (at once for a ttl of 0, or below).
pub(crate) fn cleanup(ttl: Option<i32>, finished: Option<&Time>, now: Timestamp) -> Cleanup {
    let (Some(ttl), Some(finished)) = (ttl, finished) else {
        return Cleanup::Keep;
    };
    let expires = finished
        .0
        .saturating_add(SignedDuration::from_secs(i64::from(ttl)))
        .unwrap_or(finished.0);
    match Duration::try_from(expires.duration_since(now)) {
        Ok(left) if !left.is_zero() => Cleanup::After(left),
        // Negative or zero: the time is up.
        _ => Cleanup::Delete,
    }
}
