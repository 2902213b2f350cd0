//! Per-kind write behaviour the generic pipeline cannot express: Namespace lifecycle fields, Secret
//! `stringData`, CRD preparation.

use std::sync::Arc;

use base64::Engine;
use serde_json::{Value, json};

use crate::catalog::ResourceInfo;
use crate::meta::{self, Endpoint};
use crate::server::Ctx;
use crate::status::{ApiError, ApiResult};

/// Namespaces that may never be deleted.
pub const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];
/// Label every namespace carries with its own name.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

fn is(info: &ResourceInfo, group: &str, plural: &str) -> bool {
    !info.custom && info.group == group && info.plural == plural
}

fn set_namespace_label(obj: &mut Value) -> ApiResult<()> {
    let name = meta::meta_str(obj, "name").unwrap_or("").to_string();
    let m = meta::meta_mut(obj)?;
    let labels = m.entry("labels").or_insert_with(|| json!({}));
    if !labels.is_object() {
        *labels = json!({});
    }
    labels[NAMESPACE_NAME_LABEL] = json!(name);
    Ok(())
}

fn merge_string_data(obj: &mut Value) {
    let Some(m) = obj.as_object_mut() else { return };
    if let Some(Value::Object(sd)) = m.remove("stringData") {
        let data = m.entry("data").or_insert_with(|| json!({}));
        if !data.is_object() {
            *data = json!({});
        }
        for (k, v) in sd {
            let s = v.as_str().unwrap_or("").to_string();
            data[k] = json!(base64::engine::general_purpose::STANDARD.encode(s.as_bytes()));
        }
    }
    m.entry("type").or_insert_with(|| json!("Opaque"));
}

/// Adjusts a new object after the generic server fields are set.
pub fn on_create(ctx: &Ctx, info: &ResourceInfo, obj: &mut Value) -> ApiResult<()> {
    if is(info, "", "namespaces") {
        set_namespace_label(obj)?;
        if obj.pointer("/spec/finalizers").is_none() {
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
        }
        obj["status"] = json!({"phase": "Active"});
    } else if is(info, "", "secrets") {
        merge_string_data(obj);
    } else if is(info, "apiextensions.k8s.io", "customresourcedefinitions") {
        crate::crd::prepare_create(ctx, obj)?;
    }
    Ok(())
}

/// Adjusts an updated object (after the status/spec split).
pub fn on_update(
    ctx: &Ctx,
    info: &ResourceInfo,
    old: &Arc<Value>,
    new: &mut Value,
    ep: Endpoint,
    finalize: bool,
) -> ApiResult<()> {
    let _ = ctx;
    if is(info, "", "namespaces") {
        set_namespace_label(new)?;
        if !finalize {
            // spec.finalizers changes only through the finalize subresource.
            match old.pointer("/spec/finalizers") {
                Some(f) => new["spec"]["finalizers"] = f.clone(),
                None => {
                    if let Some(s) = new.get_mut("spec").and_then(Value::as_object_mut) {
                        s.remove("finalizers");
                    }
                }
            }
        }
    } else if is(info, "", "secrets") {
        merge_string_data(new);
    } else if is(info, "apiextensions.k8s.io", "customresourcedefinitions") && ep == Endpoint::Main
    {
        crate::crd::validate_update(old, new)?;
    }
    Ok(())
}

/// The namespace object a finalize request produces: the stored one with the request's spec.finalizers.
pub fn finalize_namespace(cur: &Value, body: &Value) -> Value {
    let mut out = cur.clone();
    let fins = body
        .pointer("/spec/finalizers")
        .cloned()
        .unwrap_or_else(|| json!([]));
    if !out.get("spec").is_some_and(Value::is_object) {
        out["spec"] = json!({});
    }
    out["spec"]["finalizers"] = fins;
    out
}

/// Refuses deletions the real server refuses.
pub fn admit_delete(info: &ResourceInfo, obj: &Value) -> ApiResult<()> {
    if is(info, "", "namespaces") {
        let name = meta::meta_str(obj, "name").unwrap_or("");
        if IMMORTAL_NAMESPACES.contains(&name) {
            return Err(ApiError::forbidden(format!(
                "namespaces \"{name}\" is forbidden: this namespace may not be deleted"
            ))
            .with_details(serde_json::Map::from_iter([
                ("name".to_string(), json!(name)),
                ("kind".to_string(), json!("namespaces")),
            ])));
        }
    }
    Ok(())
}

/// Whether a kind-specific finalizer (a namespace's `spec.finalizers`) still holds the object.
pub fn pending_finalization(info: &ResourceInfo, obj: &Value) -> bool {
    is(info, "", "namespaces")
        && obj
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
}

/// Whether an object marked for deletion with no metadata finalizers may be removed now.
pub fn may_remove(info: &ResourceInfo, obj: &Value) -> bool {
    !pending_finalization(info, obj)
}

/// Kind-specific changes when deletion starts.
pub fn on_mark_deleted(info: &ResourceInfo, obj: &mut Value) {
    if is(info, "", "namespaces") {
        obj["status"]["phase"] = json!("Terminating");
    }
}

/// A finalizer the server itself adds when deletion starts (the CRD cleanup finalizer).
pub fn deletion_finalizer(info: &ResourceInfo) -> Option<&'static str> {
    is(info, "apiextensions.k8s.io", "customresourcedefinitions")
        .then_some(crate::crd::CLEANUP_FINALIZER)
}
