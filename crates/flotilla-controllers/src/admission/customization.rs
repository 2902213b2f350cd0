//! karmada-webhook's `resourceinterpretercustomization` validation: a created or updated
//! customization is refused when one of its operations is also customized by another customization of the same
//! target (dependency interpretation excepted), or when one of its Lua scripts does not compile. The checks are
//! the interpreter's own, the ones `flotilla interpret --check` reports.

use flotilla_api::config::v1alpha1::ResourceInterpreterCustomization;
use flotilla_client::lenient::Lenient;
use kube::Client;
use kube::api::{Api, ListParams};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse};

use super::refuse;

/// Decides one request against the customizations that exist: refuses a clash or a script that does not
/// compile with Karmada's message. Compiling is CPU work: call it off the async threads.
pub fn review(
    request: &AdmissionRequest<DynamicObject>,
    existing: &[ResourceInterpreterCustomization],
) -> AdmissionResponse {
    let customization = match decode(request) {
        Ok(customization) => customization,
        Err(message) => return refuse(request, 400, &message),
    };
    match flotilla_interpreter::customization::validate(&customization, existing) {
        Ok(()) => AdmissionResponse::from(request),
        Err(message) => refuse(request, 403, &message),
    }
}

/// The customization a CREATE or UPDATE carries.
fn decode(
    request: &AdmissionRequest<DynamicObject>,
) -> Result<ResourceInterpreterCustomization, String> {
    let object = request
        .object
        .as_ref()
        .ok_or_else(|| format!("the {:?} request has no object", request.operation))?;
    serde_json::to_value(object)
        .and_then(serde_json::from_value)
        .map_err(|error| format!("failed to decode the ResourceInterpreterCustomization: {error}"))
}

/// Reviews customizations against the ones an API server holds, listed afresh for every request as Karmada's
/// webhook reads them from its client.
#[derive(Clone)]
pub struct Validator {
    /// Read one object at a time: one customization that does not decode is left out (it cannot clash with a
    /// rule nobody can read) instead of failing every review.
    api: Api<Lenient<ResourceInterpreterCustomization>>,
}

impl Validator {
    /// A validator listing the customizations of the API server `client` reaches.
    pub fn new(client: Client) -> Self {
        Validator {
            api: Api::all_with(client, &()),
        }
    }

    /// Decides one request (500 when the customizations cannot be listed).
    pub async fn review(&self, request: AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        let existing: Vec<ResourceInterpreterCustomization> = match self
            .api
            .list(&ListParams::default())
            .await
        {
            Ok(list) => list
                .items
                .into_iter()
                .filter_map(|item| match item {
                    Lenient::Decoded(customization) => Some(customization),
                    Lenient::Undecodable(_) => None,
                })
                .collect(),
            Err(error) => {
                tracing::warn!(%error, "failed to list ResourceInterpreterCustomizations for admission");
                let message = format!("failed to list ResourceInterpreterCustomizations: {error}");
                return refuse(&request, 500, &message);
            }
        };
        match tokio::task::spawn_blocking(move || review(&request, &existing)).await {
            Ok(response) => response,
            // The review panicked; the request went with it, so the answer carries no uid and counts as a failed
            // call.
            Err(error) => AdmissionResponse::invalid(format!("the review failed: {error}")),
        }
    }
}
