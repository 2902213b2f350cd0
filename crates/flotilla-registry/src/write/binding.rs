//! The `pods/binding` subresource: a scheduler assigns a pod to a Node by creating a `Binding`, as kube-apiserver's
//! pod registry does it (`BindingREST`).
//!
//! The Binding is checked first (its name is the pod's, `target.kind` is `Node` or empty, `target.name` a Node name);
//! kube-apiserver's `PodTopologyLabels` admission (on by default) then copies the target Node's
//! `topology.kubernetes.io/zone` and `region` labels onto it. The pod is then updated directly in storage, as
//! upstream bypasses the pod's update strategy: `spec.nodeName` set, the Binding's annotations and labels merged
//! into the pod's, `status.nominatedNodeName` cleared and the `PodScheduled` condition `True`. The Binding's `uid` and
//! `resourceVersion`, when given, must be the pod's.
//!
//! Errors, in kube-apiserver's words: a pod being deleted, already bound or still gated is a `409` on
//! `pods/binding`; a missing pod is `pods "<name>" not found`; a Binding failing its checks is a `500` carrying the
//! field errors, since upstream returns them unwrapped.

use serde_json::{Map, Value, json};

use super::{Outcome, guaranteed_update};
use crate::context::Ctx;
use crate::meta;
use crate::status::{ApiError, ApiResult};
use crate::validation::FieldError;
use crate::validation::format::is_dns1123_subdomain;
use flotilla_apimachinery::field::aggregate_message;
use flotilla_store::ResKey;

/// The Node labels kube-apiserver's `PodTopologyLabels` admission copies onto a Binding.
const TOPOLOGY_LABELS: [&str; 2] = [
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
];

