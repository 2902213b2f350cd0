//! karmada-webhook's admission of the four policy kinds: PropagationPolicies and ClusterPropagationPolicies are
//! defaulted (and, when created, given their permanent id and the policy controller's finalizer) and validated;
//! OverridePolicies are defaulted and validated; ClusterOverridePolicies are validated. The rules and messages
//! are Karmada's (`flotilla_core::validation`, `flotilla_core::scheduler::defaults`).

use flotilla_api::names::{finalizers, labels};
use flotilla_api::policy::v1alpha1::{
    ClusterOverridePolicy, ClusterPropagationPolicy, ClusterTaintPolicy, OverridePolicy,
    PropagationPolicy,
};
use flotilla_core::scheduler::defaults::{default_override_selectors, default_propagation_spec};
use flotilla_core::validation::{
    validate_cluster_taint_policy_spec, validate_override_spec, validate_propagation_spec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use serde::de::DeserializeOwned;

use super::decide::{answer, decode, mutate};
use super::refuse;

/// Gives a created policy its permanent id (a new UUID, replacing any the writer set) and the policy
/// controller's finalizer, as Karmada's mutating webhook does on CREATE.
pub(crate) fn stamp_created(meta: &mut ObjectMeta, id_label: &str, finalizer: &str) {
    meta.labels
        .get_or_insert_with(Default::default)
        .insert(id_label.to_owned(), uuid::Uuid::new_v4().to_string());
    let finalizers = meta.finalizers.get_or_insert_with(Vec::new);
    if !finalizers.iter().any(|f| f == finalizer) {
        finalizers.push(finalizer.to_owned());
    }
}

/// `/mutate-propagationpolicy`.
pub fn mutate_propagation_policy(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    let namespace = request.namespace.clone().unwrap_or_default();
    mutate::<PropagationPolicy>(request, |policy, operation| {
        default_propagation_spec(&mut policy.spec, Some(&namespace));
        if operation == Operation::Create {
            stamp_created(
                &mut policy.metadata,
                labels::PROPAGATION_POLICY_PERMANENT_ID,
                finalizers::PROPAGATION_POLICY,
            );
        }
    })
}

/// `/mutate-clusterpropagationpolicy`.
pub fn mutate_cluster_propagation_policy(
    request: &AdmissionRequest<DynamicObject>,
) -> AdmissionResponse {
    mutate::<ClusterPropagationPolicy>(request, |policy, operation| {
        default_propagation_spec(&mut policy.spec, None);
        if operation == Operation::Create {
            stamp_created(
                &mut policy.metadata,
                labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID,
                finalizers::CLUSTER_PROPAGATION_POLICY,
            );
        }
    })
}

/// `/mutate-overridepolicy`.
pub fn mutate_override_policy(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    let namespace = request.namespace.clone().unwrap_or_default();
    mutate::<OverridePolicy>(request, |policy, _| {
        default_override_selectors(&mut policy.spec.resource_selectors, &namespace);
    })
}

/// `/validate-propagationpolicy`.
pub fn validate_propagation_policy(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    validate_propagation::<PropagationPolicy>(
        request,
        labels::PROPAGATION_POLICY_PERMANENT_ID,
        |policy| (&policy.metadata, &policy.spec),
    )
}

/// `/validate-clusterpropagationpolicy`.
pub fn validate_cluster_propagation_policy(
    request: &AdmissionRequest<DynamicObject>,
) -> AdmissionResponse {
    validate_propagation::<ClusterPropagationPolicy>(
        request,
        labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID,
        |policy| (&policy.metadata, &policy.spec),
    )
}

/// `/validate-overridepolicy`.
pub fn validate_override_policy(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    match decode::<OverridePolicy>(request, request.object.as_ref()) {
        Ok(policy) => answer(
            request,
            &validate_override_spec(&policy.spec, namespace(request)),
        ),
        Err(message) => refuse(request, 400, &message),
    }
}

/// `/validate-clusteroverridepolicy`.
pub fn validate_cluster_override_policy(
    request: &AdmissionRequest<DynamicObject>,
) -> AdmissionResponse {
    match decode::<ClusterOverridePolicy>(request, request.object.as_ref()) {
        Ok(policy) => answer(
            request,
            &validate_override_spec(&policy.spec, namespace(request)),
        ),
        Err(message) => refuse(request, 400, &message),
    }
}

/// `/validate-clustertaintpolicy`; NoExecute taints only when `allow_no_execute` (karmada-webhook's
/// `--allow-no-execute-taint-policy`).
pub fn validate_cluster_taint_policy(
    request: &AdmissionRequest<DynamicObject>,
    allow_no_execute: bool,
) -> AdmissionResponse {
    match decode::<ClusterTaintPolicy>(request, request.object.as_ref()) {
        Ok(policy) => answer(
            request,
            &validate_cluster_taint_policy_spec(&policy.spec, allow_no_execute),
        ),
        Err(message) => refuse(request, 400, &message),
    }
}

fn namespace(request: &AdmissionRequest<DynamicObject>) -> &str {
    request.namespace.as_deref().unwrap_or_default()
}

/// The checks both propagation policy kinds share: on UPDATE the scheduler name and the permanent id stay; the
/// id must exist; then the spec's own rules.
fn validate_propagation<K>(
    request: &AdmissionRequest<DynamicObject>,
    id_label: &str,
    parts: fn(
        &K,
    ) -> (
        &ObjectMeta,
        &flotilla_api::policy::v1alpha1::PropagationSpec,
    ),
) -> AdmissionResponse
where
    K: DeserializeOwned,
{
    let policy = match decode::<K>(request, request.object.as_ref()) {
        Ok(policy) => policy,
        Err(message) => return refuse(request, 400, &message),
    };
    let (meta, spec) = parts(&policy);
    let id = |meta: &ObjectMeta| {
        meta.labels
            .as_ref()
            .and_then(|l| l.get(id_label))
            .cloned()
            .unwrap_or_default()
    };
    if request.operation == Operation::Update {
        let old = match decode::<K>(request, request.old_object.as_ref()) {
            Ok(old) => old,
            Err(message) => return refuse(request, 400, &message),
        };
        let (old_meta, old_spec) = parts(&old);
        if spec.scheduler_name != old_spec.scheduler_name {
            return refuse(request, 403, "the schedulerName should not be updated");
        }
        if id(meta) != id(old_meta) {
            let message = format!(
                "label {id_label} is immutable, it can only be set by the system during creation"
            );
            return refuse(request, 403, &message);
        }
    }
    if !meta
        .labels
        .as_ref()
        .is_some_and(|l| l.contains_key(id_label))
    {
        let message = format!(
            "label {id_label} is required, it should be set by the mutating admission webhook during creation"
        );
        return refuse(request, 403, &message);
    }
    answer(
        request,
        &validate_propagation_spec(spec, namespace(request)),
    )
}
