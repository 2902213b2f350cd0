//! Small accessors over unstructured (JSON) objects shared by the native handlers: typed decoding that names
//! the object, integer and string fields with Go's type checks, and field writes that create parents.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::NativeError;

/// `Kind namespace/name` (or `Kind name` for cluster-scoped objects) for error messages.
pub(crate) fn describe(object: &Value) -> String {
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("object");
    let name = str_at(object, &["metadata", "name"]).unwrap_or_default();
    match str_at(object, &["metadata", "namespace"]).filter(|ns| !ns.is_empty()) {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// Decodes `value` into a Kubernetes type, naming `what` on failure (Karmada's typed conversion).
pub(crate) fn decode<T: DeserializeOwned>(
    value: &Value,
    what: impl FnOnce() -> String,
) -> Result<T, NativeError> {
    T::deserialize(value).map_err(|source| NativeError::Decode {
        what: what(),
        source,
    })
}

/// Decodes the whole object into its Kubernetes type.
pub(crate) fn decode_object<T: DeserializeOwned>(object: &Value) -> Result<T, NativeError> {
    decode(object, || describe(object))
}

/// The value at `path`, if every step is an object holding the next key.
pub(crate) fn at<'a>(object: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(object, |v, key| v.get(key))
}

/// The string at `path`, if there is one.
pub(crate) fn str_at<'a>(object: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(object, path).and_then(Value::as_str)
}

/// The object's `metadata.namespace` as written (empty when absent).
pub(crate) fn namespace(object: &Value) -> &str {
    str_at(object, &["metadata", "namespace"]).unwrap_or_default()
}

/// The object's `metadata.generation` (0 when absent).
pub(crate) fn generation(object: &Value) -> i64 {
    at(object, &["metadata", "generation"])
        .and_then(Value::as_i64)
        .unwrap_or_default()
}

/// The integer at `path`: `None` when absent (or null), an error when present but not an integer, as Go's
/// `NestedInt64` does.
pub(crate) fn int_at(object: &Value, path: &[&str]) -> Result<Option<i64>, NativeError> {
    match at(object, path) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_i64().map(Some).ok_or_else(|| NativeError::Field {
            object: describe(object),
            field: path.join("."),
            reason: format!(
                "accessor error: {v} is of the type {}, expected int64",
                json_type(v)
            ),
        }),
    }
}

/// A JSON type name for messages.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "map",
    }
}

/// Sets `path` to `value`, creating (or replacing non-object) parents, as Go's `SetNestedField` does.
pub(crate) fn set_at(object: &mut Value, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = object;
    for key in parents {
        if !current.is_object() {
            *current = Value::Object(Map::new());
        }
        let Value::Object(map) = current else { return };
        current = map
            .entry((*key).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !current.is_object() {
        *current = Value::Object(Map::new());
    }
    if let Value::Object(map) = current {
        map.insert((*last).to_owned(), value);
    }
}

/// Removes the field at `path` if it exists.
pub(crate) fn remove_at(object: &mut Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = object;
    for key in parents {
        match current.get_mut(key) {
            Some(next) => current = next,
            None => return,
        }
    }
    if let Value::Object(map) = current {
        map.remove(*last);
    }
}

/// Sets `path` to `value`, or removes it when `value` is `None` (Go's omitempty on a typed round trip).
pub(crate) fn set_or_remove(object: &mut Value, path: &[&str], value: Option<Value>) {
    match value {
        Some(v) => set_at(object, path, v),
        None => remove_at(object, path),
    }
}

/// An integer as JSON, or `None` when zero (omitempty).
pub(crate) fn non_zero(v: i64) -> Option<Value> {
    (v != 0).then(|| Value::from(v))
}

/// Whether a value is what Go's omitempty drops on a typed round trip (null, "", empty list or map).
pub(crate) fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}
