//! Pruning: fields the schema does not specify are dropped, except under `x-kubernetes-preserve-unknown-fields`.

use super::{OBJECT_META_FIELDS, flag, property};
use serde_json::{Map, Value};

/// Drops every field of `object` its structural `schema` does not specify.
///
/// Guarantees: `apiVersion`, `kind` and `metadata` survive at the root and in `x-kubernetes-embedded-resource`
/// objects (with `metadata` reduced to ObjectMeta's fields); `x-kubernetes-preserve-unknown-fields: true` keeps
/// unspecified fields at that level while specified ones are still pruned below; `null`s of non-nullable fields
/// without a default are dropped, as upstream drops them.
pub(crate) fn prune(object: &mut Value, schema: &Value) {
    if let Value::Object(map) = object {
        prune_map(map, schema, true);
    }
}

fn prune_map(map: &mut Map<String, Value>, schema: &Value, embedded: bool) {
    let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
    let keep_meta = embedded || flag(schema, "x-kubernetes-embedded-resource");
    map.retain(|key, value| {
        if keep_meta && matches!(key.as_str(), "apiVersion" | "kind") {
            return true;
        }
        if keep_meta && key == "metadata" {
            if let Value::Object(meta) = value {
                meta.retain(|k, _| OBJECT_META_FIELDS.contains(&k.as_str()));
            }
            return true;
        }
        match property(schema, key) {
            Some(child) => {
                if value.is_null() && !flag(child, "nullable") && child.get("default").is_none() {
                    return false;
                }
                prune_value(value, child);
                true
            }
            None => preserve,
        }
    });
}

fn prune_value(value: &mut Value, schema: &Value) {
    match value {
        // An object schema without properties, additionalProperties or preserve-unknown-fields specifies no
        // fields at all, so everything in such an object is pruned, as upstream does.
        Value::Object(map) if !flag(schema, "x-kubernetes-int-or-string") => {
            prune_map(map, schema, false)
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    prune_value(item, item_schema);
                }
            }
        }
        _ => {}
    }
}
