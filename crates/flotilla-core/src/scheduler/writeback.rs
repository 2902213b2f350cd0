//! What the scheduler writes back after an attempt, as pure functions: the result patch (`spec.clusters` and the
//! `policy.karmada.io/applied-placement` annotation, only when they change), the status patch with the
//! `Scheduled` condition, event messages.

use flotilla_api::names::{annotations, conditions};
use flotilla_api::work::v1alpha2::{ResourceBindingStatus, TargetCluster};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde_json::{Map, Value, json};

use super::core::{ErrorKind, Outcome, ScheduleError};
use crate::conditions::set_condition;

/// The `Scheduled` condition reason for an attempt's final error (`None` = success).
pub fn condition_reason(error: Option<&ScheduleError>) -> &'static str {
    match error.map(|e| &e.kind) {
        None => conditions::REASON_SUCCESS,
        Some(ErrorKind::NoClusterFit(_)) => conditions::REASON_NO_CLUSTER_FIT,
        Some(ErrorKind::Unschedulable) => conditions::REASON_UNSCHEDULABLE,
        Some(ErrorKind::Other) => conditions::REASON_SCHEDULER_ERROR,
    }
}

/// The merge patch of the binding for a result: the applied-placement annotation and `spec.clusters`
/// (`null` when empty), guarded by `resource_version`; `None` when neither would change.
///
/// # Errors
/// Only if the placement cannot be serialised, which plain API types never fail.
pub fn result_patch(
    outcome: &Outcome,
    current_annotation: Option<&str>,
    current_clusters: &[TargetCluster],
    resource_version: Option<&str>,
) -> Result<Option<Value>, serde_json::Error> {
    let Some(clusters) = &outcome.clusters else {
        return Ok(None);
    };
    let placement = serde_json::to_string(&outcome.placement)?;
    if current_annotation == Some(placement.as_str()) && current_clusters == clusters.as_slice() {
        return Ok(None);
    }
    let clusters = if clusters.is_empty() {
        Value::Null
    } else {
        serde_json::to_value(clusters)?
    };
    let mut metadata = Map::new();
    metadata.insert(
        "annotations".into(),
        json!({ annotations::APPLIED_PLACEMENT: placement }),
    );
    if let Some(rv) = resource_version {
        metadata.insert("resourceVersion".into(), Value::from(rv));
    }
    Ok(Some(
        json!({ "metadata": metadata, "spec": { "clusters": clusters } }),
    ))
}

/// The binding status after an attempt: the `Scheduled` condition; on success also
/// `schedulerObservedGeneration = generation` and `lastScheduledTime = now`; the observed
/// `clusterAffinities` term when the outcome names one.
pub fn next_status(
    current: &ResourceBindingStatus,
    outcome: &Outcome,
    generation: i64,
    now: &Time,
) -> ResourceBindingStatus {
    let mut status = current.clone();
    let error = outcome.error.as_ref();
    let condition = Condition {
        type_: conditions::SCHEDULED.into(),
        status: if error.is_none() { "True" } else { "False" }.into(),
        reason: condition_reason(error).into(),
        message: error.map_or_else(
            || conditions::MESSAGE_SCHEDULED_SUCCESS.to_owned(),
            |e| e.message.clone(),
        ),
        last_transition_time: now.clone(),
        observed_generation: None,
    };
    set_condition(&mut status.conditions, condition);
    if error.is_none() {
        status.scheduler_observed_generation = generation;
        status.last_scheduled_time = Some(now.clone());
    }
    if let Some(name) = &outcome.affinity_name {
        status.scheduler_observed_affinity_name.clone_from(name);
    }
    status
}

