//! JSON patch (RFC 6902), spec §7.7, through the `json-patch` crate.
//!
//! One deliberate difference from RFC 6902, copied from the real server: a `test` whose value is `null` passes
//! when the parent object exists and the key is absent (upstream's JSON-patch library reads a missing key as
//! `null`). kube-runtime's finalizer helper tests `/metadata/finalizers` against `null` before adding the first
//! finalizer and depends on this.

use super::{MAX_JSON_PATCH_OPERATIONS, PatchError};
use json_patch::{Patch, PatchOperation};
use serde_json::Value;

/// Applies the JSON patch in `body` to `live`.
///
/// Guarantees: atomic: on any error the result is an error and nothing of the patch is visible; `live` itself
/// is never modified.
///
/// Errors: [`PatchError::BadRequest`] when the body is not a list of operations; [`PatchError::TooManyOperations`]
/// beyond 10000; [`PatchError::Invalid`] when an operation does not apply (failed `test`, missing path).
pub fn apply(live: &Value, body: &[u8]) -> Result<Value, PatchError> {
    let patch: Patch =
        serde_json::from_slice(body).map_err(|e| PatchError::BadRequest(e.to_string()))?;
    if patch.0.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(PatchError::TooManyOperations(patch.0.len()));
    }
    let mut doc = live.clone();
    for op in &patch.0 {
        if let PatchOperation::Test(test) = op
            && test.value.is_null()
            && missing_key_of_existing_object(&doc, test.path.as_str())
        {
            continue;
        }
        // `doc` is our own copy, so a half-applied operation never escapes: the error drops it.
        json_patch::patch_unsafe(&mut doc, std::slice::from_ref(op))
            .map_err(|e| PatchError::Invalid(failure_message(op, &e.kind)))?;
    }
    Ok(doc)
}

/// The wording upstream's JSON-patch library uses for an operation that does not apply.
fn failure_message(op: &PatchOperation, kind: &json_patch::PatchErrorKind) -> String {
    let path = op.path().as_str();
    match op {
        PatchOperation::Test(_) if matches!(kind, json_patch::PatchErrorKind::TestFailed) => {
            format!("testing value {path} failed: test failed")
        }
        PatchOperation::Test(_) => {
            format!("test operation does not apply: is missing path: {path}: missing value")
        }
        PatchOperation::Add(_) => {
            format!("add operation does not apply: doc is missing path: \"{path}\": missing value")
        }
        PatchOperation::Remove(_) => {
            let key = path.rsplit('/').next().unwrap_or_default();
            format!("Unable to remove nonexistent key: {key}: missing value")
        }
        PatchOperation::Replace(_) => {
            format!("replace operation does not apply: doc is missing key: {path}: missing value")
        }
        PatchOperation::Move(m) => {
            format!(
                "move operation does not apply: doc is missing from path: {}: missing value",
                m.from
            )
        }
        PatchOperation::Copy(c) => {
            format!(
                "copy operation does not apply: doc is missing from path: {}: missing value",
                c.from
            )
        }
    }
}

