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
//! - [`bindings`]: created ResourceBindings and ClusterResourceBindings get their permanent id, and
//!   ResourceBindings are validated;
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

use crate::features::FeatureGates;

/// What karmada-webhook's flags decide about its answers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `--allow-no-execute-taint-policy`: ClusterTaintPolicies may add NoExecute taints.
    pub allow_no_execute_taint_policy: bool,
    /// `--feature-gates`.
    pub feature_gates: FeatureGates,
}

/// One admission decision.
pub type Review = fn(&Options, &AdmissionRequest<DynamicObject>) -> AdmissionResponse;

/// Each handler that needs nothing but the request and the webhook's options, with the path karmada-webhook
/// serves it at.
pub const HANDLERS: [(&str, Review); 13] = [
    ("/mutate-propagationpolicy", |_, request| {
        policies::mutate_propagation_policy(request)
    }),
    ("/validate-propagationpolicy", |_, request| {
        policies::validate_propagation_policy(request)
    }),
    ("/mutate-clusterpropagationpolicy", |_, request| {
        policies::mutate_cluster_propagation_policy(request)
    }),
    ("/validate-clusterpropagationpolicy", |_, request| {
        policies::validate_cluster_propagation_policy(request)
    }),
    ("/mutate-overridepolicy", |_, request| {
        policies::mutate_override_policy(request)
    }),
    ("/validate-overridepolicy", |_, request| {
        policies::validate_override_policy(request)
    }),
    ("/validate-clusteroverridepolicy", |_, request| {
        policies::validate_cluster_override_policy(request)
    }),
    ("/validate-clustertaintpolicy", |options, request| {
        policies::validate_cluster_taint_policy(request, options.allow_no_execute_taint_policy)
    }),
    ("/mutate-work", |_, request| works::mutate_work(request)),
    ("/mutate-resourcebinding", |_, request| {
        bindings::mutate_resource_binding(request)
    }),
    ("/validate-resourcebinding", |options, request| {
        bindings::validate_resource_binding(request, &options.feature_gates)
    }),
    ("/mutate-clusterresourcebinding", |_, request| {
        bindings::mutate_cluster_resource_binding(request)
    }),
    (
        "/validate-resourceinterpreterwebhookconfiguration",
        |_, request| interpreter_webhooks::validate(request),
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