/// The merge patch taking `current` to `next` on the status subresource (only the scheduler's fields),
/// guarded by `resource_version`; `None` when nothing changes.
///
/// # Errors
/// Only if the status cannot be serialised, which plain API types never fail.
pub fn status_patch(
    current: &ResourceBindingStatus,
    next: &ResourceBindingStatus,
    resource_version: Option<&str>,
) -> Result<Option<Value>, serde_json::Error> {
    let mut status = Map::new();
    if current.conditions != next.conditions {
        status.insert("conditions".into(), serde_json::to_value(&next.conditions)?);
    }
    if current.scheduler_observed_generation != next.scheduler_observed_generation {
        status.insert(
            "schedulerObservedGeneration".into(),
            next.scheduler_observed_generation.into(),
        );
    }
    if current.last_scheduled_time != next.last_scheduled_time {
        status.insert(
            "lastScheduledTime".into(),
            serde_json::to_value(&next.last_scheduled_time)?,
        );
    }
    if current.scheduler_observed_affinity_name != next.scheduler_observed_affinity_name {
        let name = &next.scheduler_observed_affinity_name;
        let value = if name.is_empty() {
            Value::Null
        } else {
            Value::from(name.as_str())
        };
        status.insert("schedulerObservingAffinityName".into(), value);
    }
    if status.is_empty() {
        return Ok(None);
    }
    let mut patch = json!({ "status": status });
    if let Some(rv) = resource_version {
        patch["metadata"] = json!({ "resourceVersion": rv });
    }
    Ok(Some(patch))
}

/// The `ScheduleBindingSucceed` message: `Binding has been scheduled successfully. Result: {c1:2, c2:1}`
/// (a ClusterResourceBinding's omits the colon after `Result`, as Karmada's does).
pub fn success_message(result: &[TargetCluster], cluster_scoped: bool) -> String {
    let list: Vec<String> = result
        .iter()
        .map(|t| format!("{}:{}", t.name, t.replicas))
        .collect();
    let colon = if cluster_scoped { "" } else { ":" };
    format!(
        "{} Result{colon} {{{}}}",
        conditions::MESSAGE_SCHEDULED_SUCCESS,
        list.join(", ")
    )
}

