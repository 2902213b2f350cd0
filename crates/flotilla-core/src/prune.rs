//! Manifest normalisation (Karmada's "prune irrelevant fields"): what is removed from an object before it goes
//! into a Work, and from an observed member object before comparing it with the desired one: the metadata the
//! API server owns, `status`, and per kind the fields a member's controllers fill in.
//!
//! Keyed by kind name only (group and version are ignored), as Karmada does.

use serde_json::Value;

/// Metadata fields the API server owns.
const SERVER_METADATA: [&str; 10] = [
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "managedFields",
    "resourceVersion",
    "selfLink",
    "uid",
    "ownerReferences",
    "finalizers",
];

const JOB_SELECTOR_LABELS: [&str; 2] = ["controller-uid", "batch.kubernetes.io/controller-uid"];
const JOB_TEMPLATE_LABELS: [&str; 4] = [
    "controller-uid",
    "job-name",
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
];
const SERVICE_ACCOUNT_TOKEN: &str = "kubernetes.io/service-account-token";

/// Removes server-owned metadata, `status`, and the per-kind fields member clusters fill in.
pub fn prune_irrelevant_fields(object: &mut Value) {
    let Some(root) = object.as_object_mut() else {
        return;
    };
    root.remove("status");
    if let Some(meta) = root.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in SERVER_METADATA {
            meta.remove(field);
        }
    }
    let kind = root
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    match kind.as_str() {
        "Deployment" => remove_annotations(
            object,
            &[
                "deployment.kubernetes.io/revision",
                "deployment.kubernetes.io/revision-history",
            ],
        ),
        "Job" => prune_job(object),
        "Secret" => prune_secret(object),
        "ServiceAccount" => prune_service_account(object),
        "Service" => prune_service(object),
        "PersistentVolumeClaim" => {
            let selected = object
                .pointer("/metadata/annotations/volume.kubernetes.io~1selected-node")
                .and_then(Value::as_str)
                .is_some_and(|node| !node.is_empty());
            if selected {
                remove_annotations(object, &["volume.kubernetes.io/selected-node"]);
            }
        }
        _ => {}
    }
}

/// Removes a Job's `spec.ttlSecondsAfterFinished` (done at every controller call site of the prune).
pub(crate) fn remove_job_ttl(object: &mut Value) {
    if object.get("kind").and_then(Value::as_str) == Some("Job")
        && let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut)
    {
        spec.remove("ttlSecondsAfterFinished");
    }
}

/// Both steps of the Work path: [`prune_irrelevant_fields`] then [`remove_job_ttl`].
pub fn prune_for_work(object: &mut Value) {
    prune_irrelevant_fields(object);
    remove_job_ttl(object);
}

fn remove_annotations(object: &mut Value, keys: &[&str]) {
    if let Some(map) = object
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        for key in keys {
            map.remove(*key);
        }
    }
}

fn prune_job(object: &mut Value) {
    let manual = object
        .pointer("/spec/manualSelector")
        .and_then(Value::as_bool)
        == Some(true);
    if manual {
        return;
    }
    if let Some(map) = object
        .pointer_mut("/spec/selector/matchLabels")
        .and_then(Value::as_object_mut)
    {
        for key in JOB_SELECTOR_LABELS {
            map.remove(key);
        }
    }
    if let Some(map) = object
        .pointer_mut("/spec/template/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        for key in JOB_TEMPLATE_LABELS {
            map.remove(key);
        }
    }
}

fn prune_secret(object: &mut Value) {
    if object.get("type").and_then(Value::as_str) != Some(SERVICE_ACCOUNT_TOKEN) {
        return;
    }
    remove_annotations(object, &["kubernetes.io/service-account.uid"]);
    if let Some(root) = object.as_object_mut() {
        root.insert("data".to_owned(), Value::Null);
    }
}

