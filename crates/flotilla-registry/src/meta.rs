//! Object metadata semantics: server-set fields, omitempty normalisation, generation rules and
//! the status/spec split on update.

use rand::Rng;
use serde_json::{Map, Value, json};

use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};

/// Which endpoint a write came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// The main resource.
    Main,
    /// The `status` subresource.
    Status,
    /// A Namespace's `finalize` subresource: like the main endpoint, but `spec.finalizers` may change.
    Finalize,
    /// A CertificateSigningRequest's `approval` subresource: only `status.conditions` change.
    Approval,
}

impl Endpoint {
    /// The subresource a write through this endpoint is recorded under in `managedFields`.
    pub(crate) fn subresource(self) -> Option<&'static str> {
        match self {
            Self::Status => Some("status"),
            Self::Approval => Some("approval"),
            Self::Main | Self::Finalize => None,
        }
    }
}

/// Current time as RFC 3339 UTC with second precision.
pub fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A fresh RFC 4122 uid.
pub(crate) fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `generateName` expansion: prefix cut to 58 chars plus 5 random characters.
pub(crate) fn generate_name(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let cut: String = prefix.chars().take(58).collect();
    let mut rng = rand::rng();
    let suffix: String = (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("{cut}{suffix}")
}

/// The object's metadata map, created if missing.
pub(crate) fn meta_mut(obj: &mut Value) -> ApiResult<&mut Map<String, Value>> {
    let map = obj
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("the object is not a JSON object"))?;
    let meta = map.entry("metadata").or_insert_with(|| json!({}));
    if meta.is_null() {
        *meta = json!({});
    }
    meta.as_object_mut()
        .ok_or_else(|| ApiError::bad_request("metadata must be an object"))
}

/// A metadata string field.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

/// Finalizers of an object.
pub(crate) fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the object is being deleted.
pub fn is_deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// Omits empty optional metadata the way Go's `omitempty` does; load-bearing for JSON-patch `test` ops.
pub(crate) fn normalize(obj: &mut Value) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    meta.retain(|k, v| {
        if v.is_null() || k == "selfLink" {
            return false;
        }
        match k.as_str() {
            "finalizers" | "ownerReferences" | "managedFields" => {
                !v.as_array().is_some_and(Vec::is_empty)
            }
            "labels" | "annotations" => !v.as_object().is_some_and(Map::is_empty),
            "generateName" | "namespace" => !v.as_str().is_some_and(str::is_empty),
            _ => true,
        }
    });
}

