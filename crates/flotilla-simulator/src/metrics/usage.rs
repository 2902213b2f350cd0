//! The PodMetrics and NodeMetrics of simulated Pods and Nodes, from the usage the Pods declare.
//!
//! A simulated container uses what its Pod's annotations `kwok.x-k8s.io/usage-cpu` and
//! `kwok.x-k8s.io/usage-memory` say (each container the same), else 1m of CPU and 1Mi of memory: the rule the kube
//! world's KWOK members follow (`hack/kube.sh`), so a test sets a workload's usage the same way in both worlds.
//! A Node uses what the running Pods bound to it use. As metrics-server does, only running Pods have metrics,
//! CPU prints as a decimal quantity and memory as a binary one, and each object is labelled as its Pod or Node.

use flotilla_apimachinery::quantity::{Format, Quantity};
use serde_json::{Map, Value, json};

use crate::common::name;

/// The Pod annotation setting each of its containers' CPU usage (a quantity).
pub const USAGE_CPU: &str = "kwok.x-k8s.io/usage-cpu";
/// The Pod annotation setting each of its containers' memory usage (a quantity).
pub const USAGE_MEMORY: &str = "kwok.x-k8s.io/usage-memory";
/// The usage of a container whose Pod sets none.
const DEFAULT_CPU: &str = "1m";
const DEFAULT_MEMORY: &str = "1Mi";
/// The window metrics-server reports at its default resolution.
const WINDOW: &str = "15s";

/// A usage annotation that is not a quantity: the Pod gets no metrics, as KWOK gives it none.
#[derive(Debug, thiserror::Error)]
#[error("pod {namespace}/{pod}: annotation {annotation} is not a quantity ({value:?}): {reason}")]
pub struct UsageError {
    /// The Pod's namespace.
    pub namespace: String,
    /// The Pod's name.
    pub pod: String,
    /// The annotation's name.
    pub annotation: &'static str,
    /// What it holds.
    pub value: String,
    /// Why that is no quantity.
    pub reason: flotilla_apimachinery::quantity::QuantityError,
}

/// CPU and memory use of one container.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Usage {
    cpu: Quantity,
    memory: Quantity,
}

impl Usage {
    fn to_json(self) -> Value {
        // metrics-server's forms: CPU from nano-cores in decimal SI, memory from bytes in binary SI.
        let cpu = Quantity::from_milli(self.cpu.milli_value(), Format::DecimalSi);
        let memory = Quantity::from_value(self.memory.value(), Format::BinarySi);
        json!({"cpu": cpu.to_string(), "memory": memory.to_string()})
    }

    fn add(self, other: Usage) -> Usage {
        Usage {
            cpu: self.cpu.add(other.cpu),
            memory: self.memory.add(other.memory),
        }
    }
}

fn running(pod: &Value) -> bool {
    pod.pointer("/status/phase").and_then(Value::as_str) == Some("Running")
        && pod.pointer("/metadata/deletionTimestamp").is_none()
}

fn annotation_usage(
    pod: &Value,
    annotation: &'static str,
    default: &str,
) -> Result<Quantity, UsageError> {
    let value = pod
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(annotation))
        .and_then(Value::as_str)
        .unwrap_or(default);
    Quantity::parse(value.trim()).map_err(|reason| UsageError {
        namespace: text(pod, "/metadata/namespace").to_owned(),
        pod: name(pod).to_owned(),
        annotation,
        value: value.to_owned(),
        reason,
    })
}

fn container_usage(pod: &Value) -> Result<Usage, UsageError> {
    Ok(Usage {
        cpu: annotation_usage(pod, USAGE_CPU, DEFAULT_CPU)?,
        memory: annotation_usage(pod, USAGE_MEMORY, DEFAULT_MEMORY)?,
    })
}

fn containers(pod: &Value) -> impl Iterator<Item = &str> {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str))
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn labels(object: &Value) -> Value {
    object
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()))
}

/// The PodMetrics of `pod` at `now` (RFC 3339): `None` while it is not running, an error when an annotation
/// sets a usage that is no quantity.
///
/// # Errors
/// [`UsageError`] naming the Pod and the annotation.
pub fn pod_metrics(pod: &Value, now: &str) -> Result<Option<Value>, UsageError> {
    if !running(pod) {
        return Ok(None);
    }
    let usage = container_usage(pod)?.to_json();
    let containers: Vec<Value> = containers(pod)
        .map(|c| json!({"name": c, "usage": usage}))
        .collect();
    Ok(Some(json!({
        "kind": "PodMetrics",
        "apiVersion": "metrics.k8s.io/v1beta1",
        "metadata": {
            "name": name(pod),
            "namespace": text(pod, "/metadata/namespace"),
            "creationTimestamp": now,
            "labels": labels(pod),
        },
        "timestamp": now,
        "window": WINDOW,
        "containers": containers,
    })))
}

