//! LimitRanger's defaults: each container and init container of a new Pod gets the default limits and requests
//! of the namespace's `Container` LimitRange items for the resources it does not set, and the Pod records what
//! was set in the `kubernetes.io/limit-ranger` annotation, as upstream's plugin writes it. (The min/max and
//! ratio checks of the plugin are not enforced.)

use serde_json::{Map, Value, json};

const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// The default (limits, requests) of the `Container` items of `ranges`, later items overriding earlier ones.
fn container_defaults(ranges: &[&Value]) -> (Map<String, Value>, Map<String, Value>) {
    let (mut limits, mut requests) = (Map::new(), Map::new());
    for item in ranges
        .iter()
        .flat_map(|r| r.pointer("/spec/limits").and_then(Value::as_array))
        .flatten()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("Container"))
    {
        for (field, into) in [("default", &mut limits), ("defaultRequest", &mut requests)] {
            if let Some(m) = item.get(field).and_then(Value::as_object) {
                into.extend(m.clone());
            }
        }
    }
    (limits, requests)
}

/// Sets the resources of `defaults` that `container`'s `field` lacks; returns their names, sorted.
fn fill(
    container: &mut Map<String, Value>,
    field: &str,
    defaults: &Map<String, Value>,
) -> Vec<String> {
    if defaults.is_empty() {
        return Vec::new();
    }
    let resources = container.entry("resources").or_insert_with(|| json!({}));
    if !resources.is_object() {
        *resources = json!({});
    }
    let Some(resources) = resources.as_object_mut() else {
        return Vec::new();
    };
    let target = resources.entry(field).or_insert_with(|| json!({}));
    if !target.is_object() {
        *target = json!({});
    }
    let Some(target) = target.as_object_mut() else {
        return Vec::new();
    };
    let mut set: Vec<String> = defaults
        .iter()
        .filter(|(k, _)| !target.contains_key(*k))
        .map(|(k, _)| k.clone())
        .collect();
    for k in &set {
        if let Some(v) = defaults.get(k) {
            target.insert(k.clone(), v.clone());
        }
    }
    set.sort();
    set
}

/// Applies the namespace's LimitRanges (`ranges`) to a new Pod.
pub(super) fn apply(pod: &mut Value, ranges: &[&Value]) {
    let (limits, requests) = container_defaults(ranges);
    if limits.is_empty() && requests.is_empty() {
        return;
    }
    let mut notes = Vec::new();
    for (list, prefix) in [
        ("containers", "container"),
        ("initContainers", "init container"),
    ] {
        for c in pod
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            let name = c
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let set_requests = fill(c, "requests", &requests);
            let set_limits = fill(c, "limits", &limits);
            if !set_requests.is_empty() {
                notes.push(format!(
                    "{} request for {prefix} {name}",
                    set_requests.join(", ")
                ));
            }
            if !set_limits.is_empty() {
                notes.push(format!(
                    "{} limit for {prefix} {name}",
                    set_limits.join(", ")
                ));
            }
        }
    }
    if notes.is_empty() {
        return;
    }
    let Some(meta) = pod.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    annotations[ANNOTATION] = json!(format!("LimitRanger plugin set: {}", notes.join("; ")));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn missing_limits_and_requests_come_from_the_container_items() {
        let range = json!({"spec": {"limits": [
            {"type": "Pod", "max": {"cpu": "4"}},
            {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m", "memory": "128Mi"}},
        ]}});
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": [{"name": "init"}],
            "containers": [{"name": "app", "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}}]}});
        apply(&mut pod, &[&range]);
        assert_eq!(
            pod["spec"]["containers"][0]["resources"],
            json!({"limits": {"cpu": "1", "memory": "256Mi"}, "requests": {"cpu": "1", "memory": "128Mi"}})
        );
        assert_eq!(
            pod["spec"]["initContainers"][0]["resources"],
            json!({"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}})
        );
        assert_eq!(
            pod["metadata"]["annotations"][ANNOTATION],
            json!(
                "LimitRanger plugin set: memory request for container app; memory limit for container app; cpu, memory request for init container init; cpu, memory limit for init container init"
            )
        );
        // Nothing to set: no annotation.
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app"}]}});
        apply(
            &mut pod,
            &[&json!({"spec": {"limits": [{"type": "Pod", "max": {"cpu": "4"}}]}})],
        );
        assert!(pod["metadata"].get("annotations").is_none());
    }
}
