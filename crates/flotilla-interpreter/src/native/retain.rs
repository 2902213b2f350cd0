//! Native per-kind Retain: keep in the desired object the fields that controllers in the member cluster own. The
//! generic retention every kind gets first (resourceVersion, finalizers, owner references, and the labels and
//! annotations the member added) is the execution controller's job, not the interpreter's.

use flotilla_api::names::labels::RETAIN_REPLICAS;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::NativeError;
use super::object::{
    at, decode_object, describe, int_at, is_empty, json_type, set_at, set_or_remove, str_at,
};

/// With `resourcetemplate.karmada.io/retain-replicas: "true"`, the member's replica count wins (e.g. an HPA
/// in the member scales it).
pub(super) fn deployment(mut desired: Value, observed: &Value) -> Result<Value, NativeError> {
    if str_at(&desired, &["metadata", "labels", RETAIN_REPLICAS]) != Some("true") {
        return Ok(desired);
    }
    let path = ["spec", "replicas"];
    let replicas = int_at(observed, &path)?.ok_or_else(|| NativeError::Field {
        object: describe(observed),
        field: "spec.replicas".to_owned(),
        reason: "failed to get spec.replicas".to_owned(),
    })?;
    set_at(&mut desired, &path, Value::from(replicas));
    Ok(desired)
}

/// The scheduler and the service-account admission own a pod's node, service account, volumes and mounts.
pub(super) fn pod(mut desired: Value, observed: &Value) -> Result<Value, NativeError> {
    // Typed conversion validates both objects as Karmada's does before copying.
    let _: Pod = decode_object(&desired)?;
    let _: Pod = decode_object(observed)?;
    for field in ["nodeName", "serviceAccountName", "volumes"] {
        let value = at(observed, &["spec", field])
            .filter(|v| !is_empty(v))
            .cloned();
        set_or_remove(&mut desired, &["spec", field], value);
    }
    for list in ["containers", "initContainers"] {
        let Some(observed_containers) = at(observed, &["spec", list]).and_then(Value::as_array)
        else {
            continue;
        };
        let Some(desired_containers) = desired.get_mut("spec").and_then(|s| s.get_mut(list)) else {
            continue;
        };
        let Some(desired_containers) = desired_containers.as_array_mut() else {
            continue;
        };
        for observed_container in observed_containers {
            let name = observed_container
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let mounts = observed_container
                .get("volumeMounts")
                .filter(|v| !is_empty(v))
                .cloned();
            for container in desired_containers.iter_mut() {
                if container
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    == name
                {
                    set_or_remove(container, &["volumeMounts"], mounts.clone());
                }
            }
        }
    }
    Ok(desired)
}

/// The member API server allocates a Service's cluster IP and health-check node port.
pub(super) fn service(mut desired: Value, observed: &Value) -> Result<Value, NativeError> {
    let port_path = ["spec", "healthCheckNodePort"];
    if let Some(port) = int_at(observed, &port_path)?.filter(|p| *p > 0) {
        set_at(&mut desired, &port_path, Value::from(port));
    }
    copy_non_empty_string(desired, observed, &["spec", "clusterIP"])
}

/// Token controllers in the member add `secrets` and `imagePullSecrets` entries: keep the member's extra ones
/// after the desired ones.
pub(super) fn service_account(mut desired: Value, observed: &Value) -> Result<Value, NativeError> {
    for field in ["secrets", "imagePullSecrets"] {
        let mut merged: Vec<Value> = list_of(&desired, field)?.to_vec();
        let mut names: Vec<String> = merged.iter().map(entry_name).collect();
        for entry in list_of(observed, field)? {
            let name = entry_name(entry);
            if !names.contains(&name) {
                names.push(name);
                merged.push(entry.clone());
            }
        }
        let value = if merged.is_empty() {
            Value::Null
        } else {
            Value::Array(merged)
        };
        set_at(&mut desired, &[field], value);
    }
    Ok(desired)
}

fn list_of<'a>(object: &'a Value, field: &str) -> Result<&'a [Value], NativeError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(NativeError::Field {
            object: describe(object),
            field: field.to_owned(),
            reason: format!("expected a list, got {}", json_type(other)),
        }),
    }
}

fn entry_name(entry: &Value) -> String {
    entry
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The Job controller adds `controller-uid` labels to the selector and the pod template; keep the member's.
pub(super) fn job(mut desired: Value, observed: &Value) -> Result<Value, NativeError> {
    for path in [
        &["spec", "selector", "matchLabels"][..],
        &["spec", "template", "metadata", "labels"][..],
    ] {
        let Some(value) = at(observed, path).filter(|v| !v.is_null()) else {
            continue;
        };
        let is_string_map = value
            .as_object()
            .is_some_and(|m| m.values().all(Value::is_string));
        if !is_string_map {
            return Err(NativeError::Field {
                object: describe(observed),
                field: path.join("."),
                reason: "expected a map of strings".to_owned(),
            });
        }
        set_at(&mut desired, path, value.clone());
    }
    Ok(desired)
}

/// The member's token controller fills a service-account token Secret's data.
pub(super) fn secret(mut desired: Value, observed: &Value) -> Result<Value, NativeError> {
    if str_at(&desired, &["type"]) == Some("kubernetes.io/service-account-token") {
        desired = copy_if_present(desired, observed, &["data"]);
    }
    Ok(desired)
}

/// The member's PersistentVolume controller binds a claim to a volume.
pub(super) fn persistent_volume_claim(
    desired: Value,
    observed: &Value,
) -> Result<Value, NativeError> {
    copy_non_empty_string(desired, observed, &["spec", "volumeName"])
}

/// The member's PersistentVolume controller binds a volume to a claim.
pub(super) fn persistent_volume(desired: Value, observed: &Value) -> Result<Value, NativeError> {
    Ok(copy_if_present(desired, observed, &["spec", "claimRef"]))
}

fn copy_non_empty_string(
    mut desired: Value,
    observed: &Value,
    path: &[&str],
) -> Result<Value, NativeError> {
    match at(observed, path) {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.is_empty() => {}
        Some(Value::String(s)) => set_at(&mut desired, path, Value::String(s.clone())),
        Some(other) => {
            return Err(NativeError::Field {
                object: describe(observed),
                field: path.join("."),
                reason: format!(
                    "accessor error: {other} is of the type {}, expected string",
                    json_type(other)
                ),
            });
        }
    }
    Ok(desired)
}

fn copy_if_present(mut desired: Value, observed: &Value, path: &[&str]) -> Value {
    if let Some(value) = at(observed, path) {
        set_at(&mut desired, path, value.clone());
    }
    desired
}
