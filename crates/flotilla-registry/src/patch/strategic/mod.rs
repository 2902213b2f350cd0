//! Strategic merge patch (`application/strategic-merge-patch+json`) for built-in kinds.
//!
//! Semantics follow apimachinery's `strategicpatch` as the API server runs it (parallel deletion lists merged,
//! unmatched nulls ignored): maps merge key by key and `null` deletes; lists marked `merge` merge element by
//! element on their merge key (lists of scalars become sets); every other list is replaced. Directives:
//! `$patch: replace|delete` on maps and list elements, `$retainKeys`, `$deleteFromPrimitiveList/<field>` and
//! `$setElementOrder/<field>`. Element order follows upstream: `$setElementOrder` first, then the order in the
//! patch, then the order in the live object, which puts new elements of a patch without `$setElementOrder`
//! in front of the live ones exactly as a real server does.

mod list;
pub(crate) mod schema;

use super::PatchError;
use schema::{Strategy, Ty};
use serde_json::{Map, Value};

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";

/// Why a strategic merge patch failed, in upstream's three classes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SmpError {
    /// Malformed directives: `400 BadRequest`.
    BadRequest(&'static str),
    /// Content that cannot be merged (lists of lists, keys outside `$retainKeys`): `422`.
    Unprocessable(&'static str),
    /// Everything upstream leaves unmapped, which the real server answers with a bare `500`.
    Other(String),
}

impl From<SmpError> for PatchError {
    fn from(e: SmpError) -> Self {
        match e {
            SmpError::BadRequest(m) => PatchError::BadRequest(m.to_string()),
            SmpError::Unprocessable(m) => PatchError::Invalid(m.to_string()),
            SmpError::Other(m) => PatchError::Internal(m),
        }
    }
}

pub(crate) type Result<T, E = SmpError> = std::result::Result<T, E>;

/// Applies a strategic merge patch to `original`, an object of built-in `group`/`kind`.
///
/// Errors: see [`SmpError`]; the caller has already refused custom resources with 415.
pub(crate) fn apply(
    original: &Value,
    patch: &Value,
    group: &str,
    kind: &str,
) -> Result<Value, PatchError> {
    let Value::Object(patch) = patch else {
        return Err(PatchError::BadRequest(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            go_json_kind(patch)
        )));
    };
    let original = match original {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    let merged = merge_map(original, patch.clone(), schema::root(group, kind))?;
    Ok(Value::Object(merged))
}

fn go_json_kind(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
        Value::Object(_) => "object",
    }
}

/// Merges `patch` into `original` (both maps of type `ty`).
pub(crate) fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    ty: Ty,
) -> Result<Map<String, Value>> {
    if let Some(directive) = patch.get(DIRECTIVE) {
        return match directive.as_str() {
            Some("replace") => {
                patch.remove(DIRECTIVE);
                Ok(without_nulls(patch))
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(SmpError::Other(format!(
                "unknown patch type: {} in map: {}",
                go_value(directive),
                go_map(&patch)
            ))),
        };
    }
    apply_retain_keys(&mut original, &mut patch)?;
    apply_set_element_order(&mut original, &mut patch, ty)?;
    for (key, patch_value) in patch {
        let (key, is_delete_list) = match key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            Some(rest) => match rest.strip_prefix('/') {
                Some(field) => (field.to_string(), true),
                None => {
                    return Err(SmpError::BadRequest(
                        "invalid patch format of primitive list",
                    ));
                }
            },
            None => (key, false),
        };
        if key.starts_with('$') {
            // An unknown directive never reaches storage: the typed decode upstream drops such keys.
            continue;
        }
        if patch_value.is_null() {
            original.remove(&key);
            continue;
        }
        let Some(current) = original.get_mut(&key) else {
            if !is_delete_list {
                original.insert(key, strip_nulls(patch_value));
            }
            continue;
        };
        let (child, strategy) = schema::field(ty, &key);
        match (current, patch_value) {
            (Value::Object(cur), Value::Object(p)) => {
                let taken = std::mem::take(cur);
                *cur = merge_map(taken, p, child)?;
            }
            (Value::Array(cur), Value::Array(p)) => {
                let taken = std::mem::take(cur);
                *cur = match strategy {
                    Strategy::Merge(merge_key) => {
                        list::merge(taken, p, merge_key, child, is_delete_list)?
                    }
                    // Upstream honours deletion lists whatever the field's strategy.
                    Strategy::Default if is_delete_list => {
                        list::merge(taken, p, None, child, true)?
                    }
                    Strategy::Default => p.into_iter().map(strip_nulls).collect(),
                };
            }
            (cur, p) => {
                if !is_delete_list {
                    *cur = strip_nulls(p);
                }
            }
        }
    }
    Ok(original)
}

