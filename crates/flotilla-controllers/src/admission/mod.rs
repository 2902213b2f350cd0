//! karmada-webhook's admission, decided here and served
//! by `flotilla controller-manager` as an AdmissionReview v1 webhook:
//!
//! - [`deletion_protection`]: a DELETE of an object labelled `resourcetemplate.karmada.io/deletion-protected:
//!   Always` is refused until the label is removed;
//! - [`customization`]: a ResourceInterpreterCustomization whose Lua does not compile, or whose rule for an
//!   operation clashes with another customization's for the same target, is refused;
//! - [`policies`]: PropagationPolicies, ClusterPropagationPolicies, OverridePolicies and ClusterOverridePolicies
//!   are defaulted (a created propagation policy also gets its permanent id and finalizer) and validated, and
//!   ClusterTaintPolicies validated;
//! - [`interpreter_webhooks`]: ResourceInterpreterWebhookConfigurations are validated;
//! - [`bindings`]: created ResourceBindings and ClusterResourceBindings get their permanent id;
//! - [`works`]: Works get their permanent id and normalised manifests;
//! - [`configuration`]: the Validating- and MutatingWebhookConfigurations registering them with an API server,
//!   with Karmada's webhook names, paths, rules and selectors.
//!
//! Decisions answer with Karmada's messages and controller-runtime's status codes (403 Forbidden for a denial,
//! 400 for a request that cannot be decoded, 500 when the existing customizations cannot be listed). Nothing here
//! depends on which API server calls: the same registration works on a real kube-apiserver and on the embedded
//! one.

pub mod bindings;
pub mod configuration;
pub mod customization;
mod decide;
pub mod deletion_protection;
pub mod interpreter_webhooks;
pub mod policies;
pub mod works;

use kube::core::admission::{AdmissionRequest, AdmissionResponse};
use kube::core::{DynamicObject, Status};

/// One admission decision.
pub type Review = fn(&AdmissionRequest<DynamicObject>) -> AdmissionResponse;

/// Each handler that needs nothing but the request, with the path karmada-webhook serves it at (the
/// ClusterTaintPolicy validation also needs the webhook's NoExecute setting).
pub const HANDLERS: [(&str, Review); 11] = [
    (
        "/mutate-propagationpolicy",
        policies::mutate_propagation_policy,
    ),
    (
        "/validate-propagationpolicy",
        policies::validate_propagation_policy,
    ),
    (
        "/mutate-clusterpropagationpolicy",
        policies::mutate_cluster_propagation_policy,
    ),
    (
        "/validate-clusterpropagationpolicy",
        policies::validate_cluster_propagation_policy,
    ),
    ("/mutate-overridepolicy", policies::mutate_override_policy),
    (
        "/validate-overridepolicy",
        policies::validate_override_policy,
    ),
    (
        "/validate-clusteroverridepolicy",
        policies::validate_cluster_override_policy,
    ),
    ("/mutate-work", works::mutate_work),
    ("/mutate-resourcebinding", bindings::mutate_resource_binding),
    (
        "/mutate-clusterresourcebinding",
        bindings::mutate_cluster_resource_binding,
    ),
    (
        "/validate-resourceinterpreterwebhookconfiguration",
        interpreter_webhooks::validate,
    ),
];

#[cfg(test)]
mod tests;

/// The request allowed, as controller-runtime's `Allowed` answers a validation (status code 200).
fn allow(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request);
    response.result = Status::success().with_code(200);
    response
}

/// The request refused with an HTTP-like `code` and `message`, as controller-runtime's `Denied` (403, reason
/// `Forbidden`) and `Errored` (400 or 500, no reason) answer. kube-apiserver shows the client
/// `admission webhook "<name>" denied the request: <message>`.
fn refuse(
    request: &AdmissionRequest<DynamicObject>,
    code: u16,
    message: &str,
) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request).deny(message);
    let reason = if code == 403 { "Forbidden" } else { "" };
    response.result = Status::failure(message, reason).with_code(code);
    response
}
