//! The HorizontalPodAutoscaler printer's cells (upstream `printHorizontalPodAutoscaler`), for both served
//! versions: an `autoscaling/v1` row is read in its stored `v2` shape, as upstream prints the internal object.

use serde_json::{Value, json};

use super::cells::text;
use super::str_at;

/// How many metrics the Targets column spells out before it says `+ N more...`.
const SHOWN_METRICS: usize = 2;

fn quantity(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "<unknown>".to_string(),
    }
}

fn field<'v>(v: Option<&'v Value>, f: &str) -> Option<&'v Value> {
    v.and_then(|v| v.get(f))
}

/// `current/target` of one metric, `(avg)` marking average-value targets of Object and External metrics.
fn metric_text(spec: &Value, status: Option<&Value>) -> String {
    let kind = str_at(spec, "/type");
    let source = match kind {
        "Resource" => "resource",
        "ContainerResource" => "containerResource",
        "Pods" => "pods",
        "Object" => "object",
        "External" => "external",
        _ => return "<unknown type>".to_string(),
    };
    let target = spec.get(source).and_then(|s| s.get("target"));
    let current = status
        .and_then(|s| s.get(source))
        .and_then(|s| s.get("current"));
    match kind {
        "Resource" | "ContainerResource" => {
            let name = str_at(spec, &format!("/{source}/name"));
            if let Some(avg) = field(target, "averageValue") {
                let now = quantity(field(current, "averageValue"));
                format!("{name}: {now}/{}", quantity(Some(avg)))
            } else {
                let now = field(current, "averageUtilization")
                    .and_then(Value::as_i64)
                    .map_or("<unknown>".to_string(), |u| format!("{u}%"));
                let want = field(target, "averageUtilization")
                    .and_then(Value::as_i64)
                    .map_or("<auto>".to_string(), |u| format!("{u}%"));
                format!("{name}: {now}/{want}")
            }
        }
        "Pods" => format!(
            "{}/{}",
            quantity(field(current, "averageValue")),
            quantity(field(target, "averageValue"))
        ),
        _ => match field(target, "averageValue") {
            Some(avg) => format!(
                "{}/{} (avg)",
                quantity(field(current, "averageValue")),
                quantity(Some(avg))
            ),
            None => format!(
                "{}/{}",
                quantity(field(current, "value")),
                quantity(field(target, "value"))
            ),
        },
    }
}

/// The Targets column: each metric's `current/target`, at most two, then `+ N more...`.
fn targets(obj: &Value) -> String {
    let specs = obj
        .pointer("/spec/metrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if specs.is_empty() {
        return "<none>".to_string();
    }
    let statuses = obj
        .pointer("/status/currentMetrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let list: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| metric_text(spec, statuses.get(i)))
        .collect();
    let shown = list
        .iter()
        .take(SHOWN_METRICS)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > SHOWN_METRICS {
        format!("{shown} + {} more...", list.len() - SHOWN_METRICS)
    } else {
        shown
    }
}

/// Reference, Targets, MinPods, MaxPods and Replicas of one HPA (either version).
pub(super) fn hpa_cells(obj: &Value) -> Vec<Value> {
    let stored;
    let obj = if str_at(obj, "/apiVersion") == "autoscaling/v1" {
        let mut v2 = obj.clone();
        crate::kinds::workloads::autoscaling::to_v2(&mut v2, None, true, true);
        stored = v2;
        &stored
    } else {
        obj
    };
    let min = obj
        .pointer("/spec/minReplicas")
        .and_then(Value::as_i64)
        .map_or("<unset>".to_string(), |m| m.to_string());
    vec![
        text(format!(
            "{}/{}",
            str_at(obj, "/spec/scaleTargetRef/kind"),
            str_at(obj, "/spec/scaleTargetRef/name")
        )),
        text(targets(obj)),
        text(min),
        json!(super::cells::i64_at(obj, "/spec/maxReplicas")),
        json!(super::cells::i64_at(obj, "/status/currentReplicas")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_spell_out_two_metrics_then_count_the_rest() {
        let cpu = json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}});
        let mem = json!({"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}});
        let pods = json!({"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}});
        let obj = json!({"apiVersion": "autoscaling/v2", "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5, "metrics": [cpu, mem, pods]},
            "status": {"currentReplicas": 2, "currentMetrics": [
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 31}}}]}});
        assert_eq!(
            hpa_cells(&obj),
            vec![
                json!("Deployment/web"),
                json!("cpu: 31%/80%, memory: <unknown>/1Gi + 1 more..."),
                json!("1"),
                json!(5),
                json!(2)
            ]
        );
    }

    #[test]
    fn a_v1_row_prints_like_its_v2_form() {
        let obj = json!({"apiVersion": "autoscaling/v1", "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "w"},
            "maxReplicas": 3, "targetCPUUtilizationPercentage": 60}});
        assert_eq!(hpa_cells(&obj)[1], json!("cpu: <unknown>/60%"));
        assert_eq!(hpa_cells(&obj)[2], json!("1"));
    }
}
