//! Pure steps of application failover: which clusters hold an unhealthy copy, how long
//! each has been unhealthy, and the graceful eviction task that moves the binding away from one.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use flotilla_api::names::eviction;
use flotilla_api::policy::v1alpha1::{ApplicationFailoverBehavior, PurgeMode};
use flotilla_api::work::v1alpha2::{
    AggregatedStatusItem, GracefulEvictionTask, ResourceBindingSpec, ResourceHealth,
};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use flotilla_core::state_preservation::{StatePreservationError, state_for_eviction};

/// When each cluster of one binding was first seen holding an unhealthy copy (Karmada keeps this in memory
/// only, so a restart starts the toleration again).
pub(crate) type Unhealthy = BTreeMap<String, Timestamp>;

/// Karmada's `distinguishUnhealthyClustersWithOthers`: the clusters whose copy is `Unhealthy` and that are
/// not being evicted already, and the clusters whose copy is `Healthy` or `Unknown`.
pub(crate) fn split_by_health(
    items: &[AggregatedStatusItem],
    spec: &ResourceBindingSpec,
) -> (Vec<String>, Vec<String>) {
    let evicting = |cluster: &str| {
        spec.graceful_eviction_tasks
            .iter()
            .any(|t| t.from_cluster == cluster)
    };
    let mut unhealthy = Vec::new();
    let mut others = Vec::new();
    for item in items {
        match item.health {
            Some(ResourceHealth::Unhealthy) if !evicting(&item.cluster_name) => {
                unhealthy.push(item.cluster_name.clone());
            }
            Some(ResourceHealth::Healthy | ResourceHealth::Unknown) => {
                others.push(item.cluster_name.clone());
            }
            // No health, or one Karmada does not know, counts in neither list.
            _ => {}
        }
    }
    (unhealthy, others)
}

/// What the unhealthy clusters call for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Detection {
    /// Clusters unhealthy for longer than the toleration.
    pub evict: Vec<String>,
    /// When to look again for the clusters still within it.
    pub recheck: Option<Duration>,
}

/// Karmada's `detectFailure`: a cluster seen unhealthy for the first time starts its toleration now; one
/// unhealthy for more than `toleration_seconds` since is to be evicted; for the others the earliest end of
/// their toleration is when to look again.
pub(crate) fn detect(
    tracked: &mut Unhealthy,
    unhealthy: &[String],
    toleration_seconds: i32,
    now: Timestamp,
) -> Detection {
    let toleration = SignedDuration::from_secs(i64::from(toleration_seconds.max(0)));
    let mut out = Detection::default();
    for cluster in unhealthy {
        let since = *tracked.entry(cluster.clone()).or_insert(now);
        let elapsed = now.duration_since(since);
        if elapsed > toleration {
            out.evict.push(cluster.clone());
        } else {
            // Just past the end: Karmada evicts only once the toleration is strictly exceeded.
            let left = Duration::try_from(toleration - elapsed).unwrap_or_default()
                + Duration::from_millis(100);
            out.recheck = Some(out.recheck.map_or(left, |r| r.min(left)));
        }
    }
    out
}

/// Karmada's `deleteIrrelevantClusters`: forgets clusters no longer in the binding and clusters whose copy is
/// healthy (or unknown) again, so a later failure starts a fresh toleration.
pub(crate) fn forget(tracked: &mut Unhealthy, clusters: &BTreeSet<String>, others: &[String]) {
    tracked.retain(|cluster, _| clusters.contains(cluster) && !others.contains(cluster));
}

/// Why a cluster cannot be evicted (yet).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EvictError {
    /// A `statePreservation` rule cannot be evaluated (or the status it reads is not collected yet).
    #[error(transparent)]
    StatePreservation(#[from] StatePreservationError),
    /// `purgeMode: Gracefully` without the `GracefulEviction` gate.
    #[error("GracefulEviction featureGate must be enabled when purgeMode is Gracefully")]
    GracefulEvictionDisabled,
}

/// The gates application failover consults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gates {
    /// `GracefulEviction`.
    pub graceful_eviction: bool,
    /// `StatefulFailoverInjection`.
    pub stateful_failover_injection: bool,
}

/// Karmada's `buildTaskOptions` and `GracefulEvictCluster` for application failover: removes `cluster` from
/// `spec.clusters` and, unless a task for it exists, appends one with the policy's purge mode, `reason:
/// ApplicationFailure`, `producer`, the replicas it had, `gracePeriodSeconds` (Gracefully) or
/// `suppressDeletion: true` (Never), and, with `StatefulFailoverInjection` and `statePreservation` rules, the
/// rules' results over the copy's reflected status with the clusters the binding had before. Returns whether
/// the binding listed the cluster.
///
/// # Errors
/// As [`EvictError`]; the spec is unchanged then.
pub(crate) fn evict(
    spec: &mut ResourceBindingSpec,
    items: &[AggregatedStatusItem],
    behavior: &ApplicationFailoverBehavior,
    cluster: &str,
    producer: &str,
    gates: Gates,
) -> Result<bool, EvictError> {
    let Some(index) = spec.clusters.iter().position(|c| c.name == cluster) else {
        return Ok(false);
    };
    let mut task = GracefulEvictionTask {
        from_cluster: cluster.to_owned(),
        purge_mode: Some(behavior.purge_mode.clone()),
        reason: eviction::REASON_APPLICATION_FAILURE.to_owned(),
        producer: producer.to_owned(),
        ..GracefulEvictionTask::default()
    };
    if gates.stateful_failover_injection
        && behavior
            .state_preservation
            .as_ref()
            .is_some_and(|p| !p.rules.is_empty())
    {
        task.preserved_label_state =
            state_for_eviction(behavior.state_preservation.as_ref(), items, cluster)?;
        task.clusters_before_failover = spec.clusters.iter().map(|c| c.name.clone()).collect();
    }
    match behavior.purge_mode {
        PurgeMode::Gracefully if !gates.graceful_eviction => {
            return Err(EvictError::GracefulEvictionDisabled);
        }
        PurgeMode::Gracefully => task.grace_period_seconds = behavior.grace_period_seconds,
        PurgeMode::Never => task.suppress_deletion = Some(true),
        // Karmada adds nothing for a mode it does not know: the task carries the mode as written and is
        // otherwise a Directly one.
        PurgeMode::Directly | PurgeMode::Other(_) => {}
    }
    let evicted = spec.clusters.remove(index);
    if !spec
        .graceful_eviction_tasks
        .iter()
        .any(|t| t.from_cluster == cluster)
    {
        task.replicas = Some(evicted.replicas).filter(|r| *r > 0);
        spec.graceful_eviction_tasks.push(task);
    }
    Ok(true)
}
