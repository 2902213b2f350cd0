//! JSON patch (RFC 6902).7, applied exactly as kube-apiserver applies it: kube-apiserver uses
//! `gopkg.in/evanphx/json-patch.v4`, whose behaviour departs from RFC 6902 in ways clients rely on, so this
//! module follows that library's rules rather than a strict RFC implementation (the `json-patch` crate):
//!
//! - A path names a container (every segment but the last, each an existing object member or array element)
//!   and a key in it. A missing container fails every operation with "doc is missing path".
//! - In an object, reading a missing key yields nothing rather than an error, and so does a key whose value is
//!   `null`. Hence `replace` of a missing key adds it, `test` of a missing (or `null`) key against `null` passes
//!   (kube-runtime's finalizer helper relies on that), and `move`/`copy` from a missing key fail only at the
//!   removal (`move`) or copy `null` (`copy`). `remove` of a missing key fails.
//! - Array indices may be negative (counted from the end); `-` appends on `add`.
//! - An empty path addresses the whole document (`replace` and `test` only).
//! - An unknown operation fails with "Unexpected kind".
//!
//! A failure is a 422 whose message is kube-apiserver's generic one and whose cause carries the library's words.

use serde_json::{Map, Value};

use super::{MAX_JSON_PATCH_OPERATIONS, PatchError};

/// Applies the JSON patch in `body` to `live`.
///
/// Guarantees: atomic: on any error the result is an error and nothing of the patch is visible; `live` itself
/// is never modified.
///
/// Errors: [`PatchError::BadRequest`] when the body is not a list of operations; [`PatchError::TooManyOperations`]
/// beyond 10000; [`PatchError::Unapplied`] when an operation does not apply.
pub fn apply(live: &Value, body: &[u8]) -> Result<Value, PatchError> {
    let ops = decode(body)?;
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(PatchError::TooManyOperations(ops.len()));
    }
    let mut doc = live.clone();
    for op in &ops {
        apply_op(&mut doc, op).map_err(PatchError::Unapplied)?;
    }
    Ok(doc)
}

/// The operations in `body`, refused as kube-apiserver refuses a body that is not a list of objects (its words for
/// a JSON type mismatch; a syntax error keeps the parser's words).
fn decode(body: &[u8]) -> Result<Vec<Map<String, Value>>, PatchError> {
    let bad = |text: String| PatchError::BadRequest(format!("error decoding patch: {text}"));
    let value: Value = serde_json::from_slice(body).map_err(|e| bad(e.to_string()))?;
    let go_type = |v: &Value| match v {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    };
    let Value::Array(items) = value else {
        return Err(bad(format!(
            "json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
            go_type(&value)
        )));
    };
    items
        .into_iter()
        .map(|item| match item {
            Value::Object(op) => Ok(op),
            // A null element decodes to an operation with nothing set, which then has no kind.
            Value::Null => Ok(Map::new()),
            other => Err(bad(format!(
                "json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
                go_type(&other)
            ))),
        })
        .collect()
}

/// What an operation's `value` member holds: absent and `null` read alike, as upstream decodes both to nil.
fn value_of(op: &Map<String, Value>) -> Value {
    op.get("value").cloned().unwrap_or(Value::Null)
}

fn text<'a>(op: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    op.get(key).and_then(Value::as_str)
}

