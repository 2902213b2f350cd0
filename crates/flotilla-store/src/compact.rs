//! Compact in-memory form of `metadata.managedFields`.
//!
//! Every write records field ownership, and as a JSON tree a `managedFields` entry is a dozen tiny maps (a few
//! KiB per object with serde_json's maps), more than the rest of a typical object. The real server keeps
//! `fieldsV1` as raw bytes for the same reason. The store therefore keeps `metadata.managedFields` as one string
//! holding the array's JSON behind a marker no client can send ([`compact`]); responses serialise through
//! [`Json`], which writes that string back as the JSON array it holds, and write pipelines get the expanded
//! object ([`expanded`]), so clients and protocol modules never see the compact form.

use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// Prefix of a compacted `managedFields` value. The NUL makes it impossible in a client's own objects: the
/// field is validated as a list on every write.
const MARK: &str = "\u{0}flotilla-managed-fields:";

/// Replaces a non-empty `metadata.managedFields` array by its compact string.
pub fn compact(obj: &mut Value) {
    let Some(mf) = obj.pointer_mut("/metadata/managedFields") else {
        return;
    };
    if mf.as_array().is_some_and(|a| !a.is_empty()) {
        let text = format!("{MARK}{mf}");
        *mf = Value::String(text);
    }
}

/// The compact text of a value, if it is one.
fn compacted(v: &Value) -> Option<&str> {
    v.as_str().and_then(|s| s.strip_prefix(MARK))
}

/// Turns a compact `metadata.managedFields` back into its array in place.
pub fn expand(obj: &mut Value) {
    let Some(mf) = obj.pointer_mut("/metadata/managedFields") else {
        return;
    };
    if let Some(text) = compacted(mf) {
        // The text was produced by `compact` from a JSON array, so it parses; if it somehow does not, the
        // entries are dropped rather than served corrupt.
        *mf = serde_json::from_str(text).unwrap_or_else(|_| Value::Array(Vec::new()));
    }
}

/// The object as clients and protocol modules see it: shared when nothing is compacted, else an expanded copy.
pub fn expanded(obj: &Arc<Value>) -> Arc<Value> {
    match obj.pointer("/metadata/managedFields").and_then(compacted) {
        None => obj.clone(),
        Some(_) => {
            let mut o = obj.as_ref().clone();
            expand(&mut o);
            Arc::new(o)
        }
    }
}

/// Serialises a value with every compact `managedFields` written as the JSON array it holds.
pub struct Json<'a>(pub &'a Value);

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    match compacted(v).filter(|_| k == "managedFields") {
                        Some(text) => {
                            let raw: &RawValue =
                                serde_json::from_str(text).map_err(serde::ser::Error::custom)?;
                            map.serialize_entry(k, raw)?;
                        }
                        None => map.serialize_entry(k, &Json(v))?,
                    }
                }
                map.end()
            }
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(&Json(v))?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
}

/// JSON bytes of a value for a client (compact fields expanded).
pub fn to_vec(v: &Value) -> Vec<u8> {
    serde_json::to_vec(&Json(v)).unwrap_or_default()
}

/// Appends the JSON of a value for a client (compact fields expanded) to `buf`.
///
/// # Errors
/// When a compact field does not hold valid JSON (never for values the store compacted).
pub fn write_to(buf: &mut Vec<u8>, v: &Value) -> serde_json::Result<()> {
    serde_json::to_writer(buf, &Json(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compact_round_trips_and_serialises_expanded() {
        let orig = json!({"metadata": {"name": "a", "managedFields": [
            {"manager": "m", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:k": {}}}}
        ]}, "spec": {"managedFields": "a user string"}});
        let mut c = orig.clone();
        compact(&mut c);
        assert!(c["metadata"]["managedFields"].is_string());
        let out: Value = serde_json::from_slice(&to_vec(&c)).expect("valid JSON");
        assert_eq!(out, orig);
        assert_eq!(*expanded(&Arc::new(c)), orig);
    }

    #[test]
    fn objects_without_managed_fields_are_left_alone() {
        let mut o = json!({"metadata": {"name": "a", "managedFields": []}});
        compact(&mut o);
        assert_eq!(o["metadata"]["managedFields"], json!([]));
        let shared = Arc::new(o);
        assert!(Arc::ptr_eq(&expanded(&shared), &shared));
    }
}
