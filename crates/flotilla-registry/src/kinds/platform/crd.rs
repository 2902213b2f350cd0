//! CustomResourceDefinitions: validation and defaulting of the CRD object, and the catalogue
//! entries a CRD contributes. The naming/establishing/cleanup controller is in `controllers::crd`.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::meta;
use crate::resource::{ResourceInfo, ScalePaths};
use crate::status::{ApiError, ApiResult, Cause};
use flotilla_store::ResKey;

/// Finalizer the server adds when a CRD is deleted, removed once every custom resource is gone.
/// Storage key of CRDs.
pub(crate) fn key() -> ResKey {
    ResKey::new("apiextensions.k8s.io", "customresourcedefinitions")
}

pub(crate) const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

fn cause(reason: &str, field: &str, message: &str) -> Cause {
    Cause {
        reason: reason.into(),
        field: field.into(),
        message: message.into(),
    }
}

/// Fills defaults (`singular`, `listKind`, `conversion`) and checks the CRD (422 on errors).
pub(crate) fn validate(obj: &mut Value) -> ApiResult<()> {
    let name = meta::meta_str(obj, "name").unwrap_or("").to_string();
    let mut causes = Vec::new();
    let spec = obj.get_mut("spec").and_then(Value::as_object_mut);
    let Some(spec) = spec else {
        return Err(ApiError::invalid(
            "CustomResourceDefinition",
            "apiextensions.k8s.io",
            &name,
            vec![cause("FieldValueRequired", "spec", "Required value")],
        ));
    };
    let group = spec
        .get("group")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if group.is_empty() {
        causes.push(cause("FieldValueRequired", "spec.group", "Required value"));
    } else if !group.contains('.') {
        causes.push(cause(
            "FieldValueInvalid",
            "spec.group",
            "Invalid value: should be a domain with at least one dot",
        ));
    }
    match spec.get("scope").and_then(Value::as_str) {
        Some("Namespaced" | "Cluster") => {}
        _ => causes.push(cause(
            "FieldValueNotSupported",
            "spec.scope",
            "Unsupported value: supported values: \"Cluster\", \"Namespaced\"",
        )),
    }
    let names = spec.entry("names").or_insert_with(|| json!({}));
    let plural = names
        .get("plural")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = names
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if plural.is_empty() {
        causes.push(cause(
            "FieldValueRequired",
            "spec.names.plural",
            "Required value",
        ));
    }
    if kind.is_empty() {
        causes.push(cause(
            "FieldValueRequired",
            "spec.names.kind",
            "Required value",
        ));
    }
    if let Some(n) = names.as_object_mut() {
        if n.get("singular")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            n.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if n.get("listKind")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            n.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    if !plural.is_empty() && !group.is_empty() && name != format!("{plural}.{group}") {
        causes.push(cause(
            "FieldValueInvalid",
            "metadata.name",
            &format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        causes.push(cause(
            "FieldValueInvalid",
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version",
        ));
    }
    let storage = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .count();
    if !versions.is_empty() && storage != 1 {
        causes.push(cause(
            "FieldValueInvalid",
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version",
        ));
    }
    for (i, v) in versions.iter().enumerate() {
        if v.get("name")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            causes.push(cause(
                "FieldValueRequired",
                &format!("spec.versions[{i}].name"),
                "Required value",
            ));
        }
        match v.pointer("/schema/openAPIV3Schema") {
            Some(s) if s.is_object() => {
                if s.get("type").and_then(Value::as_str) != Some("object") {
                    causes.push(cause(
                        "FieldValueRequired",
                        &format!("spec.versions[{i}].schema.openAPIV3Schema.type"),
                        "Required value: must be object at the root",
                    ));
                }
            }
            _ => causes.push(cause(
                "FieldValueRequired",
                &format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "Required value: schemas are required",
            )),
        }
    }
    let conv = spec
        .entry("conversion")
        .or_insert_with(|| json!({"strategy": "None"}));
    match conv.get("strategy").and_then(Value::as_str) {
        Some("None") => {}
        None => conv["strategy"] = json!("None"),
        Some(other) => causes.push(cause(
            "FieldValueNotSupported",
            "spec.conversion.strategy",
            &format!("Unsupported value: \"{other}\": only \"None\" is supported by this server"),
        )),
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            "CustomResourceDefinition",
            "apiextensions.k8s.io",
            &name,
            causes,
        ))
    }
}