fn apply_op(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let kind = text(op, "op").unwrap_or("unknown");
    let path = text(op, "path");
    match kind {
        "add" => {
            let path = path.ok_or("add operation failed to decode path: missing value")?;
            let (container, key) = find(doc, path).ok_or_else(|| {
                format!(
                    "add operation does not apply: doc is missing path: \"{path}\": missing value"
                )
            })?;
            add(container, &key, value_of(op))
                .map_err(|e| format!("error in add for path: '{path}': {e}"))
        }
        "remove" => {
            let path = path.ok_or("remove operation failed to decode path: missing value")?;
            let (container, key) = find(doc, path).ok_or_else(|| {
                format!("remove operation does not apply: doc is missing path: \"{path}\": missing value")
            })?;
            remove(container, &key)
                .map(drop)
                .map_err(|e| format!("error in remove for path: '{path}': {e}"))
        }
        "replace" => {
            let path = path.ok_or("replace operation failed to decode path: missing value")?;
            if path.is_empty() {
                let value = value_of(op);
                if !(value.is_object() || value.is_array()) {
                    return Err("replace operation value must be object or array".into());
                }
                *doc = value;
                return Ok(());
            }
            let (container, key) = find(doc, path).ok_or_else(|| {
                format!(
                    "replace operation does not apply: doc is missing path: {path}: missing value"
                )
            })?;
            get(container, &key).map_err(|_| {
                format!(
                    "replace operation does not apply: doc is missing key: {path}: missing value"
                )
            })?;
            set(container, &key, value_of(op))
                .map_err(|e| format!("error in remove for path: '{path}': {e}"))
        }
        "move" => {
            let from =
                text(op, "from").ok_or("move operation failed to decode from: missing value")?;
            let (container, key) = find(doc, from).ok_or_else(|| {
                format!(
                    "move operation does not apply: doc is missing from path: {from}: missing value"
                )
            })?;
            get(container, &key).map_err(|e| format!("error in move for path: '{key}': {e}"))?;
            let value = remove(container, &key)
                .map_err(|e| format!("error in move for path: '{key}': {e}"))?;
            let path = path.ok_or("move operation failed to decode path: missing value")?;
            let (container, key) = find(doc, path).ok_or_else(|| {
                format!("move operation does not apply: doc is missing destination path: {path}: missing value")
            })?;
            add(container, &key, value)
                .map_err(|e| format!("error in move for path: '{path}': {e}"))
        }
        "copy" => {
            let from =
                text(op, "from").ok_or("copy operation failed to decode from: missing value")?;
            let (container, key) = find(doc, from).ok_or_else(|| {
                format!(
                    "copy operation does not apply: doc is missing from path: {from}: missing value"
                )
            })?;
            let value = get(container, &key)
                .map_err(|e| format!("error in copy for from: '{from}': {e}"))?
                .cloned()
                .unwrap_or(Value::Null);
            let path = path.ok_or("copy operation failed to decode path: missing value")?;
            let (container, key) = find(doc, path).ok_or_else(|| {
                format!("copy operation does not apply: doc is missing destination path: {path}: missing value")
            })?;
            add(container, &key, value)
                .map_err(|e| format!("error while adding value during copy: {e}"))
        }
        "test" => {
            let path = path.ok_or("test operation failed to decode path: missing value")?;
            let want = value_of(op);
            let failed = || format!("testing value {path} failed: test failed");
            if path.is_empty() {
                return if *doc == want { Ok(()) } else { Err(failed()) };
            }
            let (container, key) = find(doc, path).ok_or_else(|| {
                format!("test operation does not apply: is missing path: {path}: missing value")
            })?;
            match get(container, &key)
                .map_err(|e| format!("error in test for path: '{path}': {e}"))?
            {
                None if want.is_null() => Ok(()),
                Some(found) if *found == want => Ok(()),
                _ => Err(failed()),
            }
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
}

/// RFC 6901 unescaping of one path segment.
fn decode_key(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// The container a path's segments but the last lead to, and the last (decoded) segment; `None` when the path has
/// no `/` or a segment does not lead to an object or array.
fn find<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let mut segments: Vec<&str> = path.split('/').collect();
    if segments.len() < 2 {
        return None;
    }
    let key = decode_key(segments.pop()?);
    let mut current = doc;
    for segment in &segments[1..] {
        let next = match current {
            Value::Object(map) => map.get_mut(&decode_key(segment)),
            Value::Array(items) => {
                let index = index_of(segment, items.len()).ok()?;
                items.get_mut(index)
            }
            _ => None,
        }?;
        if !(next.is_object() || next.is_array()) {
            return None;
        }
        current = next;
    }
    Some((current, key))
}

/// An existing element index, negative ones counted from the end.
fn index_of(key: &str, len: usize) -> Result<usize, String> {
    let index: i64 = key
        .parse()
        .map_err(|_| format!("strconv.Atoi: parsing {key:?}: invalid syntax"))?;
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let resolved = if index < 0 { index + len } else { index };
    if index < -len || resolved >= len {
        return Err(format!(
            "Unable to access invalid index: {index}: invalid index referenced"
        ));
    }
    usize::try_from(resolved)
        .map_err(|_| format!("Unable to access invalid index: {index}: invalid index referenced"))
}

/// The value under `key`: `None` for a missing (or `null`) object member; an error for a bad array index.
fn get<'a>(container: &'a Value, key: &str) -> Result<Option<&'a Value>, String> {
    match container {
        Value::Object(map) => Ok(map.get(key).filter(|v| !v.is_null())),
        Value::Array(items) => Ok(items.get(index_of(key, items.len())?)),
        _ => Err("not a container".into()),
    }
}

fn set(container: &mut Value, key: &str, value: Value) -> Result<(), String> {
    match container {
        Value::Object(map) => {
            map.insert(key.to_owned(), value);
            Ok(())
        }
        Value::Array(items) => {
            let index = index_of(key, items.len())?;
            items[index] = value;
            Ok(())
        }
        _ => Err("not a container".into()),
    }
}

fn add(container: &mut Value, key: &str, value: Value) -> Result<(), String> {
    match container {
        Value::Object(map) => {
            map.insert(key.to_owned(), value);
            Ok(())
        }
        Value::Array(items) if key == "-" => {
            items.push(value);
            Ok(())
        }
        Value::Array(items) => {
            let index: i64 = key.parse().map_err(|_| {
                format!("value was not a proper array index: '{key}': strconv.Atoi: parsing {key:?}: invalid syntax")
            })?;
            // Inserting may address one past the end.
            let len = i64::try_from(items.len() + 1).unwrap_or(i64::MAX);
            let resolved = if index < 0 { index + len } else { index };
            if index >= len || index < -len {
                return Err(format!(
                    "Unable to access invalid index: {index}: invalid index referenced"
                ));
            }
            items.insert(usize::try_from(resolved).unwrap_or(0), value);
            Ok(())
        }
        _ => Err("not a container".into()),
    }
}

fn remove(container: &mut Value, key: &str) -> Result<Value, String> {
    match container {
        Value::Object(map) => map
            .remove(key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: missing value")),
        Value::Array(items) => {
            let index = index_of(key, items.len())?;
            Ok(items.remove(index))
        }
        _ => Err("not a container".into()),
    }
}

#[cfg(test)]
mod tests;
