//! Pure steps of the taint manager: whether and when a binding leaves a cluster with
//! NoExecute taints, and the eviction itself.

use std::collections::BTreeMap;

use flotilla_api::names::{annotations, eviction};
use flotilla_api::policy::v1alpha1::{FailoverBehavior, Placement, PurgeMode};
use flotilla_api::work::v1alpha2::{GracefulEvictionTask, ResourceBindingSpec};
use k8s_openapi::api::core::v1::{Taint, Toleration};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use flotilla_core::scheduler::filter::tolerates;

const NO_EXECUTE: &str = "NoExecute";

/// The cluster's NoExecute taints.
pub(crate) fn no_execute_taints(taints: &[Taint]) -> Vec<&Taint> {
    taints.iter().filter(|t| t.effect == NO_EXECUTE).collect()
}

/// What the taint manager does with a binding on a NoExecute-tainted cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Leave the cluster now.
    EvictNow,
    /// Tolerated until then (the earliest `timeAdded + tolerationSeconds`).
    EvictAt(Timestamp),
    /// Tolerated for good (no bounded toleration, or no NoExecute taint).
    Stay,
}

/// Karmada's verdict: a taint no toleration tolerates evicts now. Otherwise, for the first toleration matching
/// each taint, `timeAdded + tolerationSeconds` over the taints it tolerates (taints without `timeAdded` are
/// skipped) gives trigger times; the earliest decides, and one not after `now` evicts now.
pub(crate) fn verdict(taints: &[&Taint], tolerations: &[Toleration], now: Timestamp) -> Verdict {
    if taints.is_empty() {
        return Verdict::Stay;
    }
    let mut used = Vec::new();
    for taint in taints {
        match tolerations.iter().find(|t| tolerates(t, taint)) {
            Some(toleration) => used.push(toleration),
            None => return Verdict::EvictNow,
        }
    }
    let earliest = used
        .iter()
        .filter_map(|t| t.toleration_seconds.map(|s| (t, s)))
        .flat_map(|(toleration, seconds)| {
            taints
                .iter()
                .filter(|taint| tolerates(toleration, taint))
                .filter_map(move |taint| {
                    let added = taint.time_added.as_ref()?.0;
                    added.checked_add(SignedDuration::from_secs(seconds)).ok()
                })
        })
        .min();
    match earliest {
        None => Verdict::Stay,
        Some(at) if at <= now => Verdict::EvictNow,
        Some(at) => Verdict::EvictAt(at),
    }
}

/// The cluster tolerations of the placement the scheduler last applied (`policy.karmada.io/applied-placement`);
/// `None` when the binding has none yet.
///
/// # Errors
/// The annotation is not a placement.
pub(crate) fn applied_tolerations(
    binding_annotations: &BTreeMap<String, String>,
) -> Option<Result<Vec<Toleration>, serde_json::Error>> {
    let text = binding_annotations.get(annotations::APPLIED_PLACEMENT)?;
    Some(serde_json::from_str::<Placement>(text).map(|p| p.cluster_tolerations))
}

/// How the binding leaves: the policy's `failover.cluster.purgeMode` when it has cluster failover, else the
/// `--no-execute-taint-eviction-purge-mode` flag.
pub(crate) fn purge_mode(failover: Option<&FailoverBehavior>, flag: PurgeMode) -> PurgeMode {
    failover
        .and_then(|f| f.cluster.as_ref())
        .map_or(flag, |cluster| cluster.purge_mode.clone())
}

/// Karmada's `GracefulEvictCluster` by the taint manager: removes `cluster` from `spec.clusters` and, unless a
/// task for it exists, appends one (`producer: TaintManager`, `reason: TaintUntolerated`, the replicas it had
/// when any, and `preserved` as `preservedLabelState`: `spec.failover.cluster.statePreservation`'s results).
/// Returns whether the binding listed the cluster.
pub(crate) fn evict(
    spec: &mut ResourceBindingSpec,
    cluster: &str,
    purge_mode: PurgeMode,
    preserved: BTreeMap<String, String>,
) -> bool {
    let Some(index) = spec.clusters.iter().position(|c| c.name == cluster) else {
        return false;
    };
    let evicted = spec.clusters.remove(index);
    if !spec
        .graceful_eviction_tasks
        .iter()
        .any(|t| t.from_cluster == cluster)
    {
        spec.graceful_eviction_tasks.push(GracefulEvictionTask {
            from_cluster: evicted.name,
            purge_mode: Some(purge_mode),
            replicas: Some(evicted.replicas).filter(|r| *r > 0),
            reason: eviction::REASON_TAINT_UNTOLERATED.to_owned(),
            producer: eviction::PRODUCER_TAINT_MANAGER.to_owned(),
            preserved_label_state: preserved,
            ..GracefulEvictionTask::default()
        });
    }
    true
}
