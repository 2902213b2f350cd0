//! How the handlers read a request and answer it: the object decoded into Karmada's API types (the message names
//! the field that did not decode), field errors aggregated into one refusal, and defaults answered as a JSON patch
//! of only what they change.

use flotilla_apimachinery::field::{FieldError, aggregate_message};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{allow, refuse};

/// Allowed without errors, else refused with their aggregate as Karmada words it.
pub(super) fn answer(
    request: &AdmissionRequest<DynamicObject>,
    errors: &[FieldError],
) -> AdmissionResponse {
    if errors.is_empty() {
        allow(request)
    } else {
        refuse(request, 403, &aggregate_message(errors))
    }
}

/// Decodes `object` (the request's object or old object) as a `K`; the message names the field that did not
/// decode.
pub(super) fn decode<K: DeserializeOwned>(
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
pub(super) fn mutate<K>(
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
