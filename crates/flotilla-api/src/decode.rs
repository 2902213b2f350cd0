//! Decoding Karmada objects from JSON values or YAML text, with errors that name the object and the field.

use serde::de::DeserializeOwned;

/// A value did not decode into the expected type.
#[derive(Debug, thiserror::Error)]
#[error("failed to decode {kind} {name:?}: invalid field {path}")]
pub struct DecodeError {
    /// The object's `kind`, or `object` when it has none.
    pub kind: String,
    /// The object's `metadata.name`, empty when it has none.
    pub name: String,
    /// Path of the offending field, e.g. `spec.placement.replicaScheduling.replicaSchedulingType`; `.` for the
    /// whole object.
    pub path: String,
    /// What is wrong with the field.
    #[source]
    pub source: serde_json::Error,
}

/// Decodes a JSON value (a whole object) into `T`, naming the field on error.
///
/// # Errors
/// [`DecodeError`] naming the object's kind and name and the path of the first offending field.
pub fn from_value<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, DecodeError> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        let str_at = |pointer: &str| {
            value
                .pointer(pointer)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        };
        DecodeError {
            kind: str_at("/kind").unwrap_or_else(|| "object".to_owned()),
            name: str_at("/metadata/name").unwrap_or_default(),
            path,
            source: err.into_inner(),
        }
    })
}
