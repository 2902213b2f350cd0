//! HorizontalPodAutoscalers at `autoscaling/v1` and `autoscaling/v2`: one storage (the `v2` shape), the `v1` view
//! converted on the way in and out as kube-apiserver converts it, and `v2`'s defaults.
//!
//! `v1` knows one metric, the CPU utilization target (`spec.targetCPUUtilizationPercentage`, observed as
//! `status.currentCPUUtilizationPercentage`); in `v2` that is a `Resource` metric named `cpu` with a
//! `Utilization` target. Conditions travel in the `autoscaling.alpha.kubernetes.io/conditions` annotation, as
//! upstream writes them. Everything else `v1` cannot express (other metrics, `behavior`) is kept from the stored
//! object when a `v1` client writes, instead of upstream's annotations of `v1`-typed metric specs: a `v1` client
//! that writes back what it read changes none of it either way.

use serde_json::{Map, Value, json};

use crate::resource::ResourceInfo;

/// The annotation upstream carries `v2` conditions in on `v1` objects.
pub(crate) const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// The annotations upstream uses for what `v1` cannot hold; dropped from `v1` writes, never stored.
const V1_ANNOTATIONS: [&str; 4] = [
    CONDITIONS_ANNOTATION,
    "autoscaling.alpha.kubernetes.io/metrics",
    "autoscaling.alpha.kubernetes.io/current-metrics",
    "autoscaling.alpha.kubernetes.io/behavior",
];
/// The CPU utilization target `v2` defaults to when no metric is given (upstream's `DefaultCPUUtilization`).
const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// Whether `info` serves the `autoscaling/v1` view of the HPA storage.
pub(crate) fn serves_v1(info: &ResourceInfo) -> bool {
    !info.custom
        && info.group == "autoscaling"
        && info.version == "v1"
        && info.plural == "horizontalpodautoscalers"
}

fn is_cpu_utilization(metric: &Value, status: bool) -> bool {
    let resource = metric.get("resource");
    metric.get("type").and_then(Value::as_str) == Some("Resource")
        && resource.and_then(|r| r.get("name")).and_then(Value::as_str) == Some("cpu")
        && if status {
            resource
                .and_then(|r| r.pointer("/current/averageUtilization"))
                .is_some()
        } else {
            resource
                .and_then(|r| r.pointer("/target/type"))
                .and_then(Value::as_str)
                == Some("Utilization")
        }
}

fn cpu_metric(percent: &Value, status: bool) -> Value {
    if status {
        json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": percent}}})
    } else {
        json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": percent}}})
    }
}

fn copy(from: &Map<String, Value>, to: &mut Map<String, Value>, keys: &[&str]) {
    for k in keys {
        if let Some(v) = from.get(*k) {
            to.insert((*k).to_string(), v.clone());
        }
    }
}

/// `v2`'s defaults (upstream `SetDefaults_HorizontalPodAutoscaler`): `minReplicas` 1 and, with no metric, an 80%
/// CPU utilization target.
pub(crate) fn default_v2(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("minReplicas").is_none_or(Value::is_null) {
        spec.insert("minReplicas".into(), json!(1));
    }
    if spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        spec.insert(
            "metrics".into(),
            json!([cpu_metric(&json!(DEFAULT_CPU_UTILIZATION), false)]),
        );
    }
}

/// A stored (`v2`) HPA as `autoscaling/v1` serves it.
pub(crate) fn to_v1(stored: &Value) -> Value {
    let mut out = stored.as_object().cloned().unwrap_or_default();
    out.insert("apiVersion".into(), json!("autoscaling/v1"));
    if let Some(spec) = stored.get("spec").and_then(Value::as_object) {
        let mut v1 = Map::new();
        copy(
            spec,
            &mut v1,
            &["scaleTargetRef", "minReplicas", "maxReplicas"],
        );
        let cpu = spec
            .get("metrics")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|m| is_cpu_utilization(m, false))
            .and_then(|m| m.pointer("/resource/target/averageUtilization"));
        if let Some(cpu) = cpu {
            v1.insert("targetCPUUtilizationPercentage".into(), cpu.clone());
        }
        out.insert("spec".into(), Value::Object(v1));
    }
    if let Some(status) = stored.get("status").and_then(Value::as_object) {
        let mut v1 = Map::new();
        copy(
            status,
            &mut v1,
            &[
                "observedGeneration",
                "lastScaleTime",
                "currentReplicas",
                "desiredReplicas",
            ],
        );
        let cpu = status
            .get("currentMetrics")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|m| is_cpu_utilization(m, true))
            .and_then(|m| m.pointer("/resource/current/averageUtilization"));
        if let Some(cpu) = cpu {
            v1.insert("currentCPUUtilizationPercentage".into(), cpu.clone());
        }
        // v1 writes both counters even at zero (v2 leaves out currentReplicas then).
        for counter in ["currentReplicas", "desiredReplicas"] {
            v1.entry(counter).or_insert(json!(0));
        }
        out.insert("status".into(), Value::Object(v1));
        let conditions = status
            .get("conditions")
            .and_then(Value::as_array)
            .filter(|c| !c.is_empty());
        if let Some(conditions) = conditions {
            let meta = out
                .entry("metadata")
                .or_insert_with(|| json!({}))
                .as_object_mut();
            if let Some(meta) = meta {
                let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
                if let Some(a) = annotations.as_object_mut() {
                    a.insert(
                        CONDITIONS_ANNOTATION.into(),
                        json!(Value::Array(conditions.clone()).to_string()),
                    );
                }
            }
        }
    }
    Value::Object(out)
}

