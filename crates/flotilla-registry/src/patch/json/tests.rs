//! kube-apiserver's JSON patch behaviour (evanphx/json-patch v4), case by case.

use serde_json::{Value, json};

use super::*;

fn run(live: &Value, ops: Value) -> Result<Value, PatchError> {
    apply(live, ops.to_string().as_bytes())
}

/// The library's words for a failure (the cause kube-apiserver reports).
fn words(live: &Value, ops: Value) -> String {
    match run(live, ops.clone()) {
        Err(PatchError::Unapplied(text)) => text,
        other => panic!("{ops}: expected a 422, got {other:?}"),
    }
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
fn operations_that_apply() {
    let live = json!({"a": {"b": 1, "n": null}, "l": [1, 2, 3], "s": "x/y", "t~": 0});
    let cases = [
        (
            json!([{"op": "add", "path": "/a/c", "value": 2}]),
            json!({"a": {"b": 1, "c": 2, "n": null}}),
        ),
        (
            json!([{"op": "add", "path": "/l/-", "value": 4}]),
            json!({"l": [1, 2, 3, 4]}),
        ),
        (
            json!([{"op": "add", "path": "/l/3", "value": 4}]),
            json!({"l": [1, 2, 3, 4]}),
        ),
        (
            json!([{"op": "add", "path": "/l/-1", "value": 9}]),
            json!({"l": [1, 2, 3, 9]}),
        ),
        (
            json!([{"op": "add", "path": "/l/0", "value": 0}]),
            json!({"l": [0, 1, 2, 3]}),
        ),
        (
            json!([{"op": "remove", "path": "/l/0"}]),
            json!({"l": [2, 3]}),
        ),
        (
            json!([{"op": "remove", "path": "/l/-1"}]),
            json!({"l": [1, 2]}),
        ),
        (
            json!([{"op": "remove", "path": "/a/n"}]),
            json!({"a": {"b": 1}}),
        ),
        (
            json!([{"op": "replace", "path": "/s", "value": "z"}]),
            json!({"s": "z"}),
        ),
        // A missing key of an existing object is added by replace.
        (
            json!([{"op": "replace", "path": "/a/missing", "value": 1}]),
            json!({"a": {"b": 1, "n": null, "missing": 1}}),
        ),
        (
            json!([{"op": "replace", "path": "/l/-1", "value": 7}]),
            json!({"l": [1, 2, 7]}),
        ),
        (
            json!([{"op": "move", "from": "/s", "path": "/a/s"}]),
            json!({"a": {"b": 1, "n": null, "s": "x/y"}, "s": null}),
        ),
        (
            json!([{"op": "copy", "from": "/a/b", "path": "/c"}]),
            json!({"c": 1}),
        ),
        // Copying a missing member copies null.
        (
            json!([{"op": "copy", "from": "/a/missing", "path": "/c"}]),
            json!({"c": null}),
        ),
        (
            json!([{"op": "add", "path": "/t~0", "value": 5}]),
            json!({"t~": 5}),
        ),
        (
            json!([{"op": "add", "path": "/a~1b", "value": 5}]),
            json!({"a/b": 5}),
        ),
    ];
    for (ops, changed) in cases {
        let got = run(&live, ops.clone()).unwrap_or_else(|e| panic!("{ops}: {e}"));
        let mut want = live.clone();
        for (k, v) in changed.as_object().unwrap() {
            if v.is_null() && k == "s" {
                want.as_object_mut().unwrap().remove(k);
            } else {
                want[k] = v.clone();
            }
        }
        assert_eq!(got, want, "{ops}");
    }
}

#[test]
fn tests_that_pass_and_fail() {
    let live = json!({"a": {"b": 1, "n": null}, "l": [1, null]});
    for ops in [
        json!([{"op": "test", "path": "/a/b", "value": 1}]),
        json!([{"op": "test", "path": "/a/missing", "value": null}]),
        json!([{"op": "test", "path": "/a/missing"}]),
        json!([{"op": "test", "path": "/a/n", "value": null}]),
        json!([{"op": "test", "path": "/l/1", "value": null}]),
        json!([{"op": "test", "path": "", "value": {"a": {"b": 1, "n": null}, "l": [1, null]}}]),
    ] {
        assert_eq!(run(&live, ops.clone()), Ok(live.clone()), "{ops}");
    }
    assert_eq!(
        words(&live, json!([{"op": "test", "path": "/a/b", "value": 2}])),
        "testing value /a/b failed: test failed"
    );
    assert_eq!(
        words(
            &live,
            json!([{"op": "test", "path": "/a/b", "value": null}])
        ),
        "testing value /a/b failed: test failed"
    );
    assert_eq!(
        words(
            &live,
            json!([{"op": "test", "path": "/a/missing", "value": 1}])
        ),
        "testing value /a/missing failed: test failed"
    );
    assert_eq!(
        words(
            &live,
            json!([{"op": "test", "path": "/nope/x", "value": null}])
        ),
        "test operation does not apply: is missing path: /nope/x: missing value"
    );
    assert_eq!(
        words(
            &live,
            json!([{"op": "test", "path": "/l/7", "value": null}])
        ),
        "error in test for path: '/l/7': Unable to access invalid index: 7: invalid index referenced"
    );
}

#[test]
fn operations_that_do_not_apply_say_what_upstream_says() {
    let live = json!({"a": {"b": 1}, "l": [1], "s": "x"});
    let cases = [
        (
            json!([{"op": "add", "path": "/x/y", "value": 1}]),
            "add operation does not apply: doc is missing path: \"/x/y\": missing value",
        ),
        (
            json!([{"op": "add", "path": "/s/y", "value": 1}]),
            "add operation does not apply: doc is missing path: \"/s/y\": missing value",
        ),
        (
            json!([{"op": "add", "path": "/l/5", "value": 1}]),
            "error in add for path: '/l/5': Unable to access invalid index: 5: invalid index referenced",
        ),
        (
            json!([{"op": "remove", "path": "/a/missing"}]),
            "error in remove for path: '/a/missing': Unable to remove nonexistent key: missing: missing value",
        ),
        (
            json!([{"op": "remove", "path": "/x/y"}]),
            "remove operation does not apply: doc is missing path: \"/x/y\": missing value",
        ),
        (
            json!([{"op": "replace", "path": "/x/y", "value": 1}]),
            "replace operation does not apply: doc is missing path: /x/y: missing value",
        ),
        (
            json!([{"op": "replace", "path": "/l/3", "value": 1}]),
            "replace operation does not apply: doc is missing key: /l/3: missing value",
        ),
        (
            json!([{"op": "move", "from": "/a/missing", "path": "/c"}]),
            "error in move for path: 'missing': Unable to remove nonexistent key: missing: missing value",
        ),
        (
            json!([{"op": "copy", "from": "/x/y", "path": "/c"}]),
            "copy operation does not apply: doc is missing from path: /x/y: missing value",
        ),
        (
            json!([{"op": "frobnicate", "path": "/a"}]),
            "Unexpected kind: frobnicate",
        ),
        (json!([{"path": "/a"}]), "Unexpected kind: unknown"),
        (
            json!([{"op": "add", "value": 1}]),
            "add operation failed to decode path: missing value",
        ),
    ];
    for (ops, want) in cases {
        assert_eq!(words(&live, ops.clone()), want, "{ops}");
    }
}

#[test]
fn failures_are_atomic_and_classified() {
    let live = json!({"a": 1});
    let ops =
        json!([{"op": "add", "path": "/b", "value": 2}, {"op": "test", "path": "/a", "value": 9}]);
    let err = run(&live, ops).expect_err("test fails");
    let status = err.to_status();
    assert_eq!(status.code, 422);
    assert_eq!(status.reason, "Invalid");
    assert_eq!(
        status.message,
        "the server rejected our request due to an error in our request"
    );
    assert!(status.details.expect("details").causes.is_empty());
    assert_eq!(err.to_string(), "testing value /a failed: test failed");
    assert_eq!(
        apply(&live, b"{\"op\":\"add\"}").map_err(|e| (e.to_status().code, e.to_string())),
        Err((
            400,
            "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp".into()
        ))
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
