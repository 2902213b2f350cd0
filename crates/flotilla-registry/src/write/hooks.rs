//! Per-kind write behaviour the generic pipeline cannot express: Namespace lifecycle fields, CRD
//! preparation, `events.k8s.io` Events stored in the core shape (`crate::kinds::core::events`), `autoscaling/v1`
//! HorizontalPodAutoscalers stored as `v2` (`crate::kinds::workloads::autoscaling`), CertificateSigningRequests' update strategies
//! (`crate::kinds::access::certificates`), Jobs', DaemonSets' and PersistentVolumes' strategies (`crate::kinds::workloads::strategy`) (defaults
//! such as Secret `stringData` and the namespace name label live in `crate::defaults`).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::auth::UserInfo;
use crate::context::Ctx;
use crate::meta::{self, Endpoint};
use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};

/// Namespaces that may never be deleted.
pub(crate) const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

fn is(info: &ResourceInfo, group: &str, plural: &str) -> bool {
    !info.custom && info.group == group && info.plural == plural
}

/// Adjusts a new object after the generic server fields are set. `sent_without_labels` is whether the
/// writer's object had no labels (a Job's then follow its template's, `crate::kinds::workloads::strategy`).
pub(crate) fn on_create(
    info: &ResourceInfo,
    obj: &mut Value,
    user: Option<&UserInfo>,
    sent_without_labels: bool,
) -> ApiResult<()> {
    if is(info, "", "namespaces") {
        if obj.pointer("/spec/finalizers").is_none() {
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
        }
        obj["status"] = json!({"phase": "Active"});
    } else if is(info, "apiextensions.k8s.io", "customresourcedefinitions") {
        crate::kinds::platform::crd::prepare_create(obj)?;
    } else if is(info, "", "pods") {
        crate::defaults::initial_pod_status(obj);
    } else if crate::kinds::core::events::serves_view(info) {
        *obj = crate::kinds::core::events::to_core(obj);
    } else if crate::kinds::workloads::autoscaling::serves_v1(info) {
        crate::kinds::workloads::autoscaling::to_v2(obj, None, true, true);
    } else if crate::kinds::access::certificates::serves(info) {
        crate::kinds::access::certificates::prepare_create(obj, user);
    } else if is(info, "batch", "jobs") {
        crate::kinds::workloads::strategy::generate_job_selector(obj, sent_without_labels);
    } else if is(info, "apps", "daemonsets") {
        crate::kinds::workloads::strategy::daemonset_created(obj);
    } else if is(info, "", "persistentvolumes") {
        crate::kinds::core::persistent_volumes::persistent_volume_created(obj);
    } else if is(info, "batch", "cronjobs") {
        crate::kinds::workloads::strategy::cron_job_template_metadata(obj);
    }
    Ok(())
}

/// Adjusts an updated object (after the status/spec split).
pub(crate) fn on_update(
    ctx: &Ctx,
    info: &ResourceInfo,
    old: &Arc<Value>,
    new: &mut Value,
    ep: Endpoint,
) -> ApiResult<()> {
    let _ = ctx;
    if is(info, "", "namespaces") {
        if ep != Endpoint::Finalize {
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
    } else if is(info, "apiextensions.k8s.io", "customresourcedefinitions") && ep == Endpoint::Main
    {
        crate::kinds::platform::crd::validate_update(old, new)?;
    } else if crate::kinds::core::events::serves_view(info) {
        *new = crate::kinds::core::events::to_core(new);
    } else if crate::kinds::workloads::autoscaling::serves_v1(info) {
        // The generic merge took the endpoint's other half from the stored (v2) object.
        let status = ep == Endpoint::Status;
        crate::kinds::workloads::autoscaling::to_v2(new, Some(old), !status, status);
    } else if crate::kinds::access::certificates::serves(info) {
        crate::kinds::access::certificates::prepare_update(old, new, ep);
    } else if is(info, "apps", "daemonsets") {
        crate::kinds::workloads::strategy::daemonset_updated(old, new, ep == Endpoint::Main);
    } else if is(info, "", "persistentvolumes") && ep == Endpoint::Status {
        crate::kinds::core::persistent_volumes::persistent_volume_status_updated(old, new);
    } else if is(info, "batch", "cronjobs") {
        crate::kinds::workloads::strategy::cron_job_template_metadata(new);
    }
    Ok(())
}

/// The namespace object a finalize request produces: the stored one with the request's spec.finalizers.
pub(crate) fn finalize_namespace(cur: &Value, body: &Value) -> Value {
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
pub(crate) fn admit_delete(info: &ResourceInfo, obj: &Value) -> ApiResult<()> {
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
pub(crate) fn pending_finalization(info: &ResourceInfo, obj: &Value) -> bool {
    is(info, "", "namespaces")
        && obj
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
}

/// Whether an object marked for deletion with no metadata finalizers may be removed now.
pub(crate) fn may_remove(info: &ResourceInfo, obj: &Value) -> bool {
    !pending_finalization(info, obj)
}

/// Whether the kind's own storage marks an object for deletion with its deletion timestamp alone (no grace
/// period, no generation bump), as kube-apiserver's Namespace and CRD storage do.
pub(crate) fn marks_deletion_plainly(info: &ResourceInfo) -> bool {
    is(info, "", "namespaces") || is(info, "apiextensions.k8s.io", "customresourcedefinitions")
}

/// Kind-specific changes when deletion starts.
pub(crate) fn on_mark_deleted(info: &ResourceInfo, obj: &mut Value) {
    if is(info, "", "namespaces") {
        obj["status"]["phase"] = json!("Terminating");
    }
}

/// A finalizer the server itself adds when deletion starts (the CRD cleanup finalizer).
pub(crate) fn deletion_finalizer(info: &ResourceInfo) -> Option<&'static str> {
    is(info, "apiextensions.k8s.io", "customresourcedefinitions")
        .then_some(crate::kinds::platform::crd::CLEANUP_FINALIZER)
}
