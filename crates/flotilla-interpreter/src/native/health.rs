//! InterpretHealth: whether a member object is healthy, by Karmada's per-kind rules.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, Service};
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::Value;

use super::NativeError;
use super::object::{decode_object, int_at};

// Every verdict counts missing numbers as 0. Workloads decode only the fields their verdict reads: the pod
// template is irrelevant here and decoding it would cost more than the whole check.

/// Deployments and StatefulSets: the latest generation observed, every replica updated and available.
pub(super) fn workload(object: &Value) -> Result<bool, NativeError> {
    let observed = status_int(object, "observedGeneration")?;
    let updated = status_int(object, "updatedReplicas")?;
    let available = status_int(object, "availableReplicas")?;
    Ok(observed == meta_generation(object)?
        && spec_replicas(object)?.is_none_or(|desired| updated >= desired)
        && available >= updated)
}

/// ReplicaSets: the latest generation observed and every replica available.
pub(super) fn replica_set(object: &Value) -> Result<bool, NativeError> {
    if status_int(object, "observedGeneration")? != meta_generation(object)? {
        return Ok(false);
    }
    let available = status_int(object, "availableReplicas")?;
    Ok(spec_replicas(object)?.is_none_or(|desired| available >= desired))
}

/// DaemonSets: the latest generation observed, every scheduled pod updated and available.
pub(super) fn daemon_set(object: &Value) -> Result<bool, NativeError> {
    let updated = status_int(object, "updatedNumberScheduled")?;
    Ok(
        status_int(object, "observedGeneration")? == meta_generation(object)?
            && updated >= status_int(object, "desiredNumberScheduled")?
            && status_int(object, "numberAvailable")? >= updated,
    )
}

/// Services: healthy unless a LoadBalancer without an address.
pub(super) fn service(object: &Value) -> Result<bool, NativeError> {
    let svc: Service = decode_object(object)?;
    if svc.spec.and_then(|s| s.type_).as_deref() != Some("LoadBalancer") {
        return Ok(true);
    }
    let ingress = svc
        .status
        .and_then(|s| s.load_balancer)
        .and_then(|lb| lb.ingress);
    Ok(any_address(
        ingress.iter().flatten().map(|i| (&i.hostname, &i.ip)),
    ))
}

/// Ingresses: healthy once the load balancer has an address.
pub(super) fn ingress(object: &Value) -> Result<bool, NativeError> {
    let ing: Ingress = decode_object(object)?;
    let ingress = ing
        .status
        .and_then(|s| s.load_balancer)
        .and_then(|lb| lb.ingress);
    Ok(any_address(
        ingress.iter().flatten().map(|i| (&i.hostname, &i.ip)),
    ))
}

/// PersistentVolumeClaims: healthy once bound.
pub(super) fn persistent_volume_claim(object: &Value) -> Result<bool, NativeError> {
    let pvc: PersistentVolumeClaim = decode_object(object)?;
    Ok(pvc.status.and_then(|s| s.phase).as_deref() == Some("Bound"))
}

/// Pods: succeeded, or running and ready.
pub(super) fn pod(object: &Value) -> Result<bool, NativeError> {
    let pod: Pod = decode_object(object)?;
    let status = pod.status.unwrap_or_default();
    let ready = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True");
    Ok(match status.phase.as_deref() {
        Some("Succeeded") => true,
        Some("Running") => ready,
        _ => false,
    })
}

/// PodDisruptionBudgets: at least as many healthy pods as desired.
pub(super) fn pod_disruption_budget(object: &Value) -> Result<bool, NativeError> {
    let pdb: PodDisruptionBudget = decode_object(object)?;
    let status = pdb.status.unwrap_or_default();
    Ok(status.current_healthy >= status.desired_healthy)
}

/// Whether one of the load balancer's ingress points, as `(hostname, ip)`, has an address.
fn any_address<'a>(
    points: impl IntoIterator<Item = (&'a Option<String>, &'a Option<String>)>,
) -> bool {
    let set = |field: &Option<String>| field.as_deref().is_some_and(|v| !v.is_empty());
    points
        .into_iter()
        .any(|(hostname, ip)| set(hostname) || set(ip))
}

/// An integer of `.status` (0 when absent); another type fails as Go's typed decoding does.
fn status_int(object: &Value, key: &str) -> Result<i64, NativeError> {
    Ok(int_at(object, &["status", key])?.unwrap_or(0))
}

fn meta_generation(object: &Value) -> Result<i64, NativeError> {
    Ok(int_at(object, &["metadata", "generation"])?.unwrap_or(0))
}

/// `spec.replicas`, if set.
fn spec_replicas(object: &Value) -> Result<Option<i64>, NativeError> {
    int_at(object, &["spec", "replicas"])
}