/// The `v2` metrics of a `v1` spec: the CPU target, then the stored object's other metrics.
fn metrics_to_v2(v1: &Map<String, Value>, old: Option<&Value>, status: bool) -> Vec<Value> {
    let (field, list) = if status {
        ("currentCPUUtilizationPercentage", "/status/currentMetrics")
    } else {
        ("targetCPUUtilizationPercentage", "/spec/metrics")
    };
    let mut metrics: Vec<Value> = v1
        .get(field)
        .filter(|v| !v.is_null())
        .map(|p| cpu_metric(p, status))
        .into_iter()
        .collect();
    let kept = old
        .and_then(|o| o.pointer(list))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|m| !is_cpu_utilization(m, status));
    metrics.extend(kept.cloned());
    metrics
}

/// Converts the parts of a `v1` write that came from the client to the stored `v2` shape: the spec (with
/// `spec == true`) and the status (with `status == true`), keeping what `v1` cannot express from `old`.
pub(crate) fn to_v2(obj: &mut Value, old: Option<&Value>, spec: bool, status: bool) {
    let Some(m) = obj.as_object_mut() else {
        return;
    };
    m.insert("apiVersion".into(), json!("autoscaling/v2"));
    let mut conditions = None;
    if let Some(a) = m
        .get_mut("metadata")
        .and_then(|meta| meta.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        conditions = a
            .get(CONDITIONS_ANNOTATION)
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
            .filter(Value::is_array);
        for k in V1_ANNOTATIONS {
            a.remove(k);
        }
    }
    if spec && let Some(v1) = m.get("spec").and_then(Value::as_object).cloned() {
        let mut v2 = Map::new();
        copy(
            &v1,
            &mut v2,
            &["scaleTargetRef", "minReplicas", "maxReplicas"],
        );
        let metrics = metrics_to_v2(&v1, old, false);
        if !metrics.is_empty() {
            v2.insert("metrics".into(), Value::Array(metrics));
        }
        if let Some(b) = old.and_then(|o| o.pointer("/spec/behavior")) {
            v2.insert("behavior".into(), b.clone());
        }
        m.insert("spec".into(), Value::Object(v2));
    }
    if status && let Some(v1) = m.get("status").and_then(Value::as_object).cloned() {
        let mut v2 = Map::new();
        copy(
            &v1,
            &mut v2,
            &[
                "observedGeneration",
                "lastScaleTime",
                "currentReplicas",
                "desiredReplicas",
            ],
        );
        let metrics = metrics_to_v2(&v1, old, true);
        if !metrics.is_empty() {
            v2.insert("currentMetrics".into(), Value::Array(metrics));
        }
        let conditions =
            conditions.or_else(|| old.and_then(|o| o.pointer("/status/conditions")).cloned());
        if let Some(c) = conditions {
            v2.insert("conditions".into(), c);
        }
        m.insert("status".into(), Value::Object(v2));
    }
    default_v2(obj);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_cpu_target_is_a_v2_resource_metric_and_back() {
        let mut obj = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 5, "targetCPUUtilizationPercentage": 60}});
        to_v2(&mut obj, None, true, true);
        assert_eq!(obj["apiVersion"], "autoscaling/v2");
        assert_eq!(obj["spec"]["minReplicas"], 1);
        assert_eq!(
            obj["spec"]["metrics"],
            json!([cpu_metric(&json!(60), false)])
        );
        let back = to_v1(&obj);
        assert_eq!(back["spec"]["targetCPUUtilizationPercentage"], 60);
        assert_eq!(back["spec"]["maxReplicas"], 5);
        assert!(back["spec"].get("metrics").is_none());
    }

    #[test]
    fn what_v1_cannot_express_survives_a_v1_write() {
        let memory = json!({"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}});
        let stored = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
            "spec": {"maxReplicas": 3, "minReplicas": 2, "metrics": [cpu_metric(&json!(70), false), memory.clone()],
                     "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}},
            "status": {"currentReplicas": 2, "desiredReplicas": 2,
                       "currentMetrics": [cpu_metric(&json!(40), true)],
                       "conditions": [{"type": "AbleToScale", "status": "True"}]}});
        let mut view = to_v1(&stored);
        assert_eq!(view["status"]["currentCPUUtilizationPercentage"], 40);
        let annotation = view["metadata"]["annotations"][CONDITIONS_ANNOTATION]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(annotation.contains("AbleToScale"), "{view}");
        view["spec"]["targetCPUUtilizationPercentage"] = json!(50);
        to_v2(&mut view, Some(&stored), true, false);
        assert_eq!(
            view["spec"]["metrics"],
            json!([cpu_metric(&json!(50), false), memory])
        );
        assert_eq!(view["spec"]["behavior"], stored["spec"]["behavior"]);
        assert!(
            view["metadata"]["annotations"]
                .get(CONDITIONS_ANNOTATION)
                .is_none()
        );
    }

    #[test]
    fn v2_defaults_min_replicas_and_the_cpu_target() {
        let mut obj = json!({"spec": {"maxReplicas": 3}});
        default_v2(&mut obj);
        assert_eq!(obj["spec"]["minReplicas"], 1);
        assert_eq!(
            obj["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
    }
}
