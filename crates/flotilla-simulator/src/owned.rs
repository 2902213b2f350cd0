//! The objects the Deployment and ReplicaSet controllers create, built from their owner: a Deployment's
//! ReplicaSet for its current pod template, and a ReplicaSet's Pods. Pure; `children` writes them.
//!
//! Names follow the real controllers' shapes: `<deployment>-<pod-template-hash>` (the hash the Deployment's
//! `Progressing` message names) and `<replicaset>-<5 characters>`. Pod names are derived from the ReplicaSet's
//! uid and a slot number, so two reconciles racing create the same names and the second is refused.

use serde_json::{Map, Value, json};

use super::common::{fnv32, int_at, name, template_hash};

/// The label the Deployment controller adds to its ReplicaSets and their pods.
pub(crate) const HASH_LABEL: &str = "pod-template-hash";

/// `metadata.uid`.
pub(crate) fn uid(obj: &Value) -> &str {
    obj.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Whether `obj`'s controlling owner is the object with `owner_uid`.
pub(crate) fn controlled_by(obj: &Value, owner_uid: &str) -> bool {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter().any(|r| {
                r["uid"] == owner_uid && r.get("controller").and_then(Value::as_bool) == Some(true)
            })
        })
}

/// A controller owner reference to `owner` (of `api_version` and `kind`).
fn owner_reference(owner: &Value, api_version: &str, kind: &str) -> Value {
    json!([{
        "apiVersion": api_version, "kind": kind, "name": name(owner), "uid": uid(owner),
        "controller": true, "blockOwnerDeletion": true,
    }])
}

/// The replica count a Deployment or ReplicaSet asks for (`spec.replicas`, default 1).
pub(crate) fn replicas(obj: &Value) -> i64 {
    int_at(obj, "/spec/replicas").unwrap_or(1).max(0)
}

/// `maxSurge` of a rolling update against `replicas` (default 25%, rounded up as the controller rounds it).
fn max_surge(deployment: &Value, replicas: i64) -> i64 {
    match deployment.pointer("/spec/strategy/rollingUpdate/maxSurge") {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => s
            .strip_suffix('%')
            .and_then(|p| p.parse::<i64>().ok())
            .map_or(0, |p| (p * replicas + 99) / 100),
        _ if deployment
            .pointer("/spec/strategy/type")
            .and_then(Value::as_str)
            == Some("Recreate") =>
        {
            0
        }
        _ => (25 * replicas + 99) / 100,
    }
}

/// `template` with `label` set to `value` in its metadata labels.
fn labelled_template(template: &Value, label: &str, value: &str) -> Value {
    let mut template = template.clone();
    if let Some(map) = template.as_object_mut() {
        let metadata = map.entry("metadata").or_insert_with(|| json!({}));
        if let Some(metadata) = metadata.as_object_mut() {
            let labels = metadata.entry("labels").or_insert_with(|| json!({}));
            if let Some(labels) = labels.as_object_mut() {
                labels.insert(label.into(), json!(value));
            }
        }
    }
    template
}

/// The name of the ReplicaSet a Deployment wants for its current template.
pub(crate) fn replica_set_name(deployment: &Value) -> String {
    format!("{}-{}", name(deployment), template_hash(deployment))
}

/// The annotations the Deployment controller keeps on its ReplicaSets.
pub(crate) fn replica_set_annotations(deployment: &Value, revision: i64) -> Map<String, Value> {
    let want = replicas(deployment);
    let mut annotations = Map::new();
    annotations.insert(
        "deployment.kubernetes.io/desired-replicas".into(),
        json!(want.to_string()),
    );
    annotations.insert(
        "deployment.kubernetes.io/max-replicas".into(),
        json!((want + max_surge(deployment, want)).to_string()),
    );
    annotations.insert(
        "deployment.kubernetes.io/revision".into(),
        json!(revision.to_string()),
    );
    annotations
}

