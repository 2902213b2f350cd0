//! AggregateStatus: fold the statuses reflected from every member cluster into the template.
//!
//! Every handler returns the template untouched when the folded status equals the current one, so callers
//! can skip the status update.

use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use serde_json::{Map, Value};

use super::NativeError;
use super::object::{at, describe, generation, json_type, non_zero, set_or_remove};

/// A status counter: its key and whether Go writes it even when zero (no omitempty).
pub(crate) type Field = (&'static str, bool);

pub(crate) const DEPLOYMENT: &[Field] = &[
    ("replicas", false),
    ("readyReplicas", false),
    ("updatedReplicas", false),
    ("availableReplicas", false),
    ("unavailableReplicas", false),
];
pub(crate) const REPLICA_SET: &[Field] = &[
    ("replicas", true),
    ("readyReplicas", false),
    ("availableReplicas", false),
];
pub(crate) const DAEMON_SET: &[Field] = &[
    ("currentNumberScheduled", true),
    ("desiredNumberScheduled", true),
    ("numberAvailable", false),
    ("numberMisscheduled", true),
    ("numberReady", true),
    ("updatedNumberScheduled", false),
    ("numberUnavailable", false),
];
pub(crate) const STATEFUL_SET: &[Field] = &[
    ("availableReplicas", true),
    ("currentReplicas", false),
    ("readyReplicas", false),
    ("replicas", true),
    ("updatedReplicas", false),
];

/// Deployments: the counters summed.
pub(super) fn deployment(
    object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    counters(object, items, DEPLOYMENT)
}

/// ReplicaSets: the counters summed.
pub(super) fn replica_set(
    object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    counters(object, items, REPLICA_SET)
}

/// DaemonSets: the counters summed.
pub(super) fn daemon_set(
    object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    counters(object, items, DAEMON_SET)
}

/// StatefulSets: the counters summed, with the Deployment generation rule (Karmada compares a member's
/// `resourceTemplateGeneration` with the member's own generation instead of the template's, a bug Flotilla fixes:
/// docs/INTERPRETER.md). The native InterpretStatus reflects no observedGeneration for StatefulSets, as Karmada's
/// does not (issue 16 item 7), so a member counts as having observed the template only when its reflected status
/// carries one (a customization's InterpretStatus); with native reflection the template keeps its
/// observedGeneration, as under Karmada.
pub(super) fn stateful_set(
    object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    counters(object, items, STATEFUL_SET)
}

/// A member's reflected status as a map; `None` when the member has none yet.
pub(crate) fn member_status<'a>(
    template: &Value,
    item: &'a AggregatedStatusItem,
) -> Result<Option<&'a Map<String, Value>>, NativeError> {
    match &item.status {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(status)) => Ok(Some(status)),
        Some(other) => Err(member_error(
            template,
            item,
            "status",
            format!("expected a map, got {}", json_type(other)),
        )),
    }
}

/// An integer of a member status (0 when absent), failing on other types as Go's typed decoding does.
pub(crate) fn member_int(
    template: &Value,
    item: &AggregatedStatusItem,
    status: &Map<String, Value>,
    key: &str,
) -> Result<i64, NativeError> {
    match status.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(v) => v.as_i64().ok_or_else(|| {
            member_error(
                template,
                item,
                key,
                format!("expected an integer, got {}", json_type(v)),
            )
        }),
    }
}

pub(crate) fn member_error(
    template: &Value,
    item: &AggregatedStatusItem,
    field: &str,
    reason: String,
) -> NativeError {
    NativeError::Field {
        object: format!(
            "status of {} in cluster {}",
            describe(template),
            item.cluster_name
        ),
        field: field.to_owned(),
        reason,
    }
}

/// An integer of the template's own status (0 when absent).
fn own_int(object: &Value, key: &str) -> Result<i64, NativeError> {
    match at(object, &["status", key]) {
        None | Some(Value::Null) => Ok(0),
        Some(v) => v.as_i64().ok_or_else(|| NativeError::Field {
            object: describe(object),
            field: format!("status.{key}"),
            reason: format!("expected an integer, got {}", json_type(v)),
        }),
    }
}

