//! Job status as the Job controller reports a Job whose pods all succeed: first started (`startTime`,
//! `active`), then, one simulator delay later, complete (`succeeded`, `completionTime` and the `SuccessCriteriaMet`
//! and `Complete` conditions). Suspended Jobs are not started; finished Jobs are never touched again.

use serde_json::{Map, Value, json};

use super::common::{Cond, Stamps, conditions, int_at, kept_time, status_of};

/// Whether a Job status carries a `Complete` or `Failed` condition with status `True`.
fn finished(status: &Map<String, Value>) -> bool {
    status
        .get("conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                matches!(
                    c.get("type").and_then(Value::as_str),
                    Some("Complete" | "Failed")
                ) && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
}

/// The next Job status: unchanged when finished or suspended, started when it has no `startTime`, complete
/// otherwise.
pub(crate) fn job(obj: &Value, now: &str) -> Value {
    let current = status_of(obj);
    let suspended = obj.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
    if finished(&current) || suspended {
        return Value::Object(current);
    }
    // Without `completions` any one successful pod completes the Job.
    let completions = int_at(obj, "/spec/completions").unwrap_or(1).max(0);
    let parallelism = int_at(obj, "/spec/parallelism").unwrap_or(1).max(0);
    let mut status = current.clone();
    // Set on every sync by the real controller: pods being terminated (JobPodReplacementPolicy, on by default)
    // and finished pods not yet counted (none: the simulator counts them at once).
    status.insert("terminating".into(), json!(0));
    status.insert("uncountedTerminatedPods".into(), json!({}));
    if !current.contains_key("startTime") {
        let active = parallelism.min(completions);
        status.insert("startTime".into(), json!(now));
        if active > 0 {
            status.insert("active".into(), json!(active));
        }
        // `ready` is a pointer the controller always sets.
        status.insert("ready".into(), json!(active));
        return Value::Object(status);
    }
    status.remove("active");
    status.insert("ready".into(), json!(0));
    if completions > 0 {
        status.insert("succeeded".into(), json!(completions));
    }
    if obj.pointer("/spec/completionMode").and_then(Value::as_str) == Some("Indexed")
        && completions > 0
    {
        let indexes = if completions == 1 {
            "0".to_string()
        } else {
            format!("0-{}", completions - 1)
        };
        status.insert("completedIndexes".into(), json!(indexes));
    }
    status.insert(
        "completionTime".into(),
        kept_time(&current, "completionTime", now),
    );
    let message = "Reached expected number of succeeded pods";
    let wanted = [
        Cond {
            kind: "SuccessCriteriaMet",
            status: "True",
            reason: "CompletionsReached",
            message: message.into(),
        },
        Cond {
            kind: "Complete",
            status: "True",
            reason: "CompletionsReached",
            message: message.into(),
        },
    ];
    status.insert(
        "conditions".into(),
        conditions(&current, &wanted, Stamps::Probe, now),
    );
    Value::Object(status)
}
