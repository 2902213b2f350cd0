//! Cell values of the built-in printers whose derivation is more than a field lookup.

use super::{age_of, human_duration, str_at};
use serde_json::Value;

pub(super) fn text(v: impl Into<String>) -> Value {
    Value::String(v.into())
}

pub(super) fn or_none(v: &str) -> Value {
    text(if v.is_empty() { "<none>" } else { v })
}

pub(super) fn i64_at(obj: &Value, pointer: &str) -> i64 {
    obj.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

pub(super) fn array_at<'v>(obj: &'v Value, pointer: &str) -> &'v [Value] {
    obj.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `kubectl`'s rendering of a label selector object (`matchLabels` plus expressions).
pub(super) fn selector_text(selector: Option<&Value>) -> String {
    let Some(sel) = selector else {
        return "<none>".to_string();
    };
    match crate::selector::Selector::from_label_selector(sel) {
        Ok(s) if s.is_everything() => "<none>".to_string(),
        Ok(s) => s.to_string(),
        Err(_) => "<error>".to_string(),
    }
}

/// A plain map selector (`nodeSelector`, Service `selector`) as `a=b,c=d`.
pub(super) fn map_selector(map: Option<&Value>) -> String {
    let pairs: Vec<String> = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    if pairs.is_empty() {
        "<none>".to_string()
    } else {
        pairs.join(",")
    }
}

pub(super) fn containers_and_images(template_spec: &Value) -> (Value, Value) {
    let containers = array_at(template_spec, "/containers");
    let names: Vec<&str> = containers.iter().map(|c| str_at(c, "/name")).collect();
    let images: Vec<&str> = containers.iter().map(|c| str_at(c, "/image")).collect();
    (text(names.join(",")), text(images.join(",")))
}

fn has_condition(obj: &Value, ty: &str) -> bool {
    array_at(obj, "/status/conditions")
        .iter()
        .any(|c| str_at(c, "/type") == ty && str_at(c, "/status") == "True")
}

pub(super) fn node_cells(obj: &Value, age: Value) -> Vec<Value> {
    let ready = array_at(obj, "/status/conditions")
        .iter()
        .find(|c| str_at(c, "/type") == "Ready");
    let mut status = match ready.map(|c| str_at(c, "/status")) {
        Some("True") => "Ready".to_string(),
        Some("False") => "NotReady".to_string(),
        _ => "Unknown".to_string(),
    };
    if obj.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<String> = obj
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
                    Some(role) if !role.is_empty() => Some(role.to_string()),
                    _ if k == "kubernetes.io/role" => v.as_str().map(str::to_string),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    let address = |ty: &str| -> Value {
        let found = array_at(obj, "/status/addresses")
            .iter()
            .find(|a| str_at(a, "/type") == ty);
        or_none(found.map_or("", |a| str_at(a, "/address")))
    };
    vec![
        text(status),
        text(if roles.is_empty() {
            "<none>".to_string()
        } else {
            roles.join(",")
        }),
        age,
        text(str_at(obj, "/status/nodeInfo/kubeletVersion")),
        address("InternalIP"),
        address("ExternalIP"),
        or_none(str_at(obj, "/status/nodeInfo/osImage")),
        or_none(str_at(obj, "/status/nodeInfo/kernelVersion")),
        or_none(str_at(obj, "/status/nodeInfo/containerRuntimeVersion")),
    ]
}