/// Everything outside `metadata`, `status`, `apiVersion` and `kind`: what generation tracks.
fn spec_part(obj: &Value) -> Map<String, Value> {
    obj.as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| {
                    !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// Sets the server-owned fields of an object about to be created.
pub(crate) fn prepare_create(info: &ResourceInfo, obj: &mut Value) -> ApiResult<()> {
    let generation = info.generation;
    let drop_status = info.status;
    let meta = meta_mut(obj)?;
    if meta
        .get("resourceVersion")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
    {
        return Err(ApiError::internal(
            "resourceVersion should not be set on objects to be created",
        ));
    }
    meta.remove("resourceVersion");
    meta.insert("uid".into(), json!(new_uid()));
    meta.insert("creationTimestamp".into(), json!(now()));
    meta.remove("deletionTimestamp");
    meta.remove("deletionGracePeriodSeconds");
    if generation {
        meta.insert("generation".into(), json!(1));
    } else {
        meta.remove("generation");
    }
    if drop_status && let Some(m) = obj.as_object_mut() {
        m.remove("status");
    }
    normalize(obj);
    Ok(())
}

/// Builds the object an update stores from the stored `old` and the request's `new`.
///
/// Errors: 409 on a uid precondition mismatch (finalizers added during deletion are refused by
/// `crate::write::validate`).
pub(crate) fn merge_update(
    info: &ResourceInfo,
    old: &Value,
    mut new: Value,
    endpoint: Endpoint,
) -> ApiResult<Value> {
    let name = meta_str(old, "name").unwrap_or_default().to_string();
    if let Some(uid) = meta_str(&new, "uid").filter(|u| !u.is_empty())
        && Some(uid) != meta_str(old, "uid")
    {
        return Err(ApiError::conflict_msg(
            &info.plural,
            &info.group,
            &name,
            &format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                meta_str(old, "uid").unwrap_or_default()
            ),
        ));
    }
    if let Some(kept) = subresource_keeps_metadata(info, endpoint) {
        // These kinds' status (and approval) strategies reset the spec and only the metadata fields `kept`
        // names: the request's other metadata is taken as on the main endpoint, and its status.
        let mut candidate = old.clone();
        if let Some(m) = candidate.as_object_mut() {
            let mut metadata = new.get("metadata").cloned().unwrap_or_else(|| json!({}));
            if let Some(meta) = metadata.as_object_mut() {
                for field in kept {
                    match old.get("metadata").and_then(|m| m.get(*field)) {
                        Some(value) => meta.insert((*field).into(), value.clone()),
                        None => meta.remove(*field),
                    };
                }
            }
            m.insert("metadata".into(), metadata);
        }
        let mut out = merge_update(info, old, candidate, Endpoint::Main)?;
        if let Some(m) = out.as_object_mut() {
            match new.get("status").cloned() {
                Some(s) if !s.is_null() => m.insert("status".into(), s),
                _ => m.remove("status"),
            };
        }
        return Ok(out);
    }
    if matches!(endpoint, Endpoint::Status | Endpoint::Approval) {
        // Only status changes through /status (and /approval, which `crate::kinds::access::certificates` narrows further); everything else comes from the stored object.
        let mut out = old.clone();
        if let Some(m) = out.as_object_mut() {
            match new.get("status").cloned() {
                Some(s) if !s.is_null() => {
                    m.insert("status".into(), s);
                }
                _ => {
                    m.remove("status");
                }
            }
        }
        return Ok(out);
    }
    if info.status
        && let Some(m) = new.as_object_mut()
    {
        match old.get("status") {
            Some(s) => {
                m.insert("status".into(), s.clone());
            }
            None => {
                m.remove("status");
            }
        }
    }
    let old_meta = old
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let spec_changed = spec_part(old) != spec_part(&new);
    let meta = meta_mut(&mut new)?;
    for key in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old_meta.get(key) {
            Some(v) => {
                meta.insert(key.into(), v.clone());
            }
            None => {
                meta.remove(key);
            }
        }
    }
    // The store sets the new resourceVersion when it persists; until then (and in a dry run's response, as
    // upstream answers one) the object carries the version it was derived from.
    match old_meta.get("resourceVersion") {
        Some(v) => {
            meta.insert("resourceVersion".into(), v.clone());
        }
        None => {
            meta.remove("resourceVersion");
        }
    }
    if info.generation && spec_changed {
        let g = old_meta
            .get("generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta.insert("generation".into(), json!(g + 1));
    }
    normalize(&mut new);
    Ok(new)
}

/// For the built-in kinds whose status endpoint (a CertificateSigningRequest's approval endpoint too) also
/// writes metadata, as kube-apiserver v1.37's strategies do, the metadata fields it keeps from the stored object
/// all the same: a Deployment's labels, a Pod's owner references (old kubelets corrupted them), nothing for the
/// rest (the differential corpus' `status-metadata` case checks each against kube-apiserver). `None` for the
/// kinds whose subresource keeps all the stored metadata: custom resources, APIServices and the main endpoint.
fn subresource_keeps_metadata(
    info: &ResourceInfo,
    endpoint: Endpoint,
) -> Option<&'static [&'static str]> {
    if info.kind_info().is_custom() {
        return None;
    }
    match (endpoint, info.group.as_str(), info.kind.as_str()) {
        (Endpoint::Status, "apps", "Deployment") => Some(&["labels"]),
        (Endpoint::Status, "", "Pod") => Some(&["ownerReferences"]),
        (Endpoint::Status, "apps", "ReplicaSet" | "StatefulSet" | "DaemonSet")
        | (Endpoint::Status, "batch", "Job" | "CronJob")
        | (
            Endpoint::Status,
            "",
            "Service"
            | "PersistentVolumeClaim"
            | "PersistentVolume"
            | "ReplicationController"
            | "ResourceQuota"
            | "Namespace"
            | "Node",
        )
        | (Endpoint::Status, "autoscaling", "HorizontalPodAutoscaler")
        | (Endpoint::Status, "policy", "PodDisruptionBudget")
        | (Endpoint::Status, "networking.k8s.io", "Ingress")
        | (
            Endpoint::Status | Endpoint::Approval,
            "certificates.k8s.io",
            "CertificateSigningRequest",
        )
        | (Endpoint::Status, "apiextensions.k8s.io", "CustomResourceDefinition") => Some(&[]),
        _ => None,
    }
}

