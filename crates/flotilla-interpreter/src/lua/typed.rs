//! Script results decoded into typed values (requirements, components, dependencies) the way Karmada's Go
//! `encoding/json` decodes them: unknown keys ignored, keys matched case-insensitively, a type mismatch an error,
//! quantities given as strings or numbers accepted.

use flotilla_api::work::v1alpha2::ReplicaRequirements;
use mlua::Value as LuaValue;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::bridge::number_to_f64;
use super::gofmt::json_number;
use crate::decode::rename_keys;
use flotilla_apimachinery::quantity::decoded_text;

/// The typed shapes a script can return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// `ReplicaRequirements` (GetReplicas' second result, `kube.accuratePodRequirements`).
    Requirements,
    /// A list of `Component`.
    Components,
    /// A list of `DependentObjectReference`.
    Dependencies,
}

const REQUIREMENTS: &[&str] = &[
    "nodeClaim",
    "resourceRequest",
    "namespace",
    "priorityClassName",
];
const NODE_CLAIM: &[&str] = &["hardNodeAffinity", "nodeSelector", "tolerations"];
const COMPONENT: &[&str] = &["name", "replicas", "replicaRequirements"];
const REFERENCE: &[&str] = &["apiVersion", "kind", "namespace", "name", "labelSelector"];

/// GetReplicas' first result: a number, truncated toward zero into the int32 range.
pub(crate) fn replicas(value: &LuaValue) -> Result<i32, String> {
    let n = match value {
        LuaValue::Number(n) => *n,
        LuaValue::Integer(i) => *i as f64,
        other => {
            return Err(format!(
                "result type {} is not number",
                super::call::lua_type(other)
            ));
        }
    };
    let n = n.trunc();
    if !n.is_finite() || n < f64::from(i32::MIN) || n > f64::from(i32::MAX) {
        return Err(format!(
            "replica {} is out of the int32 range",
            super::gofmt::number_to_string(n)
        ));
    }
    Ok(n as i32)
}

/// Decodes a script's JSON into `T`.
///
/// Errors: the JSON does not fit `T` (e.g. `replicas = 2.5` in a component), as Go's "json unmarshal" message.
pub(crate) fn decode<T: DeserializeOwned>(mut json: Value, target: Target) -> Result<T, String> {
    // A typed result has no input object to say which empty values were meant, and in a typed field an empty
    // value is not the same as none (an empty `nodeClaim` is a claim; an empty `labelSelector` selects
    // everything): Karmada drops every empty value below the top, so the binding holds what it would.
    drop_empty_members(&mut json);
    match target {
        Target::Requirements => normalize_requirements(&mut json)?,
        Target::Components | Target::Dependencies => {
            // A new empty table leaves Lua as `{}`; a list target reads it as the empty list, as Karmada does.
            if json.as_object().is_some_and(Map::is_empty) {
                json = Value::Array(Vec::new());
            }
            if let Value::Array(items) = &mut json {
                for item in items {
                    if target == Target::Components {
                        rename_keys(item, COMPONENT);
                        if let Some(requirements) = item.get_mut("replicaRequirements") {
                            normalize_requirements(requirements)?;
                        }
                    } else {
                        rename_keys(item, REFERENCE);
                    }
                }
            }
        }
    }
    serde_json::from_value(json).map_err(|e| format!("json unmarshal obj failed: {e}"))
}

/// Removes each empty object or array held by an object or array in `json`, at any depth. A container is judged
/// as the script returned it: one that becomes empty because its own empty members went stays, as in Karmada.
fn drop_empty_members(json: &mut Value) {
    let is_empty = |v: &Value| match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    match json {
        Value::Object(map) => {
            map.retain(|_, v| !is_empty(v));
            map.values_mut().for_each(drop_empty_members);
        }
        Value::Array(items) => {
            items.retain(|v| !is_empty(v));
            items.iter_mut().for_each(drop_empty_members);
        }
        _ => {}
    }
}

/// Requirements as Karmada has them after encoding them to JSON for a script and decoding the script's result:
/// each quantity as Kubernetes decodes its printed text (a binary `1000000000` becomes `1G`).
pub(crate) fn redecoded(mut requirements: ReplicaRequirements) -> ReplicaRequirements {
    for quantity in requirements.resource_request.values_mut() {
        // Printed quantities always parse; keep the text if one ever did not.
        if let Ok(text) = decoded_text(&quantity.0) {
            quantity.0 = text;
        }
    }
    requirements
}

/// Spellings, and quantities as Go's `resource.Quantity` decodes and encodes them (issue 16, item 4): the text it
/// keeps when already canonical (`2.048`, `100m`), else the canonical form (`1408.000000Mi` is `1408Mi`).
fn normalize_requirements(json: &mut Value) -> Result<(), String> {
    if json.as_array().is_some_and(Vec::is_empty) {
        *json = Value::Object(Map::new());
    }
    rename_keys(json, REQUIREMENTS);
    if let Some(claim) = json.get_mut("nodeClaim") {
        rename_keys(claim, NODE_CLAIM);
    }
    if let Some(Value::Object(resources)) = json.get_mut("resourceRequest") {
        for quantity in resources.values_mut() {
            // Go hands the quantity decoder a string's contents or a number's JSON text; `null` is zero.
            let text = match quantity {
                Value::String(text) => std::mem::take(text),
                Value::Number(n) => json_number(number_to_f64(n)),
                Value::Null => "0".to_owned(),
                // Anything else is refused as the text `true`, `[...]` or `{...}` would be.
                _ => quantity.to_string(),
            };
            *quantity = Value::String(
                decoded_text(&text).map_err(|e| format!("json unmarshal obj failed: {e}"))?,
            );
        }
    }
    Ok(())
}
