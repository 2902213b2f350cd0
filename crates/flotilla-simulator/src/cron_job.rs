//! CronJobs as the CronJob controller runs them: at each time the schedule names (in `spec.timeZone`, UTC by
//! default) it creates a Job `<cronjob>-<minutes since the epoch>` from the job template, unless suspended,
//! forbidden by `concurrencyPolicy: Forbid` while one runs, or later than `startingDeadlineSeconds`; its status
//! lists the Jobs still running (`active`), the last scheduled time and the last time a Job succeeded. The Jobs
//! themselves are the Job simulator's to run.

use std::str::FromStr;

use croner::Cron;
use jiff::{Timestamp, Zoned};
use serde_json::{Map, Value, json};

use super::common::{name, status_of};
use super::owned::{controlled_by, uid};

/// The annotation the controller puts on each Job with the time it was scheduled for.
pub(crate) const SCHEDULED_ANNOTATION: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// What the schedule asks for at one moment.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Due {
    /// A scheduled time that has come and not been run yet (and is not past its starting deadline).
    pub run: Option<Timestamp>,
    /// The next scheduled time after now.
    pub next: Option<Timestamp>,
}

fn time_at(obj: &Value, pointer: &str) -> Option<Timestamp> {
    obj.pointer(pointer)
        .and_then(Value::as_str)
        .and_then(|t| t.parse().ok())
}

/// `now` in the CronJob's time zone (UTC when it names none or one unknown here).
fn zoned(obj: &Value, now: Timestamp) -> Zoned {
    let zone = obj
        .pointer("/spec/timeZone")
        .and_then(Value::as_str)
        .and_then(|name| jiff::tz::TimeZone::get(name).ok())
        .unwrap_or(jiff::tz::TimeZone::UTC);
    now.to_zoned(zone)
}

/// What the schedule of `obj` asks for at `now`; `None` when it is suspended or its schedule does not parse
/// (the API server validates it; an unparsable one is left alone, as the controller leaves it).
pub(crate) fn due(obj: &Value, now: Timestamp) -> Option<Due> {
    if obj.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let schedule = obj.pointer("/spec/schedule").and_then(Value::as_str)?;
    let cron = Cron::from_str(schedule).ok()?;
    let here = zoned(obj, now);
    let since = time_at(obj, "/status/lastScheduleTime")
        .or_else(|| time_at(obj, "/metadata/creationTimestamp"))
        .unwrap_or(now);
    let previous = cron
        .find_previous_occurrence(&here, true)
        .ok()
        .map(|z| z.timestamp());
    let deadline = obj
        .pointer("/spec/startingDeadlineSeconds")
        .and_then(Value::as_i64);
    let run = previous
        .filter(|p| *p > since)
        .filter(|p| deadline.is_none_or(|d| now.as_second() - p.as_second() <= d));
    let next = cron
        .find_next_occurrence(&here, false)
        .ok()
        .map(|z| z.timestamp());
    Some(Due { run, next })
}

/// The Job the CronJob creates for the time `scheduled`.
pub(crate) fn job_for(obj: &Value, scheduled: Timestamp) -> Value {
    let template = obj
        .pointer("/spec/jobTemplate")
        .cloned()
        .unwrap_or_default();
    let mut annotations = template
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    annotations.insert(
        SCHEDULED_ANNOTATION.into(),
        json!(scheduled.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()),
    );
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {
            "name": format!("{}-{}", name(obj), scheduled.as_second().div_euclid(60)),
            "namespace": obj.pointer("/metadata/namespace"),
            "labels": template.pointer("/metadata/labels"),
            "annotations": annotations,
            "ownerReferences": [{
                "apiVersion": "batch/v1", "kind": "CronJob", "name": name(obj), "uid": uid(obj),
                "controller": true, "blockOwnerDeletion": true,
            }],
        },
        "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
    })
}

/// Whether a Job has finished (a `Complete` or `Failed` condition that is `True`), and whether it succeeded.
pub(crate) fn finished(job: &Value) -> Option<bool> {
    let conditions = job
        .pointer("/status/conditions")
        .and_then(Value::as_array)?;
    conditions
        .iter()
        .find_map(|c| match (c["type"].as_str(), c["status"].as_str()) {
            (Some("Complete"), Some("True")) => Some(true),
            (Some("Failed"), Some("True")) => Some(false),
            _ => None,
        })
}

/// The Jobs of `jobs` that `obj` controls.
pub(crate) fn owned<'a>(obj: &Value, jobs: &'a [Value]) -> Vec<&'a Value> {
    jobs.iter().filter(|j| controlled_by(j, uid(obj))).collect()
}

/// The later of two RFC 3339 times (either may be absent).
fn later(a: Option<&Value>, b: Option<Timestamp>) -> Option<Value> {
    let a_time = a
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<Timestamp>().ok());
    match (a_time, b) {
        (Some(x), Some(y)) if y > x => Some(json!(y.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())),
        (Some(_), _) => a.cloned(),
        (None, Some(y)) => Some(json!(y.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())),
        (None, None) => None,
    }
}

