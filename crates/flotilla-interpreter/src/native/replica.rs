//! InterpretReplica and ReviseReplica for the workload kinds (spec §3.2, §3.3).

use flotilla_api::work::v1alpha2::ReplicaRequirements;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use serde_json::Value;

use super::object::{decode_object, describe, int_at, set_at};
use super::pod::{pod_replica_requirements, replica_requirements};
use super::{NativeError, NativeKind};

/// Replica count and per-replica requirements of a workload.
pub(crate) fn get_replicas(
    kind: NativeKind,
    object: &Value,
) -> Result<(i32, Option<ReplicaRequirements>), NativeError> {
    let from_template = |replicas: i32, template: Option<&PodTemplateSpec>| match template {
        Some(template) => Ok((replicas, replica_requirements(template)?)),
        None => Ok((replicas, None)),
    };
    match kind {
        NativeKind::Deployment => {
            let d: Deployment = decode_object(object)?;
            let spec = d.spec.unwrap_or_default();
            from_template(spec.replicas.unwrap_or(0), Some(&spec.template))
        }
        NativeKind::ReplicaSet => {
            let rs: ReplicaSet = decode_object(object)?;
            let spec = rs.spec.unwrap_or_default();
            from_template(spec.replicas.unwrap_or(0), spec.template.as_ref())
        }
        NativeKind::StatefulSet => {
            let sts: StatefulSet = decode_object(object)?;
            let spec = sts.spec.unwrap_or_default();
            from_template(spec.replicas.unwrap_or(0), Some(&spec.template))
        }
        NativeKind::Job => {
            let job: Job = decode_object(object)?;
            let spec = job.spec.unwrap_or_default();
            let parallelism = spec.parallelism.unwrap_or(0);
            // min(parallelism, completions): a Job never runs more pods at once than it must complete.
            let replicas = match spec.completions {
                Some(completions) if parallelism > completions => completions,
                _ => parallelism,
            };
            from_template(replicas, Some(&spec.template))
        }
        NativeKind::Pod => {
            let pod: Pod = decode_object(object)?;
            match &pod.spec {
                Some(spec) => Ok((1, pod_replica_requirements(spec)?)),
                None => Ok((1, None)),
            }
        }
        _ => Err(NativeError::Field {
            object: describe(object),
            field: "kind".to_owned(),
            reason: "no native replica handler".to_owned(),
        }),
    }
}

/// Sets the replica field of a workload, only when it already exists (Karmada's behaviour, spec §3.3).
pub(crate) fn revise_replica(
    kind: NativeKind,
    mut object: Value,
    replicas: i64,
) -> Result<Value, NativeError> {
    let path: &[&str] = match kind {
        NativeKind::Deployment | NativeKind::ReplicaSet | NativeKind::StatefulSet => {
            &["spec", "replicas"]
        }
        NativeKind::Job => &["spec", "parallelism"],
        _ => {
            return Err(NativeError::Field {
                object: describe(&object),
                field: "kind".to_owned(),
                reason: "no native replica revision handler".to_owned(),
            });
        }
    };
    if int_at(&object, path)?.is_some() {
        set_at(&mut object, path, Value::from(replicas));
    }
    Ok(object)
}
