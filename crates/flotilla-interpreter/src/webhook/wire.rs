//! The wire protocol, Karmada's `ResourceInterpreterContext` v1alpha1: building the request from a layer request (a
//! new uid per call; `replicas` always present, 0 but for ReviseReplica; `observedObject` for Retain only;
//! `aggregatedStatus` only when there are items), and checking a webhook's reply (the uid echoed, `status` when it
//! failed, the field the operation needs, a base64 RFC 6902 patch of type `JSONPatch`) and turning it into a layer
//! response.

use flotilla_api::config::v1alpha1::{
    GroupVersionKind as WireGvk, InterpreterOperation, ResourceInterpreterContext,
    ResourceInterpreterRequest, ResourceInterpreterResponse,
};
use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use kube::core::GroupVersionKind;
use serde_json::Value;

use super::error::Reason;
use crate::layer::{Request, Response};

/// The only patch type Karmada knows.
const JSON_PATCH: &str = "JSONPatch";
/// The only context version Karmada knows.
pub(crate) const CONTEXT_VERSION: &str = "v1alpha1";
/// `apiVersion` of the context.
const CONTEXT_API_VERSION: &str = "config.karmada.io/v1alpha1";
/// `kind` of the context.
const CONTEXT_KIND: &str = "ResourceInterpreterContext";

/// A request on its way out, and the object a patch in the reply will be applied to.
pub(crate) struct Outgoing {
    /// The serialised context.
    pub body: Vec<u8>,
    /// The request uid the reply must echo.
    pub uid: String,
    /// The operation.
    pub operation: InterpreterOperation,
    /// The object the call is about (the desired object for Retain).
    pub object: Value,
}

/// Encodes `request` as a `ResourceInterpreterContext` with a new uid.
pub(crate) fn encode(request: Request, gvk: &GroupVersionKind) -> Result<Outgoing, Reason> {
    let operation = request.operation();
    let mut replicas = 0;
    let mut observed_object = None;
    let mut aggregated_status: Vec<AggregatedStatusItem> = Vec::new();
    let object = match request {
        Request::InterpretReplica { object }
        | Request::InterpretComponent { object }
        | Request::InterpretStatus { object }
        | Request::InterpretHealth { object }
        | Request::InterpretDependency { object } => object,
        Request::ReviseReplica {
            object,
            replicas: wanted,
        } => {
            replicas = i32::try_from(wanted).map_err(|_| Reason::ReplicasOutOfRange(wanted))?;
            object
        }
        Request::Retain { desired, observed } => {
            observed_object = Some(observed);
            desired
        }
        Request::AggregateStatus { object, items } => {
            aggregated_status = items;
            object
        }
    };
    let uid = uuid::Uuid::new_v4().to_string();
    let mut context = ResourceInterpreterContext {
        api_version: Some(CONTEXT_API_VERSION.to_owned()),
        kind: Some(CONTEXT_KIND.to_owned()),
        request: Some(ResourceInterpreterRequest {
            uid: uid.clone(),
            kind: WireGvk {
                group: gvk.group.clone(),
                version: gvk.version.clone(),
                kind: gvk.kind.clone(),
            },
            name: metadata_str(&object, "name").to_owned(),
            namespace: metadata_str(&object, "namespace").to_owned(),
            operation: operation.clone(),
            object: Some(object),
            observed_object,
            replicas,
            aggregated_status,
        }),
        response: None,
    };
    let body = serde_json::to_vec(&context).map_err(Reason::EncodeRequest)?;
    // Moved back out rather than cloned before encoding: objects can be large.
    let object = context
        .request
        .take()
        .and_then(|request| request.object)
        .unwrap_or(Value::Null);
    Ok(Outgoing {
        body,
        uid,
        operation,
        object,
    })
}

/// `metadata.<key>` of an object as a string, empty when absent.
pub(crate) fn metadata_str<'a>(object: &'a Value, key: &str) -> &'a str {
    object
        .get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Checks a reply body against the request and turns it into the layer's response.
pub(crate) fn decode(body: &[u8], outgoing: Outgoing) -> Result<Response, Reason> {
    let context: ResourceInterpreterContext =
        serde_json::from_slice(body).map_err(Reason::DecodeResponse)?;
    let response = context.response.ok_or(Reason::MissingResponse)?;
    if response.uid != outgoing.uid {
        return Err(Reason::UidMismatch {
            expected: outgoing.uid,
            got: response.uid,
        });
    }
    if !response.successful {
        let status = response.status.ok_or(Reason::FailedWithoutStatus)?;
        return Err(Reason::Failed {
            code: status.code,
            message: status.message,
        });
    }
    match outgoing.operation {
        InterpreterOperation::InterpretReplica => Ok(Response::Replicas {
            replicas: response.replicas.ok_or(Reason::MissingReplicas)?,
            requirements: response.replica_requirements,
        }),
        InterpreterOperation::InterpretComponent => Ok(Response::Components(
            response.components.unwrap_or_default(),
        )),
        InterpreterOperation::InterpretDependency => Ok(Response::Dependencies(
            response.dependencies.unwrap_or_default(),
        )),
        InterpreterOperation::InterpretStatus => match response.raw_status {
            Some(status) if !status.is_null() => Ok(Response::Status(Some(status))),
            _ => Err(Reason::MissingRawStatus),
        },
        InterpreterOperation::InterpretHealth => Ok(Response::Healthy(
            response.healthy.ok_or(Reason::MissingHealthy)?,
        )),
        // ReviseReplica, Retain, AggregateStatus (and the operations never dispatched) answer with a patch.
        InterpreterOperation::ReviseReplica
        | InterpreterOperation::Retain
        | InterpreterOperation::AggregateStatus
        | InterpreterOperation::Prune
        | InterpreterOperation::All
        | InterpreterOperation::Other(_) => {
            Ok(Response::Object(apply_patch(&response, outgoing.object)?))
        }
    }
}

/// Applies the reply's JSON Patch, if any, to `object`; the result must keep its `kind`.
fn apply_patch(response: &ResourceInterpreterResponse, mut object: Value) -> Result<Value, Reason> {
    let patch = response
        .patch
        .as_ref()
        .map(|bytes| bytes.0.as_slice())
        .filter(|bytes| !bytes.is_empty());
    let patch_type = response
        .patch_type
        .as_deref()
        .filter(|text| !text.is_empty());
    let patch = match (patch, patch_type) {
        (None, None) => return Ok(object),
        (Some(_), None) => return Err(Reason::MissingPatchType),
        (None, Some(_)) => return Err(Reason::EmptyPatch),
        (Some(_), Some(other)) if other != JSON_PATCH => {
            return Err(Reason::InvalidPatchType(other.to_owned()));
        }
        (Some(patch), Some(_)) => patch,
    };
    let patch: json_patch::Patch = serde_json::from_slice(patch).map_err(Reason::DecodePatch)?;
    json_patch::patch(&mut object, &patch).map_err(Reason::ApplyPatch)?;
    if object
        .get("kind")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(Reason::PatchedObjectWithoutKind);
    }
    Ok(object)
}
