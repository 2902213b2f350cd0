//! karmada-webhook's admission of the four policy kinds: PropagationPolicies and ClusterPropagationPolicies are
//! defaulted (and, when created, given their permanent id and the policy controller's finalizer) and validated;
//! OverridePolicies are defaulted and validated; ClusterOverridePolicies are validated. The rules and messages
//! are Karmada's (`flotilla_core::validation`, `flotilla_core::scheduler::defaults`).

use flotilla_api::names::{finalizers, labels};
use flotilla_api::policy::v1alpha1::{
    ClusterOverridePolicy, ClusterPropagationPolicy, OverridePolicy, PropagationPolicy,
};
use flotilla_apimachinery::field::{FieldError, aggregate_message};
use flotilla_core::scheduler::defaults::{default_override_selectors, default_propagation_spec};
use flotilla_core::validation::{validate_override_spec, validate_propagation_spec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{allow, refuse};

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

/// One admission decision.
pub type Review = fn(&AdmissionRequest<DynamicObject>) -> AdmissionResponse;

/// Each handler with the path karmada-webhook serves it at.
pub const HANDLERS: [(&str, Review); 7] = [
    ("/mutate-propagationpolicy", mutate_propagation_policy),
    ("/validate-propagationpolicy", validate_propagation_policy),
    (
        "/mutate-clusterpropagationpolicy",
        mutate_cluster_propagation_policy,
    ),
    (
        "/validate-clusterpropagationpolicy",
        validate_cluster_propagation_policy,
    ),
    ("/mutate-overridepolicy", mutate_override_policy),
    ("/validate-overridepolicy", validate_override_policy),
    (
        "/validate-clusteroverridepolicy",
        validate_cluster_override_policy,
    ),
];

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

fn namespace(request: &AdmissionRequest<DynamicObject>) -> &str {
    request.namespace.as_deref().unwrap_or_default()
}

/// Allowed without errors, else refused with their aggregate as Karmada words it.
fn answer(request: &AdmissionRequest<DynamicObject>, errors: &[FieldError]) -> AdmissionResponse {
    if errors.is_empty() {
        allow(request)
    } else {
        refuse(request, 403, &aggregate_message(errors))
    }
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

/// Decodes `object` (the request's object or old object) as a `K`; the message names the field that did not
/// decode.
fn decode<K: DeserializeOwned>(
    request: &AdmissionRequest<DynamicObject>,
    object: Option<&DynamicObject>,
) -> Result<K, String> {
    // Karmada's words for a request without the object it needs.
    let object = object.ok_or_else(|| "there is no content to decode".to_owned())?;
    let value = serde_json::to_value(object).map_err(|error| error.to_string())?;
    decode_value(request, value)
}

fn decode_value<K: DeserializeOwned>(
    request: &AdmissionRequest<DynamicObject>,
    value: Value,
) -> Result<K, String> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        format!(
            "failed to decode the {} at {}: {}",
            request.kind.kind,
            error.path(),
            error.inner()
        )
    })
}

/// Allows with the JSON patch that `change` makes to the decoded object. Only what `change` altered is patched:
/// fields the API types do not know are left as they are.
fn mutate<K>(
    request: &AdmissionRequest<DynamicObject>,
    change: impl FnOnce(&mut K, Operation),
) -> AdmissionResponse
where
    K: DeserializeOwned + Serialize,
{
    let original = match request.object.as_ref().map(serde_json::to_value) {
        Some(Ok(original)) => original,
        Some(Err(error)) => return refuse(request, 400, &error.to_string()),
        None => return refuse(request, 400, "there is no content to decode"),
    };
    let mut object: K = match decode_value(request, original.clone()) {
        Ok(object) => object,
        Err(message) => return refuse(request, 400, &message),
    };
    let before = serde_json::to_value(&object);
    change(&mut object, request.operation.clone());
    let after = serde_json::to_value(&object);
    let (Ok(before), Ok(after)) = (before, after) else {
        return refuse(request, 500, "failed to encode the defaulted object");
    };
    let mut mutated = original.clone();
    let changes = json_patch::diff(&before, &after);
    if json_patch::patch(&mut mutated, &changes).is_err() {
        // The changes do not apply where the API types write the object differently: take the typed object.
        mutated = merge_known(original.clone(), after);
    }
    let patch = json_patch::diff(&original, &mutated);
    if patch.0.is_empty() {
        return allow(request);
    }
    match allow(request).with_patch(patch) {
        Ok(response) => response,
        Err(error) => refuse(request, 500, &error.to_string()),
    }
}

/// `typed` written over `original`, keeping the fields only `original` has.
fn merge_known(mut original: Value, typed: Value) -> Value {
    match (&mut original, typed) {
        (Value::Object(into), Value::Object(from)) => {
            for (key, value) in from {
                let merged = match into.remove(&key) {
                    Some(existing) => merge_known(existing, value),
                    None => value,
                };
                into.insert(key, merged);
            }
            original
        }
        (_, typed) => typed,
    }
}
