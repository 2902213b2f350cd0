//! What a handler answers, and the helpers Karmada's Go SDK offers: `errored`, `succeeded`,
//! `validation_response` and `patch_response_from_raw`.

use std::fmt::Display;

use flotilla_api::config::v1alpha1::{
    DependentObjectReference, RequestStatus, ResourceInterpreterResponse,
};
use flotilla_api::work::v1alpha2::{Component, ReplicaRequirements};
use serde_json::Value;

/// The patch type of every patch a webhook returns.
pub const JSON_PATCH: &str = "JSONPatch";

/// A handler's answer; the server fills in the uid and a missing status code.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Response {
    /// The wire response.
    pub response: ResourceInterpreterResponse,
}

impl Response {
    /// Sets `replicas` and `replicaRequirements` (InterpretReplica).
    pub fn with_replicas(
        mut self,
        replicas: i32,
        requirements: Option<ReplicaRequirements>,
    ) -> Self {
        self.response.replicas = Some(replicas);
        self.response.replica_requirements = requirements;
        self
    }

    /// Sets `components` (InterpretComponent).
    pub fn with_components(mut self, components: Vec<Component>) -> Self {
        self.response.components = Some(components);
        self
    }

    /// Sets `dependencies` (InterpretDependency).
    pub fn with_dependencies(mut self, dependencies: Vec<DependentObjectReference>) -> Self {
        self.response.dependencies = Some(dependencies);
        self
    }

    /// Sets `rawStatus` (InterpretStatus).
    pub fn with_raw_status(mut self, status: Value) -> Self {
        self.response.raw_status = Some(status);
        self
    }

    /// Sets `healthy` (InterpretHealth).
    pub fn with_healthy(mut self, healthy: bool) -> Self {
        self.response.healthy = Some(healthy);
        self
    }

    /// Answers the request with `uid`: copies the uid, and sets status code 200 when the status is absent or
    /// has code 0 (Go SDK's `Complete`).
    pub fn complete(&mut self, uid: &str) {
        uid.clone_into(&mut self.response.uid);
        let status = self
            .response
            .status
            .get_or_insert_with(RequestStatus::default);
        if status.code == 0 {
            status.code = 200;
        }
    }
}

/// A failed answer with `code` and `message`.
pub fn errored(code: i32, message: impl Display) -> Response {
    Response {
        response: ResourceInterpreterResponse {
            successful: false,
            status: Some(RequestStatus {
                code,
                message: message.to_string(),
            }),
            ..Default::default()
        },
    }
}

/// A successful answer with code 200 and `message`.
pub fn succeeded(message: impl Display) -> Response {
    Response {
        response: ResourceInterpreterResponse {
            successful: true,
            status: Some(RequestStatus {
                code: 200,
                message: message.to_string(),
            }),
            ..Default::default()
        },
    }
}

/// Successful with code 200 when `allowed`, failed with code 403 otherwise.
pub fn validation_response(allowed: bool, message: impl Display) -> Response {
    let code = if allowed { 200 } else { 403 };
    Response {
        response: ResourceInterpreterResponse {
            successful: allowed,
            status: Some(RequestStatus {
                code,
                message: message.to_string(),
            }),
            ..Default::default()
        },
    }
}

/// A successful answer carrying the RFC 6902 patch from `original` to `current`; with no difference, a plain
/// success without a patch.
pub fn patch_response_from_raw(original: &Value, current: &Value) -> Response {
    let patch = json_patch::diff(original, current);
    if patch.0.is_empty() {
        return succeeded("");
    }
    match serde_json::to_vec(&patch) {
        Ok(bytes) => Response {
            response: ResourceInterpreterResponse {
                successful: true,
                patch: Some(k8s_openapi::ByteString(bytes)),
                patch_type: Some(JSON_PATCH.to_owned()),
                ..Default::default()
            },
        },
        Err(error) => errored(500, error),
    }
}
