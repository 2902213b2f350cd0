//! AggregateStatus for Jobs: a Job is complete when it completed in every member and failed as
//! soon as it failed in one.

use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use serde_json::{Map, Value, json};

use super::NativeError;
use super::aggregate::{member_int, member_status, member_time, replace_status};
use super::object::at;

/// The template with a freshly computed JobStatus, unless it already finished.
pub(crate) fn aggregate(
    object: Value,
    items: &[AggregatedStatusItem],
) -> Result<Value, NativeError> {
    let own_conditions = at(&object, &["status", "conditions"]).and_then(Value::as_array);
    if own_conditions.is_some_and(|c| finished(c).is_some()) {
        // A finished Job is never aggregated again.
        return Ok(object);
    }
    let (mut active, mut succeeded, mut failed) = (0, 0, 0);
    let mut complete = 0;
    let mut success_criteria = 0;
    let mut failed_clusters = Vec::new();
    let mut starts = Vec::new();
    let mut completions = Vec::new();
    for item in items {
        let Some(status) = member_status(&object, item)? else {
            continue;
        };
        active += member_int(&object, item, status, "active")?;
        succeeded += member_int(&object, item, status, "succeeded")?;
        failed += member_int(&object, item, status, "failed")?;
        let conditions = status
            .get("conditions")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        match finished(conditions) {
            Some("Complete") => complete += 1,
            Some(_) => failed_clusters.push(item.cluster_name.clone()),
            None => {}
        }
        if conditions.iter().any(|c| is_true(c, "SuccessCriteriaMet")) {
            success_criteria += 1;
        }
        starts.extend(member_time(&object, item, status, "startTime")?);
        completions.extend(member_time(&object, item, status, "completionTime")?);
    }

    let now = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let condition = |kind: &str, reason: &str, message: String| {
        json!({
            "type": kind, "status": "True", "reason": reason, "message": message,
            "lastProbeTime": now, "lastTransitionTime": now,
        })
    };
    let mut conditions = Vec::new();
    if !failed_clusters.is_empty() {
        let message = format!(
            "Job executed failed in member clusters {}",
            failed_clusters.join(",")
        );
        conditions.push(condition("Failed", "JobFailed", message));
    }
    if complete > 0 && complete == items.len() {
        conditions.push(condition(
            "Complete",
            "Completed",
            "Job completed".to_owned(),
        ));
        if success_criteria == items.len() {
            let message = "All member clusters have met success criteria".to_owned();
            conditions.push(condition(
                "SuccessCriteriaMet",
                "CompletionsReached",
                message,
            ));
        }
    }

    let mut status = Map::new();
    for (key, value) in [
        ("active", active),
        ("succeeded", succeeded),
        ("failed", failed),
    ] {
        if value != 0 {
            status.insert(key.to_owned(), Value::from(value));
        }
    }
    if !conditions.is_empty() {
        status.insert("conditions".to_owned(), Value::Array(conditions));
    }
    let own_start = at(&object, &["status", "startTime"])
        .filter(|v| !v.is_null())
        .cloned();
    let start = own_start.or_else(|| {
        // Only when every member reported one: otherwise a member that has not started would be hidden.
        (starts.len() == items.len())
            .then(|| {
                starts
                    .iter()
                    .min_by_key(|(t, _)| *t)
                    .map(|(_, v)| v.clone())
            })
            .flatten()
    });
    if let Some(start) = start {
        status.insert("startTime".to_owned(), start);
    }
    if completions.len() == items.len()
        && let Some((_, latest)) = completions.iter().max_by_key(|(t, _)| *t)
    {
        status.insert("completionTime".to_owned(), latest.clone());
    }
    Ok(replace_status(object, status))
}

/// The type of the first `Complete` or `Failed` condition that is `True`.
fn finished(conditions: &[Value]) -> Option<&'static str> {
    conditions.iter().find_map(|c| {
        if is_true(c, "Complete") {
            Some("Complete")
        } else if is_true(c, "Failed") {
            Some("Failed")
        } else {
            None
        }
    })
}

fn is_true(condition: &Value, kind: &str) -> bool {
    condition.get("type").and_then(Value::as_str) == Some(kind)
        && condition.get("status").and_then(Value::as_str) == Some("True")
}
