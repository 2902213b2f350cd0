//! Status of the replicated workload kinds once their pods are all up, as the Deployment, StatefulSet,
//! ReplicaSet and DaemonSet controllers report it: every desired replica is current, updated, ready and
//! available, and `observedGeneration` has caught up with `metadata.generation`.
//!
//! A workload whose pod template names an image that cannot be pulled (`crate::images`) reports its pods
//! created and updated but none ready or available, as its pods wait in `ImagePullBackOff`. (A real rolling
//! update keeps the old pods available meanwhile; the simulator reports the new template's pods only.)
//!
//! Counters Go marks `omitempty` are left out when zero, so a settled status computed again is identical and the
//! simulator never rewrites it.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::common::{
    Cond, Stamps, conditions, generation, int_at, name, put_nonzero, status_of, template_hash,
};
use super::images::template_unpullable;

/// The replica count a workload asks for (`spec.replicas`, default 1 as the API server defaults it).
fn desired_replicas(obj: &Value) -> i64 {
    int_at(obj, "/spec/replicas").unwrap_or(1).max(0)
}

/// The replicas of a workload that become ready: all of them, or none when its image cannot be pulled.
fn ready_replicas(obj: &Value, replicas: i64) -> i64 {
    if template_unpullable(obj) {
        0
    } else {
        replicas
    }
}

/// Deployment status: counters at `spec.replicas`, conditions `Available` and `Progressing`.
pub(crate) fn deployment(obj: &Value, now: &str) -> Value {
    let current = status_of(obj);
    let replicas = desired_replicas(obj);
    let ready = ready_replicas(obj, replicas);
    let mut status = current.clone();
    status.insert("observedGeneration".into(), json!(generation(obj)));
    for key in ["replicas", "updatedReplicas"] {
        put_nonzero(&mut status, key, replicas);
    }
    for key in ["readyReplicas", "availableReplicas"] {
        put_nonzero(&mut status, key, ready);
    }
    put_nonzero(&mut status, "unavailableReplicas", replicas - ready);
    // A pointer the controller always sets (DeploymentReplicaSetTerminatingReplicas, on by default).
    status.insert("terminatingReplicas".into(), json!(0));
    let paused = obj.pointer("/spec/paused").and_then(Value::as_bool) == Some(true);
    let replica_set = format!("{}-{}", name(obj), template_hash(obj));
    let progressing = if paused {
        Cond {
            kind: "Progressing",
            status: "Unknown",
            reason: "DeploymentPaused",
            message: "Deployment is paused".into(),
        }
    } else if ready < replicas {
        Cond {
            kind: "Progressing",
            status: "True",
            reason: "ReplicaSetUpdated",
            message: format!("ReplicaSet \"{replica_set}\" is progressing."),
        }
    } else {
        Cond {
            kind: "Progressing",
            status: "True",
            reason: "NewReplicaSetAvailable",
            message: format!("ReplicaSet \"{replica_set}\" has successfully progressed."),
        }
    };
    let available = if ready < replicas {
        Cond {
            kind: "Available",
            status: "False",
            reason: "MinimumReplicasUnavailable",
            message: "Deployment does not have minimum availability.".into(),
        }
    } else {
        Cond {
            kind: "Available",
            status: "True",
            reason: "MinimumReplicasAvailable",
            message: "Deployment has minimum availability.".into(),
        }
    };
    let wanted = [available, progressing];
    status.insert(
        "conditions".into(),
        conditions(&current, &wanted, Stamps::Update, now),
    );
    Value::Object(status)
}

/// StatefulSet status: every ordinal created, ready and on the update revision.
pub(crate) fn stateful_set(obj: &Value) -> Value {
    let mut status = status_of(obj);
    let replicas = desired_replicas(obj);
    // With the default OrderedReady policy the first pod waits for its image and no later one is created.
    let parallel = obj
        .pointer("/spec/podManagementPolicy")
        .and_then(Value::as_str)
        == Some("Parallel");
    let (created, ready) = if template_unpullable(obj) {
        (if parallel { replicas } else { replicas.min(1) }, 0)
    } else {
        (replicas, replicas)
    };
    let revision = format!("{}-{}", name(obj), template_hash(obj));
    status.insert("observedGeneration".into(), json!(generation(obj)));
    // `replicas` and `availableReplicas` have no omitempty in the Go type.
    status.insert("replicas".into(), json!(created));
    status.insert("availableReplicas".into(), json!(ready));
    put_nonzero(&mut status, "readyReplicas", ready);
    for key in ["currentReplicas", "updatedReplicas"] {
        put_nonzero(&mut status, key, created);
    }
    status.insert("currentRevision".into(), json!(revision));
    status.insert("updateRevision".into(), json!(revision));
    status.insert("collisionCount".into(), json!(0));
    Value::Object(status)
}