/// READY, STATUS and RESTARTS as upstream's `printPod` derives them from container states.
pub(super) fn pod_cells(obj: &Value, age: Value, now: i64) -> Vec<Value> {
    let total = array_at(obj, "/spec/containers").len();
    let mut reason = str_at(obj, "/status/phase").to_string();
    let status_reason = str_at(obj, "/status/reason");
    if !status_reason.is_empty() {
        reason = status_reason.to_string();
    }
    let mut restarts = 0;
    let mut last_restart: Option<String> = None;
    let mut ready = 0;
    let mut has_running = false;
    for cs in array_at(obj, "/status/containerStatuses").iter().rev() {
        restarts += i64_at(cs, "/restartCount");
        let finished = str_at(cs, "/lastState/terminated/finishedAt");
        if !finished.is_empty() && last_restart.as_deref().is_none_or(|l| l < finished) {
            last_restart = Some(finished.to_string());
        }
        let waiting = str_at(cs, "/state/waiting/reason");
        let terminated = cs.pointer("/state/terminated");
        if !waiting.is_empty() {
            reason = waiting.to_string();
        } else if let Some(t) = terminated {
            let r = str_at(t, "/reason");
            reason = if !r.is_empty() {
                r.to_string()
            } else if i64_at(t, "/signal") != 0 {
                format!("Signal:{}", i64_at(t, "/signal"))
            } else {
                format!("ExitCode:{}", i64_at(t, "/exitCode"))
            };
        } else if cs.pointer("/state/running").is_some()
            && cs.get("ready").and_then(Value::as_bool) == Some(true)
        {
            has_running = true;
            ready += 1;
        }
    }
    if reason == "Completed" && has_running {
        reason = "Running".to_string();
    }
    if obj.pointer("/metadata/deletionTimestamp").is_some() {
        reason = if status_reason == "NodeLost" {
            "Unknown".to_string()
        } else {
            "Terminating".to_string()
        };
    }
    let restarts_text = match last_restart {
        Some(t) if restarts > 0 => format!("{restarts} ({} ago)", age_of(&t, now)),
        _ => restarts.to_string(),
    };
    let gates = array_at(obj, "/spec/readinessGates");
    let gates_text = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let met = gates
            .iter()
            .filter(|g| {
                array_at(obj, "/status/conditions").iter().any(|c| {
                    str_at(c, "/type") == str_at(g, "/conditionType")
                        && str_at(c, "/status") == "True"
                })
            })
            .count();
        format!("{met}/{}", gates.len())
    };
    vec![
        text(format!("{ready}/{total}")),
        text(reason),
        text(restarts_text),
        age,
        or_none(str_at(obj, "/status/podIP")),
        or_none(str_at(obj, "/spec/nodeName")),
        or_none(str_at(obj, "/status/nominatedNodeName")),
        text(gates_text),
    ]
}

