//! InterpretReplica and ReviseReplica for the workload kinds (spec §3.2, §3.3).

use flotilla_api::work::v1alpha2::ReplicaRequirements;
use serde_json::Value;

use super::object::{at, describe, int_at, set_at};
use super::requirements::{spec_requirements, template_requirements};
use super::{NativeError, NativeKind};

/// Replica count and per-replica requirements of a workload.
pub(crate) fn get_replicas(
    kind: NativeKind,
    object: &Value,
) -> Result<(i32, Option<ReplicaRequirements>), NativeError> {
    // Only the pod template's scheduling fields and the counts are read: the rest does not affect the answer.
    let from_template = |replicas: i32| match at(object, &["spec", "template"]) {
        None | Some(Value::Null) => Ok((replicas, None)),
        Some(template) => Ok((
            replicas,
            template_requirements(template, || {
                format!("spec.template of {}", describe(object))
            })?,
        )),
    };
    let count = |field: &str| -> Result<i32, NativeError> {
        let value = int_at(object, &["spec", field])?.unwrap_or(0);
        i32::try_from(value).map_err(|_| NativeError::Field {
            object: describe(object),
            field: format!("spec.{field}"),
            reason: format!("{value} does not fit an int32"),
        })
    };
    match kind {
        NativeKind::Deployment | NativeKind::ReplicaSet | NativeKind::StatefulSet => {
            from_template(count("replicas")?)
        }
        NativeKind::Job => {
            let parallelism = count("parallelism")?;
            let completions = int_at(object, &["spec", "completions"])?;
            // min(parallelism, completions): a Job never runs more pods at once than it must complete.
            let replicas = match completions {
                Some(completions) if i64::from(parallelism) > completions => count("completions")?,
                _ => parallelism,
            };
            from_template(replicas)
        }
        NativeKind::Pod => match object.get("spec") {
            None | Some(Value::Null) => Ok((1, None)),
            Some(spec) => Ok((
                1,
                spec_requirements(spec, || format!("spec of {}", describe(object)))?,
            )),
        },
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