/// ReplicaSet status: all pods created, labelled, ready and available.
pub(crate) fn replica_set(obj: &Value) -> Value {
    let mut status = status_of(obj);
    let replicas = desired_replicas(obj);
    let ready = ready_replicas(obj, replicas);
    status.insert("observedGeneration".into(), json!(generation(obj)));
    status.insert("replicas".into(), json!(replicas));
    put_nonzero(&mut status, "fullyLabeledReplicas", replicas);
    for key in ["readyReplicas", "availableReplicas"] {
        put_nonzero(&mut status, key, ready);
    }
    status.remove("terminatingReplicas");
    Value::Object(status)
}

/// One taint of a Node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Taint {
    /// `key`.
    pub key: String,
    /// `value` (empty when absent).
    pub value: String,
    /// `effect`: `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// One member Node as the simulated controllers see it: what a DaemonSet places by (labels, taints), and what the
/// simulated scheduler and kubelet need (name, readiness, cordon, the address pods get as `hostIP`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeView {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `spec.taints`.
    pub taints: Vec<Taint>,
    /// Whether its `Ready` condition is `True`.
    pub ready: bool,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    /// Its first `InternalIP` address, when it has one.
    pub internal_ip: Option<String>,
}

impl NodeView {
    /// The view of a Node object.
    pub fn of(node: &Value) -> Self {
        let labels = node
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let text =
            |t: &Value, key: &str| t.get(key).and_then(Value::as_str).unwrap_or("").to_string();
        let taints = node
            .pointer("/spec/taints")
            .and_then(Value::as_array)
            .map(|ts| {
                ts.iter()
                    .map(|t| Taint {
                        key: text(t, "key"),
                        value: text(t, "value"),
                        effect: text(t, "effect"),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let ready = node
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| text(c, "type") == "Ready" && text(c, "status") == "True")
            });
        let internal_ip = node
            .pointer("/status/addresses")
            .and_then(Value::as_array)
            .and_then(|addresses| {
                addresses
                    .iter()
                    .find(|a| text(a, "type") == "InternalIP")
                    .map(|a| text(a, "address"))
            })
            .filter(|a| !a.is_empty());
        NodeView {
            name: node
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            labels,
            taints,
            ready,
            unschedulable: node
                .pointer("/spec/unschedulable")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            internal_ip,
        }
    }
}

/// The tolerations the DaemonSet controller adds to every daemon pod, so that nodes being cordoned, under
/// pressure or not ready keep their daemons (`k8s.io/kubernetes/pkg/controller/daemon/util`).
const DAEMON_TOLERATIONS: [(&str, &str); 7] = [
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ("node.kubernetes.io/network-unavailable", "NoSchedule"),
];

/// Whether one of `tolerations` (a pod spec's) tolerates `taint`, as the scheduler matches them: an empty
/// effect matches every effect, `Exists` ignores the value, and `Exists` with no key matches every taint.
pub(crate) fn tolerated(tolerations: &[Value], taint: &Taint) -> bool {
    tolerations.iter().any(|t| {
        let text = |key: &str| t.get(key).and_then(Value::as_str).unwrap_or("");
        let effect_ok = text("effect").is_empty() || text("effect") == taint.effect;
        let key_ok =
            text("key").is_empty() && text("operator") == "Exists" || text("key") == taint.key;
        let value_ok = text("operator") == "Exists" || text("value") == taint.value;
        effect_ok && key_ok && value_ok
    })
}

/// Whether a DaemonSet runs a pod on `node`: its template's `nodeSelector` matches the node's labels, and every
/// `NoSchedule` and `NoExecute` taint is tolerated by the template or by the controller's own tolerations
/// (`spec.unschedulable` alone does not keep a daemon off: the controller tolerates the cordon taint). Node
/// affinity is not simulated.
fn selects(obj: &Value, node: &NodeView) -> bool {
    let selector_ok = obj
        .pointer("/spec/template/spec/nodeSelector")
        .and_then(Value::as_object)
        .is_none_or(|selector| {
            selector
                .iter()
                .all(|(k, v)| node.labels.get(k).map(String::as_str) == v.as_str())
        });
    let own = obj
        .pointer("/spec/template/spec/tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let taints_ok = node
        .taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .all(|t| {
            DAEMON_TOLERATIONS.contains(&(t.key.as_str(), t.effect.as_str())) || tolerated(&own, t)
        });
    selector_ok && taints_ok
}

/// DaemonSet status: one ready, updated, available pod on every node the template selects.
pub(crate) fn daemon_set(obj: &Value, nodes: &[NodeView]) -> Value {
    let mut status = status_of(obj);
    let scheduled = i64::try_from(nodes.iter().filter(|n| selects(obj, n)).count()).unwrap_or(0);
    status.insert("observedGeneration".into(), json!(generation(obj)));
    // These four have no omitempty in the Go type.
    status.insert("currentNumberScheduled".into(), json!(scheduled));
    status.insert("numberMisscheduled".into(), json!(0));
    status.insert("desiredNumberScheduled".into(), json!(scheduled));
    status.insert("numberReady".into(), json!(scheduled));
    put_nonzero(&mut status, "updatedNumberScheduled", scheduled);
    put_nonzero(&mut status, "numberAvailable", scheduled);
    status.remove("numberUnavailable");
    Value::Object(status)
}
