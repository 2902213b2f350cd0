//! karmada-webhook's validation of ResourceInterpreterWebhookConfigurations
//! (`flotilla_core::validation::validate_interpreter_webhook_configuration`).

use flotilla_api::config::v1alpha1::ResourceInterpreterWebhookConfiguration;
use flotilla_core::validation::validate_interpreter_webhook_configuration;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse};

use super::decide::{answer, decode};
use super::refuse;

/// `/validate-resourceinterpreterwebhookconfiguration`.
pub fn validate(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    match decode::<ResourceInterpreterWebhookConfiguration>(request, request.object.as_ref()) {
        Ok(configuration) => answer(
            request,
            &validate_interpreter_webhook_configuration(&configuration),
        ),
        Err(message) => refuse(request, 400, &message),
    }
}
