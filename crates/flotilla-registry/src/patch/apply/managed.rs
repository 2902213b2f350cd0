//! `metadata.managedFields`: decoding the entries of an object, and writing them back in upstream's order.

use super::fieldset::FieldSet;
use serde_json::{Map, Value, json};

/// Who manages a set of fields: one `managedFields` entry without its set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ManagerId {
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    pub api_version: String,
    pub subresource: Option<String>,
}

impl ManagerId {
    /// Whether two entries belong to the same manager: Apply entries are one per manager and subresource,
    /// Update entries also per API version.
    pub(super) fn same(&self, other: &ManagerId) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == "Apply" || self.api_version == other.api_version)
    }
}

/// One decoded `managedFields` entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub id: ManagerId,
    pub time: Option<String>,
    pub set: FieldSet,
}

/// Decodes `metadata.managedFields`; entries that are not well-formed `FieldsV1` records are dropped, as
/// upstream drops undecodable managed fields rather than failing the write.
pub(crate) fn decode(object: &Value) -> Vec<Entry> {
    let Some(entries) = object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    entries.iter().filter_map(decode_entry).collect()
}

fn decode_entry(e: &Value) -> Option<Entry> {
    let s = |k: &str| {
        e.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    if e.get("fieldsType")
        .and_then(Value::as_str)
        .is_some_and(|t| t != "FieldsV1")
    {
        return None;
    }
    let set = match e.get("fieldsV1") {
        Some(v) => FieldSet::from_fields_v1(v)?,
        None => FieldSet::default(),
    };
    Some(Entry {
        id: ManagerId {
            manager: s("manager").unwrap_or_default(),
            operation: s("operation")?,
            api_version: s("apiVersion").unwrap_or_default(),
            subresource: s("subresource"),
        },
        time: s("time"),
        set,
    })
}

/// Whether a request asks to reset managed fields: upstream's convention is a list holding one empty entry.
pub(crate) fn is_reset(object: &Value) -> bool {
    matches!(object.pointer("/metadata/managedFields").and_then(Value::as_array), Some(list) if list.len() == 1 && list[0].as_object().is_some_and(Map::is_empty))
}

/// Writes `entries` (empty sets dropped) into `object.metadata.managedFields`, sorted as upstream sorts them:
/// Apply before Update, then by time, manager, API version and subresource.
pub(crate) fn encode(object: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    entries.sort_by(|a, b| {
        (
            &a.id.operation,
            &a.time,
            &a.id.manager,
            &a.id.api_version,
            &a.id.subresource,
        )
            .cmp(&(
                &b.id.operation,
                &b.time,
                &b.id.manager,
                &b.id.api_version,
                &b.id.subresource,
            ))
    });
    let list: Vec<Value> = entries
        .into_iter()
        .map(|e| {
            let mut entry = json!({
                "manager": e.id.manager,
                "operation": e.id.operation,
                "apiVersion": e.id.api_version,
                "fieldsType": "FieldsV1",
                "fieldsV1": e.set.to_fields_v1(),
            });
            if let Some(t) = e.time {
                entry["time"] = Value::String(t);
            }
            if let Some(sub) = e.id.subresource {
                entry["subresource"] = Value::String(sub);
            }
            entry
        })
        .collect();
    let Some(meta) = object
        .as_object_mut()
        .map(|o| o.entry("metadata").or_insert_with(|| json!({})))
    else {
        return;
    };
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    if list.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".to_string(), Value::Array(list));
    }
}