/// The `ScheduleBindingFailed` message for a binding that is being deleted.
pub fn deleting_message(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("skip schedule deleting clusterResourceBinding: {name}")
    } else {
        format!("skip schedule deleting resourceBinding: {namespace}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use flotilla_api::policy::v1alpha1::Placement;

    use super::*;
    use crate::scheduler::FitError;

    fn outcome(clusters: Option<Vec<TargetCluster>>, error: Option<ScheduleError>) -> Outcome {
        Outcome {
            placement: Placement::default(),
            clusters,
            affinity_name: None,
            error,
            term_failures: Vec::new(),
        }
    }

    fn at(seconds: i64) -> Time {
        Time(jiff::Timestamp::from_second(seconds).unwrap())
    }

    fn tc(name: &str, replicas: i32) -> TargetCluster {
        TargetCluster {
            name: name.into(),
            replicas,
            components: Vec::new(),
        }
    }

    #[test]
    fn result_patch_only_when_changed() {
        let ok = outcome(Some(vec![tc("a", 2)]), None);
        let patch = result_patch(&ok, None, &[], Some("7")).unwrap().unwrap();
        assert_eq!(
            patch["spec"]["clusters"],
            json!([{"name": "a", "replicas": 2}])
        );
        assert_eq!(
            patch["metadata"]["annotations"][annotations::APPLIED_PLACEMENT],
            "{}"
        );
        assert_eq!(patch["metadata"]["resourceVersion"], "7");
        assert_eq!(
            result_patch(&ok, Some("{}"), &[tc("a", 2)], None).unwrap(),
            None
        );

        let fit = outcome(
            Some(Vec::new()),
            Some(ScheduleError {
                kind: ErrorKind::NoClusterFit(FitError::default()),
                message: "m".into(),
            }),
        );
        let patch = result_patch(&fit, Some("{}"), &[tc("a", 2)], None)
            .unwrap()
            .unwrap();
        assert_eq!(
            patch["spec"]["clusters"],
            Value::Null,
            "a FitError empties the result"
        );
        let unschedulable = outcome(
            None,
            Some(ScheduleError {
                kind: ErrorKind::Unschedulable,
                message: "m".into(),
            }),
        );
        assert_eq!(
            result_patch(&unschedulable, None, &[tc("a", 2)], None).unwrap(),
            None
        );
    }

    #[test]
    fn status_after_success_and_failures() {
        let current = ResourceBindingStatus::default();
        let ok = outcome(Some(vec![tc("a", 1)]), None);
        let next = next_status(&current, &ok, 3, &at(10));
        let c = &next.conditions[0];
        assert_eq!(
            (c.type_.as_str(), c.status.as_str(), c.reason.as_str()),
            ("Scheduled", "True", "Success")
        );
        assert_eq!(c.message, "Binding has been scheduled successfully.");
        assert_eq!(next.scheduler_observed_generation, 3);
        assert_eq!(next.last_scheduled_time, Some(at(10)));
        let patch = status_patch(&current, &next, Some("5")).unwrap().unwrap();
        assert_eq!(patch["status"]["schedulerObservedGeneration"], 3);
        assert_eq!(patch["metadata"]["resourceVersion"], "5");

        // A failure keeps the generation and time, and flips the condition with a new transition time.
        let failed = outcome(
            None,
            Some(ScheduleError {
                kind: ErrorKind::Unschedulable,
                message: "short".into(),
            }),
        );
        let after = next_status(&next, &failed, 4, &at(20));
        let c = &after.conditions[0];
        assert_eq!(
            (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
            ("False", "Unschedulable", "short")
        );
        assert_eq!(c.last_transition_time, at(20));
        assert_eq!(after.scheduler_observed_generation, 3);
        let again = next_status(&after, &failed, 4, &at(30));
        assert_eq!(
            again.conditions[0].last_transition_time,
            at(20),
            "same status keeps its transition time"
        );
        assert_eq!(
            status_patch(&after, &again, None).unwrap(),
            None,
            "nothing changed, no patch"
        );

        let other = outcome(
            None,
            Some(ScheduleError {
                kind: ErrorKind::Other,
                message: "x".into(),
            }),
        );
        assert_eq!(
            next_status(&current, &other, 1, &at(1)).conditions[0].reason,
            "SchedulerError"
        );
        let fit = outcome(
            Some(Vec::new()),
            Some(ScheduleError {
                kind: ErrorKind::NoClusterFit(FitError::default()),
                message: "x".into(),
            }),
        );
        assert_eq!(
            next_status(&current, &fit, 1, &at(1)).conditions[0].reason,
            "NoClusterFit"
        );
    }

    #[test]
    fn affinity_name_is_written_when_it_changes() {
        let mut o = outcome(Some(vec![tc("a", 1)]), None);
        o.affinity_name = Some("backup".into());
        let current = ResourceBindingStatus {
            scheduler_observed_affinity_name: "primary".into(),
            ..Default::default()
        };
        let next = next_status(&current, &o, 1, &at(1));
        let patch = status_patch(&current, &next, None).unwrap().unwrap();
        assert_eq!(patch["status"]["schedulerObservingAffinityName"], "backup");
    }

    #[test]
    fn event_messages() {
        let result = [tc("member1", 2), tc("member2", 1)];
        assert_eq!(
            success_message(&result, false),
            "Binding has been scheduled successfully. Result: {member1:2, member2:1}"
        );
        assert_eq!(
            success_message(&result, true),
            "Binding has been scheduled successfully. Result {member1:2, member2:1}"
        );
        assert_eq!(
            deleting_message("default", "nginx-deployment"),
            "skip schedule deleting resourceBinding: default/nginx-deployment"
        );
        assert_eq!(
            deleting_message("", "foo-namespace"),
            "skip schedule deleting clusterResourceBinding: foo-namespace"
        );
    }
}
