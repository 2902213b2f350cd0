//! Objects and status items as Karmada decodes the files a user gives `karmadactl interpret` (and `flotilla
//! interpret`, its twin), so that the same files are accepted and refused (issue 16, items 5 and 6).
//!
//! Go decodes into structs with `encoding/json`: keys match field names case-insensitively, unknown keys are
//! ignored, `null` leaves a field as it was, a missing field keeps its zero value, and a value of the wrong type is an
//! error. karmadactl reads objects as unstructured maps but first decodes their `apiVersion`, `kind` and
//! `metadata` into Kubernetes' `TypeMeta` and `ObjectMeta` (kubectl's metadata-validating decoder), so string maps
//! must hold strings; the rest of an object is taken as it is.

use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value};

/// A document that Karmada would refuse to decode.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// An object's type or metadata fields do not decode as Kubernetes' types.
    #[error("failed to decode the object: invalid field {field}")]
    Object {
        /// The offending field, e.g. `metadata.annotations.owner`.
        field: String,
        /// What is wrong with it.
        #[source]
        source: serde_json::Error,
    },
    /// A status item does not decode as an `AggregatedStatusItem`.
    #[error("failed to decode the status item: invalid field {field}")]
    StatusItem {
        /// The offending field (`.` for the whole item).
        field: String,
        /// What is wrong with it.
        #[source]
        source: serde_json::Error,
    },
}

/// The fields of an `AggregatedStatusItem`.
const STATUS_ITEM: &[&str] = &[
    "clusterName",
    "status",
    "applied",
    "appliedMessage",
    "health",
];

/// Checks that `object` decodes as Karmada decodes an object file.
///
/// # Errors
/// [`DecodeError::Object`] naming the first field of `apiVersion`, `kind` or `metadata` that is not of its
/// Kubernetes type (a number among the annotations, a string generation, ...).
pub fn object(object: &Value) -> Result<(), DecodeError> {
    let Value::Object(map) = object else {
        return Err(DecodeError::Object {
            field: ".".to_owned(),
            source: serde::de::Error::custom(format!(
                "expected an object, got {}",
                type_name(object)
            )),
        });
    };
    for field in ["apiVersion", "kind"] {
        if let Some(value) = map.get(field)
            && !(value.is_string() || value.is_null())
        {
            return Err(DecodeError::Object {
                field: field.to_owned(),
                source: serde::de::Error::custom(format!(
                    "expected a string, got {}",
                    type_name(value)
                )),
            });
        }
    }
    let Some(metadata) = map.get("metadata").filter(|m| !m.is_null()) else {
        return Ok(());
    };
    serde_path_to_error::deserialize::<_, ObjectMeta>(without_nulls(metadata.clone()))
        .map(drop)
        .map_err(|e| DecodeError::Object {
            field: field_path("metadata", &e.path().to_string()),
            source: e.into_inner(),
        })
}

/// Decodes a status item as Go decodes an `AggregatedStatusItem` (a missing `clusterName` is empty).
///
/// # Errors
/// [`DecodeError::StatusItem`] naming the field that is not of its type.
pub fn status_item(item: &Value) -> Result<AggregatedStatusItem, DecodeError> {
    let mut item = item.clone();
    rename_keys(&mut item, STATUS_ITEM);
    if let Value::Object(map) = &mut item {
        map.retain(|_, v| !v.is_null());
        map.entry("clusterName")
            .or_insert_with(|| Value::String(String::new()));
    }
    serde_path_to_error::deserialize(item).map_err(|e| DecodeError::StatusItem {
        field: e.path().to_string(),
        source: e.into_inner(),
    })
}

/// Renames keys that match one of `fields` case-insensitively to that field's spelling, as Go matches JSON keys to
/// struct fields. An exact match wins over a case-insensitive one.
pub(crate) fn rename_keys(json: &mut Value, fields: &[&str]) {
    let Value::Object(map) = json else { return };
    let misspelled: Vec<(String, &str)> = map
        .keys()
        .filter(|k| !fields.contains(&k.as_str()))
        .filter_map(|k| {
            fields
                .iter()
                .find(|f| f.eq_ignore_ascii_case(k))
                .map(|f| (k.clone(), *f))
        })
        .collect();
    for (key, field) in misspelled {
        if let Some(value) = map.remove(&key) {
            map.entry(field.to_owned()).or_insert(value);
        }
    }
}

/// `value` without `null`s, which Go's decoder skips wherever they are.
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .filter(|v| !v.is_null())
                .map(without_nulls)
                .collect(),
        ),
        other => other,
    }
}

/// `prefix.path`, or `prefix` alone for the whole value (serde_path_to_error's `.`).
fn field_path(prefix: &str, path: &str) -> String {
    if path == "." {
        prefix.to_owned()
    } else {
        format!("{prefix}.{path}")
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn field(result: Result<(), DecodeError>) -> String {
        match result {
            Err(DecodeError::Object { field, .. }) => field,
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn metadata_fields_must_have_their_kubernetes_types() {
        let with = |metadata: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata});
        assert_eq!(
            field(object(&with(json!({"annotations": {"a": 5}})))),
            "metadata.annotations.a"
        );
        assert_eq!(
            field(object(&with(json!({"generation": "3"})))),
            "metadata.generation"
        );
        assert_eq!(
            field(object(&with(json!({"ownerReferences": [{"name": 5}]})))),
            "metadata.ownerReferences[0].name"
        );
        assert_eq!(field(object(&with(json!(5)))), "metadata");
        assert_eq!(
            field(object(&json!({"apiVersion": 1, "kind": "X"}))),
            "apiVersion"
        );
        for fine in [
            json!({"labels": {"a": null}, "unknown": [1]}),
            json!(null),
            json!({"finalizers": [null, "f"]}),
        ] {
            assert!(object(&with(fine.clone())).is_ok(), "{fine}");
        }
        assert!(object(&json!({"kind": "X"})).is_ok());
    }

    #[test]
    fn status_items_decode_as_go_structs() {
        let item =
            status_item(&json!({"status": {"a": 1}, "Applied": true, "health": null})).unwrap();
        assert_eq!(item.cluster_name, "");
        assert!(item.applied);
        assert_eq!(item.status, Some(json!({"a": 1})));
        assert_eq!(item.health, None);
        let item = status_item(&json!({"clusterName": "m1", "status": []})).unwrap();
        assert_eq!(item.status, Some(json!([])));
        match status_item(&json!({"clusterName": "m1", "applied": "yes"})) {
            Err(DecodeError::StatusItem { field, .. }) => assert_eq!(field, "applied"),
            other => panic!("unexpected {other:?}"),
        }
    }
}