fn storage_version(obj: &Value) -> Option<String> {
    obj.pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

/// Create-time preparation: validate, default, reset status.
pub(crate) fn prepare_create(obj: &mut Value) -> ApiResult<()> {
    validate(obj)?;
    let sv = storage_version(obj).unwrap_or_default();
    obj["status"] = json!({"storedVersions": [sv], "conditions": [], "acceptedNames": {"plural": "", "kind": ""}});
    Ok(())
}

/// Update-time checks: validation plus immutable group, scope and name.
pub(crate) fn validate_update(old: &Value, new: &mut Value) -> ApiResult<()> {
    validate(new)?;
    let name = meta::meta_str(new, "name").unwrap_or("").to_string();
    for (field, ptr) in [("spec.group", "/spec/group"), ("spec.scope", "/spec/scope")] {
        if old.pointer(ptr) != new.pointer(ptr) {
            return Err(ApiError::invalid_field(
                "CustomResourceDefinition",
                "apiextensions.k8s.io",
                &name,
                "FieldValueInvalid",
                field,
                "Invalid value: field is immutable",
            ));
        }
    }
    // storedVersions grows when the storage version changes.
    if let Some(sv) = storage_version(new)
        && let Some(st) = new.get_mut("status").and_then(Value::as_object_mut)
    {
        let stored = st.entry("storedVersions").or_insert_with(|| json!([]));
        if let Some(a) = stored.as_array_mut()
            && !a.iter().any(|v| v.as_str() == Some(sv.as_str()))
        {
            a.push(json!(sv));
        }
    }
    Ok(())
}

/// The catalogue entries of a CRD: one per served version.
pub(crate) fn resources(crd: &Arc<Value>) -> Vec<ResourceInfo> {
    let s = |p: &str| {
        crd.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let strings = |p: &str| -> Vec<String> {
        crd.pointer(p)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let Some(storage) = storage_version(crd) else {
        return Vec::new();
    };
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
        .filter_map(|v| {
            let name = v.get("name")?.as_str()?.to_string();
            let scale = v.pointer("/subresources/scale").map(|sc| ScalePaths {
                spec_replicas: sc
                    .get("specReplicasPath")
                    .and_then(Value::as_str)
                    .unwrap_or(".spec.replicas")
                    .to_string(),
                status_replicas: sc
                    .get("statusReplicasPath")
                    .and_then(Value::as_str)
                    .unwrap_or(".status.replicas")
                    .to_string(),
                label_selector: sc
                    .get("labelSelectorPath")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            });
            Some(ResourceInfo {
                group: s("/spec/group"),
                version: name,
                storage_version: storage.clone(),
                kind: s("/spec/names/kind"),
                list_kind: s("/spec/names/listKind"),
                plural: s("/spec/names/plural"),
                singular: s("/spec/names/singular"),
                namespaced: s("/spec/scope") == "Namespaced",
                short_names: strings("/spec/names/shortNames"),
                categories: strings("/spec/names/categories"),
                status: v.pointer("/subresources/status").is_some(),
                scale,
                generation: true,
                custom: true,
                crd: Some(crd.clone()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd() -> Value {
        json!({"metadata": {"name": "foos.example.io"}, "spec": {"group": "example.io", "scope": "Namespaced",
            "names": {"plural": "foos", "kind": "Foo"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}},
                          "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"}}}]}})
    }

    #[test]
    fn valid_crd_gets_defaults_and_resources() {
        let mut c = crd();
        validate(&mut c).expect("valid");
        assert_eq!(c["spec"]["names"]["singular"], "foo");
        assert_eq!(c["spec"]["names"]["listKind"], "FooList");
        assert_eq!(c["spec"]["conversion"]["strategy"], "None");
        let r = resources(&Arc::new(c));
        assert_eq!(r.len(), 1);
        assert!(r[0].status && r[0].namespaced && r[0].custom);
        assert_eq!(
            r[0].scale.as_ref().map(|s| s.spec_replicas.as_str()),
            Some(".spec.size")
        );
    }

    #[test]
    fn invalid_crds_are_422() {
        let mut c = crd();
        c["metadata"]["name"] = json!("wrong.example.io");
        c["spec"]["versions"][0]["storage"] = json!(false);
        let e = validate(&mut c).expect_err("invalid");
        assert_eq!(e.code, 422);
        let causes = e.to_status()["details"]["causes"].as_array().map(Vec::len);
        assert_eq!(causes, Some(2));
    }
}
