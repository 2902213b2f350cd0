//! InterpretHealth (spec §3.7): whether a member object is healthy.

use k8s_openapi::api::apps::v1::{
    DaemonSetStatus, DeploymentStatus, ReplicaSetStatus, StatefulSetStatus,
};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, Service};
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::Value;

use serde::de::DeserializeOwned;

use super::object::{at, decode, decode_object, describe, int_at};
use super::{NativeError, NativeKind};

/// The health verdict for `kind`; missing numbers count as 0.
pub(crate) fn interpret_health(kind: NativeKind, object: &Value) -> Result<bool, NativeError> {
    match kind {
        // Workloads decode only the fields their verdict reads: the pod template is irrelevant here and
        // decoding it would cost more than the whole check.
        NativeKind::Deployment => {
            let status: DeploymentStatus = status_of(object)?;
            Ok(rollout_healthy(
                meta_generation(object)?,
                status.observed_generation.unwrap_or(0),
                spec_replicas(object)?,
                status.updated_replicas.unwrap_or(0),
                status.available_replicas.unwrap_or(0),
            ))
        }
        NativeKind::StatefulSet => {
            let status: StatefulSetStatus = status_of(object)?;
            Ok(rollout_healthy(
                meta_generation(object)?,
                status.observed_generation.unwrap_or(0),
                spec_replicas(object)?,
                status.updated_replicas.unwrap_or(0),
                status.available_replicas.unwrap_or(0),
            ))
        }
        NativeKind::ReplicaSet => {
            let status: ReplicaSetStatus = status_of(object)?;
            if status.observed_generation.unwrap_or(0) != meta_generation(object)? {
                return Ok(false);
            }
            Ok(spec_replicas(object)?.is_none_or(|d| status.available_replicas.unwrap_or(0) >= d))
        }
        NativeKind::DaemonSet => {
            let status: DaemonSetStatus = status_of(object)?;
            let updated = status.updated_number_scheduled.unwrap_or(0);
            Ok(
                status.observed_generation.unwrap_or(0) == meta_generation(object)?
                    && updated >= status.desired_number_scheduled
                    && status.number_available.unwrap_or(0) >= updated,
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

/// Deployment and StatefulSet: the controller saw the latest spec, every replica is updated and every
/// updated replica is available.
fn rollout_healthy(
    generation: i64,
    observed: i64,
    desired: Option<i32>,
    updated: i32,
    available: i32,
) -> bool {
    observed == generation && desired.is_none_or(|d| updated >= d) && available >= updated
}

fn has_address(hostname: Option<&str>, ip: Option<&str>) -> bool {
    hostname.is_some_and(|h| !h.is_empty()) || ip.is_some_and(|i| !i.is_empty())
}

/// The typed `.status` (default when absent).
fn status_of<T: DeserializeOwned + Default>(object: &Value) -> Result<T, NativeError> {
    match at(object, &["status"]) {
        None | Some(Value::Null) => Ok(T::default()),
        Some(status) => decode(status, || format!("status of {}", describe(object))),
    }
}

fn meta_generation(object: &Value) -> Result<i64, NativeError> {
    Ok(int_at(object, &["metadata", "generation"])?.unwrap_or(0))
}

/// `spec.replicas`, which must fit an int32 as in the typed object.
fn spec_replicas(object: &Value) -> Result<Option<i32>, NativeError> {
    int_at(object, &["spec", "replicas"])?
        .map(|r| {
            i32::try_from(r).map_err(|_| NativeError::Field {
                object: describe(object),
                field: "spec.replicas".to_owned(),
                reason: format!("{r} does not fit an int32"),
            })
        })
        .transpose()
}