pub(super) fn service_cells(obj: &Value, age: Value) -> Vec<Value> {
    let ty = str_at(obj, "/spec/type");
    let ty = if ty.is_empty() { "ClusterIP" } else { ty };
    let external: Vec<String> = match ty {
        "LoadBalancer" => {
            let mut ips: Vec<String> = array_at(obj, "/status/loadBalancer/ingress")
                .iter()
                .map(|i| {
                    let ip = str_at(i, "/ip");
                    if ip.is_empty() {
                        str_at(i, "/hostname").to_string()
                    } else {
                        ip.to_string()
                    }
                })
                .collect();
            ips.extend(
                array_at(obj, "/spec/externalIPs")
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
            if ips.is_empty() {
                vec!["<pending>".to_string()]
            } else {
                ips
            }
        }
        "ExternalName" => vec![str_at(obj, "/spec/externalName").to_string()],
        _ => array_at(obj, "/spec/externalIPs")
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
    };
    let ports: Vec<String> = array_at(obj, "/spec/ports")
        .iter()
        .map(|p| {
            let protocol = str_at(p, "/protocol");
            let protocol = if protocol.is_empty() { "TCP" } else { protocol };
            match i64_at(p, "/nodePort") {
                0 => format!("{}/{protocol}", i64_at(p, "/port")),
                np => format!("{}:{np}/{protocol}", i64_at(p, "/port")),
            }
        })
        .collect();
    vec![
        text(ty),
        or_none(str_at(obj, "/spec/clusterIP")),
        or_none(&external.join(",")),
        or_none(&ports.join(",")),
        age,
        text(map_selector(obj.pointer("/spec/selector"))),
    ]
}

pub(super) fn endpoints_text(obj: &Value) -> String {
    let mut out = Vec::new();
    for subset in array_at(obj, "/subsets") {
        for addr in array_at(subset, "/addresses") {
            let ports = array_at(subset, "/ports");
            if ports.is_empty() {
                out.push(str_at(addr, "/ip").to_string());
            }
            for p in ports {
                out.push(format!("{}:{}", str_at(addr, "/ip"), i64_at(p, "/port")));
            }
        }
    }
    if out.is_empty() {
        "<none>".to_string()
    } else {
        out.join(",")
    }
}

pub(super) fn job_cells(obj: &Value, age: Value, now: i64) -> Vec<Value> {
    let status = if has_condition(obj, "Complete") {
        "Complete"
    } else if has_condition(obj, "Failed") {
        "Failed"
    } else if obj.pointer("/metadata/deletionTimestamp").is_some() {
        "Terminating"
    } else if has_condition(obj, "Suspended") {
        "Suspended"
    } else if has_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(obj, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let succeeded = i64_at(obj, "/status/succeeded");
    let completions = match (
        obj.pointer("/spec/completions").and_then(Value::as_i64),
        i64_at(obj, "/spec/parallelism"),
    ) {
        (Some(c), _) => format!("{succeeded}/{c}"),
        (None, p) if p > 1 => format!("{succeeded}/1 of {p}"),
        _ => format!("{succeeded}/1"),
    };
    let seconds = |p: &str| {
        str_at(obj, p)
            .parse::<jiff::Timestamp>()
            .ok()
            .map(|t| t.as_second())
    };
    let duration = match (
        seconds("/status/startTime"),
        seconds("/status/completionTime"),
    ) {
        (Some(start), Some(end)) => human_duration(end - start),
        (Some(start), None) => human_duration(now - start),
        _ => String::new(),
    };
    let (c, i) = containers_and_images(obj.pointer("/spec/template/spec").unwrap_or(&Value::Null));
    vec![
        text(status),
        text(completions),
        text(duration),
        age,
        c,
        i,
        text(selector_text(obj.pointer("/spec/selector"))),
    ]
}

/// Core and events.k8s.io Events print the same columns from differently named fields.
pub(super) fn event_cells(obj: &Value, now: i64, v1: bool) -> Vec<Value> {
    let (object, sub, message, count) = if v1 {
        (
            "/regarding",
            "/regarding/fieldPath",
            "/note",
            "/deprecatedCount",
        )
    } else {
        (
            "/involvedObject",
            "/involvedObject/fieldPath",
            "/message",
            "/count",
        )
    };
    let first = [
        if v1 {
            "/deprecatedFirstTimestamp"
        } else {
            "/firstTimestamp"
        },
        "/eventTime",
    ]
    .iter()
    .map(|p| str_at(obj, p))
    .find(|t| !t.is_empty())
    .unwrap_or_default();
    let last = [
        "/series/lastObservedTime",
        if v1 {
            "/deprecatedLastTimestamp"
        } else {
            "/lastTimestamp"
        },
        "/eventTime",
    ]
    .iter()
    .map(|p| str_at(obj, p))
    .find(|t| !t.is_empty())
    .unwrap_or_default();
    let source = if v1 {
        str_at(obj, "/reportingController").to_string()
    } else {
        let component = str_at(obj, "/source/component");
        let host = str_at(obj, "/source/host");
        match (component.is_empty(), host.is_empty()) {
            (true, _) => str_at(obj, "/reportingComponent").to_string(),
            (false, true) => component.to_string(),
            (false, false) => format!("{component}, {host}"),
        }
    };
    let count_value = i64_at(obj, count).max(i64_at(obj, "/series/count"));
    let when = |t: &str| {
        if t.is_empty() {
            "<unknown>".to_string()
        } else {
            age_of(t, now)
        }
    };
    vec![
        text(when(last)),
        text(str_at(obj, "/type")),
        text(str_at(obj, "/reason")),
        text(format!(
            "{}/{}",
            str_at(obj, &format!("{object}/kind")).to_lowercase(),
            str_at(obj, &format!("{object}/name"))
        )),
        text(str_at(obj, sub)),
        text(source),
        text(str_at(obj, message)),
        text(when(first)),
        text(count_value.to_string()),
        text(str_at(obj, "/metadata/name")),
    ]
}

/// An APIService's Service column: `<namespace>/<name>` of its backing Service, `Local` without one.
pub(super) fn api_service_target(obj: &Value) -> String {
    let ns = str_at(obj, "/spec/service/namespace");
    let name = str_at(obj, "/spec/service/name");
    if name.is_empty() {
        "Local".to_string()
    } else {
        format!("{ns}/{name}")
    }
}

/// An APIService's Available column: the condition's status, with its reason when not `True`; `Unknown`
/// without the condition.
pub(super) fn api_service_available(obj: &Value) -> String {
    let available = array_at(obj, "/status/conditions")
        .iter()
        .find(|c| str_at(c, "/type") == "Available");
    match available {
        None => "Unknown".to_string(),
        Some(c) if str_at(c, "/status") == "True" => "True".to_string(),
        Some(c) => format!("{} ({})", str_at(c, "/status"), str_at(c, "/reason")),
    }
}