/// CronJob status from the Jobs it owns: those running in `active` (an entry once listed keeps its fields),
/// the latest scheduled time and the latest successful completion.
pub(crate) fn cron_job(obj: &Value, jobs: &[Value]) -> Value {
    let current = status_of(obj);
    let mut status = current.clone();
    let owned = owned(obj, jobs);
    let listed: Vec<Value> = current
        .get("active")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let active: Vec<Value> = owned
        .iter()
        .filter(|j| j.pointer("/metadata/deletionTimestamp").is_none() && finished(j).is_none())
        .map(|j| {
            listed
                .iter()
                .find(|l| l["uid"] == j["metadata"]["uid"])
                .cloned()
                .unwrap_or_else(|| {
                    json!({"apiVersion": "batch/v1", "kind": "Job", "name": j["metadata"]["name"],
                           "namespace": j["metadata"]["namespace"], "uid": j["metadata"]["uid"],
                           "resourceVersion": j["metadata"]["resourceVersion"]})
                })
        })
        .collect();
    if active.is_empty() {
        status.remove("active");
    } else {
        status.insert("active".into(), Value::Array(active));
    }
    let scheduled = owned
        .iter()
        .filter_map(|j| {
            time_at(
                j,
                &format!(
                    "/metadata/annotations/{}",
                    SCHEDULED_ANNOTATION.replace('/', "~1")
                ),
            )
        })
        .max();
    let succeeded = owned
        .iter()
        .filter(|j| finished(j) == Some(true))
        .filter_map(|j| time_at(j, "/status/completionTime"))
        .max();
    set(
        &mut status,
        "lastScheduleTime",
        later(current.get("lastScheduleTime"), scheduled),
    );
    set(
        &mut status,
        "lastSuccessfulTime",
        later(current.get("lastSuccessfulTime"), succeeded),
    );
    Value::Object(status)
}

fn set(status: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        status.insert(key.into(), value);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn cron_job(schedule: &str) -> Value {
        json!({"metadata": {"name": "cj", "namespace": "default", "uid": "c1",
                            "creationTimestamp": "2026-01-01T00:00:30Z"},
               "spec": {"schedule": schedule, "jobTemplate": {"metadata": {"labels": {"app": "cj"}},
                        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}})
    }

    fn at(t: &str) -> Timestamp {
        t.parse().unwrap()
    }

    #[test]
    fn a_schedule_is_due_once_its_time_comes_and_not_again() {
        let mut cj = cron_job("* * * * *");
        let before = due(&cj, at("2026-01-01T00:00:50Z")).unwrap();
        assert_eq!(before.run, None);
        assert_eq!(before.next, Some(at("2026-01-01T00:01:00Z")));
        let due_now = due(&cj, at("2026-01-01T00:01:05Z")).unwrap();
        assert_eq!(due_now.run, Some(at("2026-01-01T00:01:00Z")));
        cj["status"] = json!({"lastScheduleTime": "2026-01-01T00:01:00Z"});
        assert_eq!(due(&cj, at("2026-01-01T00:01:30Z")).unwrap().run, None);
        cj["spec"]["startingDeadlineSeconds"] = json!(10);
        assert_eq!(
            due(&cj, at("2026-01-01T00:02:30Z")).unwrap().run,
            None,
            "missed its deadline"
        );
        cj["spec"]["suspend"] = json!(true);
        assert_eq!(due(&cj, at("2026-01-01T00:05:00Z")), None);
    }

    #[test]
    fn a_job_is_named_for_its_minute_and_owned_and_the_status_follows_it() {
        let cj = cron_job("*/5 * * * *");
        let mut job = job_for(&cj, at("2026-01-01T00:05:00Z"));
        assert_eq!(
            job["metadata"]["name"],
            format!("cj-{}", at("2026-01-01T00:05:00Z").as_second() / 60)
        );
        assert_eq!(
            job["metadata"]["annotations"][SCHEDULED_ANNOTATION],
            "2026-01-01T00:05:00Z"
        );
        assert_eq!(job["metadata"]["labels"]["app"], "cj");
        job["metadata"]["uid"] = json!("j1");
        let running = super::cron_job(&cj, std::slice::from_ref(&job));
        assert_eq!(running["active"][0]["name"], job["metadata"]["name"]);
        assert_eq!(running["lastScheduleTime"], "2026-01-01T00:05:00Z");
        assert!(running.get("lastSuccessfulTime").is_none());
        job["status"] = json!({"completionTime": "2026-01-01T00:05:02Z",
                               "conditions": [{"type": "Complete", "status": "True"}]});
        let done = super::cron_job(&cj, &[job]);
        assert!(done.get("active").is_none());
        assert_eq!(done["lastSuccessfulTime"], "2026-01-01T00:05:02Z");
    }
}
