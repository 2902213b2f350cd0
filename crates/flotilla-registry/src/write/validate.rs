//! Object validation on every write: the protocol modules' ObjectMeta validation
//! (`crate::validation`) on create and update and, for custom resources, their version's OpenAPI schema
//! (`crate::schema`), turned into the one 422 Status the real server answers with.

use serde_json::Value;

use crate::meta;
use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};
use crate::validation::{invalid_status, validate_object_meta, validate_object_meta_update};

/// Validates an object about to be stored (`old` is the stored object on updates).
///
/// # Errors
/// `422 Invalid` naming every offending field (name, labels, annotations, finalizers, owner references,
/// managed fields; on updates also identity changes and finalizers added during deletion; the schema's
/// constraints for custom resources; Event rules, `crate::validation::validate_event`).
pub(crate) fn object(info: &ResourceInfo, obj: &Value, old: Option<&Value>) -> ApiResult<()> {
    let kind = info.kind_info();
    let mut errors = validate_object_meta(obj, &kind, crate::kinds::name_rule(&kind));
    if let Some(old) = old {
        errors.extend(validate_object_meta_update(obj, old));
    }
    if let Some(schema) = kind.crd_schema() {
        errors.extend(crate::schema::validate(obj, schema));
    }
    if !info.custom && info.kind == "Event" && info.plural == "events" {
        // Both Event APIs hold the core shape by now; the newer API validates strictly.
        let strict = crate::kinds::core::events::serves_view(info);
        errors.extend(crate::validation::validate_event(obj, old, strict));
    }
    if crate::kinds::access::certificates::serves(info) {
        errors.extend(crate::kinds::access::certificates::validate(obj, old));
    }
    if errors.is_empty() {
        return Ok(());
    }
    let name = meta::meta_str(obj, "name").unwrap_or("");
    Err(ApiError::from(invalid_status(
        &info.kind,
        &info.group,
        name,
        &errors,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use serde_json::json;

    #[test]
    fn bad_names_labels_and_owner_refs_are_422() {
        let c = Catalog::with_builtins();
        let cm = c.get("", "v1", "configmaps").expect("configmaps");
        let ok = json!({"metadata": {"name": "ok.name", "namespace": "default"}});
        assert!(object(&cm, &ok, None).is_ok());
        let bad = json!({"metadata": {"name": "Bad_Name", "namespace": "default"}});
        assert_eq!(object(&cm, &bad, None).map_err(|e| e.code).err(), Some(422));
        let ns = c.get("", "v1", "namespaces").expect("namespaces");
        assert!(object(&ns, &json!({"metadata": {"name": "a.b"}}), None).is_err());
        let bad_label = json!({"metadata": {"name": "x", "namespace": "default", "labels": {"a": "has space"}}});
        assert!(object(&cm, &bad_label, None).is_err());
        let refs = json!({"metadata": {"name": "x", "namespace": "default", "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n"}]}});
        let e = object(&cm, &refs, None).expect_err("uid required");
        assert!(e.message.contains("ownerReferences.uid"), "{}", e.message);
        let rbac = c
            .get("rbac.authorization.k8s.io", "v1", "clusterroles")
            .expect("clusterroles");
        assert!(object(&rbac, &json!({"metadata": {"name": "system:admin"}}), None).is_ok());
    }

    #[test]
    fn no_new_finalizers_while_deleting() {
        let c = Catalog::with_builtins();
        let info = c.get("", "v1", "configmaps").expect("configmaps");
        let old = json!({"metadata": {"name": "a", "namespace": "d", "deletionTimestamp": "t", "finalizers": ["a/b"]}});
        let new = json!({"metadata": {"name": "a", "namespace": "d", "deletionTimestamp": "t", "finalizers": ["a/b", "c/d"]}});
        let e = object(&info, &new, Some(&old)).expect_err("new finalizer refused");
        assert_eq!(e.code, 422);
        assert!(e.message.contains("no new finalizers"), "{}", e.message);
        let remove = json!({"metadata": {"name": "a", "namespace": "d", "deletionTimestamp": "t"}});
        assert!(object(&info, &remove, Some(&old)).is_ok());
    }
}
