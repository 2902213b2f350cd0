//! InterpretReplica and ReviseReplica for the workload kinds (Deployment, ReplicaSet, StatefulSet, Job, Pod).

use flotilla_api::work::v1alpha2::ReplicaRequirements;
use serde_json::Value;

use super::NativeError;
use super::object::{at, describe, int_at, set_at};
use super::requirements::{spec_requirements, template_requirements};

/// Replica count and per-replica requirements of a workload with a pod template (`spec.template`).
fn from_template(
    object: &Value,
    replicas: i32,
) -> Result<(i32, Option<ReplicaRequirements>), NativeError> {
    // Only the pod template's scheduling fields and the counts are read: the rest does not affect the answer.
    match at(object, &["spec", "template"]) {
        None | Some(Value::Null) => Ok((replicas, None)),
        Some(template) => Ok((
            replicas,
            template_requirements(template, || {
                format!("spec.template of {}", describe(object))
            })?,
        )),
    }
}

/// `spec.<field>` as an int32 (0 when absent).
fn count(object: &Value, field: &str) -> Result<i32, NativeError> {
    let value = int_at(object, &["spec", field])?.unwrap_or(0);
    i32::try_from(value).map_err(|_| NativeError::Field {
        object: describe(object),
        field: format!("spec.{field}"),
        reason: format!("{value} does not fit an int32"),
    })
}

/// Deployments, ReplicaSets and StatefulSets: `spec.replicas` pods of the template.
pub(super) fn workload(object: &Value) -> Result<(i32, Option<ReplicaRequirements>), NativeError> {
    from_template(object, count(object, "replicas")?)
}

/// Jobs: min(parallelism, completions) pods of the template, as a Job never runs more pods at once than it
/// must complete.
pub(super) fn job(object: &Value) -> Result<(i32, Option<ReplicaRequirements>), NativeError> {
    let parallelism = count(object, "parallelism")?;
    let completions = int_at(object, &["spec", "completions"])?;
    let replicas = match completions {
        Some(completions) if i64::from(parallelism) > completions => count(object, "completions")?,
        _ => parallelism,
    };
    from_template(object, replicas)
}

/// Pods: one replica needing what its spec asks for.
pub(super) fn pod(object: &Value) -> Result<(i32, Option<ReplicaRequirements>), NativeError> {
    match object.get("spec") {
        None | Some(Value::Null) => Ok((1, None)),
        Some(spec) => Ok((
            1,
            spec_requirements(spec, || format!("spec of {}", describe(object)))?,
        )),
    }
}

/// Sets `path` to `replicas`, only when it already exists as an integer (Karmada's behaviour: an absent field
/// leaves the object unchanged).
fn revise_at(mut object: Value, path: &[&str], replicas: i64) -> Result<Value, NativeError> {
    if int_at(&object, path)?.is_some() {
        set_at(&mut object, path, Value::from(replicas));
    }
    Ok(object)
}

/// Deployments, ReplicaSets and StatefulSets: `spec.replicas`.
pub(super) fn revise_workload(object: Value, replicas: i64) -> Result<Value, NativeError> {
    revise_at(object, &["spec", "replicas"], replicas)
}

/// Jobs: `spec.parallelism`.
pub(super) fn revise_job(object: Value, replicas: i64) -> Result<Value, NativeError> {
    revise_at(object, &["spec", "parallelism"], replicas)
}
