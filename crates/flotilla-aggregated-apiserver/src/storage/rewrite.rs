//! The version swap of the pass-through: `cluster.karmada.io/v1alpha1` in what callers send becomes
//! `cluster.karmada.io/storage` for the control plane, and back in what it answers.
//!
//! Every place a Cluster's `apiVersion` appears in the API's JSON is covered: an object, its
//! `metadata.managedFields[].apiVersion`, list `items`, Table `rows[].object`, watch events' `object`, JSON
//! patch operations' values; and a Status message that names the storage version. Nothing else is touched:
//! `apiVersion`s of other groups (a `meta.k8s.io/v1` Table, a `v1` Status) stay as they are.

use serde_json::Value;

use crate::names;

/// Which way a body travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// From the caller to the control plane: `v1alpha1` → `storage`.
    ToStorage,
    /// From the control plane to the caller: `storage` → `v1alpha1`.
    ToServed,
}

impl Direction {
    fn versions(self) -> (&'static str, &'static str) {
        match self {
            Direction::ToStorage => (names::API_VERSION, names::STORAGE_API_VERSION),
            Direction::ToServed => (names::STORAGE_API_VERSION, names::API_VERSION),
        }
    }
}

/// Rewrites a body: an object, a list, a Table, a watch event, a Status or a JSON patch.
pub(crate) fn rewrite(value: &mut Value, direction: Direction) {
    match value {
        Value::Object(_) => rewrite_object(value, direction),
        Value::Array(operations) => {
            for operation in operations {
                rewrite_patch_operation(operation, direction);
            }
        }
        _ => {}
    }
}

fn rewrite_object(value: &mut Value, direction: Direction) {
    let (from, to) = direction.versions();
    let Some(object) = value.as_object_mut() else {
        return;
    };
    if let Some(api_version) = object.get_mut("apiVersion")
        && api_version.as_str() == Some(from)
    {
        *api_version = Value::from(to);
    }
    if let Some(fields) = object
        .get_mut("metadata")
        .and_then(|metadata| metadata.get_mut("managedFields"))
        .and_then(Value::as_array_mut)
    {
        for entry in fields {
            if let Some(api_version) = entry.get_mut("apiVersion")
                && api_version.as_str() == Some(from)
            {
                *api_version = Value::from(to);
            }
        }
    }
    if object.get("kind").and_then(Value::as_str) == Some("Status")
        && let Some(message) = object.get_mut("message")
        && let Some(text) = message.as_str()
        && text.contains(from)
    {
        *message = Value::from(text.replace(from, to));
    }
    if let Some(items) = object.get_mut("items").and_then(Value::as_array_mut) {
        for item in items {
            rewrite_object(item, direction);
        }
    }
    if let Some(rows) = object.get_mut("rows").and_then(Value::as_array_mut) {
        for row in rows {
            if let Some(inner) = row.get_mut("object") {
                rewrite_object(inner, direction);
            }
        }
    }
    // A watch event: {"type": ..., "object": ...}.
    if object.get("type").is_some_and(Value::is_string)
        && let Some(inner) = object.get_mut("object")
    {
        rewrite_object(inner, direction);
    }
}

