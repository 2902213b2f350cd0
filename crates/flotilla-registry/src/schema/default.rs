//! Defaulting: `default` values fill absent fields (and `null`s of non-nullable fields), recursively.

use super::flag;
use serde_json::Value;

/// Applies the `default`s of `schema` to `object` wherever the field is absent, or `null` without
/// `nullable: true`, then recurses, so defaults inside defaulted values apply too.
pub(crate) fn apply_defaults(object: &mut Value, schema: &Value) {
    match object {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, prop) in props {
                    let Some(default) = prop.get("default") else {
                        continue;
                    };
                    let missing = match map.get(name) {
                        None => true,
                        Some(Value::Null) => !flag(prop, "nullable"),
                        Some(_) => false,
                    };
                    if missing {
                        map.insert(name.clone(), default.clone());
                    }
                }
            }
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (name, value) in map.iter_mut() {
                if let Some(child) = schema
                    .get("properties")
                    .and_then(|p| p.get(name))
                    .or(additional)
                {
                    apply_defaults(value, child);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    apply_defaults(item, item_schema);
                }
            }
        }
        _ => {}
    }
}