/// Whether `pointer` names a key that is absent from (or `null` in) an object that exists.
fn missing_key_of_existing_object(doc: &Value, pointer: &str) -> bool {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return false;
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    match doc.pointer(parent) {
        Some(Value::Object(map)) => map.get(&key).is_none_or(Value::is_null),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(live: &Value, ops: Value) -> Result<Value, PatchError> {
        apply(live, ops.to_string().as_bytes())
    }

    #[test]
    fn finalizer_helper_sequence_works_on_an_object_without_finalizers() {
        // What kube-runtime's finalizer() sends for the first finalizer.
        let live = json!({"metadata": {"name": "x", "resourceVersion": "5"}});
        let ops = json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": ["example.com/cleanup"]}
        ]);
        let out = run(&live, ops).unwrap_or_default();
        assert_eq!(
            out["metadata"]["finalizers"],
            json!(["example.com/cleanup"])
        );
    }

    #[test]
    fn rfc6902_operations_and_quirks() {
        let live = json!({"a": {"b": 1, "n": null}, "l": [1, 2, 3], "s": "x/y"});
        let cases = [
            (
                json!([{"op": "add", "path": "/a/c", "value": 2}]),
                Some(json!({"a": {"b": 1, "c": 2, "n": null}, "l": [1, 2, 3], "s": "x/y"})),
            ),
            (
                json!([{"op": "add", "path": "/l/-", "value": 4}]),
                Some(json!({"a": {"b": 1, "n": null}, "l": [1, 2, 3, 4], "s": "x/y"})),
            ),
            (
                json!([{"op": "remove", "path": "/l/0"}]),
                Some(json!({"a": {"b": 1, "n": null}, "l": [2, 3], "s": "x/y"})),
            ),
            (
                json!([{"op": "replace", "path": "/s", "value": "z"}]),
                Some(json!({"a": {"b": 1, "n": null}, "l": [1, 2, 3], "s": "z"})),
            ),
            (
                json!([{"op": "move", "from": "/s", "path": "/a/s"}]),
                Some(json!({"a": {"b": 1, "n": null, "s": "x/y"}, "l": [1, 2, 3]})),
            ),
            (
                json!([{"op": "copy", "from": "/a/b", "path": "/c"}]),
                Some(json!({"a": {"b": 1, "n": null}, "c": 1, "l": [1, 2, 3], "s": "x/y"})),
            ),
            (
                json!([{"op": "test", "path": "/a/b", "value": 1}]),
                Some(live.clone()),
            ),
            (
                json!([{"op": "test", "path": "/a/missing", "value": null}]),
                Some(live.clone()),
            ),
            (
                json!([{"op": "test", "path": "/a/n", "value": null}]),
                Some(live.clone()),
            ),
            // The quirk needs an existing parent object; array elements and missing parents still fail.
            (
                json!([{"op": "test", "path": "/nope/x", "value": null}]),
                None,
            ),
            (json!([{"op": "test", "path": "/l/7", "value": null}]), None),
            (json!([{"op": "test", "path": "/a/b", "value": 2}]), None),
            (
                json!([{"op": "test", "path": "/a/missing", "value": 1}]),
                None,
            ),
            (json!([{"op": "remove", "path": "/a/missing"}]), None),
            (
                json!([{"op": "replace", "path": "/a/missing", "value": 1}]),
                None,
            ),
            (json!([{"op": "add", "path": "/x/y", "value": 1}]), None),
        ];
        for (ops, want) in cases {
            let got = run(&live, ops.clone());
            match want {
                Some(w) => assert_eq!(got, Ok(w), "{ops}"),
                None => assert!(matches!(got, Err(PatchError::Invalid(_))), "{ops}: {got:?}"),
            }
        }
    }

    #[test]
    fn failures_are_atomic_and_classified() {
        let live = json!({"a": 1});
        let ops = json!([{"op": "add", "path": "/b", "value": 2}, {"op": "test", "path": "/a", "value": 9}]);
        let err = run(&live, ops).expect_err("test fails");
        assert_eq!(err.to_status().code, 422);
        assert_eq!(err.to_string(), "testing value /a failed: test failed");
        let err = run(&live, json!([{"op": "remove", "path": "/nope"}])).expect_err("missing");
        assert_eq!(
            err.to_string(),
            "Unable to remove nonexistent key: nope: missing value"
        );
        let err = run(
            &live,
            json!([{"op": "replace", "path": "/nope", "value": 1}]),
        )
        .expect_err("missing");
        assert_eq!(
            err.to_string(),
            "replace operation does not apply: doc is missing key: /nope: missing value"
        );
        assert_eq!(
            apply(&live, b"{\"op\":\"add\"}").map_err(|e| e.to_status().code),
            Err(400)
        );
        assert_eq!(
            apply(&live, b"not json").map_err(|e| e.to_status().code),
            Err(400)
        );
        let many: Vec<Value> = (0..10001)
            .map(|_| json!({"op": "test", "path": "/a", "value": 1}))
            .collect();
        let err = run(&live, Value::Array(many)).expect_err("too many");
        assert_eq!(err.to_status().code, 413);
        assert_eq!(
            err.to_status().message,
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
        );
    }
}