fn prune_service_account(object: &mut Value) {
    let prefix = format!(
        "{}-token-",
        object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    );
    let Some(secrets) = object.get_mut("secrets").and_then(Value::as_array_mut) else {
        return;
    };
    // Karmada removes while indexing forward, so the element right after a removed one is never examined;
    // two adjacent token secrets therefore leave the second one. Kept for identical Works.
    let mut i = 0;
    while i < secrets.len() {
        let is_token = secrets[i]
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| n.starts_with(&prefix));
        if is_token {
            secrets.remove(i);
        }
        i += 1;
    }
}

fn prune_service(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let allocated = spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .is_some_and(|ip| ip != "None");
    if allocated {
        spec.remove("clusterIP");
        spec.remove("clusterIPs");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn server_metadata_and_status_are_removed() {
        let mut obj = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "d", "uid": "u", "resourceVersion": "3", "generation": 2,
                         "creationTimestamp": "t", "managedFields": [], "ownerReferences": [], "finalizers": ["f"],
                         "labels": {"a": "b"}},
            "data": {"k": "v"}, "status": {"x": 1}
        });
        prune_for_work(&mut obj);
        assert_eq!(
            obj,
            json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c", "namespace": "d", "labels": {"a": "b"}},
                "data": {"k": "v"}
            })
        );
    }

    #[test]
    fn per_kind_fields_are_removed() {
        let mut deploy = json!({"kind": "Deployment", "metadata": {"annotations": {
            "deployment.kubernetes.io/revision": "3", "keep": "me"}}});
        prune_irrelevant_fields(&mut deploy);
        assert_eq!(
            deploy,
            json!({"kind": "Deployment", "metadata": {"annotations": {"keep": "me"}}})
        );

        let mut job = json!({"kind": "Job", "spec": {
            "ttlSecondsAfterFinished": 5,
            "selector": {"matchLabels": {"controller-uid": "x", "app": "a"}},
            "template": {"metadata": {"labels": {"job-name": "j", "batch.kubernetes.io/job-name": "j", "app": "a"}}}}});
        prune_for_work(&mut job);
        assert_eq!(
            job,
            json!({"kind": "Job", "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}}}})
        );

        let mut manual = json!({"kind": "Job", "spec": {"manualSelector": true,
            "selector": {"matchLabels": {"controller-uid": "x"}}}});
        prune_irrelevant_fields(&mut manual);
        assert_eq!(
            manual.pointer("/spec/selector/matchLabels/controller-uid"),
            Some(&json!("x"))
        );

        let mut svc = json!({"kind": "Service", "spec": {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "ports": []}});
        prune_irrelevant_fields(&mut svc);
        assert_eq!(svc, json!({"kind": "Service", "spec": {"ports": []}}));
        let mut headless = json!({"kind": "Service", "spec": {"clusterIP": "None"}});
        prune_irrelevant_fields(&mut headless);
        assert_eq!(
            headless,
            json!({"kind": "Service", "spec": {"clusterIP": "None"}})
        );

        let mut token = json!({"kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"annotations": {"kubernetes.io/service-account.uid": "u"}}, "data": {"token": "x"}});
        prune_irrelevant_fields(&mut token);
        assert_eq!(
            token,
            json!({"kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"annotations": {}}, "data": null})
        );

        let mut pvc = json!({"kind": "PersistentVolumeClaim",
            "metadata": {"annotations": {"volume.kubernetes.io/selected-node": "n1"}}});
        prune_irrelevant_fields(&mut pvc);
        assert_eq!(
            pvc,
            json!({"kind": "PersistentVolumeClaim", "metadata": {"annotations": {}}})
        );
    }

    #[test]
    fn service_account_token_secrets_skip_the_element_after_a_removal() {
        let mut sa = json!({"kind": "ServiceAccount", "metadata": {"name": "sa"}, "secrets": [
            {"name": "sa-token-1"}, {"name": "sa-token-2"}, {"name": "other"}, {"name": "sa-token-3"}]});
        prune_irrelevant_fields(&mut sa);
        assert_eq!(
            sa["secrets"],
            json!([{"name": "sa-token-2"}, {"name": "other"}])
        );
    }
}
