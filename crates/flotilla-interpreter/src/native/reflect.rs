//! InterpretStatus: the part of a member object's status Karmada stores in the Work and later
//! folds into the template.

use flotilla_api::names::annotations::RESOURCE_TEMPLATE_GENERATION;
use serde_json::{Map, Value, json};

use super::NativeError;
use super::kinds::{Reflected, StatusFn};
use super::object::{describe, generation, is_empty, json_type, non_zero, str_at};

/// The status to reflect, or `None` when the object has none: the kind's own reflection, or for kinds
/// without one (Ingress and every kind outside the table) the whole status.
pub(crate) fn reflect_status(
    reflect: Option<StatusFn>,
    object: &Value,
) -> Result<Option<Value>, NativeError> {
    let status = match object.get("status") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(status)) => status,
        Some(other) => {
            return Err(NativeError::Field {
                object: describe(object),
                field: "status".to_owned(),
                reason: format!("expected a map, got {}", json_type(other)),
            });
        }
    };
    let result = match reflect {
        Some(reflect) => reflect(object, status)?,
        None => Some(status.clone()),
    };
    Ok(result.map(Value::Object))
}

/// Deployments: generations, counters and observedGeneration; nothing when all of them are absent.
pub(super) fn deployment(object: &Value, status: &Map<String, Value>) -> Reflected {
    let out = workload(object, status, DEPLOYMENT)?;
    Ok((!out.is_empty()).then_some(out))
}

/// ReplicaSets: generations, counters and observedGeneration.
pub(super) fn replica_set(object: &Value, status: &Map<String, Value>) -> Reflected {
    workload(object, status, REPLICA_SET).map(Some)
}

/// DaemonSets: generations, counters and observedGeneration.
pub(super) fn daemon_set(object: &Value, status: &Map<String, Value>) -> Reflected {
    workload(object, status, DAEMON_SET).map(Some)
}

/// StatefulSets: generations and counters, without observedGeneration: exactly the fields Karmada reflects
/// (issue 16 item 7), so a Work's status reads the same under both.
pub(super) fn stateful_set(object: &Value, status: &Map<String, Value>) -> Reflected {
    counters(object, status, STATEFUL_SET, wrapped(object)?).map(Some)
}

/// Services: the load balancer of a LoadBalancer Service, nothing for other types.
pub(super) fn service(object: &Value, status: &Map<String, Value>) -> Reflected {
    if str_at(object, &["spec", "type"]) != Some("LoadBalancer") {
        return Ok(None);
    }
    let load_balancer = status
        .get("loadBalancer")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let mut out = Map::new();
    out.insert("loadBalancer".to_owned(), load_balancer);
    Ok(Some(out))
}

/// Jobs: conditions, start and completion time, and the pod counters.
pub(super) fn job(object: &Value, status: &Map<String, Value>) -> Reflected {
    let mut out = Map::new();
    for key in ["conditions", "startTime", "completionTime"] {
        put(
            &mut out,
            key,
            status.get(key).filter(|v| !is_empty(v)).cloned(),
        );
    }
    counters(object, status, JOB, out).map(Some)
}

/// PodDisruptionBudgets: disrupted pods and the counters.
pub(super) fn pod_disruption_budget(object: &Value, status: &Map<String, Value>) -> Reflected {
    let mut out = Map::new();
    put(
        &mut out,
        "disruptedPods",
        status
            .get("disruptedPods")
            .filter(|v| !is_empty(v))
            .cloned(),
    );
    counters(object, status, POD_DISRUPTION_BUDGET, out).map(Some)
}

/// HorizontalPodAutoscalers: the replica counters.
pub(super) fn horizontal_pod_autoscaler(object: &Value, status: &Map<String, Value>) -> Reflected {
    let mut out = counters(object, status, HORIZONTAL_POD_AUTOSCALER, Map::new())?;
    // Karmada's wrapper emits currentMetrics without omitempty and never fills it.
    out.insert("currentMetrics".to_owned(), Value::Null);
    Ok(Some(out))
}

/// `generation` and `resourceTemplateGeneration` (each omitted when 0) of a member workload; the annotation
/// that carries the template generation must be present and an integer.
fn wrapped(object: &Value) -> Result<Map<String, Value>, NativeError> {
    let annotation = str_at(
        object,
        &["metadata", "annotations", RESOURCE_TEMPLATE_GENERATION],
    );
    let template_generation = match annotation {
        None => {
            return Err(NativeError::Annotation {
                object: describe(object),
                annotation: RESOURCE_TEMPLATE_GENERATION,
                reason: "missing".to_owned(),
            });
        }
        Some(text) => text.parse::<i64>().map_err(|e| NativeError::Annotation {
            object: describe(object),
            annotation: RESOURCE_TEMPLATE_GENERATION,
            reason: format!("{text:?} is not an integer: {e}"),
        })?,
    };
    let mut out = Map::new();
    put(&mut out, "generation", non_zero(generation(object)));
    put(
        &mut out,
        "resourceTemplateGeneration",
        non_zero(template_generation),
    );
    Ok(out)
}

use super::aggregate::{DAEMON_SET, DEPLOYMENT, Field, REPLICA_SET, STATEFUL_SET};

/// Deployments, ReplicaSets and DaemonSets reflect the counters their aggregation sums, plus observedGeneration;
/// StatefulSets do not reflect it, as in Karmada.
const OBSERVED_GENERATION: &[Field] = &[("observedGeneration", false)];

const JOB: &[Field] = &[("active", false), ("succeeded", false), ("failed", false)];
const POD_DISRUPTION_BUDGET: &[Field] = &[
    ("disruptionsAllowed", true),
    ("currentHealthy", true),
    ("desiredHealthy", true),
    ("expectedPods", true),
];
const HORIZONTAL_POD_AUTOSCALER: &[Field] =
    &[("currentReplicas", false), ("desiredReplicas", true)];

/// A workload's reflected status: generations, its counters and observedGeneration.
fn workload(
    object: &Value,
    status: &Map<String, Value>,
    fields: &[Field],
) -> Result<Map<String, Value>, NativeError> {
    let out = counters(object, status, fields, wrapped(object)?)?;
    counters(object, status, OBSERVED_GENERATION, out)
}

/// Adds the integer `fields` of `status` to `out`; a field of another type fails as Go's typed decoding does.
fn counters(
    object: &Value,
    status: &Map<String, Value>,
    fields: &[Field],
    mut out: Map<String, Value>,
) -> Result<Map<String, Value>, NativeError> {
    for (key, always) in fields {
        let value = match status.get(*key) {
            None | Some(Value::Null) => 0,
            Some(v) => v.as_i64().ok_or_else(|| NativeError::Field {
                object: describe(object),
                field: format!("status.{key}"),
                reason: format!("expected an integer, got {}", json_type(v)),
            })?,
        };
        if *always || value != 0 {
            out.insert((*key).to_owned(), Value::from(value));
        }
    }
    Ok(out)
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.to_owned(), v);
    }
}
