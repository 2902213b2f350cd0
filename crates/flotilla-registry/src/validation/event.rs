//! Event validation (upstream `pkg/apis/core/validation/events.go`), on the stored core shape of both Event APIs
//! (`crate::kinds::core::events`). Every Event passes the legacy checks; one written through `events.k8s.io` (`strict`)
//! also the newer API's: required `eventTime`, a `Normal` or `Warning` type, none of the deprecated fields set,
//! a well-formed `series`, and on updates only `series` (and metadata) may change. Paths name the fields as
//! upstream's internal type does, whichever API was used.

use serde_json::Value;

use super::FieldError;
use super::format::{is_dns1123_subdomain, is_qualified_name};

const REPORTING_INSTANCE_LIMIT: usize = 128;
const ACTION_LIMIT: usize = 128;
const REASON_LIMIT: usize = 128;
const NOTE_LIMIT: usize = 1024;

/// Fields an `events.k8s.io` update may not change: (path upstream reports, stored core field).
const IMMUTABLE: &[(&str, &str)] = &[
    ("involvedObject", "involvedObject"),
    ("reason", "reason"),
    ("message", "message"),
    ("source", "source"),
    ("firstTimestamp", "firstTimestamp"),
    ("lastTimestamp", "lastTimestamp"),
    ("count", "count"),
    ("type", "type"),
    ("eventTime", "eventTime"),
    ("action", "action"),
    ("related", "related"),
    ("reportingController", "reportingComponent"),
    ("reportingInstance", "reportingInstance"),
];

fn text<'v>(obj: &'v Value, pointer: &str) -> &'v str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// A time field is zero when absent, null or empty, as Go's zero `time.Time` serializes.
fn is_zero_time(obj: &Value, pointer: &str) -> bool {
    text(obj, pointer).is_empty()
}

/// Treats an absent field, `null` and the type's empty value alike, as Go's typed comparison does.
fn normalized(v: Option<&Value>) -> Value {
    match v {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(s)) if s.is_empty() => Value::Null,
        Some(Value::Number(n)) if n.as_i64() == Some(0) => Value::Null,
        Some(Value::Object(m)) if m.is_empty() => Value::Null,
        Some(v) => v.clone(),
    }
}

fn too_long(errors: &mut Vec<FieldError>, field: &str, value: &str, limit: usize) {
    if value.len() > limit {
        errors.push(FieldError::invalid(
            field,
            "",
            format!("can have at most {limit} characters"),
        ));
    }
}

fn legacy(ev: &Value, errors: &mut Vec<FieldError>) {
    let namespace = text(ev, "/metadata/namespace");
    let involved_ns = text(ev, "/involvedObject/namespace");
    let mismatch = |errors: &mut Vec<FieldError>| {
        errors.push(FieldError::invalid(
            "involvedObject.namespace",
            involved_ns,
            "does not match event.namespace",
        ));
    };
    if is_zero_time(ev, "/eventTime") {
        // Events without eventTime come from old clients: only the namespaces must agree.
        let agree = if involved_ns.is_empty() {
            namespace.is_empty() || namespace == "default"
        } else {
            namespace == involved_ns
        };
        if !agree {
            mismatch(errors);
        }
    } else {
        if involved_ns.is_empty() && namespace != "default" && namespace != "kube-system" {
            mismatch(errors);
        }
        let controller = text(ev, "/reportingComponent");
        if controller.is_empty() {
            errors.push(FieldError::required("reportingController", ""));
        }
        for msg in is_qualified_name(controller) {
            errors.push(FieldError::invalid("reportingController", controller, msg));
        }
        let instance = text(ev, "/reportingInstance");
        if instance.is_empty() {
            errors.push(FieldError::required("reportingInstance", ""));
        }
        too_long(
            errors,
            "reportingInstance",
            instance,
            REPORTING_INSTANCE_LIMIT,
        );
        let action = text(ev, "/action");
        if action.is_empty() {
            errors.push(FieldError::required("action", ""));
        }
        too_long(errors, "action", action, ACTION_LIMIT);
        let reason = text(ev, "/reason");
        if reason.is_empty() {
            errors.push(FieldError::required("reason", ""));
        }
        too_long(errors, "reason", reason, REASON_LIMIT);
        too_long(errors, "message", text(ev, "/message"), NOTE_LIMIT);
    }
    for msg in is_dns1123_subdomain(namespace) {
        errors.push(FieldError::invalid("namespace", namespace, msg));
    }
}