/// Sums the counters; `observedGeneration` becomes the template's generation once every member observed the
/// latest member spec generated from the latest template generation.
fn counters(
    mut object: Value,
    items: &[AggregatedStatusItem],
    fields: &[Field],
) -> Result<Value, NativeError> {
    let template_generation = generation(&object);
    let mut sums = vec![0_i64; fields.len()];
    let mut observed_latest = 0;
    for item in items {
        let Some(status) = member_status(&object, item)? else {
            continue;
        };
        for ((key, _), sum) in fields.iter().zip(sums.iter_mut()) {
            *sum += member_int(&object, item, status, key)?;
        }
        let member_generation = member_int(&object, item, status, "generation")?;
        let observed = member_int(&object, item, status, "observedGeneration")?;
        let template_seen = member_int(&object, item, status, "resourceTemplateGeneration")?;
        if observed >= member_generation && template_seen >= template_generation {
            observed_latest += 1;
        }
    }
    // Members without a status count in the denominator: they have not observed anything yet.
    let old_observed = own_int(&object, "observedGeneration")?;
    let new_observed = if observed_latest == items.len() {
        template_generation
    } else {
        old_observed
    };
    let mut unchanged = new_observed == old_observed;
    for ((key, _), sum) in fields.iter().zip(&sums) {
        unchanged &= own_int(&object, key)? == *sum;
    }
    if unchanged {
        return Ok(object);
    }
    set_or_remove(
        &mut object,
        &["status", "observedGeneration"],
        non_zero(new_observed),
    );
    for ((key, always), sum) in fields.iter().zip(sums) {
        let value = if *always {
            Some(Value::from(sum))
        } else {
            non_zero(sum)
        };
        set_or_remove(&mut object, &["status", key], value);
    }
    Ok(object)
}

/// Replaces the whole status with `status` unless it is already equal.
pub(crate) fn replace_status(mut object: Value, status: Map<String, Value>) -> Value {
    let status = Value::Object(status);
    let current = object
        .get("status")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    if current != status
        && let Value::Object(map) = &mut object
    {
        map.insert("status".to_owned(), status);
    }
    object
}

/// Active jobs of every member, and the latest schedule and success times.
pub(super) fn cron_job(
    mut object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    let mut active = Vec::new();
    let mut last_schedule: Option<(jiff::Timestamp, Value)> = None;
    let mut last_successful: Option<(jiff::Timestamp, Value)> = None;
    for item in items {
        let Some(status) = member_status(&object, item)? else {
            continue;
        };
        if let Some(list) = status.get("active").and_then(Value::as_array) {
            active.extend(list.iter().cloned());
        }
        for (key, latest) in [
            ("lastScheduleTime", &mut last_schedule),
            ("lastSuccessfulTime", &mut last_successful),
        ] {
            let Some(time) = member_time(&object, item, status, key)? else {
                continue;
            };
            if latest.as_ref().is_none_or(|(t, _)| time.0 > *t) {
                *latest = Some(time);
            }
        }
    }
    let new_active = (!active.is_empty()).then_some(Value::Array(active));
    let new_schedule = last_schedule.map(|(_, v)| v);
    let new_successful = last_successful.map(|(_, v)| v);
    let old = |key: &str| {
        at(&object, &["status", key])
            .filter(|v| !v.is_null())
            .cloned()
    };
    if old("active") == new_active
        && old("lastScheduleTime") == new_schedule
        && old("lastSuccessfulTime") == new_successful
    {
        return Ok(object);
    }
    set_or_remove(&mut object, &["status", "active"], new_active);
    set_or_remove(&mut object, &["status", "lastScheduleTime"], new_schedule);
    set_or_remove(
        &mut object,
        &["status", "lastSuccessfulTime"],
        new_successful,
    );
    Ok(object)
}

/// A timestamp field of a member status with its parsed value.
pub(crate) fn member_time(
    template: &Value,
    item: &AggregatedStatusItem,
    status: &Map<String, Value>,
    key: &str,
) -> Result<Option<(jiff::Timestamp, Value)>, NativeError> {
    match status.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let parsed = v.as_str().and_then(|s| s.parse::<jiff::Timestamp>().ok());
            match parsed {
                Some(t) => Ok(Some((t, v.clone()))),
                None => Err(member_error(
                    template,
                    item,
                    key,
                    format!("{v} is not an RFC 3339 time"),
                )),
            }
        }
    }
}

