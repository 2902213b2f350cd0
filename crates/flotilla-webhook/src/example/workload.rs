//! The example webhook's answers for `workload.example.io/v1alpha1 Workload` (a Deployment look-alike:
//! `spec.replicas` defaulting to 1, `spec.template`, `spec.paused`, `status.readyReplicas`).
//!
//! The handler works on the JSON as received, so fields it does not know survive its patches.

use flotilla_api::config::v1alpha1::InterpreterOperation;
use flotilla_api::work::v1alpha2::Component;
use flotilla_interpreter::native::pod;
use flotilla_interpreter::webhook::error_chain;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::{Handler, Request, Response, errored, patch_response_from_raw, succeeded};

/// Answers every operation the example registers for Workloads.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorkloadInterpreter;

impl Handler for WorkloadInterpreter {
    async fn handle(&self, request: Request) -> Response {
        answer(&request).unwrap_or_else(|refusal| errored(refusal.code, refusal.message))
    }
}

/// Why the example refuses a request: becomes an `Errored` response.
struct Refusal {
    code: i32,
    message: String,
}

/// A refusal with code 400: the request does not fit the Workload type.
fn bad_request(message: impl std::fmt::Display) -> Refusal {
    Refusal {
        code: 400,
        message: message.to_string(),
    }
}

/// The answer to `request`.
fn answer(request: &Request) -> Result<Response, Refusal> {
    let object = request.object().map_err(bad_request)?;
    match &request.operation {
        InterpreterOperation::InterpretReplica => {
            let requirements = match pod_template(object)? {
                Some(template) => pod::replica_requirements(&template)
                    .map_err(|error| bad_request(error_chain(&error)))?,
                None => None,
            };
            Ok(succeeded("").with_replicas(replicas(object)?, requirements))
        }
        InterpreterOperation::InterpretComponent => {
            let component = Component {
                name: "main".into(),
                replicas: replicas(object)?,
                replica_requirements: None,
            };
            Ok(succeeded("").with_components(vec![component]))
        }
        InterpreterOperation::ReviseReplica => {
            let mut revised = object.clone();
            object_at(&mut revised, "spec")?.insert("replicas".into(), json!(request.replicas));
            Ok(patch_response_from_raw(object, &revised))
        }
        InterpreterOperation::Retain => {
            let observed = request.observed_object().map_err(bad_request)?;
            let paused = observed
                .pointer("/spec/paused")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let mut retained = object.clone();
            let spec = object_at(&mut retained, "spec")?;
            // `paused` is omitted when false, as the Workload type serialises it.
            if paused || spec.contains_key("paused") {
                spec.insert("paused".into(), json!(paused));
            }
            Ok(patch_response_from_raw(object, &retained))
        }
        InterpreterOperation::AggregateStatus => {
            let mut ready: i64 = 0;
            for item in &request.aggregated_status {
                let Some(status) = &item.status else { continue };
                ready += ready_replicas(status).map_err(|message| {
                    bad_request(format!("cluster {}: {message}", item.cluster_name))
                })?;
            }
            let mut aggregated = object.clone();
            object_at(&mut aggregated, "status")?.insert("readyReplicas".into(), json!(ready));
            Ok(patch_response_from_raw(object, &aggregated))
        }
        InterpreterOperation::InterpretStatus => {
            let ready = ready_replicas(object.get("status").unwrap_or(&Value::Null))
                .map_err(bad_request)?;
            Ok(succeeded("").with_raw_status(json!({ "readyReplicas": ready })))
        }
        InterpreterOperation::InterpretHealth => {
            let ready = ready_replicas(object.get("status").unwrap_or(&Value::Null))
                .map_err(bad_request)?;
            Ok(succeeded("").with_healthy(ready == i64::from(replicas(object)?)))
        }
        InterpreterOperation::InterpretDependency => {
            // Nothing beyond the pod template's: its ConfigMaps, Secrets, ServiceAccount and PVCs, exactly as the
            // native interpreter finds them for a Deployment.
            let namespace = object
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let dependencies = match pod_template(object)?.and_then(|template| template.spec) {
                Some(spec) => pod::dependencies(&spec, namespace),
                None => Vec::new(),
            };
            Ok(succeeded("").with_dependencies(dependencies))
        }
        other @ (InterpreterOperation::Prune
        | InterpreterOperation::All
        | InterpreterOperation::Other(_)) => Err(bad_request(format!(
            "wrong request operation type: {other}"
        ))),
    }
}

/// `spec.replicas`, 1 when unset.
fn replicas(object: &Value) -> Result<i32, Refusal> {
    match object.pointer("/spec/replicas") {
        None | Some(Value::Null) => Ok(1),
        Some(value) => value
            .as_i64()
            .and_then(|replicas| i32::try_from(replicas).ok())
            .ok_or_else(|| bad_request(format!("spec.replicas must be an int32, got {value}"))),
    }
}

/// `spec.template` as a pod template, `None` when unset.
fn pod_template(object: &Value) -> Result<Option<PodTemplateSpec>, Refusal> {
    match object.pointer("/spec/template") {
        None | Some(Value::Null) => Ok(None),
        Some(template) => PodTemplateSpec::deserialize(template)
            .map(Some)
            .map_err(|error| bad_request(format!("spec.template is not a pod template: {error}"))),
    }
}

/// `readyReplicas` of a Workload status, 0 when unset.
fn ready_replicas(status: &Value) -> Result<i64, String> {
    match status.get("readyReplicas") {
        None | Some(Value::Null) => Ok(0),
        Some(value) => value
            .as_i64()
            .ok_or_else(|| format!("status.readyReplicas must be an integer, got {value}")),
    }
}

/// The object at `object[key]`, created when absent.
fn object_at<'a>(object: &'a mut Value, key: &str) -> Result<&'a mut Map<String, Value>, Refusal> {
    let root = object
        .as_object_mut()
        .ok_or_else(|| bad_request("the object is not a JSON object"))?;
    let field = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if field.is_null() {
        *field = Value::Object(Map::new());
    }
    field
        .as_object_mut()
        .ok_or_else(|| bad_request(format!("{key} is not an object")))
}
