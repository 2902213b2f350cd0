//! InterpretHealth (spec §3.7): whether a member object is healthy.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, Service};
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::Value;

use super::object::{decode_object, describe, int_at};
use super::{NativeError, NativeKind};

/// The health verdict for `kind`; missing numbers count as 0.
pub(crate) fn interpret_health(kind: NativeKind, object: &Value) -> Result<bool, NativeError> {
    match kind {
        // Workloads decode only the fields their verdict reads: the pod template is irrelevant here and
        // decoding it would cost more than the whole check.
        NativeKind::Deployment | NativeKind::StatefulSet => {
            let observed = status_int(object, "observedGeneration")?;
            let updated = status_int(object, "updatedReplicas")?;
            let available = status_int(object, "availableReplicas")?;
            Ok(observed == meta_generation(object)?
                && spec_replicas(object)?.is_none_or(|desired| updated >= desired)
                && available >= updated)
        }
        NativeKind::ReplicaSet => {
            if status_int(object, "observedGeneration")? != meta_generation(object)? {
                return Ok(false);
            }
            let available = status_int(object, "availableReplicas")?;
            Ok(spec_replicas(object)?.is_none_or(|desired| available >= desired))
        }
        NativeKind::DaemonSet => {
            let updated = status_int(object, "updatedNumberScheduled")?;
            Ok(
                status_int(object, "observedGeneration")? == meta_generation(object)?
                    && updated >= status_int(object, "desiredNumberScheduled")?
                    && status_int(object, "numberAvailable")? >= updated,
            )
        }
        NativeKind::Service => {
            let svc: Service = decode_object(object)?;
            if svc.spec.and_then(|s| s.type_).as_deref() != Some("LoadBalancer") {
                return Ok(true);
            }
            let ingress = svc
                .status
                .and_then(|s| s.load_balancer)
                .and_then(|lb| lb.ingress)
                .unwrap_or_default();
            Ok(ingress
                .iter()
                .any(|i| has_address(i.hostname.as_deref(), i.ip.as_deref())))
        }
        NativeKind::Ingress => {
            let ing: Ingress = decode_object(object)?;
            let ingress = ing
                .status
                .and_then(|s| s.load_balancer)
                .and_then(|lb| lb.ingress)
                .unwrap_or_default();
            Ok(ingress
                .iter()
                .any(|i| has_address(i.hostname.as_deref(), i.ip.as_deref())))
        }
        NativeKind::PersistentVolumeClaim => {
            let pvc: PersistentVolumeClaim = decode_object(object)?;
            Ok(pvc.status.and_then(|s| s.phase).as_deref() == Some("Bound"))
        }
        NativeKind::Pod => {
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
        NativeKind::PodDisruptionBudget => {
            let pdb: PodDisruptionBudget = decode_object(object)?;
            let status = pdb.status.unwrap_or_default();
            Ok(status.current_healthy >= status.desired_healthy)
        }
        _ => Err(NativeError::Field {
            object: describe(object),
            field: "kind".to_owned(),
            reason: "no native health handler".to_owned(),
        }),
    }
}

fn has_address(hostname: Option<&str>, ip: Option<&str>) -> bool {
    hostname.is_some_and(|h| !h.is_empty()) || ip.is_some_and(|i| !i.is_empty())
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