/// Binds pod `ns/name` to the Node `binding` targets.
///
/// # Errors
/// See the module documentation.
pub async fn bind(
    ctx: &Ctx,
    ns: &str,
    name: &str,
    binding: &Value,
    dry_run: bool,
) -> ApiResult<()> {
    if !binding.is_object() {
        return Err(ApiError::bad_request("the Binding is not a JSON object"));
    }
    if meta::meta_str(binding, "name").unwrap_or_default() != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    if meta::meta_str(binding, "namespace").is_some_and(|n| !n.is_empty() && n != ns) {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let target_kind = text(binding, "/target/kind");
    let node = text(binding, "/target/name");
    let errors = validate(target_kind, node);
    if !errors.is_empty() {
        return Err(ApiError::new(500, "", aggregate_message(&errors)));
    }
    let mut labels = string_map(binding, "/metadata/labels");
    if target_kind == "Node" {
        labels.extend(topology_labels(ctx, node));
    }
    let annotations = string_map(binding, "/metadata/annotations");
    let uid = meta::meta_str(binding, "uid").filter(|u| !u.is_empty());
    let version = meta::meta_str(binding, "resourceVersion").filter(|v| !v.is_empty());
    let pods = ResKey::new("", "pods");
    guaranteed_update(&ctx.store, &pods, ns, name, dry_run, |current| {
        let current = current.ok_or_else(|| ApiError::not_found("pods", "", name))?;
        let conflict = |message: String| ApiError::conflict_msg("pods", "", name, &message);
        if let Some(uid) = uid
            && Some(uid) != meta::meta_str(current, "uid")
        {
            return Err(conflict(format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                meta::meta_str(current, "uid").unwrap_or_default()
            )));
        }
        if let Some(version) = version
            && Some(version) != meta::meta_str(current, "resourceVersion")
        {
            return Err(conflict(format!(
                "Precondition failed: ResourceVersion in precondition: {version}, ResourceVersion in object meta: {}",
                meta::meta_str(current, "resourceVersion").unwrap_or_default()
            )));
        }
        let refuse =
            |message: String| ApiError::conflict_msg("pods/binding", "", name, &message);
        if meta::is_deleting(current) {
            return Err(refuse(format!(
                "pod {name} is being deleted, cannot be assigned to a host"
            )));
        }
        let assigned = text(current, "/spec/nodeName");
        if !assigned.is_empty() {
            return Err(refuse(format!(
                "pod {name} is already assigned to node \"{assigned}\""
            )));
        }
        if current
            .pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_some_and(|gates| !gates.is_empty())
        {
            return Err(refuse(format!(
                "pod {name} has non-empty .spec.schedulingGates"
            )));
        }
        let mut pod = current.as_ref().clone();
        pod["spec"]["nodeName"] = json!(node);
        for (field, added) in [("annotations", &annotations), ("labels", &labels)] {
            if added.is_empty() {
                continue;
            }
            let metadata = meta::meta_mut(&mut pod)?;
            let into = metadata.entry(field).or_insert_with(|| json!({}));
            if !into.is_object() {
                *into = json!({});
            }
            if let Some(into) = into.as_object_mut() {
                into.extend(added.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        if let Some(status) = pod.get_mut("status").and_then(Value::as_object_mut) {
            status.remove("nominatedNodeName");
        }
        scheduled(&mut pod);
        Ok(Outcome::Put(pod))
    })
    .await?;
    Ok(())
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn string_map(object: &Value, pointer: &str) -> Map<String, Value> {
    object
        .pointer(pointer)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(_, v)| v.is_string())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// kube's `ValidatePodBinding`.
fn validate(kind: &str, node: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if !kind.is_empty() && kind != "Node" {
        errors.push(FieldError::not_supported(
            "target.kind",
            kind,
            &["Node", "<empty>"],
        ));
    }
    if node.is_empty() {
        errors.push(FieldError::required("target.name", ""));
    } else if kind.is_empty() || kind == "Node" {
        for message in is_dns1123_subdomain(node) {
            errors.push(FieldError::invalid("target.name", node, message));
        }
    }
    errors
}

/// The target Node's topology labels (none when the Node does not exist, as the admission plugin has it).
fn topology_labels(ctx: &Ctx, node: &str) -> Map<String, Value> {
    let Some(node) = ctx.store.get(&ResKey::new("", "nodes"), "", node) else {
        return Map::new();
    };
    let labels = string_map(&node, "/metadata/labels");
    labels
        .into_iter()
        .filter(|(k, _)| TOPOLOGY_LABELS.contains(&k.as_str()))
        .collect()
}

/// Sets the pod's `PodScheduled` condition `True`, its transition time kept when it was `True` already.
fn scheduled(pod: &mut Value) {
    let now = meta::now();
    let status = pod
        .as_object_mut()
        .map(|p| p.entry("status").or_insert_with(|| json!({})));
    let Some(status) = status.and_then(Value::as_object_mut) else {
        return;
    };
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(conditions) = conditions.as_array_mut() else {
        return;
    };
    let mut condition = json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now});
    match conditions
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("PodScheduled"))
    {
        Some(existing) => {
            if existing.get("status").and_then(Value::as_str) == Some("True")
                && let Some(at) = existing.get("lastTransitionTime")
            {
                condition["lastTransitionTime"] = at.clone();
            }
            *existing = condition;
        }
        None => conditions.push(condition),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::put_for_test as put;

    fn binding(pod: &str, node: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod, "annotations": {"why": "fit"}},
               "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
    }

    #[tokio::test]
    async fn a_binding_assigns_the_pod_once_with_its_nodes_topology() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ctx = Ctx::for_test(dir.path());
        put(
            &ctx,
            "nodes",
            "",
            json!({"metadata": {"name": "node-1", "labels": {
            "topology.kubernetes.io/zone": "z1", "kubernetes.io/hostname": "node-1"}}}),
        )
        .await;
        put(&ctx, "pods", "default", json!({"metadata": {"name": "web", "namespace": "default", "uid": "u1",
            "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Pending", "nominatedNodeName": "node-9",
                       "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}}))
        .await;
        bind(&ctx, "default", "web", &binding("web", "node-1"), false)
            .await
            .expect("bound");
        let pod = ctx
            .store
            .get(&ResKey::new("", "pods"), "default", "web")
            .expect("pod");
        assert_eq!(pod["spec"]["nodeName"], "node-1");
        assert_eq!(
            pod["metadata"]["labels"],
            json!({"app": "web", "topology.kubernetes.io/zone": "z1"})
        );
        assert_eq!(pod["metadata"]["annotations"]["why"], "fit");
        assert!(pod["status"].get("nominatedNodeName").is_none());
        let conditions = pod["status"]["conditions"].as_array().expect("conditions");
        assert_eq!(conditions.len(), 1);
        assert_eq!(conditions[0]["status"], "True");
        assert!(conditions[0].get("reason").is_none());

        let e = bind(&ctx, "default", "web", &binding("web", "node-2"), false)
            .await
            .expect_err("bound already");
        assert_eq!(e.code, 409);
        assert_eq!(
            e.message,
            "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned to node \"node-1\""
        );
    }

    #[tokio::test]
    async fn a_binding_is_checked_before_the_pod_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ctx = Ctx::for_test(dir.path());
        let e = bind(&ctx, "default", "web", &binding("other", "node-1"), false)
            .await
            .expect_err("another name");
        assert_eq!(
            (e.code, e.message.as_str()),
            (400, "name in URL does not match name in Binding object")
        );
        let mut bad = binding("web", "");
        bad["target"]["kind"] = json!("Pod");
        let e = bind(&ctx, "default", "web", &bad, false)
            .await
            .expect_err("invalid");
        assert_eq!(e.code, 500);
        assert_eq!(
            e.message,
            "[target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\", target.name: Required value]"
        );
        let e = bind(&ctx, "default", "web", &binding("web", "node-1"), false)
            .await
            .expect_err("no pod");
        assert_eq!(
            (e.code, e.message.as_str()),
            (404, "pods \"web\" not found")
        );
    }
}