/// The ReplicaSet a Deployment creates for its current template, at `revision`.
pub(crate) fn replica_set_for(deployment: &Value, revision: i64) -> Value {
    let hash = template_hash(deployment);
    let template = labelled_template(
        deployment.pointer("/spec/template").unwrap_or(&Value::Null),
        HASH_LABEL,
        &hash,
    );
    let mut selector = deployment
        .pointer("/spec/selector")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(map) = selector.as_object_mut() {
        let labels = map.entry("matchLabels").or_insert_with(|| json!({}));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(HASH_LABEL.into(), json!(hash));
        }
    }
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": replica_set_name(deployment),
            "namespace": deployment.pointer("/metadata/namespace"),
            "labels": template.pointer("/metadata/labels"),
            "annotations": replica_set_annotations(deployment, revision),
            "ownerReferences": owner_reference(deployment, "apps/v1", "Deployment"),
        },
        "spec": {"replicas": replicas(deployment), "selector": selector, "template": template},
    })
}

/// The revision a ReplicaSet carries (0 when it has none).
pub(crate) fn revision(replica_set: &Value) -> i64 {
    replica_set
        .pointer("/metadata/annotations/deployment.kubernetes.io~1revision")
        .and_then(Value::as_str)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// The name of a ReplicaSet's pod in `slot`: five characters of the real controllers' alphabet.
pub(crate) fn pod_name(replica_set: &Value, slot: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut hash = fnv32(format!("{}/{slot}", uid(replica_set)).as_bytes());
    let suffix: String = (0..5)
        .map(|_| {
            let c = ALPHABET[(hash % 27) as usize];
            hash /= 27;
            char::from(c)
        })
        .collect();
    format!("{}-{suffix}", name(replica_set))
}

/// The Pod a ReplicaSet creates in `slot`.
pub(crate) fn pod_for(replica_set: &Value, slot: usize) -> Value {
    let template = replica_set
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_default();
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": pod_name(replica_set, slot),
            "namespace": replica_set.pointer("/metadata/namespace"),
            "labels": template.pointer("/metadata/labels"),
            "annotations": template.pointer("/metadata/annotations"),
            "ownerReferences": owner_reference(replica_set, "apps/v1", "ReplicaSet"),
        },
        "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn deployment() -> Value {
        json!({"metadata": {"name": "web", "namespace": "default", "uid": "d1"},
               "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    }

    #[test]
    fn a_deployment_s_replica_set_carries_the_template_hash_and_its_owner() {
        let d = deployment();
        let rs = replica_set_for(&d, 3);
        let hash = template_hash(&d);
        assert_eq!(rs["metadata"]["name"], format!("web-{hash}"));
        assert_eq!(rs["metadata"]["labels"][HASH_LABEL], hash);
        assert_eq!(
            rs["spec"]["selector"]["matchLabels"],
            json!({"app": "web", "pod-template-hash": hash})
        );
        assert_eq!(
            rs["spec"]["template"]["metadata"]["labels"][HASH_LABEL],
            hash
        );
        assert_eq!(rs["spec"]["replicas"], 4);
        let annotations = &rs["metadata"]["annotations"];
        assert_eq!(
            annotations["deployment.kubernetes.io/desired-replicas"],
            "4"
        );
        assert_eq!(annotations["deployment.kubernetes.io/max-replicas"], "5");
        assert_eq!(revision(&rs), 3);
        assert!(controlled_by(&rs, "d1"));
        assert!(!controlled_by(&rs, "other"));
    }

    #[test]
    fn pods_are_named_per_slot_and_owned_by_their_replica_set() {
        let mut rs = replica_set_for(&deployment(), 1);
        rs["metadata"]["uid"] = json!("rs1");
        let (a, b) = (pod_for(&rs, 0), pod_for(&rs, 1));
        let prefix = format!("{}-", rs["metadata"]["name"].as_str().unwrap_or(""));
        for pod in [&a, &b] {
            let name = pod["metadata"]["name"].as_str().unwrap_or("");
            assert!(
                name.starts_with(&prefix) && name.len() == prefix.len() + 5,
                "{name}"
            );
            assert!(controlled_by(pod, "rs1"));
            assert_eq!(pod["metadata"]["labels"]["app"], "web");
        }
        assert_ne!(a["metadata"]["name"], b["metadata"]["name"]);
        assert_eq!(pod_for(&rs, 0)["metadata"]["name"], a["metadata"]["name"]);
    }
}