fn series(ev: &Value, errors: &mut Vec<FieldError>) {
    let Some(series) = ev.get("series").filter(|s| !s.is_null()) else {
        return;
    };
    if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
        errors.push(FieldError::invalid(
            "series.count",
            "",
            "should be at least 2",
        ));
    }
    if is_zero_time(series, "/lastObservedTime") {
        errors.push(FieldError::required("series.lastObservedTime", ""));
    }
}

/// Validates an Event in the stored core shape; `strict` when written through `events.k8s.io`, `old` on updates.
pub(crate) fn validate_event(ev: &Value, old: Option<&Value>, strict: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    legacy(ev, &mut errors);
    if !strict {
        return errors;
    }
    match old {
        None => {
            series(ev, &mut errors);
            if is_zero_time(ev, "/eventTime") {
                errors.push(FieldError::required("eventTime", ""));
            }
            let kind = text(ev, "/type");
            if kind != "Normal" && kind != "Warning" {
                errors.push(FieldError::invalid(
                    "type",
                    "",
                    format!("has invalid value: {kind}"),
                ));
            }
            for (field, set) in [
                ("firstTimestamp", !is_zero_time(ev, "/firstTimestamp")),
                ("lastTimestamp", !is_zero_time(ev, "/lastTimestamp")),
                (
                    "count",
                    ev.get("count").and_then(Value::as_i64).unwrap_or(0) != 0,
                ),
                (
                    "source",
                    !text(ev, "/source/component").is_empty()
                        || !text(ev, "/source/host").is_empty(),
                ),
            ] {
                if set {
                    errors.push(FieldError::invalid(field, "", "needs to be unset"));
                }
            }
        }
        Some(old) => {
            if normalized(ev.get("series")) != normalized(old.get("series")) {
                series(ev, &mut errors);
            }
            for (field, stored) in IMMUTABLE {
                let new = normalized(ev.get(*stored));
                if new != normalized(old.get(*stored)) {
                    errors.push(FieldError::invalid(*field, new, "field is immutable"));
                }
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn recorder_event() -> Value {
        json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "cm.1", "namespace": "default"},
            "involvedObject": {"kind": "ConfigMap", "name": "cm", "namespace": "default"},
            "eventTime": "2026-11-22T10:00:00.000000Z", "reportingComponent": "flotilla-test",
            "reportingInstance": "test-1", "action": "Observe", "reason": "Observed", "type": "Normal"})
    }

    fn fields(errors: &[FieldError]) -> Vec<&str> {
        errors.iter().map(|e| e.field.as_str()).collect()
    }

    #[test]
    fn what_kube_runtimes_recorder_writes_is_valid_and_may_grow_a_series() {
        let ev = recorder_event();
        assert!(validate_event(&ev, None, true).is_empty());
        let mut repeated = ev.clone();
        repeated["series"] = json!({"count": 2, "lastObservedTime": "2026-11-22T10:01:00.000000Z"});
        assert!(validate_event(&repeated, Some(&ev), true).is_empty());
        repeated["series"]["count"] = json!(1);
        assert_eq!(
            fields(&validate_event(&repeated, Some(&ev), true)),
            ["series.count"]
        );
    }

    #[test]
    fn the_newer_api_requires_its_fields_and_refuses_the_deprecated_ones() {
        let mut ev = recorder_event();
        for f in ["eventTime", "reportingComponent", "action"] {
            ev.as_object_mut().map(|m| m.remove(f));
        }
        ev["type"] = json!("Odd");
        ev["count"] = json!(3);
        let errs = validate_event(&ev, None, true);
        assert_eq!(fields(&errs), ["eventTime", "type", "count"], "{errs:?}");
        let mut ev = recorder_event();
        ev["reportingComponent"] = json!("");
        ev["firstTimestamp"] = json!("2026-11-22T10:00:00Z");
        let errs = validate_event(&ev, None, true);
        assert!(fields(&errs).contains(&"reportingController"), "{errs:?}");
        assert!(fields(&errs).contains(&"firstTimestamp"), "{errs:?}");
        // The core API only checks what old clients always sent.
        assert!(
            validate_event(&ev, None, false)
                .iter()
                .all(|e| e.field != "firstTimestamp")
        );
    }

    #[test]
    fn legacy_events_must_name_their_own_namespace_and_newer_updates_keep_fields() {
        let ev = json!({"metadata": {"name": "e", "namespace": "a"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "b"}, "reason": "R"});
        assert_eq!(
            fields(&validate_event(&ev, None, false)),
            ["involvedObject.namespace"]
        );
        let old = recorder_event();
        let mut changed = old.clone();
        changed["message"] = json!("rewritten");
        assert_eq!(
            fields(&validate_event(&changed, Some(&old), true)),
            ["message"]
        );
        assert!(validate_event(&changed, Some(&old), false).is_empty());
    }
}
