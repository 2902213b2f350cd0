//! The two views of one Event store: `v1` Events and `events.k8s.io/v1` Events are the same objects,
//! as in kube-apiserver, where both REST endpoints share one storage. We keep the core `v1` shape on disk and
//! convert the `events.k8s.io/v1` view on the way in and out, with upstream's field mapping:
//!
//! | core `v1`            | `events.k8s.io/v1`          |
//! |----------------------|-----------------------------|
//! | `involvedObject`     | `regarding`                 |
//! | `message`            | `note`                      |
//! | `source`             | `deprecatedSource`          |
//! | `firstTimestamp`     | `deprecatedFirstTimestamp`  |
//! | `lastTimestamp`      | `deprecatedLastTimestamp`   |
//! | `count`              | `deprecatedCount`           |
//! | `reportingComponent` | `reportingController`       |
//!
//! `action`, `eventTime`, `reason`, `related`, `reportingInstance`, `series` and `type` keep their names.
//! Invariant: metadata (name, namespace, uid, resourceVersion) is never touched, so both views agree on it.

use serde_json::{Map, Value, json};

use crate::resource::{ResourceInfo, is_events_view};

/// (core `v1` name, `events.k8s.io/v1` name) of every renamed field.
const RENAMED: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// Whether `info` serves the `events.k8s.io` view (a built-in, never a CRD that happens to share the names).
pub(crate) fn serves_view(info: &ResourceInfo) -> bool {
    !info.custom && is_events_view(&info.group, &info.plural)
}

fn rename(obj: &Value, to_view: bool, api_version: &str) -> Value {
    let Some(fields) = obj.as_object() else {
        return obj.clone();
    };
    let mut out = Map::with_capacity(fields.len() + 1);
    for (k, v) in fields {
        let renamed = RENAMED.iter().find_map(|(core, view)| {
            if to_view {
                (k == core).then_some(*view)
            } else {
                (k == view).then_some(*core)
            }
        });
        out.insert(renamed.unwrap_or(k).to_string(), v.clone());
    }
    out.insert("apiVersion".into(), json!(api_version));
    out.insert("kind".into(), json!("Event"));
    Value::Object(out)
}

/// A stored (core `v1`) Event as `events.k8s.io/v1` serves it. `eventTime` is always present, `null` when the
/// Event was written through the core API without one, as upstream serializes a zero MicroTime.
pub(crate) fn to_view(stored: &Value, api_version: &str) -> Value {
    let mut out = rename(stored, true, api_version);
    if let Some(m) = out.as_object_mut() {
        m.entry("eventTime").or_insert(Value::Null);
    }
    out
}

/// An `events.k8s.io/v1` Event in the stored core `v1` shape.
pub(crate) fn to_core(view: &Value) -> Value {
    let mut out = rename(view, false, "v1");
    // A null eventTime read through the view and written back means "none" in the core shape.
    if let Some(m) = out.as_object_mut()
        && m.get("eventTime").is_some_and(Value::is_null)
    {
        m.remove("eventTime");
    }
    out
}

/// Whether a stored object is already in the core shape (objects written before both views shared storage
/// were kept in the view's shape).
pub(crate) fn is_core_shape(obj: &Value) -> bool {
    obj.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_round_trips_and_renames_every_mapped_field() {
        let core = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "web.1", "namespace": "ns", "uid": "u1", "resourceVersion": "7"},
            "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "ns", "uid": "d1"},
            "message": "scaled", "reason": "Scaled", "type": "Normal", "count": 3,
            "source": {"component": "ctl"}, "firstTimestamp": "2026-01-01T00:00:00Z",
            "lastTimestamp": "2026-01-01T00:01:00Z", "reportingComponent": "ctl", "reportingInstance": "ctl-1",
            "action": "Scale", "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}
        });
        let view = to_view(&core, "events.k8s.io/v1");
        assert_eq!(view["apiVersion"], "events.k8s.io/v1");
        assert_eq!(view["regarding"]["name"], "web");
        assert_eq!(view["note"], "scaled");
        assert_eq!(view["deprecatedCount"], 3);
        assert_eq!(view["deprecatedSource"]["component"], "ctl");
        assert_eq!(view["deprecatedFirstTimestamp"], "2026-01-01T00:00:00Z");
        assert_eq!(view["deprecatedLastTimestamp"], "2026-01-01T00:01:00Z");
        assert_eq!(view["reportingController"], "ctl");
        assert_eq!(view["reportingInstance"], "ctl-1");
        assert_eq!(view["series"]["count"], 2);
        assert_eq!(view["metadata"], core["metadata"]);
        assert!(view.get("eventTime").is_some_and(Value::is_null));
        assert!(view.get("involvedObject").is_none() && view.get("message").is_none());
        assert_eq!(to_core(&view), core);
    }

    #[test]
    fn only_the_builtin_view_is_converted() {
        assert!(is_events_view("events.k8s.io", "events"));
        assert!(!is_events_view("", "events"));
        assert!(!is_events_view("events.k8s.io", "others"));
    }
}
