//! Where kube-scheduler would put a pod, simply: a member without a scheduler still gets its pods bound, so that
//! they have a Node, a `hostIP` and a kubelet to ask for logs and exec.
//!
//! A pod is placed when it has no `spec.nodeName`, is not being deleted or finished, names the default scheduler
//! (or none) and has no scheduling gates. The Nodes it fits are those that are not cordoned, carry no `NoSchedule`
//! or `NoExecute` taint it does not tolerate (a NotReady Node counts as tainted `node.kubernetes.io/not-ready`, as
//! the node lifecycle controller taints it; a cordoned one as `node.kubernetes.io/unschedulable`), and match its
//! `nodeSelector`: kube-scheduler's filters in its order, each Node counted under the first that refuses it. Of those it takes the one with the fewest pods bound to it, by name on a
//! tie: a spread like kube-scheduler's default scoring, without its resource accounting, node affinity, pod
//! (anti-)affinity or topology spread constraints. A pod that fits nowhere is reported `PodScheduled=False`,
//! `Unschedulable`, with kube-scheduler's message, until a Node changes.
//!
//! The binding itself goes through the API server's `pods/binding` subresource, as kube-scheduler binds.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::workloads::{NodeView, Taint, tolerated};

/// What the simulated scheduler does with a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Bind it to this Node.
    Bind(String),
    /// It fits no Node: this is kube-scheduler's message for its `PodScheduled` condition.
    Unschedulable(String),
    /// Not the scheduler's (bound already, being deleted, finished, another scheduler's, gated).
    Leave,
}

/// Why a Node does not fit a pod, as kube-scheduler words it in its summary: the first of its filters, in their
/// order (cordon, taints, node selector), that refuses the Node.
fn misfit(pod: &Value, node: &NodeView) -> Option<String> {
    let tolerations = pod
        .pointer("/spec/tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if node.unschedulable
        && !tolerated(
            &tolerations,
            &lifecycle_taint("node.kubernetes.io/unschedulable"),
        )
    {
        return Some("node(s) were unschedulable".into());
    }
    let not_ready = (!node.ready).then(|| lifecycle_taint("node.kubernetes.io/not-ready"));
    let untolerated = not_ready
        .iter()
        .chain(node.taints.iter())
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .find(|t| !tolerated(&tolerations, t));
    if let Some(taint) = untolerated {
        return Some(format!(
            "node(s) had untolerated taint {{{}: {}}}",
            taint.key, taint.value
        ));
    }
    let selected = pod
        .pointer("/spec/nodeSelector")
        .and_then(Value::as_object)
        .is_none_or(|selector| {
            selector
                .iter()
                .all(|(k, v)| node.labels.get(k).map(String::as_str) == v.as_str())
        });
    (!selected).then(|| "node(s) didn't match Pod's node affinity/selector".into())
}

fn lifecycle_taint(key: &str) -> Taint {
    Taint {
        key: key.into(),
        value: String::new(),
        effect: "NoSchedule".into(),
    }
}

/// Whether the pod is one a scheduler should place now.
fn wants_a_node(pod: &Value) -> bool {
    let text = |pointer: &str| pod.pointer(pointer).and_then(Value::as_str).unwrap_or("");
    text("/spec/nodeName").is_empty()
        && pod.pointer("/metadata/deletionTimestamp").is_none()
        && !matches!(text("/status/phase"), "Succeeded" | "Failed")
        && matches!(text("/spec/schedulerName"), "" | "default-scheduler")
        && pod
            .pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
}

/// Where `pod` goes among `nodes`, `bound` counting the pods each Node already has.
pub(crate) fn place(pod: &Value, nodes: &[NodeView], bound: &BTreeMap<String, usize>) -> Placement {
    if !wants_a_node(pod) {
        return Placement::Leave;
    }
    if nodes.is_empty() {
        return Placement::Unschedulable("no nodes available to schedule pods".into());
    }
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut fits: Vec<&NodeView> = Vec::new();
    for node in nodes {
        match misfit(pod, node) {
            Some(reason) => *reasons.entry(reason).or_default() += 1,
            None => fits.push(node),
        }
    }
    let best = fits
        .into_iter()
        .min_by_key(|n| (bound.get(&n.name).copied().unwrap_or(0), n.name.clone()));
    match best {
        Some(node) => Placement::Bind(node.name.clone()),
        None => {
            let total = nodes.len();
            // kube-scheduler sorts its reasons as text, counts first.
            let mut summary: Vec<String> = reasons
                .iter()
                .map(|(reason, count)| format!("{count} {reason}"))
                .collect();
            summary.sort();
            Placement::Unschedulable(format!(
                "0/{total} nodes are available: {}. preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling.",
                summary.join(", ")
            ))
        }
    }
}

/// The Binding kube-scheduler creates to put `pod` on `node`.
pub(crate) fn binding(pod: &Value, node: &str) -> Value {
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut metadata = json!({"name": name});
    if let Some(uid) = pod.pointer("/metadata/uid") {
        metadata["uid"] = uid.clone();
    }
    json!({"apiVersion": "v1", "kind": "Binding", "metadata": metadata,
           "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
}