/// `$retainKeys`: drop every key of `original` not listed; every key the patch sets must be listed.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<()> {
    let Some(retain) = patch.remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(SmpError::BadRequest("invalid patch format of retainKeys"));
    };
    let listed = |k: &str| retain.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            || k.starts_with(SET_ELEMENT_ORDER)
        {
            continue;
        }
        if !listed(k) {
            return Err(SmpError::Unprocessable(
                "patch content doesn't match retainKeys list",
            ));
        }
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

/// `$setElementOrder/<field>`: merge that list now and order it by the directive (then patch, then live order).
fn apply_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    ty: Ty,
) -> Result<()> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for key in keys {
        let Some(Value::Array(order)) = patch.remove(&key) else {
            return Err(SmpError::Other(
                "expected a slice, but received something else".to_string(),
            ));
        };
        let Some(field) = key
            .strip_prefix(SET_ELEMENT_ORDER)
            .and_then(|r| r.strip_prefix('/'))
        else {
            return Err(SmpError::BadRequest(
                "invalid patch format of setElementOrder list",
            ));
        };
        let field = field.to_string();
        let original_list = match original.get(&field) {
            None => None,
            Some(Value::Array(a)) => Some(a.clone()),
            Some(_) => {
                return Err(SmpError::Other(
                    "expected a slice, but received a map".to_string(),
                ));
            }
        };
        let patch_list = match patch.remove(&field) {
            None => None,
            Some(Value::Array(a)) => Some(a),
            Some(_) => {
                return Err(SmpError::Other(
                    "expected a slice, but received a map".to_string(),
                ));
            }
        };
        let (child, strategy) = schema::field(ty, &field);
        let merge_key = match strategy {
            Strategy::Merge(k) => k,
            Strategy::Default => None,
        };
        if let Some(p) = &patch_list {
            list::validate_against_order(p, &order, merge_key)?;
        }
        let merged = match (original_list.clone(), patch_list.clone()) {
            (Some(o), None) => o,
            (None, Some(p)) => p,
            (Some(o), Some(p)) => match strategy {
                Strategy::Merge(k) => list::merge(o, p, k, child, false)?,
                Strategy::Default => p,
            },
            (None, None) => continue,
        };
        let live = original_list.unwrap_or_default();
        let reordered = list::order_by(merged, &order, &live, merge_key)?;
        original.insert(field, Value::Array(reordered));
    }
    Ok(())
}

/// Drops `null` members (recursively), as decoding into a typed object upstream does for new values.
pub(crate) fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(without_nulls(m)),
        Value::Array(a) => Value::Array(a.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

fn without_nulls(m: Map<String, Value>) -> Map<String, Value> {
    m.into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k, strip_nulls(v)))
        .collect()
}

/// Go's `%v` of a decoded JSON value, used in upstream's error messages.
pub(crate) fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        Value::String(s) => s.clone(),
        Value::Object(m) => go_map(m),
        Value::Array(a) => format!("[{}]", a.iter().map(go_value).collect::<Vec<_>>().join(" ")),
        other => other.to_string(),
    }
}

pub(crate) fn go_map(m: &Map<String, Value>) -> String {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let parts: Vec<String> = keys
        .iter()
        .map(|k| format!("{k}:{}", go_value(&m[k.as_str()])))
        .collect();
    format!("map[{}]", parts.join(" "))
}

#[cfg(test)]
mod tests;
