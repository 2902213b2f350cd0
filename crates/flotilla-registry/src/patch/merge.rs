//! JSON merge patch (RFC 7386): objects merge recursively, `null` deletes, everything else replaces.

use super::PatchError;
use serde_json::Value;

/// Applies merge patch `patch` to `live`.
///
/// Guarantees: `live` is untouched; arrays are replaced wholesale; a `null` member deletes the key.
///
/// Errors: [`PatchError::BadRequest`] for a `null` patch (upstream: `Invalid JSON Patch`) or a patch that is not
/// an object and so would turn the object into a non-object.
pub fn apply(live: &Value, patch: &Value) -> Result<Value, PatchError> {
    match patch {
        Value::Null => Err(PatchError::BadRequest("Invalid JSON Patch".to_string())),
        Value::Object(_) => {
            let mut out = live.clone();
            json_patch::merge(&mut out, patch);
            Ok(out)
        }
        _ => Err(PatchError::BadRequest(
            "the merge patch must be a JSON object; any other value would replace the whole object"
                .to_string(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc7386_cases() {
        let live = json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2], "keep": 1});
        let cases = [
            (
                json!({"a": "z"}),
                json!({"a": "z", "c": {"d": "e", "f": "g"}, "l": [1, 2], "keep": 1}),
            ),
            (
                json!({"a": null}),
                json!({"c": {"d": "e", "f": "g"}, "l": [1, 2], "keep": 1}),
            ),
            (
                json!({"c": {"f": null, "h": 1}}),
                json!({"a": "b", "c": {"d": "e", "h": 1}, "l": [1, 2], "keep": 1}),
            ),
            (
                json!({"l": [3]}),
                json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [3], "keep": 1}),
            ),
            (
                json!({"c": "flat"}),
                json!({"a": "b", "c": "flat", "l": [1, 2], "keep": 1}),
            ),
            (
                json!({"new": {"x": null, "y": 1}}),
                json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2], "keep": 1, "new": {"y": 1}}),
            ),
            (json!({}), live.clone()),
        ];
        for (patch, want) in cases {
            assert_eq!(apply(&live, &patch), Ok(want), "patch {patch}");
        }
    }

    #[test]
    fn non_object_patches_are_bad_requests() {
        for patch in [json!(null), json!([1]), json!("x")] {
            assert!(
                matches!(apply(&json!({}), &patch), Err(PatchError::BadRequest(_))),
                "{patch}"
            );
        }
    }
}
