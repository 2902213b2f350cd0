//! The JSON-patch operations each overrider of a rule emits, in Karmada's order after the image overrider:
//! command, args, labels, annotations and plaintext. Images live in `image.rs`, string-field documents in `field.rs`.

use flotilla_api::policy::v1alpha1::{
    CommandArgsOverrider, LabelAnnotationOverrider, OverriderOperator, PlaintextOverrider,
};
use json_patch::jsonptr::{Pointer, PointerBuf};
use json_patch::{AddOperation, PatchOperation, RemoveOperation, ReplaceOperation, TestOperation};
use serde_json::Value;

use super::OverriderError;

/// Builds one JSON-patch operation from an operator, a pointer string and an optional value (`null` when an
/// `add`/`replace` has none, as Karmada's serialised patch carries).
pub(super) fn operation(
    operator: &OverriderOperator,
    path: &str,
    value: Option<Value>,
) -> Result<PatchOperation, OverriderError> {
    op_at(operator, pointer(path)?, value)
}

/// Parses a JSON pointer, naming it on error.
pub(super) fn pointer(path: &str) -> Result<PointerBuf, OverriderError> {
    Pointer::parse(path)
        .map(Pointer::to_buf)
        .map_err(|source| OverriderError::Pointer {
            path: path.to_owned(),
            source,
        })
}

/// Karmada writes the operator as the patch's `op`, so an operator it does not know is whatever that JSON-patch
/// op does: `test` compares the value, any other op fails the patch (`move` and `copy` would need a `from`
/// that Karmada's patch never carries).
fn op_at(
    operator: &OverriderOperator,
    path: PointerBuf,
    value: Option<Value>,
) -> Result<PatchOperation, OverriderError> {
    let value = value.unwrap_or(Value::Null);
    Ok(match operator {
        OverriderOperator::Add => PatchOperation::Add(AddOperation { path, value }),
        OverriderOperator::Replace => PatchOperation::Replace(ReplaceOperation { path, value }),
        OverriderOperator::Remove => PatchOperation::Remove(RemoveOperation { path }),
        OverriderOperator::Other(op) if op == "test" => {
            PatchOperation::Test(TestOperation { path, value })
        }
        OverriderOperator::Other(op) => {
            return Err(OverriderError::UnknownOperation {
                operation: op.clone(),
            });
        }
    })
}

/// The plaintext overrider: its entries as one JSON patch, in order.
pub(super) fn plaintext(
    entries: &[PlaintextOverrider],
) -> Result<Vec<PatchOperation>, OverriderError> {
    entries
        .iter()
        .map(|e| operation(&e.operator, &e.path, e.value.clone()))
        .collect()
}

/// Where a workload kind keeps its containers, for the command and args overriders; `None` for kinds they
/// leave alone.
fn containers_path(object: &Value) -> Option<&'static str> {
    match object.get("kind").and_then(Value::as_str)? {
        "Pod" => Some("/spec/containers"),
        "ReplicaSet" | "Deployment" | "DaemonSet" | "Job" | "StatefulSet" => {
            Some("/spec/template/spec/containers")
        }
        _ => None,
    }
}

/// The command or args overrider (`field` is `command` or `args`): for every container named
/// `containerName`, `add` appends the values and `remove` drops every occurrence of them; any other operator
/// (`replace`, or one this version does not know) rewrites the list unchanged. An absent list is created with
/// an `add` op, an existing one replaced.
pub(super) fn command_args(
    object: &Value,
    field: &str,
    overrider: &CommandArgsOverrider,
) -> Result<Vec<PatchOperation>, OverriderError> {
    let Some(prefix) = containers_path(object) else {
        return Ok(Vec::new());
    };
    let Some(containers) = object.pointer(prefix).and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    let mut ops = Vec::new();
    for (index, container) in containers.iter().enumerate() {
        if container.get("name").and_then(Value::as_str) != Some(overrider.container_name.as_str())
        {
            continue;
        }
        let path = format!("{prefix}/{index}/{field}");
        let (operator, current) = match container.get(field) {
            None | Some(Value::Null) => (OverriderOperator::Add, Vec::new()),
            Some(Value::Array(items)) => (
                OverriderOperator::Replace,
                items
                    .iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    .collect(),
            ),
            Some(_) => return Err(OverriderError::NotList { path }),
        };
        let updated: Vec<String> = match &overrider.operator {
            OverriderOperator::Add => current
                .into_iter()
                .chain(overrider.value.iter().cloned())
                .collect(),
            OverriderOperator::Remove => current
                .into_iter()
                .filter(|v| !overrider.value.contains(v))
                .collect(),
            OverriderOperator::Replace | OverriderOperator::Other(_) => current,
        };
        ops.push(operation(&operator, &path, Some(Value::from(updated)))?);
    }
    Ok(ops)
}

/// The labels or annotations overrider (`field` is `labels` or `annotations`): `add` sets every key
/// (creating the map in `object` first when it is missing), `replace` and `remove` touch only keys that
/// exist; an operator this version does not know becomes the op of every key's patch, as in Karmada.
pub(super) fn labels_or_annotations(
    object: &mut Value,
    field: &str,
    overrider: &LabelAnnotationOverrider,
) -> Result<Vec<PatchOperation>, OverriderError> {
    let existing = object
        .pointer(&format!("/metadata/{field}"))
        .and_then(Value::as_object);
    let mut ops = Vec::new();
    let mut needs_map = false;
    for (key, value) in &overrider.value {
        let present = existing.is_some_and(|m| m.contains_key(key));
        match &overrider.operator {
            OverriderOperator::Add => needs_map |= existing.is_none(),
            OverriderOperator::Replace | OverriderOperator::Remove if !present => continue,
            OverriderOperator::Replace
            | OverriderOperator::Remove
            | OverriderOperator::Other(_) => {}
        }
        let path = PointerBuf::from_tokens(["metadata", field, key.as_str()]);
        ops.push(op_at(
            &overrider.operator,
            path,
            Some(Value::from(value.as_str())),
        )?);
    }
    if needs_map {
        ensure_map(object, field);
    }
    Ok(ops)
}

/// Makes `metadata.<field>` an object, creating `metadata` too when needed.
fn ensure_map(object: &mut Value, field: &str) {
    if let Some(root) = object.as_object_mut() {
        let metadata = root
            .entry("metadata")
            .or_insert_with(|| Value::Object(Default::default()));
        if !metadata.is_object() {
            *metadata = Value::Object(Default::default());
        }
        if let Some(metadata) = metadata.as_object_mut() {
            let map = metadata
                .entry(field)
                .or_insert_with(|| Value::Object(Default::default()));
            if !map.is_object() {
                *map = Value::Object(Default::default());
            }
        }
    }
}
