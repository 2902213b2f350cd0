//! The status a built-in object has before anyone reports one: the zero value of its Go type's status struct as
//! kube-apiserver serialises it.
//!
//! A built-in kind whose Go type holds its status as a struct (not a pointer) is always written with a `status`
//! key: a new Deployment comes back with `"status": {}`, a ReplicaSet with `{"replicas": 0}` (a counter without
//! `omitempty`), a Service with `{"loadBalancer": {}}`. Measured against kube-apiserver v1.37.2 with server-side
//! dry-run creates (issue 15). Kinds without a status (ConfigMap, Secret, NetworkPolicy, RBAC) and custom
//! resources (whose schema decides) get none.

use serde_json::{Map, Value, json};

/// The status a built-in kind is stored with before anyone reports one (named by its entry in
/// `crate::kinds`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum ZeroStatus {
    /// The zero value this function builds, and the time fields of its conditions that are non-pointer
    /// `metav1.Time`s (written as `null` when unset).
    Of(fn() -> Value, &'static [&'static str]),
    /// The type has no status struct, or another part of the server sets it (Namespaces, Pods, CRDs and
    /// persistent volumes get a phase on create).
    None,
}

/// The condition times of ReplicaSets, StatefulSets, DaemonSets and ReplicationControllers.
pub(crate) const WORKLOAD_CONDITION_TIMES: &[&str] = &["lastTransitionTime"];
/// The condition times of Deployments.
pub(crate) const DEPLOYMENT_CONDITION_TIMES: &[&str] = &["lastUpdateTime", "lastTransitionTime"];
/// The condition times of Jobs.
pub(crate) const JOB_CONDITION_TIMES: &[&str] = &["lastProbeTime", "lastTransitionTime"];

/// `{}`: a status struct whose fields are all `omitempty`.
pub(crate) fn empty() -> Value {
    json!({})
}

/// ReplicaSets and ReplicationControllers.
pub(crate) fn replicas() -> Value {
    json!({"replicas": 0})
}

/// StatefulSets.
pub(crate) fn stateful_set() -> Value {
    json!({"replicas": 0, "availableReplicas": 0})
}

/// DaemonSets.
pub(crate) fn daemon_set() -> Value {
    json!({
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    })
}

/// Services and Ingresses.
pub(crate) fn load_balancer() -> Value {
    json!({"loadBalancer": {}})
}

/// PodDisruptionBudgets.
pub(crate) fn disruption_budget() -> Value {
    json!({
        "disruptionsAllowed": 0,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
    })
}

/// HorizontalPodAutoscalers: stored as autoscaling/v2 whichever version served the write; the v1 view derives
/// its own.
pub(crate) fn autoscaler() -> Value {
    json!({"desiredReplicas": 0, "currentMetrics": null})
}

/// PersistentVolumeClaims.
pub(crate) fn pending() -> Value {
    json!({"phase": "Pending"})
}

/// Nodes.
pub(crate) fn node() -> Value {
    json!({
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
        "nodeInfo": {
            "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
            "containerRuntimeVersion": "", "kubeletVersion": "", "kubeProxyVersion": "",
            "operatingSystem": "", "architecture": "",
        },
    })
}

/// Gives `object`, a built-in about to be stored, the fields of its zero status (`zero`, its entry's in
/// `crate::kinds`) that it lacks (all of it when it has no status), as decoding into the Go type and encoding
/// again would.
///
/// Guarantees: values present are kept; a kind without a status struct is left alone; idempotent.
pub(crate) fn fill(object: &mut Value, zero: ZeroStatus) {
    let ZeroStatus::Of(zero, times) = zero else {
        return;
    };
    let zero = zero();
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let status = map.entry("status").or_insert_with(|| json!({}));
    if status.is_null() {
        *status = json!({});
    }
    if let (Some(status), Value::Object(zero)) = (status.as_object_mut(), zero) {
        merge_missing(status, zero);
    }
    if times.is_empty() {
        return;
    }
    let conditions = status
        .get_mut("conditions")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut);
    for condition in conditions {
        for time in times {
            condition.entry(*time).or_insert(Value::Null);
        }
    }
}

/// Adds the keys of `zero` that `into` lacks, descending into objects both have.
fn merge_missing(into: &mut Map<String, Value>, zero: Map<String, Value>) {
    for (key, value) in zero {
        match (into.get_mut(&key), value) {
            (None, value) => {
                into.insert(key, value);
            }
            (Some(Value::Object(have)), Value::Object(zero)) => merge_missing(have, zero),
            (Some(have @ Value::Null), value @ Value::Object(_)) => *have = value,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind_info::KindInfo;

    /// Fills as the write path does: with the zero status the kind's entry names.
    fn fill(object: &mut Value, kind: &KindInfo<'_>) {
        super::fill(object, crate::kinds::zero_status(kind));
    }

    #[test]
    fn kinds_with_a_status_struct_get_its_zero_value_and_keep_what_they_have() {
        let deploy = KindInfo::builtin("apps", "v1", "Deployment", true);
        let mut obj = json!({"spec": {}});
        fill(&mut obj, &deploy);
        assert_eq!(obj["status"], json!({}));

        let rs = KindInfo::builtin("apps", "v1", "ReplicaSet", true);
        let mut obj = json!({"status": {"replicas": 3, "readyReplicas": 2}});
        fill(&mut obj, &rs);
        assert_eq!(obj["status"], json!({"replicas": 3, "readyReplicas": 2}));
        let mut obj = json!({"status": null});
        fill(&mut obj, &rs);
        assert_eq!(obj["status"], json!({"replicas": 0}));

        let mut obj = json!({"status": {"conditions": [{"type": "Available", "status": "True"}]}});
        fill(&mut obj, &deploy);
        assert_eq!(
            obj["status"]["conditions"][0],
            json!({"type": "Available", "status": "True", "lastUpdateTime": null, "lastTransitionTime": null})
        );

        let svc = KindInfo::builtin("", "v1", "Service", true);
        let mut obj = json!({"status": {"loadBalancer": null}});
        fill(&mut obj, &svc);
        assert_eq!(obj["status"], json!({"loadBalancer": {}}));

        let node = KindInfo::builtin("", "v1", "Node", false);
        let mut obj = json!({"status": {"nodeInfo": {"kubeletVersion": "v1.37.2"}}});
        fill(&mut obj, &node);
        assert_eq!(obj["status"]["nodeInfo"]["kubeletVersion"], "v1.37.2");
        assert_eq!(obj["status"]["nodeInfo"]["bootID"], "");
        assert_eq!(
            obj["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"],
            0
        );
    }

    #[test]
    fn kinds_without_a_status_struct_are_left_alone() {
        let version = json!({"name": "v1"});
        for kind in [
            KindInfo::builtin("", "v1", "ConfigMap", true),
            KindInfo::builtin("", "v1", "Secret", true),
            KindInfo::builtin("networking.k8s.io", "v1", "NetworkPolicy", true),
            KindInfo::custom("x.io", "v1", "Widget", true, &version),
        ] {
            let mut obj = json!({"data": {}});
            fill(&mut obj, &kind);
            assert!(obj.get("status").is_none(), "{}", kind.kind);
        }
    }
}
