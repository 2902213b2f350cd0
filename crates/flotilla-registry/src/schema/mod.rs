//! Structural-schema processing of custom resources: pruning, defaulting and OpenAPI validation,
//! in the order the real server runs them on every write: decode → [`prune`] → [`apply_defaults`] →
//! [`validate`]. Defaults are also applied when reading stored objects, so a default added to a CRD later shows
//! on old objects.
//!
//! All functions take the version's `openAPIV3Schema` as JSON. `metadata` at the root is ObjectMeta, whatever
//! the schema says: it is reduced to ObjectMeta's fields and not validated here (ObjectMeta validation lives in
//! [`crate::validation`]).

mod default;
mod prune;
mod validate;

pub(crate) use default::apply_defaults;
pub(crate) use prune::prune;
pub(crate) use validate::validate;

#[cfg(test)]
use crate::kind_info::KindInfo;
#[cfg(test)]
use crate::validation::FieldError;
use serde_json::Value;

/// The fields ObjectMeta has; anything else under `metadata` is dropped as the real server's decoding drops it.
pub(crate) const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Prunes, defaults and validates a custom resource about to be written, using its CRD version's schema.
///
/// Guarantees: `object` is pruned and defaulted in place even when validation fails (the caller discards it
/// then); kinds without a schema (built-ins, or a CRD version without `openAPIV3Schema`) are left alone.
///
/// Errors: the validation errors, for [`crate::validation::invalid_status`].
// The registry runs these steps itself, between its own; this composition states the order for the tests.
#[cfg(test)]
pub(crate) fn process_write(object: &mut Value, kind: &KindInfo<'_>) -> Vec<FieldError> {
    let Some(schema) = kind.crd_schema() else {
        return Vec::new();
    };
    prune(object, schema);
    apply_defaults(object, schema);
    validate(object, schema)
}

/// Applies defaults to a stored custom resource being read (pruning and validation already happened on write).
#[cfg(test)]
pub(crate) fn process_read(object: &mut Value, kind: &KindInfo<'_>) {
    if let Some(schema) = kind.crd_schema() {
        apply_defaults(object, schema);
    }
}

/// The schema of property `name` of an object schema: its `properties` entry, else `additionalProperties` when
/// that is a schema.
pub(crate) fn property<'s>(schema: &'s Value, name: &str) -> Option<&'s Value> {
    schema
        .get("properties")
        .and_then(|p| p.get(name))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))
}

pub(crate) fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool).unwrap_or(false)
}

#[cfg(test)]
mod tests;