/// A JSON patch operation: a value set at an `apiVersion` path, or an object or list set anywhere.
fn rewrite_patch_operation(operation: &mut Value, direction: Direction) {
    let (from, to) = direction.versions();
    let at_api_version = operation
        .get("path")
        .and_then(Value::as_str)
        .is_some_and(|path| path.ends_with("/apiVersion"));
    let Some(value) = operation.get_mut("value") else {
        return;
    };
    match value {
        Value::String(text) if at_api_version && text == from => *value = Value::from(to),
        Value::Object(_) => rewrite_object(value, direction),
        Value::Array(entries) => {
            for entry in entries {
                rewrite_object(entry, direction);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn served(mut value: Value) -> Value {
        rewrite(&mut value, Direction::ToServed);
        value
    }

    fn stored(mut value: Value) -> Value {
        rewrite(&mut value, Direction::ToStorage);
        value
    }

    fn cluster(api_version: &str) -> Value {
        json!({
            "apiVersion": api_version,
            "kind": "Cluster",
            "metadata": {
                "name": "m1",
                "managedFields": [
                    {"manager": "a", "apiVersion": api_version, "operation": "Update"},
                    {"manager": "b", "apiVersion": api_version, "operation": "Apply"},
                    {"manager": "c", "apiVersion": "other.example.com/v1", "operation": "Update"},
                ],
            },
            "spec": {"apiEndpoint": "https://m1", "note": "cluster.karmada.io/storage stays in data"},
        })
    }

    #[test]
    fn objects_and_their_managed_fields() {
        assert_eq!(
            served(cluster("cluster.karmada.io/storage")),
            cluster("cluster.karmada.io/v1alpha1")
        );
        assert_eq!(
            stored(cluster("cluster.karmada.io/v1alpha1")),
            cluster("cluster.karmada.io/storage")
        );
    }

    #[test]
    fn lists_tables_and_watch_events() {
        let list = json!({
            "apiVersion": "cluster.karmada.io/storage",
            "kind": "ClusterList",
            "metadata": {"resourceVersion": "7"},
            "items": [cluster("cluster.karmada.io/storage"), cluster("cluster.karmada.io/storage")],
        });
        let served_list = served(list);
        assert_eq!(served_list["apiVersion"], "cluster.karmada.io/v1alpha1");
        for item in served_list["items"].as_array().expect("items") {
            assert_eq!(item, &cluster("cluster.karmada.io/v1alpha1"));
        }

        let table = json!({
            "apiVersion": "meta.k8s.io/v1",
            "kind": "Table",
            "rows": [
                {"cells": ["m1"], "object": {
                    "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                    "metadata": {"managedFields": [{"apiVersion": "cluster.karmada.io/storage"}]}}},
                {"cells": ["m2"], "object": cluster("cluster.karmada.io/storage")},
            ],
        });
        let served_table = served(table);
        assert_eq!(served_table["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(
            served_table["rows"][0]["object"]["apiVersion"],
            "meta.k8s.io/v1"
        );
        assert_eq!(
            served_table["rows"][0]["object"]["metadata"]["managedFields"][0]["apiVersion"],
            "cluster.karmada.io/v1alpha1"
        );
        assert_eq!(
            served_table["rows"][1]["object"],
            cluster("cluster.karmada.io/v1alpha1")
        );

        for kind in ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"] {
            let event = json!({"type": kind, "object": cluster("cluster.karmada.io/storage")});
            assert_eq!(
                served(event),
                json!({"type": kind, "object": cluster("cluster.karmada.io/v1alpha1")})
            );
        }
    }

    #[test]
    fn statuses_keep_their_version_and_lose_the_storage_one_in_messages() {
        let status = json!({
            "apiVersion": "v1", "kind": "Status", "status": "Failure", "reason": "BadRequest", "code": 400,
            "message": "the API version in the data (cluster.karmada.io/v9) does not match the expected API \
                        version (cluster.karmada.io/storage)",
        });
        let served_status = served(status);
        assert_eq!(served_status["apiVersion"], "v1");
        assert_eq!(
            served_status["message"],
            "the API version in the data (cluster.karmada.io/v9) does not match the expected API version \
             (cluster.karmada.io/v1alpha1)"
        );
        let error_event = json!({"type": "ERROR", "object": {"apiVersion": "v1", "kind": "Status", "message": "gone"}});
        assert_eq!(served(error_event.clone()), error_event);
    }

    #[test]
    fn json_patches() {
        let patch = json!([
            {"op": "replace", "path": "/apiVersion", "value": "cluster.karmada.io/v1alpha1"},
            {"op": "test", "path": "/spec/note", "value": "cluster.karmada.io/v1alpha1"},
            {"op": "add", "path": "/metadata/managedFields/0",
             "value": {"manager": "x", "apiVersion": "cluster.karmada.io/v1alpha1"}},
            {"op": "replace", "path": "/metadata/managedFields",
             "value": [{"manager": "x", "apiVersion": "cluster.karmada.io/v1alpha1"}]},
            {"op": "remove", "path": "/spec/taints"},
        ]);
        assert_eq!(
            stored(patch),
            json!([
                {"op": "replace", "path": "/apiVersion", "value": "cluster.karmada.io/storage"},
                {"op": "test", "path": "/spec/note", "value": "cluster.karmada.io/v1alpha1"},
                {"op": "add", "path": "/metadata/managedFields/0",
                 "value": {"manager": "x", "apiVersion": "cluster.karmada.io/storage"}},
                {"op": "replace", "path": "/metadata/managedFields",
                 "value": [{"manager": "x", "apiVersion": "cluster.karmada.io/storage"}]},
                {"op": "remove", "path": "/spec/taints"},
            ])
        );
    }

    #[test]
    fn other_groups_and_scalars_are_untouched() {
        let other =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "items": [{"apiVersion": "v1"}]});
        assert_eq!(served(other.clone()), other);
        assert_eq!(
            stored(json!("cluster.karmada.io/v1alpha1")),
            json!("cluster.karmada.io/v1alpha1")
        );
    }
}
