//! Pod status as a kubelet reports a pod whose containers all started: phase `Running`, every condition
//! `True`, a pod IP, the Node's `InternalIP` as host IP, and one running status per container (init containers
//! terminated with `Completed`). A pod with a container whose image cannot be pulled (`crate::images`) stays
//! `Pending` instead, that container waiting in `ImagePullBackOff` and `Ready` and `ContainersReady` `False`, as a
//! kubelet reports it.
//!
//! Only pods bound to a known Node run, as only a Node's kubelet starts them: an unbound pod keeps its status while
//! the simulated scheduler binds it (`crate::scheduler`), or gets the scheduler's `PodScheduled=False` when it fits
//! no Node; one bound to a Node the member does not have stays as it is. Pods that already succeeded or failed are
//! left alone.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::common::{Cond, Stamps, conditions, fnv32, kept_time, name, status_of};
use super::images::{pullable, unpullable_containers};
use super::scheduler::{Placement, place};
use super::workloads::NodeView;

/// A stable pod IP in 10.244.0.0/16 derived from the pod's uid (or name).
fn pod_ip(obj: &Value) -> String {
    let key = obj
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_else(|| name(obj));
    let hash = fnv32(key.as_bytes());
    // Avoid .0 and .255 so the address looks like one a CNI would hand out.
    format!("10.244.{}.{}", (hash >> 8) & 0xff, (hash & 0xff) % 253 + 1)
}

/// The existing status of container `container` in `list` (to keep its start time).
fn previous<'a>(current: &'a Map<String, Value>, list: &str, container: &str) -> Option<&'a Value> {
    current
        .get(list)
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(container))
}

fn container_statuses(
    obj: &Value,
    current: &Map<String, Value>,
    spec_list: &str,
    status_list: &str,
    now: &str,
) -> Option<Value> {
    let containers = obj
        .pointer(&format!("/spec/{spec_list}"))
        .and_then(Value::as_array)?;
    let init = spec_list == "initContainers";
    let statuses = containers
        .iter()
        .map(|c| {
            let cname = c.get("name").and_then(Value::as_str).unwrap_or("");
            let image = c.get("image").and_then(Value::as_str).unwrap_or("");
            let old_state = previous(current, status_list, cname)
                .and_then(|s| s.get("state"))
                .and_then(Value::as_object)
                .and_then(|s| s.values().next())
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            if !pullable(image) {
                return json!({
                    "name": cname,
                    "image": image,
                    "imageID": "",
                    "lastState": {},
                    "ready": false,
                    "started": false,
                    "restartCount": 0,
                    "state": {"waiting": {
                        "reason": "ImagePullBackOff",
                        "message": format!("Back-off pulling image \"{image}\""),
                    }},
                });
            }
            let started_at = kept_time(&old_state, "startedAt", now);
            let state = if init {
                let finished_at = kept_time(&old_state, "finishedAt", now);
                json!({"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": started_at, "finishedAt": finished_at}})
            } else {
                json!({"running": {"startedAt": started_at}})
            };
            json!({
                "name": cname,
                "image": image,
                "imageID": "",
                "containerID": format!("flotilla://{}/{cname}", name(obj)),
                "lastState": {},
                "ready": true,
                "started": !init,
                "restartCount": 0,
                "state": state,
            })
        })
        .collect();
    Some(Value::Array(statuses))
}

/// The pod's status once running on its Node, one of `nodes` (or what the module documentation says otherwise).
pub(crate) fn pod(obj: &Value, nodes: &[NodeView], now: &str) -> Value {
    let current = status_of(obj);
    if matches!(
        current.get("phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    ) {
        return Value::Object(current);
    }
    let node_name = obj
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if node_name.is_empty() {
        return match place(obj, nodes, &BTreeMap::new()) {
            Placement::Unschedulable(message) => unschedulable(&current, message, now),
            Placement::Bind(_) | Placement::Leave => Value::Object(current),
        };
    }
    let Some(node) = nodes.iter().find(|n| n.name == node_name) else {
        return Value::Object(current);
    };
    let mut status = current.clone();
    if let Some(ip) = &node.internal_ip {
        status.insert("hostIP".into(), json!(ip));
        status.insert("hostIPs".into(), json!([{"ip": ip}]));
    }
    let waiting: Vec<&str> = unpullable_containers(obj.get("spec"))
        .into_iter()
        .map(|(container, _)| container)
        .collect();
    let phase = if waiting.is_empty() {
        "Running"
    } else {
        "Pending"
    };
    status.insert("phase".into(), json!(phase));
    let wanted: Vec<Cond<'_>> = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    .into_iter()
    .map(|kind| {
        if waiting.is_empty() || !matches!(kind, "Ready" | "ContainersReady") {
            return Cond {
                kind,
                status: "True",
                reason: "",
                message: String::new(),
            };
        }
        Cond {
            kind,
            status: "False",
            reason: "ContainersNotReady",
            message: format!("containers with unready status: [{}]", waiting.join(" ")),
        }
    })
    .collect();
    status.insert(
        "conditions".into(),
        conditions(&current, &wanted, Stamps::NullProbe, now),
    );
    let ip = match current.get("podIP").and_then(Value::as_str) {
        Some(ip) if !ip.is_empty() => ip.to_string(),
        _ => pod_ip(obj),
    };
    status.insert("podIP".into(), json!(ip));
    status.insert("podIPs".into(), json!([{"ip": ip}]));
    status.insert("startTime".into(), kept_time(&current, "startTime", now));
    // `qosClass` is the API server's, set when the Pod was created; the status keeps it.
    for (spec_list, status_list) in [
        ("containers", "containerStatuses"),
        ("initContainers", "initContainerStatuses"),
    ] {
        match container_statuses(obj, &current, spec_list, status_list, now) {
            Some(list) => status.insert(status_list.into(), list),
            None => status.remove(status_list),
        };
    }
    Value::Object(status)
}

/// What kube-scheduler reports of a pod it cannot place: `Pending`, `PodScheduled=False`, `Unschedulable`.
fn unschedulable(current: &Map<String, Value>, message: String, now: &str) -> Value {
    let mut status = current.clone();
    status.insert("phase".into(), json!("Pending"));
    let wanted = [Cond {
        kind: "PodScheduled",
        status: "False",
        reason: "Unschedulable",
        message,
    }];
    status.insert(
        "conditions".into(),
        conditions(current, &wanted, Stamps::NullProbe, now),
    );
    Value::Object(status)
}