/// Whether two stored forms are the same apart from resourceVersion (no-op update suppression).
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
            m.remove("managedFields");
        }
        v
    };
    strip(a) == strip(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn create_sets_server_fields_and_drops_status() {
        let c = Catalog::with_builtins();
        let info = c.get("apps", "v1", "deployments").expect("deployments");
        let mut obj = json!({"metadata": {"name": "a", "finalizers": [], "labels": {}}, "spec": {"replicas": 1}, "status": {"replicas": 9}});
        prepare_create(&info, &mut obj).expect("prepare");
        assert_eq!(obj["metadata"]["generation"], 1);
        assert!(obj["metadata"]["uid"].is_string());
        assert!(obj.get("status").is_none());
        assert!(obj["metadata"].get("finalizers").is_none());
        assert!(obj["metadata"].get("labels").is_none());
        let ts = obj["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or_default();
        assert!(ts.ends_with('Z') && ts.len() == 20);
    }

    #[test]
    fn status_writes_keep_or_take_metadata_as_each_kind_does() {
        let c = Catalog::with_builtins();
        let old = json!({"metadata": {"name": "a", "uid": "u", "generation": 1, "labels": {"l": "old"}, "annotations": {"a": "old"}},
                         "spec": {"replicas": 1}, "status": {"replicas": 1}});
        let new = json!({"metadata": {"name": "a", "uid": "u", "labels": {"l": "new"}, "annotations": {"a": "new"}},
                         "spec": {"replicas": 9}, "status": {"replicas": 2}});
        let status_write = |group: &str, plural: &str| {
            let info = c.get(group, "v1", plural).expect("served");
            merge_update(&info, &old, new.clone(), Endpoint::Status).expect("update")
        };
        let deployment = status_write("apps", "deployments");
        assert_eq!(deployment["metadata"]["labels"]["l"], "old");
        assert_eq!(deployment["metadata"]["annotations"]["a"], "new");
        assert_eq!(deployment["spec"]["replicas"], 1);
        assert_eq!(deployment["status"]["replicas"], 2);
        assert_eq!(deployment["metadata"]["generation"], 1);
        let replicaset = status_write("apps", "replicasets");
        assert_eq!(replicaset["metadata"]["labels"]["l"], "new");
        assert_eq!(replicaset["metadata"]["annotations"]["a"], "new");
        assert_eq!(replicaset["spec"]["replicas"], 1);
        let namespace = status_write("", "namespaces");
        assert_eq!(namespace["metadata"]["labels"]["l"], "new");
        // A Pod's owner references stay (old kubelets corrupted them).
        let owned = |mut v: Value, owner: &str| {
            v["metadata"]["ownerReferences"] = json!([{"name": owner}]);
            v
        };
        let pods = c.get("", "v1", "pods").expect("served");
        let pod = merge_update(
            &pods,
            &owned(old.clone(), "keep"),
            owned(new.clone(), "lose"),
            Endpoint::Status,
        )
        .expect("update");
        assert_eq!(
            pod["metadata"]["ownerReferences"],
            json!([{"name": "keep"}])
        );
        assert_eq!(pod["metadata"]["annotations"]["a"], "new");
        // A kind without a listed strategy keeps all the stored metadata.
        let apiservices = c
            .get("apiregistration.k8s.io", "v1", "apiservices")
            .expect("served");
        let apiservice =
            merge_update(&apiservices, &old, new.clone(), Endpoint::Status).expect("update");
        assert_eq!(apiservice["metadata"]["labels"]["l"], "old");
        assert_eq!(apiservice["metadata"]["annotations"]["a"], "old");
    }

    #[test]
    fn update_bumps_generation_only_on_spec_change_and_keeps_status() {
        let c = Catalog::with_builtins();
        let info = c.get("apps", "v1", "deployments").expect("deployments");
        let old = json!({"metadata": {"name": "a", "uid": "u", "generation": 1, "creationTimestamp": "t"}, "spec": {"replicas": 1}, "status": {"replicas": 1}});
        let labels = json!({"metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"replicas": 1}, "status": {"replicas": 5}});
        let out = merge_update(&info, &old, labels, Endpoint::Main).expect("update");
        assert_eq!(out["metadata"]["generation"], 1);
        assert_eq!(out["status"]["replicas"], 1);
        assert_eq!(out["metadata"]["uid"], "u");
        let spec = json!({"metadata": {"name": "a"}, "spec": {"replicas": 2}});
        assert_eq!(
            merge_update(&info, &old, spec, Endpoint::Main).expect("update")["metadata"]["generation"],
            2
        );
        let status = json!({"metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"replicas": 7}, "status": {"replicas": 3}});
        let out = merge_update(&info, &old, status, Endpoint::Status).expect("status");
        assert_eq!(out["status"]["replicas"], 3);
        assert_eq!(out["spec"]["replicas"], 1);
        assert!(out["metadata"].get("labels").is_none());
    }

    #[test]
    fn generated_names_have_five_char_suffix() {
        let n = generate_name("web-");
        assert_eq!(n.len(), 9);
        assert!(n.starts_with("web-"));
    }
}