/// Phase by severity and the readiness and state of every container, across members.
pub(super) fn pod(object: Value, items: &[AggregatedStatusItem]) -> Result<Value, NativeError> {
    // Karmada leaves the status alone when there is no item list at all; an empty list is how Flotilla's
    // callers say that, since a binding without items omits the list.
    if items.is_empty() {
        return Ok(object);
    }
    let mut phases = Vec::new();
    let mut containers = Vec::new();
    let mut init_containers = Vec::new();
    for item in items {
        let Some(status) = member_status(&object, item)? else {
            phases.push("Pending".to_owned());
            continue;
        };
        phases.push(
            status
                .get("phase")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        );
        for (key, out) in [
            ("containerStatuses", &mut containers),
            ("initContainerStatuses", &mut init_containers),
        ] {
            for container in status
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.push(container_summary(container));
            }
        }
    }
    let phase = ["Failed", "Pending", "Running", "Succeeded"]
        .into_iter()
        .find(|p| phases.iter().any(|x| x == p));
    let mut status = Map::new();
    if let Some(phase) = phase {
        status.insert("phase".to_owned(), Value::from(phase));
    }
    if !containers.is_empty() {
        status.insert("containerStatuses".to_owned(), Value::Array(containers));
    }
    if !init_containers.is_empty() {
        status.insert(
            "initContainerStatuses".to_owned(),
            Value::Array(init_containers),
        );
    }
    Ok(replace_status(object, status))
}

/// Only `ready` and `state` of a member container status carry over; the other fields Go always writes are
/// zero-valued, as in Karmada.
fn container_summary(container: &Value) -> Value {
    let ready = container
        .get("ready")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let state = container
        .get("state")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    serde_json::json!({
        "name": "",
        "state": state,
        "lastState": {},
        "ready": ready,
        "restartCount": 0,
        "image": "",
        "imageID": "",
    })
}

/// The most severe phase among members; a member without a status is still Pending.
pub(super) fn persistent_volume(
    object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    let mut phases = Vec::new();
    for item in items {
        match member_status(&object, item)? {
            None => phases.push("Pending".to_owned()),
            Some(status) => phases.push(
                status
                    .get("phase")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            ),
        }
    }
    let phase = ["Failed", "Pending", "Available", "Bound", "Released"]
        .into_iter()
        .find(|p| phases.iter().any(|x| x == p));
    let mut status = Map::new();
    if let Some(phase) = phase {
        status.insert("phase".to_owned(), Value::from(phase));
    }
    Ok(replace_status(object, status))
}

/// Bound unless a member is Lost or in another phase (the last such member wins).
pub(super) fn persistent_volume_claim(
    object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    let mut phase = "Bound".to_owned();
    for item in items {
        let Some(status) = member_status(&object, item)? else {
            continue;
        };
        let member = status
            .get("phase")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if member == "Lost" {
            phase = member.to_owned();
            break;
        }
        if member != "Bound" {
            phase = member.to_owned();
        }
    }
    let mut status = Map::new();
    if !phase.is_empty() {
        status.insert("phase".to_owned(), Value::from(phase));
    }
    Ok(replace_status(object, status))
}

/// Sums, and disrupted pods keyed `<cluster>/<pod>`.
pub(super) fn pod_disruption_budget(
    object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    let keys = [
        "currentHealthy",
        "desiredHealthy",
        "expectedPods",
        "disruptionsAllowed",
    ];
    let mut sums = [0_i64; 4];
    let mut disrupted = Map::new();
    for item in items {
        let Some(status) = member_status(&object, item)? else {
            continue;
        };
        for (key, sum) in keys.iter().zip(sums.iter_mut()) {
            *sum += member_int(&object, item, status, key)?;
        }
        if let Some(pods) = status.get("disruptedPods").and_then(Value::as_object) {
            for (pod, time) in pods {
                disrupted.insert(format!("{}/{pod}", item.cluster_name), time.clone());
            }
        }
    }
    let mut status = Map::new();
    for (key, sum) in keys.iter().zip(sums) {
        status.insert((*key).to_owned(), Value::from(sum));
    }
    if !disrupted.is_empty() {
        status.insert("disruptedPods".to_owned(), Value::Object(disrupted));
    }
    Ok(replace_status(object, status))
}

/// Sums of current and desired replicas.
pub(super) fn horizontal_pod_autoscaler(
    object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    let (mut current, mut desired) = (0, 0);
    for item in items {
        let Some(status) = member_status(&object, item)? else {
            continue;
        };
        current += member_int(&object, item, status, "currentReplicas")?;
        desired += member_int(&object, item, status, "desiredReplicas")?;
    }
    let mut status = Map::new();
    if current != 0 {
        status.insert("currentReplicas".to_owned(), Value::from(current));
    }
    status.insert("desiredReplicas".to_owned(), Value::from(desired));
    Ok(replace_status(object, status))
}
