//! InterpretStatus (spec §3.6): the part of a member object's status Karmada stores in the Work and later
//! folds into the template.

use flotilla_api::names::annotations::RESOURCE_TEMPLATE_GENERATION;
use k8s_openapi::api::apps::v1::{
    DaemonSetStatus, DeploymentStatus, ReplicaSetStatus, StatefulSetStatus,
};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerStatus;
use k8s_openapi::api::batch::v1::JobStatus;
use k8s_openapi::api::policy::v1::PodDisruptionBudgetStatus;
use serde_json::{Map, Value, json};

use super::object::{decode, describe, generation, is_empty, json_type, non_zero, str_at};
use super::{NativeError, NativeKind};

/// The status to reflect, or `None` when the object has none.
pub(crate) fn reflect_status(
    kind: Option<NativeKind>,
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
    let status_value = object.get("status").unwrap_or(&Value::Null);
    let what = || format!("status of {}", describe(object));
    let result = match kind {
        Some(NativeKind::Deployment) => {
            let s: DeploymentStatus = decode(status_value, what)?;
            let mut out = wrapped(object)?;
            put(
                &mut out,
                "observedGeneration",
                non_zero(s.observed_generation.unwrap_or(0)),
            );
            for (key, v) in [
                ("replicas", s.replicas),
                ("updatedReplicas", s.updated_replicas),
                ("readyReplicas", s.ready_replicas),
                ("availableReplicas", s.available_replicas),
                ("unavailableReplicas", s.unavailable_replicas),
            ] {
                put(&mut out, key, non_zero(i64::from(v.unwrap_or(0))));
            }
            if out.is_empty() {
                return Ok(None);
            }
            out
        }
        Some(NativeKind::ReplicaSet) => {
            let s: ReplicaSetStatus = decode(status_value, what)?;
            let mut out = wrapped(object)?;
            out.insert("replicas".to_owned(), Value::from(s.replicas));
            put(
                &mut out,
                "readyReplicas",
                non_zero(i64::from(s.ready_replicas.unwrap_or(0))),
            );
            put(
                &mut out,
                "availableReplicas",
                non_zero(i64::from(s.available_replicas.unwrap_or(0))),
            );
            put(
                &mut out,
                "observedGeneration",
                non_zero(s.observed_generation.unwrap_or(0)),
            );
            out
        }
        Some(NativeKind::DaemonSet) => {
            let s: DaemonSetStatus = decode(status_value, what)?;
            let mut out = wrapped(object)?;
            out.insert(
                "currentNumberScheduled".to_owned(),
                Value::from(s.current_number_scheduled),
            );
            out.insert(
                "numberMisscheduled".to_owned(),
                Value::from(s.number_misscheduled),
            );
            out.insert(
                "desiredNumberScheduled".to_owned(),
                Value::from(s.desired_number_scheduled),
            );
            out.insert("numberReady".to_owned(), Value::from(s.number_ready));
            put(
                &mut out,
                "observedGeneration",
                non_zero(s.observed_generation.unwrap_or(0)),
            );
            put(
                &mut out,
                "updatedNumberScheduled",
                non_zero(i64::from(s.updated_number_scheduled.unwrap_or(0))),
            );
            put(
                &mut out,
                "numberAvailable",
                non_zero(i64::from(s.number_available.unwrap_or(0))),
            );
            put(
                &mut out,
                "numberUnavailable",
                non_zero(i64::from(s.number_unavailable.unwrap_or(0))),
            );
            out
        }
        Some(NativeKind::StatefulSet) => {
            let s: StatefulSetStatus = decode(status_value, what)?;
            let mut out = wrapped(object)?;
            out.insert("replicas".to_owned(), Value::from(s.replicas));
            out.insert(
                "availableReplicas".to_owned(),
                Value::from(s.available_replicas.unwrap_or(0)),
            );
            put(
                &mut out,
                "readyReplicas",
                non_zero(i64::from(s.ready_replicas.unwrap_or(0))),
            );
            put(
                &mut out,
                "currentReplicas",
                non_zero(i64::from(s.current_replicas.unwrap_or(0))),
            );
            put(
                &mut out,
                "updatedReplicas",
                non_zero(i64::from(s.updated_replicas.unwrap_or(0))),
            );
            // Flotilla reflects observedGeneration too (Karmada omits it), so the StatefulSet aggregation can
            // use the same generation rule as Deployment (spec §0, quirk 21 fixed).
            put(
                &mut out,
                "observedGeneration",
                non_zero(s.observed_generation.unwrap_or(0)),
            );
            out
        }
        Some(NativeKind::Service) => {
            if str_at(object, &["spec", "type"]) != Some("LoadBalancer") {
                return Ok(None);
            }
            let load_balancer = status
                .get("loadBalancer")
                .cloned()
                .unwrap_or_else(|| json!({}));
            let mut out = Map::new();
            out.insert("loadBalancer".to_owned(), load_balancer);
            out
        }
        Some(NativeKind::Job) => {
            let s: JobStatus = decode(status_value, what)?;
            let mut out = Map::new();
            for key in ["conditions", "startTime", "completionTime"] {
                put(
                    &mut out,
                    key,
                    status.get(key).filter(|v| !is_empty(v)).cloned(),
                );
            }
            put(
                &mut out,
                "active",
                non_zero(i64::from(s.active.unwrap_or(0))),
            );
            put(
                &mut out,
                "succeeded",
                non_zero(i64::from(s.succeeded.unwrap_or(0))),
            );
            put(
                &mut out,
                "failed",
                non_zero(i64::from(s.failed.unwrap_or(0))),
            );
            out
        }
        Some(NativeKind::PodDisruptionBudget) => {
            let s: PodDisruptionBudgetStatus = decode(status_value, what)?;
            let mut out = Map::new();
            put(
                &mut out,
                "disruptedPods",
                status
                    .get("disruptedPods")
                    .filter(|v| !is_empty(v))
                    .cloned(),
            );
            out.insert(
                "disruptionsAllowed".to_owned(),
                Value::from(s.disruptions_allowed),
            );
            out.insert("currentHealthy".to_owned(), Value::from(s.current_healthy));
            out.insert("desiredHealthy".to_owned(), Value::from(s.desired_healthy));
            out.insert("expectedPods".to_owned(), Value::from(s.expected_pods));
            out
        }
        Some(NativeKind::HorizontalPodAutoscaler) => {
            let s: HorizontalPodAutoscalerStatus = decode(status_value, what)?;
            let mut out = Map::new();
            put(
                &mut out,
                "currentReplicas",
                non_zero(i64::from(s.current_replicas.unwrap_or(0))),
            );
            out.insert(
                "desiredReplicas".to_owned(),
                Value::from(s.desired_replicas),
            );
            // Karmada's wrapper emits currentMetrics without omitempty and never fills it.
            out.insert("currentMetrics".to_owned(), Value::Null);
            out
        }
        // Ingress and every kind without a specific handler reflect the whole status.
        _ => status.clone(),
    };
    Ok(Some(Value::Object(result)))
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

fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.to_owned(), v);
    }
}
