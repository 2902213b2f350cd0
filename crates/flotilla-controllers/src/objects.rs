//! Helpers over objects in JSON form (templates, manifests, member objects): metadata accessors that never
//! panic on odd shapes, and conversions between typed and JSON objects.

use std::collections::BTreeMap;

use kube::api::DynamicObject;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// `Kind namespace/name` (or `Kind name`) of an object, for messages.
pub(crate) fn describe(object: &Value) -> String {
    let kind = str_at(object, "/kind").unwrap_or("object");
    let name = str_at(object, "/metadata/name").unwrap_or_default();
    match str_at(object, "/metadata/namespace").filter(|ns| !ns.is_empty()) {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// The string at a JSON pointer, if it is a string.
pub(crate) fn str_at<'a>(object: &'a Value, pointer: &str) -> Option<&'a str> {
    object.pointer(pointer).and_then(Value::as_str)
}

/// `metadata.name`.
pub(crate) fn name(object: &Value) -> &str {
    str_at(object, "/metadata/name").unwrap_or_default()
}

/// `metadata.namespace` (empty for cluster-scoped objects).
pub(crate) fn namespace(object: &Value) -> &str {
    str_at(object, "/metadata/namespace").unwrap_or_default()
}

/// `metadata.uid`.
pub(crate) fn uid(object: &Value) -> &str {
    str_at(object, "/metadata/uid").unwrap_or_default()
}

/// `metadata.resourceVersion`.
pub(crate) fn resource_version(object: &Value) -> &str {
    str_at(object, "/metadata/resourceVersion").unwrap_or_default()
}

/// `metadata.generation` (0 when absent).
pub(crate) fn generation(object: &Value) -> i64 {
    object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// `apiVersion`.
pub(crate) fn api_version(object: &Value) -> &str {
    str_at(object, "/apiVersion").unwrap_or_default()
}

/// `kind`.
pub(crate) fn kind(object: &Value) -> &str {
    str_at(object, "/kind").unwrap_or_default()
}

/// Whether `metadata.deletionTimestamp` is set.
pub(crate) fn is_deleting(object: &Value) -> bool {
    object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// Splits an `apiVersion` into group and version (`v1` → `("", "v1")`).
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// A string map under `metadata.<field>` (`labels` or `annotations`); non-string values are skipped.
pub(crate) fn string_map(object: &Value, field: &str) -> BTreeMap<String, String> {
    object
        .get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata.labels`.
pub(crate) fn labels(object: &Value) -> BTreeMap<String, String> {
    string_map(object, "labels")
}

/// `metadata.annotations`.
pub(crate) fn annotations(object: &Value) -> BTreeMap<String, String> {
    string_map(object, "annotations")
}

/// One label's value.
pub(crate) fn label<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object.get("metadata")?.get("labels")?.get(key)?.as_str()
}

/// One annotation's value.
pub(crate) fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .get("metadata")?
        .get("annotations")?
        .get(key)?
        .as_str()
}

/// The object map under `metadata`, created if absent (and replacing a non-object).
pub(crate) fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.is_object() {
        *object = Value::Object(Map::new());
    }
    let Value::Object(root) = object else {
        unreachable_object()
    };
    let meta = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    let Value::Object(meta) = meta else {
        unreachable_object()
    };
    meta
}

fn map_field_mut<'a>(object: &'a mut Value, field: &str) -> &'a mut Map<String, Value> {
    let meta = metadata_mut(object);
    let entry = meta
        .entry(field)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    let Value::Object(map) = entry else {
        unreachable_object()
    };
    map
}

// The callers just replaced any non-object with an object, so this cannot run.
#[cold]
fn unreachable_object() -> ! {
    unreachable!("value was just set to an object")
}

/// Sets a label.
pub(crate) fn set_label(object: &mut Value, key: &str, value: &str) {
    map_field_mut(object, "labels").insert(key.to_owned(), Value::String(value.to_owned()));
}

/// Sets an annotation.
pub(crate) fn set_annotation(object: &mut Value, key: &str, value: &str) {
    map_field_mut(object, "annotations").insert(key.to_owned(), Value::String(value.to_owned()));
}

/// Removes labels; drops the map when it becomes empty.
pub(crate) fn remove_labels(object: &mut Value, keys: &[&str]) {
    remove_from_map(object, "labels", keys);
}

/// Removes annotations; drops the map when it becomes empty.
pub(crate) fn remove_annotations(object: &mut Value, keys: &[&str]) {
    remove_from_map(object, "annotations", keys);
}

fn remove_from_map(object: &mut Value, field: &str, keys: &[&str]) {
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(map) = meta.get_mut(field).and_then(Value::as_object_mut) else {
        return;
    };
    for key in keys {
        map.remove(*key);
    }
    if map.is_empty() {
        meta.remove(field);
    }
}

/// Replaces `metadata.<field>` with a string map (removing it when empty).
pub(crate) fn set_string_map(object: &mut Value, field: &str, map: &BTreeMap<String, String>) {
    let meta = metadata_mut(object);
    if map.is_empty() {
        meta.remove(field);
    } else {
        let value = map
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        meta.insert(field.to_owned(), Value::Object(value));
    }
}

/// A typed object as JSON.
pub(crate) fn to_value<T: Serialize>(object: &T, what: &str) -> Result<Value> {
    serde_json::to_value(object).map_err(|source| Error::Decode {
        object: what.to_owned(),
        source,
    })
}

/// A JSON object as a typed object.
pub(crate) fn from_value<T: DeserializeOwned>(object: Value, what: &str) -> Result<T> {
    serde_json::from_value(object).map_err(|source| Error::Decode {
        object: what.to_owned(),
        source,
    })
}

/// A dynamic object as plain JSON (`apiVersion`, `kind`, `metadata`, and the rest).
pub(crate) fn dynamic_to_value(object: &DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or(Value::Null)
}

/// Plain JSON as a dynamic object.
pub(crate) fn value_to_dynamic(object: Value) -> Result<DynamicObject> {
    let what = describe(&object);
    from_value(object, &what)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_helpers_tolerate_odd_shapes() {
        let mut obj = json!({"kind": "ConfigMap", "metadata": {"name": "c", "labels": "oops"}});
        assert!(labels(&obj).is_empty());
        set_label(&mut obj, "a", "1");
        assert_eq!(label(&obj, "a"), Some("1"));
        remove_labels(&mut obj, &["a"]);
        assert!(obj.pointer("/metadata/labels").is_none());
        let mut empty = json!(null);
        set_annotation(&mut empty, "x", "y");
        assert_eq!(annotation(&empty, "x"), Some("y"));
        assert_eq!(
            describe(&json!({"kind":"Deployment","metadata":{"name":"n","namespace":"d"}})),
            "Deployment d/n"
        );
        assert_eq!(split_api_version("apps/v1"), ("apps", "v1"));
        assert_eq!(split_api_version("v1"), ("", "v1"));
    }
}
