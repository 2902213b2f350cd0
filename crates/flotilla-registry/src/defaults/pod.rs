//! Defaults of PodSpec and containers (upstream's `SetDefaults_PodSpec`, `SetDefaults_Container`, ...).

use super::{set_if_absent, set_if_empty};
use serde_json::{Map, Value, json};

/// Defaults of a PodSpec, wherever it is embedded.
pub(super) fn pod_spec(spec: &mut Map<String, Value>) {
    // The deprecated `serviceAccount` is kept equal to `serviceAccountName`, which wins when both are set.
    let named = |k: &str, spec: &Map<String, Value>| {
        spec.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    match named("serviceAccountName", spec).or_else(|| named("serviceAccount", spec)) {
        Some(account) => {
            spec.insert("serviceAccountName".to_string(), json!(account));
            spec.insert("serviceAccount".to_string(), json!(account));
        }
        None => {
            spec.remove("serviceAccountName");
            spec.remove("serviceAccount");
        }
    }
    set_if_empty(spec, "dnsPolicy", json!("ClusterFirst"));
    set_if_empty(spec, "restartPolicy", json!("Always"));
    set_if_absent(spec, "securityContext", json!({}));
    set_if_absent(spec, "terminationGracePeriodSeconds", json!(30));
    set_if_empty(spec, "schedulerName", json!("default-scheduler"));
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(c) = c.as_object_mut() {
                container(c);
            }
        }
    }
    for v in spec
        .get_mut("volumes")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(v) = v.as_object_mut() {
            volume(v);
        }
    }
}

/// Pod-only defaults on top of the PodSpec ones: service links on, and resource requests equal to limits where
/// only limits are given.
pub(super) fn pod(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    set_if_absent(spec, "enableServiceLinks", json!(true));
    for list in ["containers", "initContainers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let Some(resources) = c.get_mut("resources").and_then(Value::as_object_mut) else {
                continue;
            };
            let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
                continue;
            };
            let requests = resources.entry("requests").or_insert_with(|| json!({}));
            if let Some(requests) = requests.as_object_mut() {
                for (k, v) in limits {
                    requests.entry(k).or_insert(v);
                }
            }
        }
    }
    pod_spec(spec);
}

/// A new Pod starts `Pending` with its QoS class, as upstream's create strategy sets them (after dropping the
/// client's status, so this belongs after that step, not in decode-time defaulting); a phase already present
/// is kept.
pub(super) fn initial_status(obj: &mut Value) {
    let qos = qos_class(obj);
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let Some(status) = map
        .entry("status")
        .or_insert_with(|| json!({}))
        .as_object_mut()
    else {
        return;
    };
    if status
        .get("phase")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        status.insert("phase".to_string(), json!("Pending"));
    }
    set_if_empty(status, "qosClass", json!(qos));
}

/// Upstream's `GetPodQOS` for cpu and memory: `BestEffort` when no container requests or limits either,
/// `Guaranteed` when every container limits both and requests what it limits (an absent request defaults to the
/// limit), `Burstable` otherwise.
pub(crate) fn qos_class(obj: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|l| obj.pointer(&format!("/spec/{l}")).and_then(Value::as_array))
        .flatten()
        .collect();
    let get =
        |c: &Value, kind: &str, r: &str| c.pointer(&format!("/resources/{kind}/{r}")).cloned();
    let any = containers.iter().any(|c| {
        ["requests", "limits"]
            .iter()
            .any(|k| ["cpu", "memory"].iter().any(|r| get(c, k, r).is_some()))
    });
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let (limit, request) = (get(c, "limits", r), get(c, "requests", r));
            limit.is_some() && (request.is_none() || request == limit)
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// `Always` for `:latest` or untagged images, `IfNotPresent` otherwise (digests count as tags).
fn pull_policy(image: &str) -> &'static str {
    let name = image.rsplit('/').next().unwrap_or(image);
    if image.contains('@') {
        return "IfNotPresent";
    }
    match name.rsplit_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}

fn container(c: &mut Map<String, Value>) {
    // Not a default upstream but its serialisation: the requirements struct is always written, `{}` when empty.
    set_if_absent(c, "resources", json!({}));
    set_if_empty(c, "terminationMessagePath", json!("/dev/termination-log"));
    set_if_empty(c, "terminationMessagePolicy", json!("File"));
    let image = c
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    set_if_empty(c, "imagePullPolicy", json!(pull_policy(&image)));
    for p in c
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(p) = p.as_object_mut() {
            set_if_empty(p, "protocol", json!("TCP"));
        }
    }
    for e in c
        .get_mut("env")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(field_ref) = e
            .pointer_mut("/valueFrom/fieldRef")
            .and_then(Value::as_object_mut)
        {
            set_if_empty(field_ref, "apiVersion", json!("v1"));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).and_then(Value::as_object_mut) {
            set_if_zero(p, "timeoutSeconds", 1);
            set_if_zero(p, "periodSeconds", 10);
            set_if_zero(p, "successThreshold", 1);
            set_if_zero(p, "failureThreshold", 3);
            if let Some(http) = p.get_mut("httpGet").and_then(Value::as_object_mut) {
                set_if_empty(http, "path", json!("/"));
                set_if_empty(http, "scheme", json!("HTTP"));
            }
        }
    }
}

/// Probe numbers are non-pointer ints upstream: 0 and absent both mean "default".
fn set_if_zero(map: &mut Map<String, Value>, key: &str, value: i64) {
    if map.get(key).and_then(Value::as_i64).unwrap_or(0) == 0 {
        map.insert(key.to_string(), json!(value));
    }
}

fn volume(v: &mut Map<String, Value>) {
    for source in ["configMap", "secret", "downwardAPI", "projected"] {
        if let Some(s) = v.get_mut(source).and_then(Value::as_object_mut) {
            set_if_absent(s, "defaultMode", json!(420));
        }
    }
    host_path(v);
    // An ephemeral volume's claim template: Go always writes its metadata, and its spec is a claim's.
    if let Some(template) = v
        .get_mut("ephemeral")
        .and_then(|e| e.get_mut("volumeClaimTemplate"))
        .and_then(Value::as_object_mut)
    {
        set_if_absent(template, "metadata", json!({}));
        if let Some(claim) = template.get_mut("spec").and_then(Value::as_object_mut) {
            set_if_absent(claim, "volumeMode", json!("Filesystem"));
        }
    }
    let items = v
        .get_mut("downwardAPI")
        .and_then(|d| d.get_mut("items"))
        .and_then(Value::as_array_mut);
    if let Some(fields) = items {
        for item in fields {
            if let Some(field_ref) = item.pointer_mut("/fieldRef").and_then(Value::as_object_mut) {
                set_if_empty(field_ref, "apiVersion", json!("v1"));
            }
        }
    }
}

/// A host path volume's type is the empty one (no check) unless given, in a Pod's volumes and a
/// PersistentVolume's source alike.
pub(super) fn host_path(source: &mut Map<String, Value>) {
    if let Some(h) = source.get_mut("hostPath").and_then(Value::as_object_mut) {
        set_if_absent(h, "type", json!(""));
    }
}