/// The NodeMetrics of `node` at `now`: the sum of what the running Pods bound to it (`spec.nodeName`) use.
/// Pods whose annotations are no quantities count for nothing (they have no metrics either).
pub fn node_metrics<'a>(
    node: &Value,
    pods: impl IntoIterator<Item = &'a Value>,
    now: &str,
) -> Value {
    let node_name = name(node);
    let zero = Usage {
        cpu: Quantity::ZERO,
        memory: Quantity::ZERO,
    };
    let usage = pods
        .into_iter()
        .filter(|p| text(p, "/spec/nodeName") == node_name && running(p))
        .filter_map(|p| {
            let per_container = container_usage(p).ok()?;
            Some(containers(p).fold(zero, |sum, _| sum.add(per_container)))
        })
        .fold(zero, Usage::add);
    json!({
        "kind": "NodeMetrics",
        "apiVersion": "metrics.k8s.io/v1beta1",
        "metadata": {"name": node_name, "creationTimestamp": now, "labels": labels(node)},
        "timestamp": now,
        "window": WINDOW,
        "usage": usage.to_json(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-11-29T10:00:00Z";

    fn pod(phase: &str, annotations: Value) -> Value {
        json!({
            "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"}, "annotations": annotations},
            "spec": {"nodeName": "node-1", "containers": [{"name": "web"}, {"name": "sidecar"}]},
            "status": {"phase": phase},
        })
    }

    #[test]
    fn a_running_pod_reports_the_default_usage_per_container() {
        let m = pod_metrics(&pod("Running", json!({})), NOW)
            .unwrap()
            .unwrap();
        assert_eq!(m["metadata"]["name"], "web-1");
        assert_eq!(m["metadata"]["namespace"], "shop");
        assert_eq!(m["metadata"]["labels"]["app"], "web");
        assert_eq!(m["timestamp"], NOW);
        assert_eq!(
            m["containers"],
            json!([
                {"name": "web", "usage": {"cpu": "1m", "memory": "1Mi"}},
                {"name": "sidecar", "usage": {"cpu": "1m", "memory": "1Mi"}},
            ])
        );
    }

    #[test]
    fn annotations_set_the_usage_in_metrics_servers_forms() {
        let p = pod("Running", json!({USAGE_CPU: "0.25", USAGE_MEMORY: "100M"}));
        let m = pod_metrics(&p, NOW).unwrap().unwrap();
        // 100M bytes is no whole number of KiB, so its binary form is the plain number, as Kubernetes prints it.
        assert_eq!(
            m["containers"][0]["usage"],
            json!({"cpu": "250m", "memory": "100000000"})
        );
    }

    #[test]
    fn pods_not_running_have_no_metrics() {
        for phase in ["Pending", "Succeeded", "Failed"] {
            assert!(pod_metrics(&pod(phase, json!({})), NOW).unwrap().is_none());
        }
    }

    #[test]
    fn an_annotation_that_is_no_quantity_is_named() {
        let err = pod_metrics(&pod("Running", json!({USAGE_CPU: "lots"})), NOW).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("shop/web-1"), "{text}");
        assert!(text.contains(USAGE_CPU), "{text}");
        assert!(text.contains("lots"), "{text}");
    }

    #[test]
    fn a_node_uses_what_its_running_pods_use() {
        let node = json!({"metadata": {"name": "node-1", "labels": {"zone": "a"}}});
        let busy = pod("Running", json!({USAGE_CPU: "100m", USAGE_MEMORY: "10Mi"}));
        let other_node = {
            let mut p = pod("Running", json!({USAGE_CPU: "1"}));
            p["spec"]["nodeName"] = json!("node-2");
            p
        };
        let pending = pod("Pending", json!({USAGE_CPU: "1"}));
        let broken = pod("Running", json!({USAGE_CPU: "lots"}));
        let m = node_metrics(&node, [&busy, &other_node, &pending, &broken], NOW);
        assert_eq!(m["metadata"]["labels"]["zone"], "a");
        // Two containers of 100m and 10Mi each.
        assert_eq!(m["usage"], json!({"cpu": "200m", "memory": "20Mi"}));
    }
}
