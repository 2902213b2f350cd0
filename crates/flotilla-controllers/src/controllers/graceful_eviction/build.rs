//! Pure steps of the graceful eviction controller: which eviction tasks a binding
//! keeps, and when to look again.

use std::time::Duration;

use flotilla_api::work::v1alpha2::{
    GracefulEvictionTask, ResourceBindingSpec, ResourceBindingStatus, ResourceHealth,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// The task's own timeout (`gracePeriodSeconds`) or the `--graceful-eviction-timeout`.
fn timeout(task: &GracefulEvictionTask, default: Duration) -> SignedDuration {
    task.grace_period_seconds.map_or_else(
        || SignedDuration::try_from(default).unwrap_or(SignedDuration::MAX),
        |s| SignedDuration::from_secs(i64::from(s)),
    )
}

/// Whether the binding is scheduled for its generation and every cluster it is now on reports a Healthy copy.
fn new_placement_healthy(
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    generation: i64,
) -> bool {
    status.scheduler_observed_generation == generation
        && spec.clusters.iter().all(|target| {
            status
                .aggregated_status
                .iter()
                .find(|item| item.cluster_name == target.name)
                .is_some_and(|item| item.health == Some(ResourceHealth::Healthy))
        })
}

/// The tasks to keep: a task the controller has not seen gets `creationTimestamp = now` and stays; one with
/// `suppressDeletion` stays while it is true and goes once it is false; any other goes once its timeout has
/// passed or the new placement is healthy.
pub(crate) fn assess(
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    generation: i64,
    now: Timestamp,
    default_timeout: Duration,
) -> Vec<GracefulEvictionTask> {
    let healthy = new_placement_healthy(spec, status, generation);
    spec.graceful_eviction_tasks
        .iter()
        .filter_map(|task| {
            let Some(created) = task.creation_timestamp.as_ref().map(|t| t.0) else {
                let mut task = task.clone();
                task.creation_timestamp = Some(Time(now));
                return Some(task);
            };
            let keep = match task.suppress_deletion {
                Some(suppress) => suppress,
                None => {
                    let expired = created
                        .checked_add(timeout(task, default_timeout))
                        .is_ok_and(|end| now > end);
                    !expired && !healthy
                }
            };
            keep.then(|| task.clone())
        })
        .collect()
}

/// How long until the earliest timeout of the tasks that can time out, if any.
pub(crate) fn next_check(
    tasks: &[GracefulEvictionTask],
    now: Timestamp,
    default_timeout: Duration,
) -> Option<Duration> {
    tasks
        .iter()
        .filter(|t| t.suppress_deletion.is_none())
        .filter_map(|t| {
            let created = t.creation_timestamp.as_ref()?.0;
            let end = created.checked_add(timeout(t, default_timeout)).ok()?;
            Some(Duration::try_from(end.duration_since(now)).unwrap_or_default())
        })
        .min()
}
