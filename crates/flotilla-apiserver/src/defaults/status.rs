//! The status a built-in object has before anyone reports one: the zero value of its Go type's status struct as
//! kube-apiserver serialises it.
//!
//! A built-in kind whose Go type holds its status as a struct (not a pointer) is always written with a `status`
//! key: a new Deployment comes back with `"status": {}`, a ReplicaSet with `{"replicas": 0}` (a counter without
//! `omitempty`), a Service with `{"loadBalancer": {}}`. Measured against kube-apiserver v1.37.2 with server-side
//! dry-run creates (issue 15). Kinds without a status (ConfigMap, Secret, NetworkPolicy, RBAC) and custom
//! resources (whose schema decides) get none.

use serde_json::{Map, Value, json};

use crate::kind_info::KindInfo;

/// The zero status of `kind` in its stored version, or `None` when its type has no status struct (or another
/// part of the server sets it: Namespaces, Pods, CRDs and persistent volumes get a phase on create).
fn zero(kind: &KindInfo<'_>) -> Option<Value> {
    if kind.is_custom() {
        return None;
    }
    let zero = match (kind.group, kind.kind) {
        ("apps", "Deployment")
        | ("batch", "Job" | "CronJob")
        | ("", "ResourceQuota")
        | ("apiregistration.k8s.io", "APIService")
        | ("certificates.k8s.io", "CertificateSigningRequest") => json!({}),
        ("apps", "ReplicaSet") | ("", "ReplicationController") => json!({"replicas": 0}),
        ("apps", "StatefulSet") => json!({"replicas": 0, "availableReplicas": 0}),
        ("apps", "DaemonSet") => json!({
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        }),
        ("", "Service") | ("networking.k8s.io", "Ingress") => json!({"loadBalancer": {}}),
        ("policy", "PodDisruptionBudget") => json!({
            "disruptionsAllowed": 0,
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "expectedPods": 0,
        }),
        // Stored as autoscaling/v2 whichever version served the write; the v1 view derives its own.
        ("autoscaling", "HorizontalPodAutoscaler") => {
            json!({"desiredReplicas": 0, "currentMetrics": null})
        }
        ("", "PersistentVolumeClaim") => json!({"phase": "Pending"}),
        ("", "Node") => json!({
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
            "nodeInfo": {
                "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
                "containerRuntimeVersion": "", "kubeletVersion": "", "kubeProxyVersion": "",
                "operatingSystem": "", "architecture": "",
            },
        }),
        _ => return None,
    };
    Some(zero)
}

/// The time fields of `kind`'s status conditions that are non-pointer `metav1.Time`s: written as `null` when unset.
fn condition_times(kind: &KindInfo<'_>) -> &'static [&'static str] {
    match (kind.group, kind.kind) {
        ("apps", "Deployment") => &["lastUpdateTime", "lastTransitionTime"],
        ("apps", "ReplicaSet" | "StatefulSet" | "DaemonSet") | ("", "ReplicationController") => {
            &["lastTransitionTime"]
        }
        ("batch", "Job") => &["lastProbeTime", "lastTransitionTime"],
        _ => &[],
    }
}

/// Gives `object`, a built-in of `kind` about to be stored, the fields of its zero status that it lacks (all of
/// it when it has no status), as decoding into the Go type and encoding again would.
///
/// Guarantees: values present are kept; a kind without a status struct is left alone; idempotent.
pub fn fill(object: &mut Value, kind: &KindInfo<'_>) {
    let Some(zero) = zero(kind) else { return };
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
    let times = condition_times(kind);
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
